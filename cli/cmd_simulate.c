/*
 * cmd_simulate.c - `mbsens simulate MODEL [options] [--out FILE.csv]`:
 * forward-dynamics simulation (mbs_simulate), trajectory as CSV.
 *
 * Settings: command-line options, else the model's "simulation" section,
 * else the built-in defaults (mbs_model_sim_options). Columns: t, every
 * coordinate, its velocity (NAME.qd) and acceleration (NAME.qdd), then the
 * model's "outputs" (mbs_output_column_name), then the body poses that
 * --poses asks for. --format json writes the same table as a JSON document
 * {"model", "columns": [...], "rows": [[...], ...]} (non-finite numbers as
 * null).
 *
 * The rows (every step, or every N-th with --every / --output-dt) are
 * streamed as they come, never held in memory. --out FILE: to a temporary
 * file .FILE.XXXXXX in the same directory, which is synced and renamed over
 * FILE at the end; on any failure (numerical, I/O, interrupt) it is
 * removed, so FILE is either the complete result or untouched (devices and
 * FIFOs are written to directly: cli_atomic_open). Without --out: to an
 * unnamed temporary file copied to standard output only if the run
 * succeeds (cli_spool_open).
 *
 * The summary goes to standard error (standard output may carry the CSV);
 * on a terminal, runs longer than 2 s show their progress there.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "shortest.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens simulate MODEL [--integrator trapezoidal|rk4|cvodes]\n"
          "                       [--solver newton|fixedpoint]\n"
          "                       [--formulation fr|semi|ali3p|matrixr|penalty|index1]\n"
          "                       [--penalty A] [--proj-scale S] [--projection penalty|iterative]\n"
          "                       [--ref com|origin|joint] [--dt H] [--tf T]\n"
          "                       [--tolerance TOL] [--max-iterations N]\n"
          "                       [--tangent fd|analytic] [--tangent-update iteration|step]\n"
          "                       [--rtol R] [--atol A] [--cvodes-method bdf|adams]\n"
          "                       [--no-project] [--every N | --output-dt T]\n"
          "                       [--poses all|BODY,...] [--format csv|json|npy]\n"
          "                       [--out FILE] [--quiet]\n"
          "\n"
          "Forward-dynamics simulation from the model's initial state (q0, qd0) over\n"
          "[0, T]. Writes a CSV with a header line: t, every coordinate, its velocity\n"
          "(NAME.qd) and acceleration (NAME.qdd), then the model's requested outputs\n"
          "(\"outputs\" section: point position/velocity/acceleration, energy), one row\n"
          "per output time 0, H, 2H, ..., T (or every N-th, and T). Settings not given\n"
          "here come from the model's \"simulation\" section, then from the defaults\n"
          "below. A summary (steps, iterations, energy and Euler-parameter drift, wall\n"
          "time) is printed on standard error.\n"
          "\n", out);
    fputs("Options:\n"
          "  --integrator NAME   trapezoidal (default; Newmark beta 1/4, gamma 1/2, fixed\n"
          "                      step), rk4 (fixed step) or cvodes (adaptive, SUNDIALS)\n"
          "  --solver NAME       trapezoidal: newton (default) or fixedpoint\n"
          "  --formulation NAME  forward dynamics: fr (fully recursive, default) or semi;\n"
          "                      closed loops (models with cut joints or drivers): ali3p\n"
          "                      (index-3 augmented Lagrangian with projections), matrixr\n"
          "                      (independent coordinates), penalty, index1 (Lagrange\n"
          "                      multipliers, Baumgarte; with rk4, cvodes or trapezoidal).\n"
          "                      Closed loops add the columns phi_norm, phid_norm and\n"
          "                      phidd_norm (2-norms of the constraint violations)\n"
          "  --penalty A         closed loops: penalty factor alpha (default 1e9)\n"
          "  --proj-scale S      ali3p: projection penalty scale varsigma (default 1)\n"
          "  --projection TYPE   ali3p: penalty (non-iterative, default) or iterative\n"
          "  --ref POINT         reference point: com (default), origin or joint\n"
          "  --dt H              step (trapezoidal, rk4) and output interval (default\n"
          "                      1e-3); at most 1e9 steps\n"
          "  --tf T              final time (default 1)\n"
          "  --every N           a CSV row every N output intervals H (and at T); default 1\n"
          "  --output-dt T       a CSV row every T, a multiple of the step H\n"
          "  --tolerance TOL     trapezoidal: 2-norm of the increment (default 1e-10)\n"
          "  --max-iterations N  trapezoidal: iterations per step (default 20)\n"
          "  --tangent KIND      trapezoidal Newton tangent: analytic (analytical\n"
          "                      derivatives, default) or fd (central differences)\n"
          "  --tangent-update W  trapezoidal Newton: re-evaluate the tangent every\n"
          "                      iteration (default) or once per step\n"
          "  --rtol R, --atol A  cvodes: tolerances (defaults 1e-8, 1e-10)\n"
          "  --cvodes-method M   cvodes: bdf (default) or adams\n"
          "  --no-project        do not project Euler parameters onto |p| = 1 after steps\n"
          "  --poses WHICH       add the pose of every moving body (all) or of the listed\n"
          "                      bodies: columns BODY.x, .y, .z (origin of the body frame)\n"
          "                      and BODY.qw, .qx, .qy, .qz (orientation quaternion)\n"
          "  --format FMT        csv (default), json: {\"model\", \"columns\", \"rows\"}, or\n"
          "                      npy: binary, numpy.load gives one record per row with a\n"
          "                      float64 field per column (a['t'], a['NAME.qd'])\n"
          "  --out FILE          write the CSV to FILE (atomically: temporary file and\n"
          "                      rename; nothing is left behind on failure; devices and\n"
          "                      FIFOs are written to directly); default or '-': standard\n"
          "                      output, once the run has succeeded\n"
          "  -q, --quiet         no summary and no progress\n"
          "  -h, --help          show this help and exit\n", out);
}

/* ---------------------------------------------------------------- values */

static int parse_double(const char *cmd, const char *opt, const char *s, int positive, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t') end++;
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return cli_usage_error(cmd, usage, "%s: invalid number '%s'", opt, s);
    if (positive && !(v > 0))
        return cli_usage_error(cmd, usage, "%s: must be > 0, got %s", opt, s);
    *out = v;
    return CLI_EXIT_OK;
}

static int parse_enum(const char *cmd, const char *opt, const char *s, int (*from_name)(const char *),
                      const char *choices, int *out)
{
    int k = from_name(s);
    if (k < 0) return cli_usage_error(cmd, usage, "%s: unknown value '%s' (expected %s)", opt, s, choices);
    *out = k;
    return CLI_EXIT_OK;
}

static int tangent_from_name(const char *name)
{
    if (!strcmp(name, "fd")) return 0;
    if (!strcmp(name, "analytic")) return 1;
    return -1;
}

/* ---------------------------------------------------------------- output */

typedef struct {
    const char *cmd;
    const mbs_model *m;
    const cli_initial_change *initial;
    int nq, nout;
    mbs_output *outs;     /* the model's outputs, then the --poses ones */
    int json;             /* --format json */
    int npy;              /* --format npy: binary rows after a header written at the end */
    cli_buf names;        /* npy: the fields of the header, "('t', '<f8'), ..." */
    char **seen;          /* npy: the names so far (numpy refuses a field twice) */
    int nseen;
    FILE *f;              /* --out: the temporary file (or device); else the spool */
    long every, step;     /* a row every `every` steps; steps so far */
    long rows;
    double tlast;         /* time of the last row */
    int write_error;
    double *vals;         /* the columns of one output (at most 4) */
    int violation;        /* closed loops: constraint-violation columns */
    int failed;           /* a library call failed (message in mbs_data_error) */
    /* progress */
    int progress;
    double t0, tf, delay;
    struct timespec start, last;
    int shown;
} sink;

static double seconds_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + 1e-9 * (double)(b.tv_nsec - a->tv_nsec);
}

static int npy_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* The .npy header (format 1.0, 2.0 for a long header, 3.0 for UTF-8
 * names): a structured array of `rows` records, one float64 field per
 * column; padded so that the data starts at a multiple of 64 bytes. The
 * same length whatever `rows` (written first with 0, then again at the
 * end). */
static void npy_header(sink *s, long rows)
{
    cli_buf h = {0};
    cli_buf_printf(&h, "{'descr': [%s], 'fortran_order': False, 'shape': (%20ld,), }",
                   s->names.s ? s->names.s : "", rows);
    int utf8 = 0;
    for (size_t k = 0; k < h.len; k++) utf8 |= (unsigned char)h.s[k] >= 0x80;
    const int big = utf8 || h.len + 1 + 10 > 65535;
    const size_t pre = big ? 12 : 10, total = (pre + h.len + 1 + 63) / 64 * 64, hlen = total - pre;
    unsigned char magic[12] = { 0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)(utf8 ? 3 : big ? 2 : 1), 0 };
    for (int k = 0; k < (big ? 4 : 2); k++) magic[8 + k] = (unsigned char)(hlen >> (8 * k));
    if (fwrite(magic, 1, pre, s->f) != pre || fwrite(h.s ? h.s : "", 1, h.len, s->f) != h.len) s->write_error = EIO;
    for (size_t k = h.len; k + 1 < hlen; k++)
        if (fputc(' ', s->f) == EOF) s->write_error = EIO;
    if (fputc('\n', s->f) == EOF || h.oom) s->write_error = EIO;
    cli_buf_free(&h);
}

/* at the end: the header again with the number of rows */
static void npy_finish(sink *s)
{
    if (fflush(s->f) != 0 || fseek(s->f, 0, SEEK_SET) != 0) {
        s->write_error = errno ? errno : EIO;
        return;
    }
    npy_header(s, s->rows);
    if (fflush(s->f) != 0 || fseek(s->f, 0, SEEK_END) != 0) s->write_error = errno ? errno : EIO;
}

static void emit_str(sink *s, const char *str)
{
    if (s->npy) return;   /* no text between binary values */
    if (fputs(str, s->f) < 0) s->write_error = errno ? errno : EIO;
}

/* an npy field: ('NAME', '<f8') as a Python literal, a repeated name
 * given a suffix #2, #3, ... (numpy refuses a field twice) */
static void npy_field(sink *s, const char *name)
{
    char uniq[640];
    snprintf(uniq, sizeof uniq, "%s", name);
    for (int n = 2;; n++) {
        int dup = 0;
        for (int k = 0; k < s->nseen && !dup; k++) dup = !strcmp(s->seen[k], uniq);
        if (!dup) break;
        snprintf(uniq, sizeof uniq, "%s#%d", name, n);
    }
    char **grown = realloc(s->seen, sizeof *grown * (size_t)(s->nseen + 1));
    if (grown) {
        s->seen = grown;
        if ((s->seen[s->nseen] = malloc(strlen(uniq) + 1)) != NULL) strcpy(s->seen[s->nseen++], uniq);
    }
    cli_buf_puts(&s->names, "('");
    for (const unsigned char *p = (const unsigned char *)uniq; *p; p++) {
        if (*p == '\\' || *p == '\'') cli_buf_printf(&s->names, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) cli_buf_printf(&s->names, "\\x%02x", *p);
        else cli_buf_printf(&s->names, "%c", *p);
    }
    cli_buf_printf(&s->names, "', '%cf8'), ", npy_little_endian() ? '<' : '>');
}

/* a column name: a CSV field (quoted if it must be), a JSON string or an npy field */
static void emit_name(sink *s, const char *sep, const char *a, const char *b)
{
    emit_str(s, sep);
    char name[600];
    snprintf(name, sizeof name, "%s%s", a, b);
    if (s->npy) {
        npy_field(s, name);
        return;
    }
    cli_buf t = {0};
    if (s->json) cli_json_str(&t, name);
    else cli_csv_name(&t, name);
    emit_str(s, t.s ? t.s : "\"\"");
    cli_buf_free(&t);
}

/* x with the fewest significant digits (15..17) that read back exactly
 * (shortest.h), after sep. */
static void emit(sink *s, const char *sep, double x)
{
    if (s->npy) {
        if (fwrite(&x, sizeof x, 1, s->f) != 1) s->write_error = errno ? errno : EIO;
        return;
    }
    char num[CLI_SHORTEST_LEN + 8];
    const size_t ls = strlen(sep);
    memcpy(num, sep, ls);
    size_t len = 4;
    if (s->json && !isfinite(x))
        memcpy(num + ls, "null", 5);
    else
        len = (size_t)cli_shortest(x, num + ls);
    if (fwrite(num, 1, ls + len, s->f) != ls + len) s->write_error = errno ? errno : EIO;
}

static void header(sink *s)
{
    const mbs_model *m = s->m;
    if (s->json) {
        cli_buf t = {0};
        cli_json_str(&t, mbs_model_name(m));
        emit_str(s, "{\"model\": ");
        emit_str(s, t.s ? t.s : "\"\"");
        cli_buf_free(&t);
        cli_initial_change_json(&t, m, s->initial);
        emit_str(s, ",\n \"initial_state\": ");
        emit_str(s, t.s ? t.s : "null");
        emit_str(s, ",\n \"columns\": [");
        cli_buf_free(&t);
    }
    emit_name(s, "", "t", "");
    static const char *const suffix[3] = { "", ".qd", ".qdd" };
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < s->nq; k++) emit_name(s, ",", mbs_coord_name(m, k), suffix[part]);
    for (int k = 0; k < s->nout; k++) {
        const mbs_output *o = &s->outs[k];
        for (int c = 0; c < mbs_output_ncolumns(o); c++) {
            char name[512];
            mbs_output_column_name(m, o, c, name, sizeof name);
            emit_name(s, ",", name, "");
        }
    }
    if (s->violation) {
        emit_name(s, ",", "phi_norm", "");
        emit_name(s, ",", "phid_norm", "");
        emit_name(s, ",", "phidd_norm", "");
    }
    if (s->npy) npy_header(s, 0);
    emit_str(s, s->json ? "],\n \"rows\": [\n" : "\n");
}

/* On a terminal, after cli_progress_delay(): the time reached, every 0.2 s. */
static int progress(sink *s, double t)
{
    if (s->progress && seconds_since(&s->start) >= s->delay && seconds_since(&s->last) > 0.2) {
        clock_gettime(CLOCK_MONOTONIC, &s->last);
        double span = s->tf - s->t0, frac = span > 0 ? (t - s->t0) / span : 1;
        fprintf(stderr, "\rmbsens simulate: t = %-12.6g of %g (%3.0f%%)  ", t, s->tf, 100 * frac);
        fflush(stderr);
        s->shown = 1;
    }
    return 0;
}

static int on_step(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                   const double *qdd)
{
    sink *s = user;
    if (s->step++ % s->every != 0 && t != s->tf) return progress(s, t);   /* (the last step ends at tf exactly) */
    if (s->json) emit_str(s, s->rows ? ",\n  [" : "  [");
    emit(s, "", t);
    const double *v[3] = { q, qd, qdd };
    for (int part = 0; part < 3; part++)
        for (int k = 0; k < s->nq; k++) emit(s, ",", v[part][k]);
    for (int k = 0; k < s->nout; k++) {
        const mbs_output *o = &s->outs[k];
        mbs_output_eval(m, d, q, o, s->vals);
        for (int c = 0; c < mbs_output_ncolumns(o); c++) emit(s, ",", s->vals[c]);
    }
    if (s->violation) {
        double v[3];
        if ((s->failed = mbs_constraint_violation(m, d, t, q, qd, qdd, v)) != 0) return s->failed;
        for (int c = 0; c < 3; c++) emit(s, ",", v[c]);
    }
    emit_str(s, s->json ? "]" : "\n");
    s->rows++;
    s->tlast = t;
    if (s->write_error) return MBS_ERR_IO;
    return progress(s, t);
}

/* The model's outputs, then the poses of --poses ("all" or body names,
 * comma-separated): malloc'd into *outs. CLI_EXIT_OK or a usage error. */
static int collect_outputs(const char *cmd, const mbs_model *m, const char *poses, mbs_output **outs, int *n)
{
    const int nmodel = mbs_model_noutputs(m), nb = mbs_model_nbodies(m);
    *n = 0;
    *outs = malloc(sizeof **outs * (size_t)(nmodel + (poses ? nb + 1 : 0) + 1));
    if (!*outs) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < nmodel; k++) (*outs)[(*n)++] = mbs_model_output(m, k);
    if (!poses) return CLI_EXIT_OK;
    const mbs_output pose = { MBS_OUTPUT_POSE, -1, 0 };
    if (strcmp(poses, "all") == 0) {
        for (int b = 1; b <= nb; b++) {
            (*outs)[*n] = pose;
            (*outs)[(*n)++].body = b;
        }
        return CLI_EXIT_OK;
    }
    for (const char *p = poses; *p;) {
        size_t len = strcspn(p, ",");
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        int b = mbs_body_find(m, name);
        if (b < 0 || *n >= nmodel + nb + 1) {
            free(*outs);
            *outs = NULL;
            return cli_usage_error(cmd, usage, "--poses: %s body '%s' (expected all or body names of %s)",
                                   b < 0 ? "unknown" : "repeated", name, mbs_model_name(m));
        }
        (*outs)[*n] = pose;
        (*outs)[(*n)++].body = b;
        p += len;
        if (*p == ',') p++;
    }
    return CLI_EXIT_OK;
}

/* ---------------------------------------------------------------- command */

int cmd_simulate(int argc, char **argv)
{
    const char *cmd = "simulate";
    const char *s_integ = NULL, *s_solver = NULL, *s_form = NULL, *s_ref = NULL, *s_dt = NULL, *s_tf = NULL;
    const char *s_tol = NULL, *s_maxit = NULL, *s_rtol = NULL, *s_atol = NULL, *s_cvm = NULL, *out = NULL;
    const char *s_tangent = NULL, *s_tupd = NULL;
    const char *s_pen = NULL, *s_pscale = NULL, *s_proj = NULL, *s_every = NULL, *s_odt = NULL;
    const char *s_poses = NULL, *s_format = NULL;
    const char *pos[1];
    int no_project = 0, quiet = 0, npos = 0;
    const cli_option opts[] = {
        {"--integrator", NULL, &s_integ, NULL},   {"--solver", NULL, &s_solver, NULL},
        {"--formulation", NULL, &s_form, NULL},   {"--ref", NULL, &s_ref, NULL},
        {"--dt", NULL, &s_dt, NULL},              {"--tf", NULL, &s_tf, NULL},
        {"--tolerance", NULL, &s_tol, NULL},      {"--max-iterations", NULL, &s_maxit, NULL},
        {"--rtol", NULL, &s_rtol, NULL},          {"--atol", NULL, &s_atol, NULL},
        {"--cvodes-method", NULL, &s_cvm, NULL},  {"--no-project", NULL, NULL, &no_project},
        {"--tangent", NULL, &s_tangent, NULL},    {"--tangent-update", NULL, &s_tupd, NULL},
        {"--penalty", NULL, &s_pen, NULL},        {"--proj-scale", NULL, &s_pscale, NULL},
        {"--projection", NULL, &s_proj, NULL},    {"--every", NULL, &s_every, NULL},
        {"--output-dt", NULL, &s_odt, NULL},
        {"--poses", NULL, &s_poses, NULL},        {"--format", NULL, &s_format, NULL},
        {"--out", "-o", &out, NULL},              {"--quiet", "-q", NULL, &quiet},
    };
    int rc = cli_parse(cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), pos, 1, &npos, usage);
    if (rc == CLI_PARSE_HELP) return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) return rc;
    if (npos != 1) return cli_usage_error(cmd, usage, "missing MODEL argument");

    /* Check the option values before loading the model (usage errors, 2). */
    if (s_format && strcmp(s_format, "csv") != 0 && strcmp(s_format, "json") != 0 && strcmp(s_format, "npy") != 0)
        return cli_usage_error(cmd, usage, "--format: unknown value '%s' (expected csv, json or npy)", s_format);
    int e_integ = -1, e_solver = -1, e_form = -1, e_ref = -1, e_cvm = -1, maxit = 0, e_loop = -1, e_proj = -1;
    int e_tupd = -1, e_tangent = -1;
    double dt = 0, tf = 0, tol = 0, rtol = 0, atol = 0, pen = 0, pscale = 0, odt = 0;
    long every = 1;
    if (s_form) {   /* fr | semi (open trees), or a closed-loop formulation */
        e_form = mbs_fd_algorithm_from_name(s_form);
        if (e_form < 0) {
            e_loop = mbs_loop_formulation_from_name(s_form);
            if (e_loop <= 0)
                return cli_usage_error(cmd, usage, "--formulation: unknown value '%s' (expected fr, semi, ali3p, "
                                       "matrixr, penalty or index1)", s_form);
        }
    }
    if ((s_proj && (rc = parse_enum(cmd, "--projection", s_proj, mbs_projection_from_name, "penalty or iterative",
                                    &e_proj))) ||
        (s_pen && (rc = parse_double(cmd, "--penalty", s_pen, 1, &pen))) ||
        (s_pscale && (rc = parse_double(cmd, "--proj-scale", s_pscale, 1, &pscale))))
        return rc;
    if ((s_integ && (rc = parse_enum(cmd, "--integrator", s_integ, mbs_integrator_from_name,
                                     "trapezoidal, rk4 or cvodes", &e_integ))) ||
        (s_solver && (rc = parse_enum(cmd, "--solver", s_solver, mbs_nl_solver_from_name, "newton or fixedpoint",
                                      &e_solver))) ||
        (s_ref && (rc = parse_enum(cmd, "--ref", s_ref, mbs_ref_point_from_name, "com, origin or joint", &e_ref))) ||
        (s_cvm && (rc = parse_enum(cmd, "--cvodes-method", s_cvm, mbs_cvodes_method_from_name, "bdf or adams",
                                   &e_cvm))) ||
        (s_tupd && (rc = parse_enum(cmd, "--tangent-update", s_tupd, mbs_tangent_update_from_name,
                                    "iteration or step", &e_tupd))) ||
        (s_tangent && (rc = parse_enum(cmd, "--tangent", s_tangent, tangent_from_name, "fd or analytic",
                                       &e_tangent))) ||
        (s_dt && (rc = parse_double(cmd, "--dt", s_dt, 1, &dt))) ||
        (s_tf && (rc = parse_double(cmd, "--tf", s_tf, 0, &tf))) ||
        (s_tol && (rc = parse_double(cmd, "--tolerance", s_tol, 1, &tol))) ||
        (s_rtol && (rc = parse_double(cmd, "--rtol", s_rtol, 1, &rtol))) ||
        (s_atol && (rc = parse_double(cmd, "--atol", s_atol, 1, &atol))) ||
        (s_odt && (rc = parse_double(cmd, "--output-dt", s_odt, 1, &odt))))
        return rc;
    if (s_every && s_odt) return cli_usage_error(cmd, usage, "--every and --output-dt: give one of them");
    if (s_every) {
        char *end;
        errno = 0;
        every = strtol(s_every, &end, 10);
        if (end == s_every || *end != '\0' || errno == ERANGE || every < 1 || every > MBS_SIM_MAX_STEPS)
            return cli_usage_error(cmd, usage, "--every: expected an integer between 1 and %ld, got '%s'",
                                   MBS_SIM_MAX_STEPS, s_every);
    }
    if (s_maxit) {
        char *end;
        errno = 0;
        long v = strtol(s_maxit, &end, 10);
        if (end == s_maxit || *end != '\0' || errno == ERANGE || v < 1 || v > 1000000)
            return cli_usage_error(cmd, usage, "--max-iterations: expected an integer between 1 and 1000000, got '%s'",
                                   s_maxit);
        maxit = (int)v;
    }

    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m) return CLI_EXIT_FAIL;
    mbs_sim_options o = mbs_model_sim_options(m);
    if (e_integ >= 0) o.integrator = (mbs_integrator_type)e_integ;
    if (e_solver >= 0) o.solver = (mbs_nl_solver)e_solver;
    if (e_form >= 0) {
        o.formulation = (mbs_fd_algorithm)e_form;
        o.loop = MBS_LOOP_NONE;   /* fr|semi on the command line overrides a loop formulation of the model file */
    }
    if (e_ref >= 0) o.ref = (mbs_ref_point)e_ref;
    if (e_cvm >= 0) o.cvodes_method = (mbs_cvodes_method)e_cvm;
    if (s_dt) o.dt = dt;
    if (s_tf) o.tf = tf;
    if (s_tol) o.tolerance = tol;
    if (s_rtol) o.rtol = rtol;
    if (s_atol) o.atol = atol;
    if (maxit) o.max_iterations = maxit;
    if (e_tupd >= 0) o.tangent_update = (mbs_tangent_update)e_tupd;
    if (e_tangent >= 0) o.tangent = e_tangent ? mbs_tangent_analytic : mbs_tangent_fd;
    if (no_project) o.project = 0;
    if (e_loop > 0) o.loop = (mbs_loop_formulation)e_loop;
    if (o.loop == MBS_LOOP_INDEX1 && o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL) {
        if (e_solver == MBS_SOLVER_NEWTON)
            fprintf(stderr, "mbsens %s: note: index1 with the trapezoidal rule uses the fixedpoint solver, "
                            "not %s\n", cmd, mbs_nl_solver_name(o.solver));
        o.solver = MBS_SOLVER_FIXEDPOINT;   /* as the integrator does (for the summary) */
    }
    if (e_proj >= 0) o.projection = (mbs_projection)e_proj;
    if (s_pen) o.penalty = pen;
    if (s_pscale) o.proj_scale = pscale;
    mbs_error err;
    memset(&err, 0, sizeof err);
    if (mbs_sim_options_check(&o, &err) != MBS_OK) {
        mbs_model_free(m);
        return cli_usage_error(cmd, usage, "%s", err.msg);
    }
    if (s_odt) {   /* a whole number of steps */
        const double r = odt / o.dt;
        every = r < 0.5 ? 0 : (long)floor(r + 0.5);
        if (!(r <= (double)MBS_SIM_MAX_STEPS) || every < 1 || fabs(r - (double)every) > 1e-9 * (double)every) {
            mbs_model_free(m);
            return cli_usage_error(cmd, usage, "--output-dt %g is not a whole multiple of the step dt = %g", odt,
                                   o.dt);
        }
    }

    cli_initial_change ic;
    if (cli_initial_change_eval(cmd, m, o.t0, o.loop, &ic) != CLI_EXIT_OK) {
        mbs_model_free(m);
        return CLI_EXIT_FAIL;
    }
    cli_initial_change_note(stderr, cmd, m, &ic);
    const int to_file = out && strcmp(out, "-") != 0;
    sink s;
    memset(&s, 0, sizeof s);
    s.cmd = cmd;
    s.m = m;
    s.initial = &ic;
    s.nq = mbs_model_nq(m);
    s.json = s_format && strcmp(s_format, "json") == 0;
    s.npy = s_format && strcmp(s_format, "npy") == 0;
    if ((rc = collect_outputs(cmd, m, s_poses, &s.outs, &s.nout)) != CLI_EXIT_OK) {
        mbs_model_free(m);
        return rc;
    }
    s.violation = o.loop != MBS_LOOP_NONE;
    s.every = every;
    s.t0 = o.t0;
    s.tf = o.tf;
    s.progress = !quiet && isatty(fileno(stderr));
    s.delay = cli_progress_delay();
    clock_gettime(CLOCK_MONOTONIC, &s.start);
    s.last = s.start;
    s.vals = calloc(MBS_OUTPUT_MAX_COLUMNS, sizeof(double));
    mbs_data *d = mbs_data_create(m, &err);
    cli_atomic af = { 0 };
    rc = CLI_EXIT_OK;
    if (!d || !s.vals) {
        cli_error(cmd, "%s", d ? "out of memory" : err.msg);
        rc = CLI_EXIT_FAIL;
    }
    if (!rc && to_file) {
        if (cli_atomic_open(&af, cmd, out, pos[0]) != 0) rc = CLI_EXIT_FAIL;
        s.f = af.f;
        if (!rc && s.npy && !af.tmp) {   /* its header is rewritten at the end */
            cli_error(cmd, "--format npy: '%s' is a device or a FIFO; write to a file or to standard output", out);
            cli_atomic_abort(&af);
            s.f = NULL;
            rc = CLI_EXIT_FAIL;
        }
    } else if (!rc && !(s.f = cli_spool_open(cmd))) {
        rc = CLI_EXIT_FAIL;
    }
    mbs_sim_stats st;
    memset(&st, 0, sizeof st);
    int status = MBS_OK;
    if (!rc) {
        header(&s);
        status = mbs_simulate(m, d, &o, NULL, NULL, on_step, &s, &st, &err);
        if (status == MBS_OK && s.json) emit_str(&s, "\n]}\n");
        if (status == MBS_OK && s.npy) npy_finish(&s);
        if (status == MBS_OK && s.write_error) status = MBS_ERR_IO;
    }
    double wall = seconds_since(&s.start);
    if (s.shown) fputs("\r\033[K", stderr);
    if (!rc && status != MBS_OK) {
        if (s.write_error && to_file)
            cli_error(cmd, "cannot write '%s': %s (at t = %g)", out, strerror(s.write_error), s.tlast);
        else if (s.write_error)
            cli_error(cmd, "cannot write the temporary copy of the CSV (TMPDIR): %s (at t = %g)",
                      strerror(s.write_error), s.tlast);
        else
            cli_error(cmd, "%s", s.failed ? mbs_data_error(d) : err.msg);
        rc = CLI_EXIT_FAIL;
    }
    if (to_file && af.f) {
        if (rc) cli_atomic_abort(&af);
        else if (cli_atomic_commit(&af, cmd, NULL) != 0) rc = CLI_EXIT_FAIL;
    } else if (!to_file && s.f) {
        if (rc) fclose(s.f);
        else rc = cli_spool_emit(s.f, stdout, cmd);
    }
    if (!rc && !quiet) {
        const int trap = o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL;
        fprintf(stderr, "mbsens simulate: %s, %s", mbs_model_name(m), mbs_integrator_name(o.integrator));
        if (trap) fprintf(stderr, " (%s)", mbs_nl_solver_name(o.solver));
        if (o.integrator == MBS_INTEGRATOR_CVODES)
            fprintf(stderr, " (%s, rtol %g, atol %g)", mbs_cvodes_method_name(o.cvodes_method), o.rtol, o.atol);
        fprintf(stderr, ", formulation %s, ref %s, dt %g, t = %g .. %g\n",
                o.loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o.loop) : mbs_fd_algorithm_name(o.formulation),
                mbs_ref_point_name(o.ref), o.dt, o.t0, o.tf);
        if (every > 1)
            fprintf(stderr, "  steps            %ld (%ld output rows, one every %ld dt)\n", st.steps, s.rows,
                    every);
        else
            fprintf(stderr, "  steps            %ld (%ld output rows)\n", st.steps, s.rows);

        cli_initial_change_summary(stderr, m, &ic);
        if (trap && o.loop != MBS_LOOP_NONE && o.loop != MBS_LOOP_INDEX1)
            /* closed-loop steppers: exact tangent sweeps, the force part kept across steps by default */
            fprintf(stderr, "  iterations       mean %.2f, max %d per step (newton, tangent %s)\n",
                    st.iterations_mean, st.iterations_max,
                    o.tangent_keep ? "analytic, force part kept" : "analytic");
        else if (trap)
            fprintf(stderr, "  iterations       mean %.2f, max %d per step (%s%s%s%s)\n", st.iterations_mean,
                    st.iterations_max, mbs_nl_solver_name(o.solver),
                    o.solver == MBS_SOLVER_NEWTON ? ", tangent " : "",
                    o.solver == MBS_SOLVER_NEWTON ? (o.tangent == mbs_tangent_fd ? "fd" : "analytic") : "",
                    o.solver == MBS_SOLVER_NEWTON && o.tangent_update == MBS_TANGENT_STEP ? " once per step" : "");
        else if (o.integrator == MBS_INTEGRATOR_CVODES)
            fprintf(stderr, "  iterations       %ld nonlinear (%.2f per step), %ld error-test failures\n",
                    st.iterations, st.iterations_mean, st.error_test_fails);
        fprintf(stderr, "  evaluations      %ld dynamics, %ld tangents/Jacobians\n", st.fevals, st.tangent_evals);
        double scale = fabs(st.energy0) > 0 ? fabs(st.energy0) : 1;
        fprintf(stderr, "  energy drift     %.3e (max |E - E0|; relative %.3e; E0 = %.9g)\n", st.energy_drift,
                st.energy_drift / scale, st.energy0);
        if (o.loop != MBS_LOOP_NONE) {
            fprintf(stderr, "  constraints      max |Phi| %.3e, |dPhi/dt| %.3e, |d2Phi/dt2| %.3e\n", st.violation[0],
                    st.violation[1], st.violation[2]);
            if (o.loop == MBS_LOOP_ALI3P)
                fprintf(stderr, "  projections      %ld velocity, %ld acceleration (%s, alpha %g, varsigma %g)\n",
                        st.projections[0], st.projections[1], mbs_projection_name(o.projection), o.penalty,
                        o.proj_scale);
        }
        fprintf(stderr, "  Euler drift      %.3e (max ||p| - 1| before %s)\n", st.euler_drift,
                o.project ? "projection" : "any projection: projection off");
        fprintf(stderr, "  wall time        %.3f s\n", wall);
        if (to_file) fprintf(stderr, "  wrote            %s\n", out);
    }
    free(s.vals);
    free(s.outs);
    for (int k = 0; k < s.nseen; k++) free(s.seen[k]);
    free(s.seen);
    cli_buf_free(&s.names);
    mbs_data_free(d);
    mbs_model_free(m);
    return rc;
}
