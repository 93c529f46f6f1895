/*
 * svg_plot.c - the SVG plot of `mbsens optimize --plot` (svg_plot.h).
 */
#include <math.h>
#include <stdlib.h>

#include "svg_plot.h"

/* A tick spacing of 1, 2 or 5 times a power of ten, about range / 5. */
static double nice_step(double range)
{
    if (!(range > 0)) return 1;
    double e = pow(10, floor(log10(range / 5)));
    double r = range / 5 / e;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * e;
}

static double px(const svg_panel *p, double x) { return p->x0 + (x - p->xmin) / (p->xmax - p->xmin) * p->w; }
static double py(const svg_panel *p, double y)
{
    if (p->logy) y = log10(y);
    return p->y0 + p->h - (y - p->ymin) / (p->ymax - p->ymin) * p->h;
}

static void grid_line(cli_buf *b, double x1, double y1, double x2, double y2)
{
    cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x1, y1, x2, y2);
}

static void y_ticks(cli_buf *b, const svg_panel *p)
{
    if (p->logy) {
        const double every = ceil((p->ymax - p->ymin) / 8);   /* at most ~8 labelled decades */
        for (double e = ceil(p->ymin / every) * every; e <= p->ymax + 1e-9; e += every) {
            double Y = p->y0 + p->h - (e - p->ymin) / (p->ymax - p->ymin) * p->h;
            grid_line(b, p->x0, Y, p->x0 + p->w, Y);
            cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">1e%d</text>\n",
                           p->x0 - 4, Y + 4, (int)e);
        }
        return;
    }
    double sy = nice_step(p->ymax - p->ymin);
    for (double y = ceil(p->ymin / sy) * sy; y <= p->ymax + 1e-9 * sy; y += sy) {
        double Y = py(p, y);
        grid_line(b, p->x0, Y, p->x0 + p->w, Y);
        cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\">%.4g</text>\n",
                       p->x0 - 4, Y + 4, fabs(y) < 1e-12 * sy ? 0.0 : y);
    }
}

void svg_panel_axes(cli_buf *b, const svg_panel *p, const char *title, const char *xlabel, const char *ylabel)
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
    double st = nice_step(p->xmax - p->xmin);
    for (double x = ceil(p->xmin / st) * st; x <= p->xmax + 1e-9 * st; x += st) {
        double X = px(p, x);
        grid_line(b, X, p->y0, X, p->y0 + p->h);
        cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%g</text>\n", X,
                       p->y0 + p->h + 16, fabs(x) < 1e-12 * st ? 0.0 : x);
    }
    y_ticks(b, p);
}

void svg_polyline(cli_buf *b, const svg_panel *p, svg_curve c, const char *color, int markers)
{
    const int n = c.n;
    if (n < 1) return;
    cli_buf_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    int stride = n > 2000 ? n / 2000 : 1;
    for (int k = 0; k < n; k += stride) cli_buf_printf(b, "%.2f,%.2f ", px(p, c.x[k]), py(p, c.y[k]));
    if ((n - 1) % stride) cli_buf_printf(b, "%.2f,%.2f", px(p, c.x[n - 1]), py(p, c.y[n - 1]));
    cli_buf_puts(b, "\"/>\n");
    if (markers && n <= 400)
        for (int k = 0; k < n; k++)
            cli_buf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"/>\n", px(p, c.x[k]),
                           py(p, c.y[k]), color);
}

void svg_range(const double *y, int n, double *lo, double *hi)
{
    *lo = HUGE_VAL;
    *hi = -HUGE_VAL;
    for (int k = 0; k < n; k++)
        if (isfinite(y[k])) {
            if (y[k] < *lo) *lo = y[k];
            if (y[k] > *hi) *hi = y[k];
        }
}

void svg_escape(cli_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') cli_buf_puts(b, "&lt;");
        else if (*s == '>') cli_buf_puts(b, "&gt;");
        else if (*s == '&') cli_buf_puts(b, "&amp;");
        else cli_buf_printf(b, "%c", *s);
    }
}

/* ---- the plot of an optimization ---- */

/* The y range of psi: decades when psi is positive and spans more than a
 * factor 50, else linear with a margin of 5 %. */
static void psi_range(svg_panel *p, double lo, double hi)
{
    if (lo > 0 && hi / lo > 50) {
        p->logy = 1;
        p->ymin = floor(log10(lo));
        p->ymax = ceil(log10(hi));
        if (p->ymax <= p->ymin) p->ymax = p->ymin + 1;
        return;
    }
    double pad = 0.05 * (hi - lo) + 1e-300;
    p->ymin = lo - pad;
    p->ymax = hi + pad;
    if (!(p->ymax > p->ymin)) {
        p->ymin = lo - 1;
        p->ymax = hi + 1;
    }
}

/* Left panel: psi against iterations. A stage's start (iteration 0) is the
 * end point of the previous stage evaluated over the longer horizon: it
 * gets the same abscissa, and a dashed line marks it. */
static void psi_panel(cli_buf *b, const svg_opt_plot *P)
{
    svg_panel p = { 90, 70, 360, 290, 0, 1, 0, 1, 0 };
    double *xi = calloc((size_t)P->n + 1, sizeof *xi);
    int n = 0;
    if (!xi) return;
    for (int k = 0, pos = 0; k < P->n; k++) {
        if (k > 0 && P->iter[k] == 0) pos--;
        xi[n++] = pos++;
    }
    double lo, hi;
    svg_range(P->psi, n, &lo, &hi);
    p.xmax = n > 1 && xi[n - 1] > 0 ? xi[n - 1] : 1;
    psi_range(&p, lo, hi);
    svg_panel_axes(b, &p, P->res->stages > 1 ? "psi against iterations (all stages)" : "psi against iterations",
                   "iteration", p.logy ? "psi (log scale)" : "psi");
    if (P->res->stages > 1)
        for (int k = 1; k < n; k++)
            if (P->iter[k] == 0) {
                double X = px(&p, xi[k]);
                cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#aaa\" "
                               "stroke-dasharray=\"4,3\"/>\n", X, p.y0, X, p.y0 + p.h);
            }
    svg_polyline(b, &p, (svg_curve){ xi, P->psi, n }, "#1f4e9c", 1);
    free(xi);
}

/* The ranges of the responses (and the reference), with a margin of 5 % in y. */
static void response_range(svg_panel *p, const svg_opt_plot *P)
{
    double lo0, hi0, lo1, hi1, t0a, t1a, t0b, t1b;
    svg_range(P->initial.y, P->initial.n, &lo0, &hi0);
    svg_range(P->optimized.y, P->optimized.n, &lo1, &hi1);
    svg_range(P->initial.x, P->initial.n, &t0a, &t1a);
    svg_range(P->optimized.x, P->optimized.n, &t0b, &t1b);
    double lo = fmin(lo0, lo1), hi = fmax(hi0, hi1);
    if (P->reference.n) {
        double lr, hr;
        svg_range(P->reference.y, P->reference.n, &lr, &hr);
        lo = fmin(lo, lr);
        hi = fmax(hi, hr);
    }
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    double pad = 0.05 * (hi - lo);
    if (!(pad > 0)) pad = 1e-3 * (fabs(hi) + 1);
    p->ymin = lo - pad;
    p->ymax = hi + pad;
    p->xmin = fmin(t0a, t0b);
    p->xmax = fmax(t1a, t1b);
    if (!isfinite(p->xmin) || !isfinite(p->xmax) || !(p->xmax > p->xmin)) {
        p->xmin = 0;
        p->xmax = 1;
    }
}

/* A legend entry at (x, y): a line of the colour, then the word. */
static void legend(cli_buf *b, double x, double y, const char *color, const char *extra, const char *word)
{
    cli_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n",
                   x, y, x + 30, y, color, extra, x + 36, y + 4, word);
}

/* Right panel: the initial and optimized responses against time. */
static void response_panel(cli_buf *b, const svg_opt_plot *P, double H)
{
    svg_panel p = { 580, 70, 380, 290, 0, 1, 0, 1, 0 };
    response_range(&p, P);
    svg_panel_axes(b, &p, "response: initial and optimized", "t (s)", "");
    cli_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
                   "transform=\"rotate(-90 %.1f %.1f)\">", p.x0 - 62, p.y0 + p.h / 2, p.x0 - 62, p.y0 + p.h / 2);
    svg_escape(b, P->label);
    cli_buf_puts(b, "</text>\n");
    svg_polyline(b, &p, P->initial, "#c0392b", 0);
    svg_polyline(b, &p, P->optimized, "#1e8449", 0);
    if (P->reference.n) {
        cli_buf_printf(b, "<g stroke-dasharray=\"6,4\">\n");
        svg_polyline(b, &p, P->reference, "#555555", 0);
        cli_buf_puts(b, "</g>\n");
        legend(b, p.x0 + 230, H - 20.0, "#555555", " stroke-dasharray=\"6,4\"", "reference");
    }
    legend(b, p.x0 + 10, H - 20.0, "#c0392b", "", "initial");
    legend(b, p.x0 + 110, H - 20.0, "#1e8449", "", "optimized");
}

void svg_opt_plot_write(cli_buf *b, const svg_opt_plot *P)
{
    const double W = 1000, H = 430;
    const mbs_opt_result *res = P->res;
    cli_buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
                   "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    cli_buf_printf(b, "<text x=\"%g\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", W / 2);
    svg_escape(b, P->model);
    cli_buf_printf(b, ": psi %.6g -> %.6g (%s, %d iterations, %d evaluations, stop: %s)</text>\n", res->psi_initial,
                   res->psi_final, mbs_sens_method_name(res->method), res->iterations, res->evaluations,
                   res->stop_reason);
    psi_panel(b, P);
    response_panel(b, P, H);
    cli_buf_puts(b, "</svg>\n");
}
