/*
 * svg_plot.h - the SVG plot of `mbsens optimize --plot`: psi against the
 * iterations, and the initial and optimized responses against time; with
 * the pieces it is drawn with (panels with axes and ticks, polylines).
 */
#ifndef MBS_CLI_SVG_PLOT_H
#define MBS_CLI_SVG_PLOT_H

#include "cli_util.h"
#include "mbsens/optimize.h"

/* A panel: axes at (x0, y0) of size (w, h) over the data ranges
 * [xmin, xmax] x [ymin, ymax]; logy: the y range is in decades (log10). */
typedef struct svg_panel {
    double x0, y0, w, h;
    double xmin, xmax, ymin, ymax;
    int logy;
} svg_panel;

/* Points (x[k], y[k]), k < n. */
typedef struct svg_curve {
    const double *x, *y;
    int n;
} svg_curve;

/* Frame, title, axis labels, grid lines and tick labels. */
void svg_panel_axes(cli_buf *b, const svg_panel *p, const char *title, const char *xlabel, const char *ylabel);
/* The curve as a polyline (decimated to about 2000 points), with a
 * circle per point when markers is set and there are at most 400. */
void svg_polyline(cli_buf *b, const svg_panel *p, svg_curve c, const char *color, int markers);
/* The smallest and largest finite y[k] (HUGE_VAL, -HUGE_VAL: none). */
void svg_range(const double *y, int n, double *lo, double *hi);
/* Text with <, > and & escaped. */
void svg_escape(cli_buf *b, const char *s);

/* What the plot of an optimization shows. */
typedef struct svg_opt_plot {
    const char *model;            /* its name */
    const mbs_opt_result *res;
    const double *psi;            /* psi of the accepted iterations, all stages in order */
    const int *iter;              /* their iteration numbers (0: a stage's start) */
    int n;
    svg_curve initial, optimized; /* the responses against time */
    svg_curve reference;          /* a time function drawn dashed (n = 0: none) */
    const char *label;            /* what the response is */
} svg_opt_plot;

void svg_opt_plot_write(cli_buf *b, const svg_opt_plot *p);

#endif
