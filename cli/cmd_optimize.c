/*
 * cmd_optimize.c - `mbsens optimize MODEL ...`: gradient-based design
 * optimization and optimal control over the model's design parameters
 * (mbs_optimize, NLopt; docs/optimization.md).
 *
 * Progress: one line per accepted iteration on stdout. At the end: the
 * stopping reason, iterations and evaluations, and the files asked for,
 * each written to a temporary file and renamed (never left half-written):
 * the result as JSON, the model file with the optimized parameter values,
 * the iteration history as CSV and an SVG plot (psi against iterations;
 * the initial and the optimized response against time).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli_util.h"
#include "opt_stop.h"
#include "optimize_multistart.h"
#include "mbsens/optimize.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens optimize MODEL [--objective NAME | --weights W1,W2,...]\n"
          "                       [--algorithm lbfgs|slsqp|mma] [--method ddm|davm|cavm|fd]\n"
          "                       [--formulation semi|fr|ali3p|matrixr] [--ref com|origin|joint]\n"
          "                       [--dt H] [--tf T] [--max-iter N] [--max-eval N]\n"
          "                       [--xtol X] [--ftol F] [--pgtol G] [--scaling value|bounds|none]\n"
          "                       [--fix NAME,...] [--free NAME,...] [--continuation]\n"
          "                       [--continuation-start T] [--continuation-step T]\n"
          "                       [--out RESULT.json] [--model-out OPT.json] [--history HIST.csv]\n"
          "                       [--plot PLOT.svg] [--plot-point BODY.POINT.C | --plot-coord NAME[.qd]]\n"
          "                       [--plot-ref FUNCTION] [--quiet] [--threads N]\n"
          "                       [--multistart N [--seed S] [--json]]\n"
          "       mpirun -np K mbsens optimize MODEL --multistart N ...\n"
          "\n"
          "Minimizes one objective of MODEL (its \"objectives\" section; default the\n"
          "first) or a weighted sum of all of them, over its design parameters within\n"
          "their bounds, with NLopt and the analytical trajectory sensitivities.\n"
          "\n", out);
    fputs("Options:\n"
          "  --objective NAME     the objective to minimize (default: the first)\n"
          "  --weights W,...      minimize sum_k W_k psi_k (one weight per objective)\n"
          "  --algorithm A        lbfgs (default), slsqp or mma (NLopt, with bounds)\n"
          "  --method M           gradient: ddm, davm, cavm or fd (default: an adjoint when\n"
          "                       the parameters outnumber the objectives, else ddm;\n"
          "                       closed loops: ddm with ali3p or matrixr)\n"
          "  --formulation F      semi (default) or fr for open trees; ali3p or matrixr for\n"
          "                       closed loops (default ali3p)\n"
          "  --ref POINT          reference point: com (default), origin or joint\n"
          "  --dt H, --tf T       step and final time (default: the model's simulation section)\n"
          "  --max-iter N         accepted iterations per stage (100)\n"
          "  --max-eval N         evaluations per stage (10 max-iter + 20)\n"
          "  --xtol X             relative tolerance on the scaled parameters (1e-8)\n"
          "  --ftol F             relative tolerance on psi (1e-10)\n"
          "  --pgtol G            stop when the projected gradient of the scaled problem is\n"
          "                       below G (inf-norm; 1e-8; 0: off)\n"
          "  --scaling S          value (parameters scaled by their start values, default),\n"
          "                       bounds (by the bounds width) or none\n"
          "  --fix NAME,...       hold these parameters at their values\n"
          "  --free NAME,...      optimize only these parameters (hold the others)\n"
          "  --continuation       horizon continuation: solve with tf = t0 + 1 s, then grow the\n"
          "                       horizon by 1 s at a time up to tf, warm-starting each stage\n"
          "  --continuation-start T, --continuation-step T   first horizon and growth (1, 1)\n"
          "  --out FILE           the result as JSON (psi, iterations, parameters, ...)\n"
          "  --model-out FILE     the model with the optimized parameter values (JSON)\n"
          "  --history FILE       one CSV row per iteration: psi, |g|, step, parameters\n"
          "  --plot FILE          SVG: psi against iterations, and the initial and optimized\n"
          "                       response against time (the objective's integrand, or the\n"
          "                       quantity of --plot-point or --plot-coord)\n"
          "  --plot-point P       BODY.POINT.C with C one of x y z vx vy vz ax ay az\n"
          "  --plot-coord NAME    a coordinate (NAME) or its velocity (NAME.qd)\n"
          "  --plot-ref FUNCTION  also draw this time function of the model (a reference)\n"
          "  --quiet              no progress lines\n"
          "  --threads N          threads: of the starts with --multistart (default: OMP_NUM_THREADS,\n"
          "                       else the cores), else of each gradient (ddm columns, fd runs;\n"
          "                       default 1); 0: OpenMP's default\n"
          "  --multistart N       N optimizations from starts drawn uniformly within the free\n"
          "                       parameters' bounds (on threads; under mpirun, handed out to the\n"
          "                       ranks); prints every start's outcome and the best; --out FILE\n"
          "                       writes them as JSON (no --model-out, --history, --plot)\n"
          "  --seed S             multistart: the seed of the starts' draws (1)\n"
          "  --json               multistart: the JSON report on standard output instead of\n"
          "                       the text\n"
          "  -h, --help           show this help and exit\n", out);
}

/* ------------------------------------------------------------------ helpers */

/* Split a comma-separated list of parameter names into flags (1 = listed). */
static int parse_names(const char *cmd, const char *opt, const char *text, const mbs_model *m, int *flags)
{
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[256];
        if (len == 0 || len >= sizeof name) {
            cli_error(cmd, "%s: invalid parameter name list '%s'", opt, text);
            cli_usage_hint(cmd, usage);
            return CLI_EXIT_USAGE;
        }
        memcpy(name, p, len);
        name[len] = 0;
        int j = mbs_param_find(m, name);
        if (j < 0) {
            cli_error(cmd, "%s: the model has no parameter '%s'", opt, name);
            fprintf(stderr, "parameters:");
            for (int k = 0; k < mbs_model_nparams(m); k++) fprintf(stderr, " %s", mbs_param_name(m, k));
            fputc('\n', stderr);
            cli_usage_hint(cmd, usage);
            return CLI_EXIT_USAGE;
        }
        flags[j] = 1;
        if (!end) break;
        p = end + 1;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ progress and history */

typedef struct {
    const mbs_model *m;
    int quiet;
    cli_buf hist;           /* CSV */
    int hist_header;
    int n, cap;             /* psi per record, for the plot */
    double *psi;
    int *iter, *stage;
    double *tf;
} run_log;

static int on_iter(void *user, const mbs_opt_iter *it)
{
    run_log *L = user;
    if (!L->quiet) {
        if (it->iteration == 0)
            printf("stage %d: horizon [.., %g] s\n%5s %6s %22s %12s %12s\n", it->stage, it->tf, "iter", "evals",
                   "psi", "|g|", "step");
        printf("%5d %6d %22.14e %12.4e %12.4e\n", it->iteration, it->evaluations, it->psi, it->gnorm, it->step);
        fflush(stdout);
    }
    if (!L->hist_header) {
        cli_buf_puts(&L->hist, "iteration,stage,tf,evaluations,psi,gnorm,step");
        for (int j = 0; j < it->nparam; j++) {
            cli_buf_puts(&L->hist, ",");
            cli_csv_name(&L->hist, mbs_param_name(L->m, j));
        }
        cli_buf_puts(&L->hist, "\n");
        L->hist_header = 1;
    }
    cli_buf_printf(&L->hist, "%d,%d,%.17g,%d,%.17g,%.17g,%.17g", it->iteration, it->stage, it->tf, it->evaluations,
                   it->psi, it->gnorm, it->step);
    for (int j = 0; j < it->nparam; j++) cli_buf_printf(&L->hist, ",%.17g", it->x[j]);
    cli_buf_puts(&L->hist, "\n");
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        double *p = realloc(L->psi, sizeof *p * (size_t)cap);
        if (p) L->psi = p;
        int *a = realloc(L->iter, sizeof *a * (size_t)cap);
        if (a) L->iter = a;
        int *b = realloc(L->stage, sizeof *b * (size_t)cap);
        if (b) L->stage = b;
        double *t = realloc(L->tf, sizeof *t * (size_t)cap);
        if (t) L->tf = t;
        if (!p || !a || !b || !t) return 0;   /* the plot misses points; the run goes on */
        L->cap = cap;
    }
    L->psi[L->n] = it->psi;
    L->iter[L->n] = it->iteration;
    L->stage[L->n] = it->stage;
    L->tf[L->n] = it->tf;
    L->n++;
    return 0;
}

static void on_message(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "mbsens optimize: warning: %s\n", msg);
}

/* ------------------------------------------------------------------ responses */

typedef struct {
    int n, cap;
    double *t, *y;
} series;

static int series_add(series *s, double t, double y)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        double *a = realloc(s->t, sizeof *a * (size_t)cap);
        if (!a) return 1;
        s->t = a;
        double *b = realloc(s->y, sizeof *b * (size_t)cap);
        if (!b) return 1;
        s->y = b;
        s->cap = cap;
    }
    s->t[s->n] = t;
    s->y[s->n] = y;
    s->n++;
    return 0;
}

static void series_free(series *s)
{
    free(s->t);
    free(s->y);
    memset(s, 0, sizeof *s);
}

static int trace_cb(void *user, double t, double g, double psi)
{
    (void)psi;
    return series_add(user, t, g);
}

typedef struct {
    int point, comp;        /* comp 0..8: x y z vx vy vz ax ay az */
    int coord, vel;         /* coordinate index (point < 0), its velocity */
    series *s;
} point_trace;

static int point_cb(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                    const double *qdd)
{
    (void)qdd;
    point_trace *p = user;
    if (p->point < 0) return series_add(p->s, t, p->vel ? qd[p->coord] : q[p->coord]);
    double r[3], v[3], a[3];
    mbs_point_kinematics(m, d, p->point, r, v, a);
    const double *src = p->comp < 3 ? r : p->comp < 6 ? v : a;
    return series_add(p->s, t, src[p->comp % 3]);
}

/* The response of model m (initial or optimized) into s. */
static int response(const mbs_model *m, const mbs_opt_result *res, const mbs_opt_options *o, int ppoint, int pcomp,
                    int pcoord, int pvel, series *s, mbs_error *err)
{
    if (ppoint < 0 && pcoord < 0) return mbs_objective_trace(m, &res->sens, o->objective, o->weights, trace_cb, s, err);
    mbs_data *d = mbs_data_create(m, err);
    if (!d) return err->code ? err->code : MBS_ERR_NOMEM;
    mbs_sim_options so = res->sens.sim;
    point_trace pt = { ppoint, pcomp, pcoord, pvel, s };
    int rc = mbs_simulate(m, d, &so, NULL, NULL, point_cb, &pt, NULL, err);
    mbs_data_free(d);
    return rc;
}

/* ------------------------------------------------------------------ SVG */

static double nice_step(double range)
{
    if (!(range > 0)) return 1;
    double e = pow(10, floor(log10(range / 5)));
    double r = range / 5 / e;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * e;
}

/* One panel: axes at (x0, y0) of size (w, h), with ticks; returns the data
 * ranges used. logy: log10 axis. */
typedef struct {
    double x0, y0, w, h;
    double xmin, xmax, ymin, ymax;
    int logy;
} panel;

static double px(const panel *p, double x) { return p->x0 + (x - p->xmin) / (p->xmax - p->xmin) * p->w; }
static double py(const panel *p, double y)
{
    if (p->logy) y = log10(y);
    return p->y0 + p->h - (y - p->ymin) / (p->ymax - p->ymin) * p->h;
}

static void panel_axes(cli_buf *b, const panel *p, const char *title, const char *xlabel, const char *ylabel)
{
    cli_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n",
                   p->x0, p->y0, p->w, p->h);
    cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n",
                   p->x0 + p->w / 2, p->y0 - 10, title);
    cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">%s</text>\n",
                   p->x0 + p->w / 2, p->y0 + p->h + 34, xlabel);
    cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
                   "transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n",
                   p->x0 - 62, p->y0 + p->h / 2, p->x0 - 62, p->y0 + p->h / 2, ylabel);
    /* x ticks */
    double st = nice_step(p->xmax - p->xmin);
    for (double x = ceil(p->xmin / st) * st; x <= p->xmax + 1e-9 * st; x += st) {
        double X = px(p, x);
        cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", X, p->y0, X,
                       p->y0 + p->h);
        cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%g</text>\n", X,
                       p->y0 + p->h + 16, fabs(x) < 1e-12 * st ? 0.0 : x);
    }
    /* y ticks */
    if (p->logy) {
        const double every = ceil((p->ymax - p->ymin) / 8);   /* at most ~8 labelled decades */
        for (double e = ceil(p->ymin / every) * every; e <= p->ymax + 1e-9; e += every) {
            double Y = p->y0 + p->h - (e - p->ymin) / (p->ymax - p->ymin) * p->h;
            cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", p->x0, Y,
                           p->x0 + p->w, Y);
            cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">1e%d</text>\n",
                           p->x0 - 4, Y + 4, (int)e);
        }
    } else {
        double sy = nice_step(p->ymax - p->ymin);
        for (double y = ceil(p->ymin / sy) * sy; y <= p->ymax + 1e-9 * sy; y += sy) {
            double Y = py(p, y);
            cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", p->x0, Y,
                           p->x0 + p->w, Y);
            cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%.4g</text>\n",
                           p->x0 - 4, Y + 4, fabs(y) < 1e-12 * sy ? 0.0 : y);
        }
    }
}

static void polyline(cli_buf *b, const panel *p, const double *x, const double *y, int n, const char *color,
                     int markers)
{
    if (n < 1) return;
    cli_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    /* at most ~2000 points: decimate long series */
    int stride = n > 2000 ? n / 2000 : 1;
    for (int k = 0; k < n; k += stride) cli_buf_printf(b, "%.2f,%.2f ", px(p, x[k]), py(p, y[k]));
    if ((n - 1) % stride) cli_buf_printf(b, "%.2f,%.2f", px(p, x[n - 1]), py(p, y[n - 1]));
    cli_buf_puts(b, "\"/>\n");
    if (markers && n <= 400)
        for (int k = 0; k < n; k++)
            cli_buf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n", px(p, x[k]), py(p, y[k]),
                           color);
}

static void range(const double *y, int n, double *lo, double *hi)
{
    *lo = HUGE_VAL;
    *hi = -HUGE_VAL;
    for (int k = 0; k < n; k++)
        if (isfinite(y[k])) {
            if (y[k] < *lo) *lo = y[k];
            if (y[k] > *hi) *hi = y[k];
        }
}

static void svg_escape(cli_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') cli_buf_puts(b, "&lt;");
        else if (*s == '>') cli_buf_puts(b, "&gt;");
        else if (*s == '&') cli_buf_puts(b, "&amp;");
        else cli_buf_printf(b, "%c", *s);
    }
}

static void plot_svg(cli_buf *b, const mbs_model *m, const run_log *L, const series *s0, const series *s1,
                     const series *sref, const char *resp_label, const mbs_opt_result *res)
{
    const double W = 1000, H = 430;
    cli_buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                   "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    cli_buf_printf(b, "<text x=\"%g\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
    svg_escape(b, mbs_model_name(m));
    cli_buf_printf(b, ": psi %.6g -> %.6g (%s, %d iterations, %d evaluations, stop: %s)</text>\n", res->psi_initial,
                   res->psi_final, mbs_sens_method_name(res->method), res->iterations, res->evaluations,
                   res->stop_reason);
    /* ---- psi against iterations (accepted points in order, all stages) ---- */
    panel p1 = { 90, 70, 360, 290, 0, 1, 0, 1, 0 };
    double *xi = calloc((size_t)L->n + 1, sizeof *xi), *yi = calloc((size_t)L->n + 1, sizeof *yi);
    int n = 0;
    if (xi && yi) {
        /* accepted points in order; a stage's start (iteration 0) is the end point of
         * the previous stage evaluated over the longer horizon: same abscissa */
        int pos = 0;
        for (int k = 0; k < L->n; k++) {
            if (k > 0 && L->iter[k] == 0) pos--;
            xi[n] = pos++;
            yi[n] = L->psi[k];
            n++;
        }
        double lo, hi;
        range(yi, n, &lo, &hi);
        p1.xmax = n > 1 && xi[n - 1] > 0 ? xi[n - 1] : 1;
        int allpos = lo > 0;
        if (allpos && hi / lo > 50) {
            p1.logy = 1;
            p1.ymin = floor(log10(lo));
            p1.ymax = ceil(log10(hi));
            if (p1.ymax <= p1.ymin) p1.ymax = p1.ymin + 1;
        } else {
            double pad = 0.05 * (hi - lo) + 1e-300;
            p1.ymin = lo - pad;
            p1.ymax = hi + pad;
            if (!(p1.ymax > p1.ymin)) { p1.ymin = lo - 1; p1.ymax = hi + 1; }
        }
        panel_axes(b, &p1, res->stages > 1 ? "psi against iterations (all stages)" : "psi against iterations",
                   "iteration", p1.logy ? "psi (log scale)" : "psi");
        /* stage boundaries */
        if (res->stages > 1)
            for (int k = 1; k < n; k++)
                if (L->iter[k] == 0) {
                    double X = px(&p1, xi[k]);
                    cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#aaa\" "
                                   "stroke-dasharray=\"4,3\"/>\n", X, p1.y0, X, p1.y0 + p1.h);
                }
        polyline(b, &p1, xi, yi, n, "#1f4e9c", 1);
    }
    free(xi);
    free(yi);
    /* ---- responses ---- */
    panel p2 = { 580, 70, 380, 290, 0, 1, 0, 1, 0 };
    double lo0, hi0, lo1, hi1, t0a, t1a, t0b, t1b;
    range(s0->y, s0->n, &lo0, &hi0);
    range(s1->y, s1->n, &lo1, &hi1);
    range(s0->t, s0->n, &t0a, &t1a);
    range(s1->t, s1->n, &t0b, &t1b);
    double lo = fmin(lo0, lo1), hi = fmax(hi0, hi1);
    if (sref->n) {
        double lr, hr;
        range(sref->y, sref->n, &lr, &hr);
        lo = fmin(lo, lr);
        hi = fmax(hi, hr);
    }
    if (!isfinite(lo) || !isfinite(hi)) { lo = 0; hi = 1; }
    double pad = 0.05 * (hi - lo);
    if (!(pad > 0)) pad = 1e-3 * (fabs(hi) + 1);
    p2.ymin = lo - pad;
    p2.ymax = hi + pad;
    p2.xmin = fmin(t0a, t0b);
    p2.xmax = fmax(t1a, t1b);
    if (!isfinite(p2.xmin) || !isfinite(p2.xmax) || !(p2.xmax > p2.xmin)) { p2.xmin = 0; p2.xmax = 1; }
    cli_buf_puts(b, "");
    panel_axes(b, &p2, "response: initial and optimized", "t (s)", "");
    cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
                   "transform=\"rotate(-90 %.1f %.1f)\">", p2.x0 - 62, p2.y0 + p2.h / 2, p2.x0 - 62,
                   p2.y0 + p2.h / 2);
    svg_escape(b, resp_label);
    cli_buf_puts(b, "</text>\n");
    polyline(b, &p2, s0->t, s0->y, s0->n, "#c0392b", 0);
    polyline(b, &p2, s1->t, s1->y, s1->n, "#1e8449", 0);
    if (sref->n) {
        cli_buf_printf(b, "<g stroke-dasharray=\"6,4\">\n");
        polyline(b, &p2, sref->t, sref->y, sref->n, "#555555", 0);
        cli_buf_printf(b, "</g>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555555\" "
                       "stroke-width=\"2\" stroke-dasharray=\"6,4\"/><text x=\"%.1f\" y=\"%.1f\" "
                       "font-size=\"12\">reference</text>\n",
                       p2.x0 + 230, H - 20.0, p2.x0 + 260, H - 20.0, p2.x0 + 266, H - 16.0);
    }
    cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c0392b\" stroke-width=\"2\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">initial</text>\n",
                   p2.x0 + 10, H - 20.0, p2.x0 + 40, H - 20.0, p2.x0 + 46, H - 16.0);
    cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1e8449\" stroke-width=\"2\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">optimized</text>\n",
                   p2.x0 + 110, H - 20.0, p2.x0 + 140, H - 20.0, p2.x0 + 146, H - 16.0);
    cli_buf_puts(b, "</svg>\n");
}

/* ------------------------------------------------------------------ outputs */

static void result_json(cli_buf *b, const mbs_model *m, const char *path, const mbs_opt_options *o,
                        const mbs_opt_result *res, const int *fixed)
{
    const int np = res->nparam;
    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(m));
    cli_buf_puts(b, ",\n  \"model_file\": ");
    cli_json_str(b, path);
    cli_buf_printf(b, ",\n  \"algorithm\": \"%s\",\n  \"method\": \"%s\",\n  \"formulation\": \"%s\",\n",
                   mbs_opt_algorithm_name(o->algorithm), mbs_sens_method_name(res->method),
                   res->sens.sim.loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(res->sens.sim.loop)
                                                       : mbs_fd_algorithm_name(res->sens.sim.formulation));
    cli_buf_puts(b, "  \"dt\": ");
    cli_json_num(b, res->sens.sim.dt);
    cli_buf_puts(b, ",\n  \"tf\": ");
    cli_json_num(b, res->sens.sim.tf);
    if (o->weights) {
        cli_buf_puts(b, ",\n  \"weights\": {");
        for (int k = 0; k < mbs_model_nobjectives(m); k++) {
            cli_buf_puts(b, k ? ", " : " ");
            cli_json_str(b, mbs_objective_name(m, k));
            cli_buf_puts(b, ": ");
            cli_json_num(b, o->weights[k]);
        }
        cli_buf_puts(b, " }");
    } else {
        cli_buf_puts(b, ",\n  \"objective\": ");
        cli_json_str(b, mbs_objective_name(m, o->objective));
    }
    cli_buf_puts(b, ",\n  \"psi_initial\": ");
    cli_json_num(b, res->psi_initial);
    cli_buf_puts(b, ",\n  \"psi_final\": ");
    cli_json_num(b, res->psi_final);
    cli_buf_puts(b, ",\n  \"reduction\": ");
    cli_json_num(b, res->psi_final != 0 ? res->psi_initial / res->psi_final : NAN);
    cli_buf_printf(b, ",\n  \"iterations\": %d,\n  \"evaluations\": %d,\n  \"failed_evaluations\": %d,\n"
                   "  \"stages\": %d,\n  \"stop_reason\": ", res->iterations, res->evaluations,
                   res->failed_evaluations, res->stages);
    cli_json_str(b, res->stop_reason);
    cli_opt_stop why;
    cli_opt_stop_explain(res, o, &why);
    cli_buf_puts(b, ",\n  \"stop_words\": ");
    cli_json_str(b, why.words);
    cli_buf_printf(b, ",\n  \"converged\": %s,\n  \"verdict\": ", why.converged ? "true" : "false");
    cli_json_str(b, why.verdict);
    cli_buf_puts(b, ",\n  \"projected_gradient_norm_initial\": ");
    cli_json_num(b, res->pg_norm_initial);
    cli_buf_puts(b, ",\n  \"projected_gradient_norm\": ");
    cli_json_num(b, res->pg_norm);
    cli_buf_puts(b, ",\n  \"projected_gradient_norm_scaled\": ");
    cli_json_num(b, res->pg_norm_scaled);
    const char *names[3] = { "parameters", "initial_parameters", "gradient" };
    const double *vals[3] = { res->x, res->x0, res->grad };
    for (int s = 0; s < 3; s++) {
        cli_buf_printf(b, ",\n  \"%s\": {", names[s]);
        for (int j = 0; j < np; j++) {
            cli_buf_puts(b, j ? ",\n    " : "\n    ");
            cli_json_str(b, mbs_param_name(m, j));
            cli_buf_puts(b, ": ");
            cli_json_num(b, vals[s][j]);
        }
        cli_buf_puts(b, "\n  }");
    }
    cli_buf_puts(b, ",\n  \"fixed\": [");
    for (int j = 0, first = 1; j < np; j++)
        if (fixed[j]) {
            if (!first) cli_buf_puts(b, ", ");
            cli_json_str(b, mbs_param_name(m, j));
            first = 0;
        }
    cli_buf_puts(b, "],\n  \"wall_seconds\": ");
    cli_json_num(b, res->wall_seconds);
    cli_buf_puts(b, "\n}\n");
}

/* The model with the optimized parameter values (mbs_model_with_params,
 * the model the optimizer evaluated), written as JSON (mbs_model_to_json). */
static int model_out(const char *cmd, const char *in, const char *out, const mbs_model *m, const double *x)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *mo = mbs_model_with_params(m, x, &err);
    if (!mo) {
        cli_error(cmd, "--model-out: %s", err.msg);
        return CLI_EXIT_FAIL;
    }
    cli_buf text = { 0 };
    int rc = cli_model_json(cmd, "--model-out: ", mo, &text) ? CLI_EXIT_FAIL
             : cli_write_atomic(cmd, "--model-out", out, in, text.s, text.len) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    mbs_model_free(mo);
    cli_buf_free(&text);
    return rc;
}

/* ------------------------------------------------------------------ command */

static int parse_pos(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || !isfinite(v) || !(v > 0)) {
        cli_error(cmd, "%s: expected a positive number, got '%s'", opt, s);
        cli_usage_hint(cmd, usage);
        return CLI_EXIT_USAGE;
    }
    *out = v;
    return CLI_EXIT_OK;
}

static int parse_int(const char *cmd, const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || end == s || v < 1 || v > 100000000) {
        cli_error(cmd, "%s: expected a positive integer, got '%s'", opt, s);
        cli_usage_hint(cmd, usage);
        return CLI_EXIT_USAGE;
    }
    *out = (int)v;
    return CLI_EXIT_OK;
}

int cmd_optimize(int argc, char **argv)
{
    const char *cmd = "optimize";
    const char *obj_s = NULL, *w_s = NULL, *alg_s = NULL, *meth_s = NULL, *form_s = NULL, *ref_s = NULL;
    const char *dt_s = NULL, *tf_s = NULL, *mi_s = NULL, *me_s = NULL, *xtol_s = NULL, *ftol_s = NULL;
    const char *pg_s = NULL, *sc_s = NULL, *fix_s = NULL, *free_s = NULL, *cs_s = NULL, *cst_s = NULL;
    const char *out_s = NULL, *mout_s = NULL, *hist_s = NULL, *plot_s = NULL, *pp_s = NULL, *pc_s = NULL;
    const char *pr_s = NULL, *ms_s = NULL, *seed_s = NULL, *th_s = NULL, *pos[1];
    int cont = 0, quiet = 0, npos = 0, json = 0;
    const cli_option opts[] = {
        {"--objective", NULL, &obj_s, NULL},   {"--weights", NULL, &w_s, NULL},
        {"--algorithm", NULL, &alg_s, NULL},   {"--method", NULL, &meth_s, NULL},
        {"--formulation", NULL, &form_s, NULL}, {"--ref", NULL, &ref_s, NULL},
        {"--dt", NULL, &dt_s, NULL},           {"--tf", NULL, &tf_s, NULL},
        {"--max-iter", NULL, &mi_s, NULL},     {"--max-eval", NULL, &me_s, NULL},
        {"--xtol", NULL, &xtol_s, NULL},       {"--ftol", NULL, &ftol_s, NULL},
        {"--pgtol", NULL, &pg_s, NULL},        {"--scaling", NULL, &sc_s, NULL},
        {"--fix", NULL, &fix_s, NULL},         {"--free", NULL, &free_s, NULL},
        {"--continuation", NULL, NULL, &cont}, {"--continuation-start", NULL, &cs_s, NULL},
        {"--continuation-step", NULL, &cst_s, NULL},
        {"--out", NULL, &out_s, NULL},         {"--model-out", NULL, &mout_s, NULL},
        {"--history", NULL, &hist_s, NULL},    {"--plot", NULL, &plot_s, NULL},
        {"--plot-point", NULL, &pp_s, NULL},   {"--plot-coord", NULL, &pc_s, NULL},
        {"--plot-ref", NULL, &pr_s, NULL},
        {"--quiet", "-q", NULL, &quiet},
        {"--multistart", NULL, &ms_s, NULL},   {"--seed", NULL, &seed_s, NULL},
        {"--threads", NULL, &th_s, NULL},      {"--json", NULL, NULL, &json},
    };
    int rc = cli_parse(cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), pos, 1, &npos, usage);
    if (rc == CLI_PARSE_HELP) return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) return rc;
    if (npos != 1) return cli_usage_error(cmd, usage, "missing MODEL argument");
    if (obj_s && w_s) return cli_usage_error(cmd, usage, "--objective and --weights exclude each other");
    if (fix_s && free_s) return cli_usage_error(cmd, usage, "--fix and --free exclude each other");
    if (pp_s && pc_s) return cli_usage_error(cmd, usage, "--plot-point and --plot-coord exclude each other");
    int alg = MBS_OPT_LBFGS, meth = -1, form = -1, loop = -1, ref = -1, scaling = MBS_OPT_SCALE_VALUE;
    if (alg_s && (alg = mbs_opt_algorithm_from_name(alg_s)) < 0)
        return cli_usage_error(cmd, usage, "--algorithm: expected lbfgs, slsqp or mma, got '%s'", alg_s);
    if (meth_s && ((meth = mbs_sens_method_from_name(meth_s)) < 0 || meth == MBS_SENS_CS))
        return cli_usage_error(cmd, usage, "--method: expected ddm, davm, cavm or fd, got '%s'", meth_s);
    if (form_s && (form = mbs_fd_algorithm_from_name(form_s)) < 0 &&
        ((loop = mbs_loop_formulation_from_name(form_s)) <= 0))
        return cli_usage_error(cmd, usage, "--formulation: expected semi, fr, ali3p, matrixr, penalty or index1, "
                               "got '%s'", form_s);
    if (ref_s && (ref = mbs_ref_point_from_name(ref_s)) < 0)
        return cli_usage_error(cmd, usage, "--ref: expected com, origin or joint, got '%s'", ref_s);
    if (sc_s && (scaling = mbs_opt_scaling_from_name(sc_s)) < 0)
        return cli_usage_error(cmd, usage, "--scaling: expected value, bounds or none, got '%s'", sc_s);
    double dt = 0, tf = 0, xtol = 1e-8, ftol = 1e-10, pgtol = 1e-8, cstart = 1, cstep = 1;
    int max_iter = 100, max_eval = 0;
    if ((dt_s && (rc = parse_pos(cmd, "--dt", dt_s, &dt))) || (tf_s && (rc = parse_pos(cmd, "--tf", tf_s, &tf))) ||
        (mi_s && (rc = parse_int(cmd, "--max-iter", mi_s, &max_iter))) ||
        (me_s && (rc = parse_int(cmd, "--max-eval", me_s, &max_eval))) ||
        (xtol_s && (rc = parse_pos(cmd, "--xtol", xtol_s, &xtol))) ||
        (ftol_s && (rc = parse_pos(cmd, "--ftol", ftol_s, &ftol))) ||
        (cs_s && (rc = parse_pos(cmd, "--continuation-start", cs_s, &cstart))) ||
        (cst_s && (rc = parse_pos(cmd, "--continuation-step", cst_s, &cstep))))
        return rc;
    if (pg_s) {
        char *end;
        pgtol = strtod(pg_s, &end);
        if (*end || end == pg_s || !isfinite(pgtol) || pgtol < 0)
            return cli_usage_error(cmd, usage, "--pgtol: expected a number >= 0, got '%s'", pg_s);
    }

    cli_multistart ms = {0, 1, 0, pos[0], out_s, json};
    if ((rc = cli_multistart_options(cmd, usage, ms_s, seed_s, th_s, mout_s || hist_s || plot_s, json, &ms)))
        return rc;
    /* the files are written after the run: refuse unwritable ones (the input model, a directory) before it */
    const char *const outs[4] = { out_s, mout_s, hist_s, plot_s };
    for (int k = 0; k < 4; k++)
        if (outs[k] && cli_output_check(cmd, outs[k], pos[0]) != 0) return CLI_EXIT_FAIL;
    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m) return CLI_EXIT_FAIL;
    const int np = mbs_model_nparams(m), nobj = mbs_model_nobjectives(m);
    int *fixed = calloc((size_t)np + 1, sizeof *fixed);
    double *weights = calloc((size_t)nobj + 1, sizeof *weights);
    run_log L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.quiet = quiet;
    series s0 = {0}, s1 = {0}, sref = {0};
    mbs_opt_result res;
    memset(&res, 0, sizeof res);
    int have_res = 0;
    rc = CLI_EXIT_FAIL;
    if (!fixed || !weights) {
        cli_error(cmd, "out of memory");
        goto done;
    }
    if (nobj < 1) {
        cli_error(cmd, "%s declares no objectives (add an \"objectives\" section)", pos[0]);
        goto done;
    }
    if (np < 1) {
        cli_error(cmd, "%s declares no design parameters (add a \"parameters\" section)", pos[0]);
        goto done;
    }
    mbs_opt_options o = mbs_opt_options_default(m);
    o.algorithm = (mbs_opt_algorithm)alg;
    if (meth >= 0) {
        o.auto_method = 0;
        o.sens.method = (mbs_sens_method)meth;
    }
    if (form >= 0) o.sens.sim.formulation = (mbs_fd_algorithm)form;
    else if (loop < 0) o.sens.sim.formulation = MBS_FD_SEMI_RECURSIVE;
    if (loop > 0) o.sens.sim.loop = (mbs_loop_formulation)loop;
    if (ref >= 0) o.sens.sim.ref = (mbs_ref_point)ref;
    if (dt_s) o.sens.sim.dt = dt;
    if (tf_s) o.sens.sim.tf = tf;
    o.max_iter = max_iter;
    o.max_eval = max_eval;
    o.xtol = xtol;
    o.ftol = ftol;
    o.pgtol = pgtol;
    o.scaling = (mbs_opt_scaling)scaling;
    o.continuation = cont;
    o.continuation_start = cstart;
    o.continuation_step = cstep;
    if (obj_s) {
        o.objective = mbs_objective_find(m, obj_s);
        if (o.objective < 0) {
            cli_error(cmd, "--objective: the model has no objective '%s'", obj_s);
            fprintf(stderr, "objectives:");
            for (int k = 0; k < nobj; k++) fprintf(stderr, " %s", mbs_objective_name(m, k));
            fputc('\n', stderr);
            cli_usage_hint(cmd, usage);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    }
    if (w_s) {
        char opt[] = "--weights";
        /* cli_parse_values talks of coordinates in its count message; check the count first */
        int count = 1;
        for (const char *p = w_s; *p; p++) count += *p == ',';
        if (count != nobj) {
            cli_error(cmd, "--weights: expected %d values (one per objective), got %d", nobj, count);
            cli_usage_hint(cmd, usage);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        if ((rc = cli_parse_values(cmd, opt, w_s, NULL, weights, nobj, usage)) != CLI_EXIT_OK) goto done;
        o.weights = weights;
    }
    if (fix_s && (rc = parse_names(cmd, "--fix", fix_s, m, fixed)) != CLI_EXIT_OK) goto done;
    if (free_s) {
        if ((rc = parse_names(cmd, "--free", free_s, m, fixed)) != CLI_EXIT_OK) goto done;
        for (int j = 0; j < np; j++) fixed[j] = !fixed[j];
    }
    o.fixed = fixed;
    int ppoint = -1, pcomp = 0, pcoord = -1, pvel = 0;
    char plabel[300] = "integrand of psi";
    if (pp_s) {
        static const char *const comps[9] = { "x", "y", "z", "vx", "vy", "vz", "ax", "ay", "az" };
        const char *dot = strrchr(pp_s, '.');
        char name[256];
        size_t len = dot ? (size_t)(dot - pp_s) : 0;
        pcomp = -1;
        if (dot)
            for (int k = 0; k < 9; k++)
                if (!strcmp(dot + 1, comps[k])) pcomp = k;
        if (pcomp >= 0 && len < sizeof name) {
            memcpy(name, pp_s, len);
            name[len] = 0;
            ppoint = mbs_point_find(m, name);
        }
        if (ppoint < 0) {
            cli_error(cmd, "--plot-point: expected BODY.POINT.C with a named point of the model and C one of "
                      "x y z vx vy vz ax ay az, got '%s'", pp_s);
            cli_usage_hint(cmd, usage);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        snprintf(plabel, sizeof plabel, "%s", pp_s);
    }
    if (pc_s) {
        const int nq = mbs_model_nq(m);
        for (int k = 0; k < nq && pcoord < 0; k++)
            if (!strcmp(pc_s, mbs_coord_name(m, k))) pcoord = k;
        size_t len = strlen(pc_s);
        if (pcoord < 0 && len > 3 && !strcmp(pc_s + len - 3, ".qd")) {
            for (int k = 0; k < nq && pcoord < 0; k++)
                if (strlen(mbs_coord_name(m, k)) == len - 3 && !strncmp(pc_s, mbs_coord_name(m, k), len - 3)) {
                    pcoord = k;
                    pvel = 1;
                }
        }
        if (pcoord < 0) {
            cli_error(cmd, "--plot-coord: expected a coordinate name of the model (or NAME.qd), got '%s'", pc_s);
            cli_usage_hint(cmd, usage);
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        snprintf(plabel, sizeof plabel, "%s", pc_s);
    }
    int pfunc = -1;
    if (pr_s && (pfunc = mbs_function_find(m, pr_s)) < 0) {
        cli_error(cmd, "--plot-ref: the model has no function '%s'", pr_s);
        cli_usage_hint(cmd, usage);
        rc = CLI_EXIT_USAGE;
        goto done;
    }
    o.callback = on_iter;
    o.callback_user = &L;
    o.message = on_message;
    o.message_user = NULL;
    if (ms_s) {
        rc = cli_optimize_multistart(cmd, m, &o, fixed, &ms);
        goto done;
    }
    o.sens.threads = th_s ? mbs_batch_threads(ms.threads) : 1;

    mbs_error err;
    memset(&err, 0, sizeof err);
    if (!quiet) {
        mbs_sens_options tmp = o.sens;
        mbs_sens_method mm = o.auto_method ? mbs_opt_auto_method(m, &tmp) : o.sens.method;
        int nfree = 0;
        for (int j = 0; j < np; j++) nfree += !fixed[j];
        printf("model %s: %d of %d parameters free, objective %s, algorithm %s, gradient %s (%s), dt %g, tf %g\n",
               mbs_model_name(m), nfree, np, o.weights ? "weighted sum" : mbs_objective_name(m, o.objective),
               mbs_opt_algorithm_name(o.algorithm), mbs_sens_method_name(mm),
               tmp.sim.loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(tmp.sim.loop)
                                             : mbs_fd_algorithm_name(tmp.sim.formulation),
               tmp.sim.dt, tmp.sim.tf);
        fflush(stdout);
    }
    {   /* the initial design's run: what it does to q0, qd0 */
        cli_initial_change ic;
        if (cli_initial_change_eval(cmd, m, o.sens.sim.t0, o.sens.sim.loop, &ic) != CLI_EXIT_OK) goto done;
        cli_initial_change_note(stderr, cmd, m, &ic);
    }
    if (mbs_optimize(m, &o, &res, &err) != MBS_OK) {
        cli_error(cmd, "%s", err.msg[0] ? err.msg : "optimization failed");
        goto done;
    }
    have_res = 1;
    cli_buf b = {0};
    cli_buf_printf(&b, "stop: %s after %d iterations, %d evaluations (%d failed), %d stage%s, %.3f s\n",
                   res.stop_reason, res.iterations, res.evaluations, res.failed_evaluations, res.stages,
                   res.stages == 1 ? "" : "s", res.wall_seconds);
    cli_opt_stop why;
    cli_opt_stop_explain(&res, &o, &why);
    cli_buf_printf(&b, "      %s\nresult: %s\n", why.words, why.verdict);
    cli_buf_printf(&b, "psi: %.10e -> %.10e (reduced %.4g times)\n", res.psi_initial, res.psi_final,
                   res.psi_final != 0 ? res.psi_initial / res.psi_final : INFINITY);
    cli_buf_printf(&b, "projected gradient norm: %.4e -> %.4e\n", res.pg_norm_initial, res.pg_norm);
    cli_buf_printf(&b, "%-16s %18s %18s %18s %s\n", "parameter", "initial", "optimized", "gradient", "");
    for (int j = 0; j < np; j++)
        cli_buf_printf(&b, "%-16s % 18.10e % 18.10e % 18.10e %s\n", mbs_param_name(m, j), res.x0[j], res.x[j],
                       res.grad[j], fixed[j] ? "(fixed)" : "");
    rc = cli_buf_emit(&b, stdout, cmd);
    cli_buf_free(&b);
    if (rc) goto done;

    /* files */
    if (out_s) {
        cli_buf jb = {0};
        result_json(&jb, m, pos[0], &o, &res, fixed);
        rc = jb.oom ? (cli_error(cmd, "out of memory"), CLI_EXIT_FAIL) : (cli_write_atomic(cmd, "--out", out_s, pos[0], jb.s, jb.len) ? CLI_EXIT_FAIL : CLI_EXIT_OK);
        cli_buf_free(&jb);
        if (rc) goto done;
    }
    if (hist_s) {
        if (L.hist.oom) {
            cli_error(cmd, "--history: out of memory");
            rc = CLI_EXIT_FAIL;
            goto done;
        }
        if ((rc = (cli_write_atomic(cmd, "--history", hist_s, pos[0], L.hist.s ? L.hist.s : "", L.hist.len) ? CLI_EXIT_FAIL : CLI_EXIT_OK))) goto done;
    }
    if (mout_s && (rc = model_out(cmd, pos[0], mout_s, m, res.x))) goto done;
    if (plot_s) {
        mbs_model *mopt = mbs_model_with_params(m, res.x, &err);
        if (!mopt || response(m, &res, &o, ppoint, pcomp, pcoord, pvel, &s0, &err) ||
            response(mopt, &res, &o, ppoint, pcomp, pcoord, pvel, &s1, &err)) {
            cli_error(cmd, "--plot: the response simulation failed: %s", err.msg);
            mbs_model_free(mopt);
            rc = CLI_EXIT_FAIL;
            goto done;
        }
        mbs_model_free(mopt);
        if (pfunc >= 0)
            for (int k = 0; k < s1.n; k++)
                if (series_add(&sref, s1.t[k], mbs_function_eval(m, pfunc, s1.t[k], NULL))) break;
        cli_buf pb = {0};
        plot_svg(&pb, m, &L, &s0, &s1, &sref, plabel, &res);
        rc = pb.oom ? (cli_error(cmd, "out of memory"), CLI_EXIT_FAIL) : (cli_write_atomic(cmd, "--plot", plot_s, pos[0], pb.s, pb.len) ? CLI_EXIT_FAIL : CLI_EXIT_OK);
        cli_buf_free(&pb);
        if (rc) goto done;
    }
    rc = CLI_EXIT_OK;
done:
    if (have_res) mbs_opt_result_free(&res);
    series_free(&s0);
    series_free(&s1);
    series_free(&sref);
    cli_buf_free(&L.hist);
    free(L.psi);
    free(L.iter);
    free(L.stage);
    free(L.tf);
    free(fixed);
    free(weights);
    mbs_model_free(m);
    return rc;
}
