/*
 * cmd_sensitivity.c - `mbsens sensitivity MODEL [--formulation fr|semi]
 * [--ref com|origin|joint] [--method ddm|davm|cavm|fd|cs] [--dt H] [--tf T]
 * [--json] [--history FILE.csv]`: objectives and their gradients with
 * respect to the design parameters (mbs_sensitivity).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_options.h"
#include "cli_session.h"
#include "cli_util.h"
#include "shortest.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens sensitivity MODEL [--method ddm|davm|cavm|fd|cs]\n"
          "                          [--formulation semi|fr|ali3p|matrixr] [--ref com|origin|joint]\n"
          "                          [--dt H] [--tf T] [--fd-step S]\n"
          "                          [--json] [--history FILE.csv] [--quiet] [--threads N]\n"
          "\n"
          "Objective functions of MODEL (its \"objectives\" section) over a simulation\n"
          "from the initial state, and their gradients with respect to its design\n"
          "parameters (\"parameters\" section). Prints a table objectives x parameters.\n"
          "\n"
          "Methods:\n"
          "  ddm    direct differentiation (default): semi = exact derivative of the\n"
          "         trapezoidal steps; fr = Anderson & Hsu, RK4 on the state and its\n"
          "         sensitivities with articulated-body solves; ali3p, matrixr = exact\n"
          "         derivative of the formulation's steps (projections included)\n"
          "  davm   discrete adjoint of the same steps (semi, ali3p, matrixr)\n"
          "  cavm   continuous adjoint: open trees (semi, fr) CVODES forward with\n"
          "         checkpoints and backward adjoint; closed loops (ali3p, matrixr) the\n"
          "         adjoint of the constrained equations in independent coordinates\n"
          "  fd     central finite differences over whole simulations (2p + 1 runs)\n"
          "  cs     complex step over whole RK4 simulations (fr, its default)\n"
          "\n"
          "Options:\n"
          "  --formulation NAME  open trees: semi (trapezoidal rule, default; cs: fr) or fr\n"
          "                      (fully recursive, RK4); closed loops: ali3p or matrixr\n"
          "                      (default: the model's simulation section)\n"
          "  --ref POINT         reference point: com (default), origin or joint\n"
          "  --dt H              step (default: the model's simulation section, else 1e-3)\n"
          "  --tf T              final time (default: the model's, else 1)\n"
          "  --fd-step S         fd: relative step (default 1e-6)\n"
          "  --threads N         ddm: its parameter columns, fd: its runs on N threads\n"
          "                      (default 1; 0: OMP_NUM_THREADS, else the cores); the\n"
          "                      results do not depend on it\n"
          "  --json              print a JSON object\n"
          "  --history FILE      write t, psi and (ddm) the gradient at every step as CSV\n"
          "  -q, --quiet         no progress (shown on a terminal for runs over 2 s: the\n"
          "                      time reached and the time left; for davm and cavm the\n"
          "                      forward pass)\n"
          "  -h, --help          show this help and exit\n", out);
}

typedef struct {
    FILE *f;              /* --history, or NULL */
    const mbs_model *m;
    int header;
    /* progress on a terminal (as simulate's), with the time left */
    int progress, shown;
    const char *pass;     /* "" or " (forward pass)": the adjoints' backward pass is not shown */
    double t0, tf, delay;
    struct timespec start, last;
} hist;

static double seconds_since(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + 1e-9 * (double)(b.tv_nsec - a->tv_nsec);
}

static void progress(hist *h, double t)
{
    const double el = seconds_since(&h->start);
    /* once the delay has passed: at once, then every 0.2 s */
    if (!h->progress || el < h->delay || (h->shown && seconds_since(&h->last) <= 0.2)) return;
    clock_gettime(CLOCK_MONOTONIC, &h->last);
    const double span = h->tf - h->t0, frac = span > 0 ? (t - h->t0) / span : 1;
    fprintf(stderr, "\rmbsens sensitivity: t = %-10.6g of %g (%3.0f%%)%s", t, h->tf, 100 * frac, h->pass);
    const double left = el * (1 - frac) / (frac > 0 ? frac : 1);
    if (frac > 0.01 && frac < 1) fprintf(stderr, left < 10 ? ", %.1f s left  " : ", %.0f s left  ", left);
    else fputs("  ", stderr);
    fflush(stderr);
    h->shown = 1;
}

static void put_num(FILE *f, const char *sep, double x)
{
    char num[CLI_SHORTEST_LEN];
    cli_shortest(x, num);
    fputs(sep, f);
    fputs(num, f);
}

static int on_history(void *user, double t, int nobj, int nparam, const double *psi, const double *grad)
{
    hist *h = user;
    progress(h, t);
    if (!h->f) return 0;
    if (!h->header) {
        cli_buf b = {0};
        cli_buf_puts(&b, "t");
        for (int k = 0; k < nobj; k++) {
            cli_buf_puts(&b, ",");
            cli_csv_name(&b, mbs_objective_name(h->m, k));
        }
        if (grad)
            for (int k = 0; k < nobj; k++)
                for (int j = 0; j < nparam; j++) {
                    char name[600];
                    snprintf(name, sizeof name, "d%s/d%s", mbs_objective_name(h->m, k), mbs_param_name(h->m, j));
                    cli_buf_puts(&b, ",");
                    cli_csv_name(&b, name);
                }
        cli_buf_puts(&b, "\n");
        if (b.s) fputs(b.s, h->f);
        cli_buf_free(&b);
        h->header = 1;
    }
    put_num(h->f, "", t);
    for (int k = 0; k < nobj; k++) put_num(h->f, ",", psi[k]);
    if (grad)
        for (int k = 0; k < nobj * nparam; k++) put_num(h->f, ",", grad[k]);
    fputc('\n', h->f);
    return 0;
}

typedef struct {
    cli_sim_args sim;
    int method;
    double fd_step;
    const char *history, *threads;
    int json, quiet;
} sens_args;

#define ROW(NAME, KIND, F) CLI_ROW(sens_args, NAME, NULL, KIND, F)
static const cli_opt sens_opts[] = {
    CLI_ROW(sens_args, "--quiet", "-q", CLI_FLAG, quiet),
    CLI_ROW_NAME(sens_args, "--formulation", sim.formulation, cli_formulation_from_name,
                 "fr, semi, matrixr, ali3p, penalty or index1"),
    CLI_ROW_NAME(sens_args, "--ref", sim.ref, mbs_ref_point_from_name, "com, origin or joint"),
    CLI_ROW_NAME(sens_args, "--method", method, mbs_sens_method_from_name, "ddm, davm, cavm, fd or cs"),
    ROW("--dt", CLI_POSITIVE, sim.dt),
    ROW("--tf", CLI_POSITIVE, sim.tf),
    ROW("--fd-step", CLI_POSITIVE, fd_step),
    ROW("--history", CLI_STRING, history),
    ROW("--json", CLI_FLAG, json),
    ROW("--threads", CLI_STRING, threads),
};
#undef ROW

const cli_command cli_sensitivity_command = {
    "sensitivity", usage, sens_opts, CLI_NELEM(sens_opts), NULL, 0, 1, 1, "missing MODEL argument",
    CLI_WORDS_EXPECTED,
};

static void write_json(cli_buf *b, const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *res,
                       const cli_initial_change *ic, const char *fname)
{
    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(m));
    cli_buf_printf(b, ",\n  \"formulation\": \"%s\",\n  \"ref\": \"%s\",\n  \"method\": \"%s\",\n",
                   fname, mbs_ref_point_name(o->sim.ref), mbs_sens_method_name(o->method));
    cli_buf_puts(b, "  \"dt\": ");
    cli_json_num(b, o->sim.dt);
    cli_buf_puts(b, ",\n  \"tf\": ");
    cli_json_num(b, o->sim.tf);
    cli_buf_puts(b, ",\n  \"initial_state\": ");
    cli_initial_change_json(b, m, ic);
    cli_buf_puts(b, ",\n  \"objectives\": [");
    for (int k = 0; k < res->nobj; k++) { if (k) cli_buf_puts(b, ", "); cli_json_str(b, mbs_objective_name(m, k)); }
    cli_buf_puts(b, "],\n  \"parameters\": [");
    for (int j = 0; j < res->nparam; j++) { if (j) cli_buf_puts(b, ", "); cli_json_str(b, mbs_param_name(m, j)); }
    cli_buf_puts(b, "],\n  \"psi\": ");
    cli_json_vec(b, res->psi, res->nobj);
    cli_buf_puts(b, ",\n  \"gradient\": [");
    for (int k = 0; k < res->nobj; k++) {
        cli_buf_puts(b, k ? ",\n    " : "\n    ");
        cli_json_vec(b, res->grad + (size_t)k * res->nparam, res->nparam);
    }
    cli_buf_puts(b, "\n  ],\n  \"wall_seconds\": ");
    cli_json_num(b, res->wall_seconds);
    cli_buf_puts(b, "\n}\n");
}

static void write_table(cli_buf *b, const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *res,
                        const char *fname)
{
    cli_buf_printf(b, "model %s: %s formulation, ref %s, method %s, dt %g, tf %g (%.3f s)\n",
                   mbs_model_name(m), fname, mbs_ref_point_name(o->sim.ref), mbs_sens_method_name(o->method),
                   o->sim.dt, o->sim.tf, res->wall_seconds);
    /* columns as wide as their names (at least 10 and 15) */
    int wo = 10;
    for (int k = 0; k < res->nobj; k++)
        if ((int)strlen(mbs_objective_name(m, k)) > wo) wo = (int)strlen(mbs_objective_name(m, k));
    cli_buf_printf(b, "%-*s %15s", wo, "objective", "psi");
    for (int j = 0; j < res->nparam; j++) {
        const int wp = (int)strlen(mbs_param_name(m, j)) > 15 ? (int)strlen(mbs_param_name(m, j)) : 15;
        cli_buf_printf(b, " %*s", wp, mbs_param_name(m, j));
    }
    cli_buf_puts(b, "\n");
    for (int k = 0; k < res->nobj; k++) {
        cli_buf_printf(b, "%-*s % 15.8e", wo, mbs_objective_name(m, k), res->psi[k]);
        for (int j = 0; j < res->nparam; j++) {
            const int wp = (int)strlen(mbs_param_name(m, j)) > 15 ? (int)strlen(mbs_param_name(m, j)) : 15;
            cli_buf_printf(b, " % *.8e", wp, res->grad[(size_t)k * res->nparam + j]);
        }
        cli_buf_puts(b, "\n");
    }
}

/* The model's settings with the options given over them. */
static mbs_sens_options sens_options(const sens_args *a, const mbs_model *m)
{
    mbs_sens_options o = mbs_sens_options_default(m);
    o.method = a->method >= 0 ? (mbs_sens_method)a->method : MBS_SENS_DDM;
    if (a->sim.formulation < 0)   /* cs differentiates the RK4 runs of fr; the others default to semi */
        o.sim.formulation = o.method == MBS_SENS_CS ? MBS_FD_RECURSIVE : MBS_FD_SEMI_RECURSIVE;
    cli_sim_apply(&a->sim, &o.sim);
    if (cli_given(a->fd_step)) o.fd_step = a->fd_step;
    return o;
}

int cmd_sensitivity(int argc, char **argv)
{
    const char *cmd = "sensitivity", *pos[1];
    sens_args a = { .sim = cli_sim_args_absent() };
    int npos = 0;
    int rc = cli_parse(&cli_sensitivity_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    long threads = 1;
    if (a.threads && (rc = cli_parse_long(cmd, usage, "--threads", a.threads, 0, 4096, &threads)) != CLI_EXIT_OK)
        return rc;

    cli_session ses;
    if (cli_session_open(&ses, cmd, pos[0], -1) != CLI_EXIT_OK) return CLI_EXIT_FAIL;
    const mbs_model *m = ses.m;
    mbs_sens_options o = sens_options(&a, m);
    o.threads = mbs_batch_threads((int)threads);
    cli_initial_change ic;
    if (cli_initial_change_eval(cmd, m, o.sim.t0, o.sim.loop, &ic) != CLI_EXIT_OK) {
        cli_session_close(&ses);
        return CLI_EXIT_FAIL;
    }
    cli_initial_change_note(stderr, cmd, m, &ic);
    /* history: written to a temporary file renamed at the end */
    hist h = { .m = m, .pass = "", .t0 = o.sim.t0, .tf = o.sim.tf, .delay = cli_progress_delay() };
    h.progress = !a.quiet && isatty(fileno(stderr));
    if (o.method == MBS_SENS_DAVM || o.method == MBS_SENS_CAVM) h.pass = " (forward pass)";
    clock_gettime(CLOCK_MONOTONIC, &h.start);
    h.last = h.start;
    cli_atomic af = { 0 };
    if (a.history) {
        if (cli_atomic_open(&af, cmd, a.history, pos[0]) != 0) {
            cli_session_close(&ses);
            return CLI_EXIT_FAIL;
        }
        h.f = af.f;
    }
    if (h.f || h.progress) {
        o.history = on_history;
        o.history_user = &h;
    }
    mbs_sens_result res;
    mbs_error err;
    err.msg[0] = 0;
    rc = mbs_sensitivity(m, &o, &res, &err) == MBS_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (h.shown) fputs("\r\033[K", stderr);
    if (h.f) {
        if (rc != CLI_EXIT_OK) cli_atomic_abort(&af);
        else if (cli_atomic_commit(&af, cmd, "--history") != 0) rc = CLI_EXIT_FAIL;
    }
    if (rc != CLI_EXIT_OK) {
        if (err.msg[0]) cli_error(cmd, "%s", err.msg);
        mbs_sens_result_free(&res);
        cli_session_close(&ses);
        return CLI_EXIT_FAIL;
    }
    const char *fname = o.sim.loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o.sim.loop)
                                                    : mbs_fd_algorithm_name(o.sim.formulation);
    cli_buf b = {0};
    if (a.json) write_json(&b, m, &o, &res, &ic, fname);
    else write_table(&b, m, &o, &res, fname);
    rc = cli_buf_emit(&b, stdout, cmd);
    cli_buf_free(&b);
    mbs_sens_result_free(&res);
    cli_session_close(&ses);
    return rc;
}
