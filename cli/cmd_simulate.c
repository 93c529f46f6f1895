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

#include "cli_options.h"
#include "cli_session.h"
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
          "  -o, --out FILE      write the CSV to FILE (atomically: temporary file and\n"
          "                      rename; nothing is left behind on failure; devices and\n"
          "                      FIFOs are written to directly); default or '-': standard\n"
          "                      output, once the run has succeeded\n"
          "  -q, --quiet         no summary and no progress\n"
          "  -h, --help          show this help and exit\n", out);
}

/* ---------------------------------------------------------------- output */

typedef struct {
    const char *cmd;
    const mbs_model *m;
    const cli_initial_change *initial;
    int nq, nv, nout;     /* coordinates, velocities, outputs */
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
    double *vals;         /* the columns of one output (at most 7) */
    mbs_data *fdata;      /* the inverse dynamics of force outputs (NULL without them) */
    int violation;        /* closed loops: constraint-violation columns */
    int failed;           /* a library call failed (message in mbs_data_error) */
    /* progress */
    int progress;
    double t0, tf, delay;
    struct timespec start, last;
    int shown;
    double wall;          /* seconds of the run */
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
 * gets '#' and its occurrence count appended (numpy refuses a field
 * twice) */
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
        for (int k = 0; k < (part ? s->nv : s->nq); k++)
            emit_name(s, ",", part ? mbs_vel_name(m, k) : mbs_coord_name(m, k), suffix[part]);
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

/* On a terminal, once cli_progress_delay() has passed: the time reached,
 * at once and then every 0.2 s. */
static int progress(sink *s, double t)
{
    if (s->progress && seconds_since(&s->start) >= s->delay && (!s->shown || seconds_since(&s->last) > 0.2)) {
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
        for (int k = 0; k < (part ? s->nv : s->nq); k++) emit(s, ",", v[part][k]);
    for (int k = 0; k < s->nout; k++) {
        const mbs_output *o = &s->outs[k];
        if (o->kind != MBS_OUTPUT_FORCE) mbs_output_eval(m, d, q, o, s->vals);
        else if ((s->failed = mbs_output_eval_state(m, s->fdata, t, q, qd, qdd, o, s->vals)) != 0) return s->failed;
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
    const mbs_output pose = { MBS_OUTPUT_POSE, -1, 0, 0, { -1, -1, -1 } };
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

typedef struct {
    cli_sim_args sim;
    int format;           /* 0 csv, 1 json, 2 npy */
    const char *poses, *out;
    double output_dt;
    long every;
    int quiet;
} sim_args;

static int format_from_name(const char *name)
{
    return !strcmp(name, "csv") ? 0 : !strcmp(name, "json") ? 1 : !strcmp(name, "npy") ? 2 : -1;
}

#define ROW(NAME, KIND, F) CLI_ROW(sim_args, NAME, NULL, KIND, F)
#define ROW_NAME(NAME, F, FROM, EXPECTED) CLI_ROW_NAME(sim_args, NAME, F, FROM, EXPECTED)
static const cli_opt sim_opts[] = {
    ROW_NAME("--integrator", sim.integrator, mbs_integrator_from_name, "trapezoidal, rk4 or cvodes"),
    ROW_NAME("--solver", sim.solver, mbs_nl_solver_from_name, "newton or fixedpoint"),
    ROW_NAME("--formulation", sim.formulation, cli_formulation_from_name,
             "fr, semi, ali3p, matrixr, penalty or index1"),
    ROW_NAME("--ref", sim.ref, mbs_ref_point_from_name, "com, origin or joint"),
    ROW("--dt", CLI_POSITIVE, sim.dt),
    ROW("--tf", CLI_NUMBER, sim.tf),
    ROW("--tolerance", CLI_POSITIVE, sim.tolerance),
    CLI_ROW_COUNT(sim_args, "--max-iterations", sim.max_iterations, 1000000),
    ROW("--rtol", CLI_POSITIVE, sim.rtol),
    ROW("--atol", CLI_POSITIVE, sim.atol),
    ROW_NAME("--cvodes-method", sim.cvodes_method, mbs_cvodes_method_from_name, "bdf or adams"),
    ROW("--no-project", CLI_FLAG, sim.no_project),
    ROW_NAME("--tangent", sim.tangent, cli_tangent_from_name, "fd or analytic"),
    ROW_NAME("--tangent-update", sim.tangent_update, mbs_tangent_update_from_name, "iteration or step"),
    ROW("--penalty", CLI_POSITIVE, sim.penalty),
    ROW("--proj-scale", CLI_POSITIVE, sim.proj_scale),
    ROW_NAME("--projection", sim.projection, mbs_projection_from_name, "penalty or iterative"),
    CLI_ROW_COUNT(sim_args, "--every", every, MBS_SIM_MAX_STEPS),
    ROW("--output-dt", CLI_POSITIVE, output_dt),
    ROW("--poses", CLI_STRING, poses),
    ROW_NAME("--format", format, format_from_name, "csv, json or npy"),
    CLI_ROW(sim_args, "--out", "-o", CLI_STRING, out),
    CLI_ROW(sim_args, "--quiet", "-q", CLI_FLAG, quiet),
};
#undef ROW
#undef ROW_NAME

static const cli_pair sim_pairs[] = {
    { "--every", "--output-dt", "--every and --output-dt: give one of them" },
};

const cli_command cli_simulate_command = {
    "simulate", usage, sim_opts, CLI_NELEM(sim_opts), sim_pairs, CLI_NELEM(sim_pairs),
    1, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

/* The model's simulation settings with the options given over them,
 * checked; the output interval in steps into *every. */
static int sim_options(const char *cmd, const sim_args *a, const mbs_model *m, mbs_sim_options *o, long *every)
{
    *o = mbs_model_sim_options(m);
    cli_sim_apply(&a->sim, o);
    if (o->loop == MBS_LOOP_INDEX1 && o->integrator == MBS_INTEGRATOR_TRAPEZOIDAL) {
        if (a->sim.solver == MBS_SOLVER_NEWTON)
            fprintf(stderr, "mbsens %s: note: index1 with the trapezoidal rule uses the fixedpoint solver, "
                            "not %s\n", cmd, mbs_nl_solver_name(o->solver));
        o->solver = MBS_SOLVER_FIXEDPOINT;   /* as the integrator does (for the summary) */
    }
    mbs_error err;
    memset(&err, 0, sizeof err);
    if (mbs_sim_options_check(o, &err) != MBS_OK) return cli_usage_error(cmd, usage, "%s", err.msg);
    *every = a->every ? a->every : 1;
    if (cli_given(a->output_dt)) {   /* a whole number of steps */
        const double r = a->output_dt / o->dt;
        *every = r < 0.5 ? 0 : (long)floor(r + 0.5);
        if (!(r <= (double)MBS_SIM_MAX_STEPS) || *every < 1 || fabs(r - (double)*every) > 1e-9 * (double)*every)
            return cli_usage_error(cmd, usage, "--output-dt %g is not a whole multiple of the step dt = %g",
                                   a->output_dt, o->dt);
    }
    return CLI_EXIT_OK;
}

/* The sink's destination: --out (atomically), else the spool. */
static int sink_open(sink *s, cli_atomic *af, const char *out, const char *model_path)
{
    if (!out) return (s->f = cli_spool_open(s->cmd)) ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (cli_atomic_open(af, s->cmd, out, model_path) != 0) return CLI_EXIT_FAIL;
    s->f = af->f;
    if (s->npy && !af->tmp) {   /* its header is rewritten at the end */
        cli_error(s->cmd, "--format npy: '%s' is a device or a FIFO; write to a file or to standard output", out);
        cli_atomic_abort(af);
        s->f = NULL;
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int sink_init(sink *s, const sim_args *a, const mbs_model *m, const mbs_sim_options *o, long every,
                     const cli_initial_change *ic)
{
    memset(s, 0, sizeof *s);
    s->cmd = "simulate";
    s->m = m;
    s->initial = ic;
    s->nq = mbs_model_nq(m);
    s->nv = mbs_model_nv(m);
    s->json = a->format == 1;
    s->npy = a->format == 2;
    int rc = collect_outputs(s->cmd, m, a->poses, &s->outs, &s->nout);
    if (rc != CLI_EXIT_OK) return rc;
    s->violation = o->loop != MBS_LOOP_NONE;
    s->every = every;
    s->t0 = o->t0;
    s->tf = o->tf;
    s->progress = !a->quiet && isatty(fileno(stderr));
    s->delay = cli_progress_delay();
    clock_gettime(CLOCK_MONOTONIC, &s->start);
    s->last = s->start;
    s->vals = calloc(MBS_OUTPUT_MAX_COLUMNS, sizeof(double));
    int forces = 0;
    for (int k = 0; k < s->nout; k++) forces |= s->outs[k].kind == MBS_OUTPUT_FORCE;
    if (forces) s->fdata = mbs_data_create(m, NULL);
    if (!s->vals || (forces && !s->fdata)) {
        cli_error(s->cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    if (s->fdata) mbs_data_set_ref(s->fdata, o->ref);
    return CLI_EXIT_OK;
}

static void sink_free(sink *s)
{
    free(s->vals);
    mbs_data_free(s->fdata);
    free(s->outs);
    for (int k = 0; k < s->nseen; k++) free(s->seen[k]);
    free(s->seen);
    cli_buf_free(&s->names);
}

/* The run into the sink; the file committed (or the spool copied to
 * standard output) when it succeeded, removed otherwise. */
static int run(sink *s, cli_atomic *af, const char *out, const mbs_model *m, mbs_data *d, const mbs_sim_options *o,
               mbs_sim_stats *st)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    header(s);
    int status = mbs_simulate(m, d, o, NULL, NULL, on_step, s, st, &err);
    if (status == MBS_OK && s->json) emit_str(s, "\n]}\n");
    if (status == MBS_OK && s->npy) npy_finish(s);
    if (status == MBS_OK && s->write_error) status = MBS_ERR_IO;
    s->wall = seconds_since(&s->start);
    if (s->shown) fputs("\r\033[K", stderr);
    int rc = CLI_EXIT_OK;
    if (status != MBS_OK) {
        if (s->write_error && out)
            cli_error(s->cmd, "cannot write '%s': %s (at t = %g)", out, strerror(s->write_error), s->tlast);
        else if (s->write_error)
            cli_error(s->cmd, "cannot write the temporary copy of the CSV (TMPDIR): %s (at t = %g)",
                      strerror(s->write_error), s->tlast);
        else
            cli_error(s->cmd, "%s", !s->failed ? err.msg : s->fdata && mbs_data_error(s->fdata)[0]
                                                                  ? mbs_data_error(s->fdata) : mbs_data_error(d));
        rc = CLI_EXIT_FAIL;
    }
    if (out) {
        if (rc) cli_atomic_abort(af);
        else if (cli_atomic_commit(af, s->cmd, NULL) != 0) rc = CLI_EXIT_FAIL;
    } else {
        if (rc) fclose(s->f);
        else rc = cli_spool_emit(s->f, stdout, s->cmd);
    }
    return rc;
}

/* The iterations line of the summary. */
static void summary_iterations(const mbs_sim_options *o, const mbs_sim_stats *st)
{
    const int trap = o->integrator == MBS_INTEGRATOR_TRAPEZOIDAL, newton = o->solver == MBS_SOLVER_NEWTON;
    if (trap && o->loop != MBS_LOOP_NONE && o->loop != MBS_LOOP_INDEX1)
        /* closed-loop steppers: exact tangent sweeps, the force part kept across steps by default */
        fprintf(stderr, "  iterations       mean %.2f, max %d per step (newton, tangent %s)\n", st->iterations_mean,
                st->iterations_max, o->tangent_keep ? "analytic, force part kept" : "analytic");
    else if (trap)
        fprintf(stderr, "  iterations       mean %.2f, max %d per step (%s%s%s%s)\n", st->iterations_mean,
                st->iterations_max, mbs_nl_solver_name(o->solver), newton ? ", tangent " : "",
                newton ? (o->tangent == mbs_tangent_fd ? "fd" : "analytic") : "",
                newton && o->tangent_update == MBS_TANGENT_STEP ? " once per step" : "");
    else if (o->integrator == MBS_INTEGRATOR_CVODES)
        fprintf(stderr, "  iterations       %ld nonlinear (%.2f per step), %ld error-test failures\n",
                st->iterations, st->iterations_mean, st->error_test_fails);
}

/* The summary on standard error. */
static void summary(const sink *s, const mbs_sim_options *o, const mbs_sim_stats *st, const char *out)
{
    fprintf(stderr, "mbsens simulate: %s, %s", mbs_model_name(s->m), mbs_integrator_name(o->integrator));
    if (o->integrator == MBS_INTEGRATOR_TRAPEZOIDAL) fprintf(stderr, " (%s)", mbs_nl_solver_name(o->solver));
    if (o->integrator == MBS_INTEGRATOR_CVODES)
        fprintf(stderr, " (%s, rtol %g, atol %g)", mbs_cvodes_method_name(o->cvodes_method), o->rtol, o->atol);
    fprintf(stderr, ", formulation %s, ref %s, dt %g, t = %g .. %g\n",
            o->loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o->loop) : mbs_fd_algorithm_name(o->formulation),
            mbs_ref_point_name(o->ref), o->dt, o->t0, o->tf);
    if (s->every > 1)
        fprintf(stderr, "  steps            %ld (%ld output rows, one every %ld dt)\n", st->steps, s->rows,
                s->every);
    else
        fprintf(stderr, "  steps            %ld (%ld output rows)\n", st->steps, s->rows);
    cli_initial_change_summary(stderr, s->m, s->initial);
    summary_iterations(o, st);
    fprintf(stderr, "  evaluations      %ld dynamics, %ld tangents/Jacobians\n", st->fevals, st->tangent_evals);
    double scale = fabs(st->energy0) > 0 ? fabs(st->energy0) : 1;
    fprintf(stderr, "  energy drift     %.3e (max |E - E0|; relative %.3e; E0 = %.9g)\n", st->energy_drift,
            st->energy_drift / scale, st->energy0);
    if (o->loop != MBS_LOOP_NONE) {
        fprintf(stderr, "  constraints      max |Phi| %.3e, |dPhi/dt| %.3e, |d2Phi/dt2| %.3e\n", st->violation[0],
                st->violation[1], st->violation[2]);
        if (o->loop == MBS_LOOP_ALI3P)
            fprintf(stderr, "  projections      %ld velocity, %ld acceleration (%s, alpha %g, varsigma %g)\n",
                    st->projections[0], st->projections[1], mbs_projection_name(o->projection), o->penalty,
                    o->proj_scale);
    }
    fprintf(stderr, "  Euler drift      %.3e (max ||p| - 1| before %s)\n", st->euler_drift,
            o->project ? "projection" : "any projection: projection off");
    fprintf(stderr, "  wall time        %.3f s\n", s->wall);
    if (out) fprintf(stderr, "  wrote            %s\n", out);
}

int cmd_simulate(int argc, char **argv)
{
    const char *cmd = "simulate", *pos[1];
    sim_args a = { .sim = cli_sim_args_absent() };
    int npos = 0;
    int rc = cli_parse(&cli_simulate_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    const char *out = a.out && strcmp(a.out, "-") != 0 ? a.out : NULL;

    cli_session ses;
    if (cli_session_open(&ses, cmd, pos[0], -1) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
    mbs_sim_options o;
    long every = 1;
    cli_initial_change ic;
    sink s;
    memset(&s, 0, sizeof s);
    if ((rc = sim_options(cmd, &a, ses.m, &o, &every)) != CLI_EXIT_OK) goto done;
    if (cli_initial_change_eval(cmd, ses.m, o.t0, o.loop, &ic) != CLI_EXIT_OK) {
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    cli_initial_change_note(stderr, cmd, ses.m, &ic);
    if ((rc = sink_init(&s, &a, ses.m, &o, every, &ic)) != CLI_EXIT_OK) goto done;
    if ((rc = cli_session_data(&ses, cmd, o.ref)) != CLI_EXIT_OK) goto done;
    cli_atomic af = { 0 };
    if ((rc = sink_open(&s, &af, out, pos[0])) != CLI_EXIT_OK) goto done;
    mbs_sim_stats st;
    memset(&st, 0, sizeof st);
    rc = run(&s, &af, out, ses.m, ses.d, &o, &st);
    if (!rc && !a.quiet) summary(&s, &o, &st, out);
done:
    sink_free(&s);
    cli_session_close(&ses);
    return rc;
}
