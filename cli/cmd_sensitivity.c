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
    if (!h->progress || el < h->delay || seconds_since(&h->last) <= 0.2) return;
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

int cmd_sensitivity(int argc, char **argv)
{
    const char *cmd = "sensitivity";
    const char *form_s = NULL, *ref_s = NULL, *meth_s = NULL, *dt_s = NULL, *tf_s = NULL, *fd_s = NULL;
    const char *hist_s = NULL, *th_s = NULL, *pos[1];
    int json = 0, quiet = 0, npos = 0;
    const cli_option opts[] = {
        {"--quiet", "-q", NULL, &quiet},
        {"--formulation", NULL, &form_s, NULL}, {"--ref", NULL, &ref_s, NULL},
        {"--method", NULL, &meth_s, NULL},      {"--dt", NULL, &dt_s, NULL},
        {"--tf", NULL, &tf_s, NULL},            {"--fd-step", NULL, &fd_s, NULL},
        {"--history", NULL, &hist_s, NULL},     {"--json", NULL, NULL, &json},
        {"--threads", NULL, &th_s, NULL},
    };
    int rc = cli_parse(cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), pos, 1, &npos, usage);
    if (rc == CLI_PARSE_HELP) return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK) return rc;
    if (npos != 1) return cli_usage_error(cmd, usage, "missing MODEL argument");
    int form = -1, loop = -1, ref = -1, meth = MBS_SENS_DDM;
    double dt = NAN, tf = NAN, fdh = NAN;
    char *end;
    if (form_s && (form = mbs_fd_algorithm_from_name(form_s)) < 0 &&
        ((loop = mbs_loop_formulation_from_name(form_s)) <= 0))
        return cli_usage_error(cmd, usage, "--formulation: expected fr, semi, matrixr, ali3p, penalty or index1, got '%s'",
                               form_s);
    if (ref_s && (ref = mbs_ref_point_from_name(ref_s)) < 0)
        return cli_usage_error(cmd, usage, "--ref: expected com, origin or joint, got '%s'", ref_s);
    if (meth_s && (meth = mbs_sens_method_from_name(meth_s)) < 0)
        return cli_usage_error(cmd, usage, "--method: expected ddm, davm, cavm, fd or cs, got '%s'", meth_s);
    if (dt_s && (!(dt = strtod(dt_s, &end)) || *end || !(dt > 0) || !isfinite(dt)))
        return cli_usage_error(cmd, usage, "--dt: expected a positive number, got '%s'", dt_s);
    if (tf_s && ((tf = strtod(tf_s, &end)), *end || !(tf > 0) || !isfinite(tf)))
        return cli_usage_error(cmd, usage, "--tf: expected a positive number, got '%s'", tf_s);
    if (fd_s && ((fdh = strtod(fd_s, &end)), *end || !(fdh > 0) || !isfinite(fdh)))
        return cli_usage_error(cmd, usage, "--fd-step: expected a positive number, got '%s'", fd_s);
    long threads = 1;
    if (th_s && ((threads = strtol(th_s, &end, 10)), end == th_s || *end || threads < 0 || threads > 4096))
        return cli_usage_error(cmd, usage, "--threads: expected an integer from 0 to 4096, got '%s'", th_s);

    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m) return CLI_EXIT_FAIL;
    mbs_sens_options o = mbs_sens_options_default(m);
    o.method = (mbs_sens_method)meth;
    if (form >= 0) {
        o.sim.formulation = (mbs_fd_algorithm)form;
        o.sim.loop = MBS_LOOP_NONE;   /* fr|semi on the command line overrides a loop formulation of the model file */
    } else if (loop < 0) {   /* cs differentiates the RK4 runs of fr; the others default to semi */
        o.sim.formulation = meth == MBS_SENS_CS ? MBS_FD_RECURSIVE : MBS_FD_SEMI_RECURSIVE;
    }
    if (loop > 0) o.sim.loop = (mbs_loop_formulation)loop;
    if (ref >= 0) o.sim.ref = (mbs_ref_point)ref;
    if (dt_s) o.sim.dt = dt;
    if (tf_s) o.sim.tf = tf;
    if (fd_s) o.fd_step = fdh;
    o.threads = mbs_batch_threads((int)threads);

    cli_initial_change ic;
    if (cli_initial_change_eval(cmd, m, o.sim.t0, o.sim.loop, &ic) != CLI_EXIT_OK) {
        mbs_model_free(m);
        return CLI_EXIT_FAIL;
    }
    cli_initial_change_note(stderr, cmd, m, &ic);
    /* history: written to a temporary file renamed at the end */
    hist h = { .m = m, .pass = "", .t0 = o.sim.t0, .tf = o.sim.tf, .delay = cli_progress_delay() };
    h.progress = !quiet && isatty(fileno(stderr));
    if (o.method == MBS_SENS_DAVM || o.method == MBS_SENS_CAVM) h.pass = " (forward pass)";
    clock_gettime(CLOCK_MONOTONIC, &h.start);
    h.last = h.start;
    cli_atomic af = { 0 };
    if (hist_s) {
        if (cli_atomic_open(&af, cmd, hist_s, pos[0]) != 0) {
            mbs_model_free(m);
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
        mbs_model_free(m);
        return CLI_EXIT_FAIL;
    }
    const char *fname = o.sim.loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o.sim.loop)
                                                    : mbs_fd_algorithm_name(o.sim.formulation);
    cli_buf b = {0};
    if (json) {
        cli_buf_puts(&b, "{\n  \"model\": ");
        cli_json_str(&b, mbs_model_name(m));
        cli_buf_printf(&b, ",\n  \"formulation\": \"%s\",\n  \"ref\": \"%s\",\n  \"method\": \"%s\",\n",
                       fname, mbs_ref_point_name(o.sim.ref), mbs_sens_method_name(o.method));
        cli_buf_puts(&b, "  \"dt\": ");
        cli_json_num(&b, o.sim.dt);
        cli_buf_puts(&b, ",\n  \"tf\": ");
        cli_json_num(&b, o.sim.tf);
        cli_buf_puts(&b, ",\n  \"initial_state\": ");
        cli_initial_change_json(&b, m, &ic);
        cli_buf_puts(&b, ",\n  \"objectives\": [");
        for (int k = 0; k < res.nobj; k++) { if (k) cli_buf_puts(&b, ", "); cli_json_str(&b, mbs_objective_name(m, k)); }
        cli_buf_puts(&b, "],\n  \"parameters\": [");
        for (int j = 0; j < res.nparam; j++) { if (j) cli_buf_puts(&b, ", "); cli_json_str(&b, mbs_param_name(m, j)); }
        cli_buf_puts(&b, "],\n  \"psi\": ");
        cli_json_vec(&b, res.psi, res.nobj);
        cli_buf_puts(&b, ",\n  \"gradient\": [");
        for (int k = 0; k < res.nobj; k++) {
            cli_buf_puts(&b, k ? ",\n    " : "\n    ");
            cli_json_vec(&b, res.grad + (size_t)k * res.nparam, res.nparam);
        }
        cli_buf_puts(&b, "\n  ],\n  \"wall_seconds\": ");
        cli_json_num(&b, res.wall_seconds);
        cli_buf_puts(&b, "\n}\n");
    } else {
        cli_buf_printf(&b, "model %s: %s formulation, ref %s, method %s, dt %g, tf %g (%.3f s)\n",
                       mbs_model_name(m), fname, mbs_ref_point_name(o.sim.ref), mbs_sens_method_name(o.method),
                       o.sim.dt, o.sim.tf, res.wall_seconds);
        /* columns as wide as their names (at least 10 and 15) */
        int wo = 10;
        for (int k = 0; k < res.nobj; k++)
            if ((int)strlen(mbs_objective_name(m, k)) > wo) wo = (int)strlen(mbs_objective_name(m, k));
        cli_buf_printf(&b, "%-*s %15s", wo, "objective", "psi");
        for (int j = 0; j < res.nparam; j++) {
            const int wp = (int)strlen(mbs_param_name(m, j)) > 15 ? (int)strlen(mbs_param_name(m, j)) : 15;
            cli_buf_printf(&b, " %*s", wp, mbs_param_name(m, j));
        }
        cli_buf_puts(&b, "\n");
        for (int k = 0; k < res.nobj; k++) {
            cli_buf_printf(&b, "%-*s % 15.8e", wo, mbs_objective_name(m, k), res.psi[k]);
            for (int j = 0; j < res.nparam; j++) {
                const int wp = (int)strlen(mbs_param_name(m, j)) > 15 ? (int)strlen(mbs_param_name(m, j)) : 15;
                cli_buf_printf(&b, " % *.8e", wp, res.grad[(size_t)k * res.nparam + j]);
            }
            cli_buf_puts(&b, "\n");
        }
    }
    rc = cli_buf_emit(&b, stdout, cmd);
    cli_buf_free(&b);
    mbs_sens_result_free(&res);
    mbs_model_free(m);
    return rc;
}
