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

#include "cli_options.h"
#include "cli_session.h"
#include "cli_util.h"
#include "opt_stop.h"
#include "optimize_multistart.h"
#include "svg_plot.h"
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
          "  -q, --quiet          no progress lines\n"
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

typedef struct {
    cli_sim_args sim;
    const char *objective, *weights, *fix_list, *free_list;
    int algorithm, method, scaling, continuation, quiet;
    long max_iter, max_eval;
    double xtol, ftol, pgtol, continuation_start, continuation_step;
    const char *out, *model_out, *history, *plot, *plot_point, *plot_coord, *plot_ref;
    const char *multistart, *seed, *threads;   /* checked by cli_multistart_options */
    int json;
} opt_args;

/* --method: a method of mbs_sensitivity other than the complex step */
static int method_from_name(const char *name)
{
    int k = mbs_sens_method_from_name(name);
    return k == MBS_SENS_CS ? -1 : k;
}

#define ROW(NAME, KIND, F) CLI_ROW(opt_args, NAME, NULL, KIND, F)
#define ROW_NAME(NAME, F, FROM, EXPECTED) CLI_ROW_NAME(opt_args, NAME, F, FROM, EXPECTED)
static const cli_opt opt_opts[] = {
    ROW("--objective", CLI_STRING, objective),
    ROW("--weights", CLI_STRING, weights),
    ROW_NAME("--algorithm", algorithm, mbs_opt_algorithm_from_name, "lbfgs, slsqp or mma"),
    ROW_NAME("--method", method, method_from_name, "ddm, davm, cavm or fd"),
    ROW_NAME("--formulation", sim.formulation, cli_formulation_from_name,
             "semi, fr, ali3p, matrixr, penalty or index1"),
    ROW_NAME("--ref", sim.ref, mbs_ref_point_from_name, "com, origin or joint"),
    ROW("--dt", CLI_POSITIVE, sim.dt),
    ROW("--tf", CLI_POSITIVE, sim.tf),
    CLI_ROW_COUNT(opt_args, "--max-iter", max_iter, 100000000),
    CLI_ROW_COUNT(opt_args, "--max-eval", max_eval, 100000000),
    ROW("--xtol", CLI_POSITIVE, xtol),
    ROW("--ftol", CLI_POSITIVE, ftol),
    ROW("--pgtol", CLI_NONNEG, pgtol),
    ROW_NAME("--scaling", scaling, mbs_opt_scaling_from_name, "value, bounds or none"),
    ROW("--fix", CLI_STRING, fix_list),
    ROW("--free", CLI_STRING, free_list),
    ROW("--continuation", CLI_FLAG, continuation),
    ROW("--continuation-start", CLI_POSITIVE, continuation_start),
    ROW("--continuation-step", CLI_POSITIVE, continuation_step),
    ROW("--out", CLI_STRING, out),
    ROW("--model-out", CLI_STRING, model_out),
    ROW("--history", CLI_STRING, history),
    ROW("--plot", CLI_STRING, plot),
    ROW("--plot-point", CLI_STRING, plot_point),
    ROW("--plot-coord", CLI_STRING, plot_coord),
    ROW("--plot-ref", CLI_STRING, plot_ref),
    CLI_ROW(opt_args, "--quiet", "-q", CLI_FLAG, quiet),
    ROW("--threads", CLI_STRING, threads),
    ROW("--multistart", CLI_STRING, multistart),
    ROW("--seed", CLI_STRING, seed),
    ROW("--json", CLI_FLAG, json),
};
#undef ROW
#undef ROW_NAME

static const cli_pair opt_pairs[] = {
    { "--objective", "--weights", "--objective and --weights exclude each other" },
    { "--fix", "--free", "--fix and --free exclude each other" },
    { "--plot-point", "--plot-coord", "--plot-point and --plot-coord exclude each other" },
};

const cli_command cli_optimize_command = {
    "optimize", usage, opt_opts, CLI_NELEM(opt_opts), opt_pairs, CLI_NELEM(opt_pairs),
    1, 1, "missing MODEL argument", CLI_WORDS_EXPECTED,
};

/* The library's defaults with the options given over them. */
static mbs_opt_options opt_options(const opt_args *a, const mbs_model *m)
{
    mbs_opt_options o = mbs_opt_options_default(m);
    if (a->algorithm >= 0) o.algorithm = (mbs_opt_algorithm)a->algorithm;
    if (a->method >= 0) {
        o.auto_method = 0;
        o.sens.method = (mbs_sens_method)a->method;
    }
    if (a->sim.formulation < 0) o.sens.sim.formulation = MBS_FD_SEMI_RECURSIVE;
    const mbs_loop_formulation loop = o.sens.sim.loop;
    cli_sim_apply(&a->sim, &o.sens.sim);
    if (a->sim.formulation >= 0 && a->sim.formulation < CLI_LOOP)
        o.sens.sim.loop = loop;   /* fr or semi leave the model's loop formulation as it is */
    if (a->max_iter) o.max_iter = (int)a->max_iter;
    if (a->max_eval) o.max_eval = (int)a->max_eval;
    if (cli_given(a->xtol)) o.xtol = a->xtol;
    if (cli_given(a->ftol)) o.ftol = a->ftol;
    if (cli_given(a->pgtol)) o.pgtol = a->pgtol;
    if (a->scaling >= 0) o.scaling = (mbs_opt_scaling)a->scaling;
    o.continuation = a->continuation;
    if (cli_given(a->continuation_start)) o.continuation_start = a->continuation_start;
    if (cli_given(a->continuation_step)) o.continuation_step = a->continuation_step;
    return o;
}

/* --objective, --weights, --fix and --free against the model: usage errors. */
static int opt_choices(const char *cmd, const opt_args *a, const mbs_model *m, mbs_opt_options *o, int *fixed,
                       double *weights)
{
    const int np = mbs_model_nparams(m), nobj = mbs_model_nobjectives(m);
    int rc;
    if (a->objective && (o->objective = mbs_objective_find(m, a->objective)) < 0) {
        cli_error(cmd, "--objective: the model has no objective '%s'", a->objective);
        fprintf(stderr, "objectives:");
        for (int k = 0; k < nobj; k++) fprintf(stderr, " %s", mbs_objective_name(m, k));
        fputc('\n', stderr);
        cli_usage_hint(cmd, usage);
        return CLI_EXIT_USAGE;
    }
    if (a->weights) {
        /* cli_parse_values talks of coordinates in its count message; check the count first */
        int count = 1;
        for (const char *p = a->weights; *p; p++) count += *p == ',';
        if (count != nobj) {
            cli_error(cmd, "--weights: expected %d values (one per objective), got %d", nobj, count);
            cli_usage_hint(cmd, usage);
            return CLI_EXIT_USAGE;
        }
        if ((rc = cli_parse_values(cmd, "--weights", a->weights, NULL, CLI_VALUES_PLAIN, weights, nobj, usage)) != CLI_EXIT_OK)
            return rc;
        o->weights = weights;
    }
    if (a->fix_list && (rc = parse_names(cmd, "--fix", a->fix_list, m, fixed)) != CLI_EXIT_OK) return rc;
    if (a->free_list) {
        if ((rc = parse_names(cmd, "--free", a->free_list, m, fixed)) != CLI_EXIT_OK) return rc;
        for (int j = 0; j < np; j++) fixed[j] = !fixed[j];
    }
    o->fixed = fixed;
    return CLI_EXIT_OK;
}

/* What the plot's response is: --plot-point, --plot-coord, or (neither)
 * the integrand of psi; and --plot-ref. */
typedef struct {
    int point, comp;    /* a named point and its component (0..8: x y z vx vy vz ax ay az), or point -1 */
    int coord, vel;     /* a coordinate or its velocity, or coord -1 */
    int func;           /* --plot-ref, or -1 */
    char label[300];
} plot_target;

static int plot_point(const char *cmd, const char *text, const mbs_model *m, plot_target *p)
{
    static const char *const comps[9] = { "x", "y", "z", "vx", "vy", "vz", "ax", "ay", "az" };
    const char *dot = strrchr(text, '.');
    char name[256];
    size_t len = dot ? (size_t)(dot - text) : 0;
    p->comp = -1;
    if (dot)
        for (int k = 0; k < 9; k++)
            if (!strcmp(dot + 1, comps[k])) p->comp = k;
    if (p->comp >= 0 && len < sizeof name) {
        memcpy(name, text, len);
        name[len] = 0;
        p->point = mbs_point_find(m, name);
    }
    if (p->point < 0) {
        cli_error(cmd, "--plot-point: expected BODY.POINT.C with a named point of the model and C one of "
                  "x y z vx vy vz ax ay az, got '%s'", text);
        cli_usage_hint(cmd, usage);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

static int plot_coord(const char *cmd, const char *text, const mbs_model *m, plot_target *p)
{
    const int nq = mbs_model_nq(m);
    for (int k = 0; k < nq && p->coord < 0; k++)
        if (!strcmp(text, mbs_coord_name(m, k))) p->coord = k;
    size_t len = strlen(text);
    if (p->coord < 0 && len > 3 && !strcmp(text + len - 3, ".qd")) {
        const int nv = mbs_model_nv(m);   /* NAME.qd: a velocity by its name */
        for (int k = 0; k < nv && p->coord < 0; k++)
            if (strlen(mbs_vel_name(m, k)) == len - 3 && !strncmp(text, mbs_vel_name(m, k), len - 3)) {
                p->coord = k;
                p->vel = 1;
            }
    }
    if (p->coord < 0) {
        cli_error(cmd, "--plot-coord: expected a coordinate name of the model (or a velocity name NAME.qd), got '%s'", text);
        cli_usage_hint(cmd, usage);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

static int plot_target_of(const char *cmd, const opt_args *a, const mbs_model *m, plot_target *p)
{
    memset(p, 0, sizeof *p);
    p->point = p->coord = p->func = -1;
    snprintf(p->label, sizeof p->label, "%s", a->plot_point ? a->plot_point : a->plot_coord ? a->plot_coord
                                                                              : "integrand of psi");
    if (a->plot_point && plot_point(cmd, a->plot_point, m, p) != CLI_EXIT_OK) return CLI_EXIT_USAGE;
    if (a->plot_coord && plot_coord(cmd, a->plot_coord, m, p) != CLI_EXIT_OK) return CLI_EXIT_USAGE;
    if (a->plot_ref && (p->func = mbs_function_find(m, a->plot_ref)) < 0) {
        cli_error(cmd, "--plot-ref: the model has no function '%s'", a->plot_ref);
        cli_usage_hint(cmd, usage);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* The line that says what runs (unless --quiet). */
static void print_setup(const mbs_model *m, const mbs_opt_options *o, const int *fixed)
{
    const int np = mbs_model_nparams(m);
    mbs_sens_options tmp = o->sens;
    mbs_sens_method mm = o->auto_method ? mbs_opt_auto_method(m, &tmp) : o->sens.method;
    int nfree = 0;
    for (int j = 0; j < np; j++) nfree += !fixed[j];
    printf("model %s: %d of %d parameters free, objective %s, algorithm %s, gradient %s (%s), dt %g, tf %g\n",
           mbs_model_name(m), nfree, np, o->weights ? "weighted sum" : mbs_objective_name(m, o->objective),
           mbs_opt_algorithm_name(o->algorithm), mbs_sens_method_name(mm),
           tmp.sim.loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(tmp.sim.loop)
                                         : mbs_fd_algorithm_name(tmp.sim.formulation),
           tmp.sim.dt, tmp.sim.tf);
    fflush(stdout);
}

/* The stopping reason, psi and the parameters on standard output. */
static int print_result(const char *cmd, const mbs_model *m, const mbs_opt_options *o, const mbs_opt_result *res,
                        const int *fixed)
{
    cli_buf b = {0};
    cli_buf_printf(&b, "stop: %s after %d iterations, %d evaluations (%d failed), %d stage%s, %.3f s\n",
                   res->stop_reason, res->iterations, res->evaluations, res->failed_evaluations, res->stages,
                   res->stages == 1 ? "" : "s", res->wall_seconds);
    cli_opt_stop why;
    cli_opt_stop_explain(res, o, &why);
    cli_buf_printf(&b, "      %s\nresult: %s\n", why.words, why.verdict);
    cli_buf_printf(&b, "psi: %.10e -> %.10e (reduced %.4g times)\n", res->psi_initial, res->psi_final,
                   res->psi_final != 0 ? res->psi_initial / res->psi_final : INFINITY);
    cli_buf_printf(&b, "projected gradient norm: %.4e -> %.4e\n", res->pg_norm_initial, res->pg_norm);
    cli_buf_printf(&b, "%-16s %18s %18s %18s %s\n", "parameter", "initial", "optimized", "gradient", "");
    for (int j = 0; j < mbs_model_nparams(m); j++)
        cli_buf_printf(&b, "%-16s % 18.10e % 18.10e % 18.10e %s\n", mbs_param_name(m, j), res->x0[j], res->x[j],
                       res->grad[j], fixed[j] ? "(fixed)" : "");
    int rc = cli_buf_emit(&b, stdout, cmd);
    cli_buf_free(&b);
    return rc;
}

/* A whole text into the file of option `what` (nothing written on failure). */
static int write_text(const char *cmd, const char *what, const char *path, const char *input, const cli_buf *b)
{
    if (b->oom) {
        cli_error(cmd, "%s", "out of memory");
        return CLI_EXIT_FAIL;
    }
    return cli_write_atomic(cmd, what, path, input, b->s ? b->s : "", b->len) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* --plot: the responses of the initial and the optimized model, then the SVG. */
static int write_plot(const char *cmd, const opt_args *a, const char *input, const mbs_model *m,
                      const mbs_opt_options *o, const mbs_opt_result *res, const run_log *L, const plot_target *pt)
{
    series s0 = {0}, s1 = {0}, sref = {0};
    mbs_error err;
    memset(&err, 0, sizeof err);
    int rc = CLI_EXIT_FAIL;
    mbs_model *mopt = mbs_model_with_params(m, res->x, &err);
    if (!mopt || response(m, res, o, pt->point, pt->comp, pt->coord, pt->vel, &s0, &err) ||
        response(mopt, res, o, pt->point, pt->comp, pt->coord, pt->vel, &s1, &err)) {
        cli_error(cmd, "--plot: the response simulation failed: %s", err.msg);
    } else {
        if (pt->func >= 0)
            for (int k = 0; k < s1.n; k++)
                if (series_add(&sref, s1.t[k], mbs_function_eval(m, pt->func, s1.t[k], NULL))) break;
        const svg_opt_plot plot = {
            mbs_model_name(m), res, L->psi, L->iter, L->n, { s0.t, s0.y, s0.n }, { s1.t, s1.y, s1.n },
            { sref.t, sref.y, sref.n }, pt->label,
        };
        cli_buf pb = {0};
        svg_opt_plot_write(&pb, &plot);
        rc = write_text(cmd, "--plot", a->plot, input, &pb);
        cli_buf_free(&pb);
    }
    mbs_model_free(mopt);
    series_free(&s0);
    series_free(&s1);
    series_free(&sref);
    return rc;
}

/* The files asked for: --out, --history, --model-out, --plot. */
static int write_files(const char *cmd, const opt_args *a, const char *input, const mbs_model *m,
                       const mbs_opt_options *o, const mbs_opt_result *res, const run_log *L,
                       const plot_target *pt)
{
    int rc = CLI_EXIT_OK;
    if (a->out) {
        cli_buf jb = {0};
        result_json(&jb, m, input, o, res, o->fixed);
        rc = write_text(cmd, "--out", a->out, input, &jb);
        cli_buf_free(&jb);
        if (rc) return rc;
    }
    if (a->history) {
        if (L->hist.oom) {
            cli_error(cmd, "--history: out of memory");
            return CLI_EXIT_FAIL;
        }
        if ((rc = write_text(cmd, "--history", a->history, input, &L->hist))) return rc;
    }
    if (a->model_out && (rc = model_out(cmd, input, a->model_out, m, res->x))) return rc;
    if (a->plot) rc = write_plot(cmd, a, input, m, o, res, L, pt);
    return rc;
}

/* The run: the initial state's note, mbs_optimize, the result and the files. */
static int run(const char *cmd, const opt_args *a, const char *input, const mbs_model *m, mbs_opt_options *o,
               const plot_target *pt)
{
    run_log L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.quiet = a->quiet;
    o->callback = on_iter;
    o->callback_user = &L;
    o->message = on_message;
    o->message_user = NULL;
    if (!a->quiet) print_setup(m, o, o->fixed);
    mbs_opt_result res;
    memset(&res, 0, sizeof res);
    mbs_error err;
    memset(&err, 0, sizeof err);
    cli_initial_change ic;
    int rc = cli_initial_change_eval(cmd, m, o->sens.sim.t0, o->sens.sim.loop, &ic);
    if (rc == CLI_EXIT_OK) {
        cli_initial_change_note(stderr, cmd, m, &ic);
        if (mbs_optimize(m, o, &res, &err) != MBS_OK) {
            cli_error(cmd, "%s", err.msg[0] ? err.msg : "optimization failed");
            rc = CLI_EXIT_FAIL;
        } else {
            rc = print_result(cmd, m, o, &res, o->fixed);
            if (!rc) rc = write_files(cmd, a, input, m, o, &res, &L, pt);
            mbs_opt_result_free(&res);
        }
    }
    cli_buf_free(&L.hist);
    free(L.psi);
    free(L.iter);
    free(L.stage);
    free(L.tf);
    return rc;
}

int cmd_optimize(int argc, char **argv)
{
    const char *cmd = "optimize", *pos[1];
    opt_args a = { .sim = cli_sim_args_absent() };
    int npos = 0;
    int rc = cli_parse(&cli_optimize_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    cli_multistart ms = { 0, 1, 0, pos[0], a.out, a.json };
    if ((rc = cli_multistart_options(cmd, usage, a.multistart, a.seed, a.threads,
                                     a.model_out || a.history || a.plot, a.json, &ms)))
        return rc;

    /* the files are written after the run: refuse unwritable ones (the input model, a directory) before it */
    const char *const outs[4] = { a.out, a.model_out, a.history, a.plot };
    for (int k = 0; k < 4; k++)
        if (outs[k] && cli_output_check(cmd, outs[k], pos[0]) != 0) return CLI_EXIT_FAIL;
    cli_session ses;
    if (cli_session_open(&ses, cmd, pos[0], -1) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
    const mbs_model *m = ses.m;
    const int np = mbs_model_nparams(m), nobj = mbs_model_nobjectives(m);
    int *fixed = calloc((size_t)np + 1, sizeof *fixed);
    double *weights = calloc((size_t)nobj + 1, sizeof *weights);
    mbs_opt_options o = opt_options(&a, m);
    plot_target pt;
    rc = CLI_EXIT_FAIL;
    if (!fixed || !weights)
        cli_error(cmd, "out of memory");
    else if (nobj < 1)
        cli_error(cmd, "%s declares no objectives (add an \"objectives\" section)", pos[0]);
    else if (np < 1)
        cli_error(cmd, "%s declares no design parameters (add a \"parameters\" section)", pos[0]);
    else if ((rc = opt_choices(cmd, &a, m, &o, fixed, weights)) == CLI_EXIT_OK &&
             (rc = plot_target_of(cmd, &a, m, &pt)) == CLI_EXIT_OK) {
        if (a.multistart)
            rc = cli_optimize_multistart(cmd, m, &o, fixed, &ms);
        else {
            o.sens.threads = a.threads ? mbs_batch_threads(ms.threads) : 1;
            rc = run(cmd, &a, pos[0], m, &o, &pt);
        }
    }
    free(fixed);
    free(weights);
    cli_session_close(&ses);
    return rc;
}
