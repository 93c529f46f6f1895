/*
 * optimize_multistart.c - `mbsens optimize --multistart N`: N independent
 * optimizations from starts drawn uniformly within the bounds of the free
 * parameters, and which of them found the lowest psi.
 *
 * Starts. Start i draws one number u_j in (0, 1) per parameter from the
 * generator of `mbsens sweep`'s random cases, seeded by --seed and i
 * alone (sweep.h, cases_rng); a free parameter starts at
 * lower_j + u_j (upper_j - lower_j), a fixed one at its value. A start
 * depends on nothing else, so any start can be recomputed by itself.
 *
 * The starts are the cases of a ledger (sweep.h): on threads in one
 * process, or on MPI ranks through the same hand-out as `mbsens sweep`
 * (cases_mpi_main). Each start's result row holds its figures, its stop
 * reason as a code (opt_stop.h) and its start and final parameters; a
 * start that fails (its simulation at the start point, a parameter value
 * the model rejects) is recorded with its message and the others carry
 * on. The report is built from the rows alone, so it is the same bytes
 * whatever the threads and ranks.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "opt_stop.h"
#include "optimize_multistart.h"
#include "sweep.h"

/* The row of a start: these figures, then x0 and x (nparam each). */
enum { MS_PSI0, MS_PSI, MS_PG, MS_PGS, MS_ITER, MS_EVAL, MS_FAILED, MS_STOP, MS_STAGES, MS_NFIG };

typedef struct ms_job {
    const mbs_model *m;
    mbs_opt_options o;        /* for every start: no callbacks, gradients on one thread */
    const mbs_opt_options *caller;
    const int *fixed;
    const cli_multistart *ms;
    int np;
} ms_job;

/* The start values of start i (np). */
static void ms_start(const ms_job *j, long i, double *x0)
{
    uint64_t g = cases_rng(j->ms->seed, i);
    for (int k = 0; k < j->np; k++) {
        double u = cases_unit_open(&g), lo = mbs_param_lower(j->m, k), hi = mbs_param_upper(j->m, k);
        x0[k] = j->fixed && j->fixed[k] ? mbs_param_value(j->m, k) : lo + (hi - lo) * u;
    }
}

/* Start i into row (MS_NFIG + 2 np): MBS_OK or the failure with err. */
static int ms_run_start(const ms_job *j, long i, double *row, mbs_error *err)
{
    double *x0 = row + MS_NFIG, *x = x0 + j->np;
    ms_start(j, i, x0);
    mbs_model *mi = mbs_model_with_params(j->m, x0, err);
    if (!mi) return err->code ? err->code : MBS_ERR_MODEL;
    mbs_opt_result res;
    memset(&res, 0, sizeof res);
    int rc = mbs_optimize(mi, &j->o, &res, err);
    if (rc == MBS_OK) {
        row[MS_PSI0] = res.psi_initial;
        row[MS_PSI] = res.psi_final;
        row[MS_PG] = res.pg_norm;
        row[MS_PGS] = res.pg_norm_scaled;
        row[MS_ITER] = res.iterations;
        row[MS_EVAL] = res.evaluations;
        row[MS_FAILED] = res.failed_evaluations;
        row[MS_STOP] = cli_opt_stop_code(res.stop_reason);
        row[MS_STAGES] = res.stages;
        memcpy(x, res.x, sizeof(double) * (size_t)j->np);
        mbs_opt_result_free(&res);
    }
    mbs_model_free(mi);
    return rc;
}

typedef struct ms_chunk {
    sweep_ledger *L;
    const long *idx;
} ms_chunk;

static int ms_one(void *user, const mbs_model *m, mbs_data *d, long k, mbs_error *err)
{
    (void)m, (void)d, (void)err;
    const ms_chunk *c = user;
    long i = c->idx[k];
    if (sweep_ledger_done(c->L, i))
        return MBS_OK;   /* already recorded: another rank's result for a case handed out twice */
    double *row = malloc(((size_t)c->L->ncols + 1) * sizeof *row);
    mbs_error e = {0};
    int rc = row ? ms_run_start(c->L->user, i, row, &e) : MBS_ERR_NOMEM;
    if (rc > 0) rc = MBS_ERR_ARG;
    sweep_ledger_record(c->L, i, rc, row, e.msg);
    free(row);
    return MBS_OK;   /* a failed start is in the ledger; the others carry on */
}

static void ms_run_cases(sweep_ledger *L, const long *idx, long n, int threads)
{
    const ms_job *j = L->user;
    ms_chunk c = {L, idx};
    mbs_batch_run(j->m, n, threads, ms_one, &c, NULL, NULL);
}

/* ---- the options ---- */

int cli_multistart_options(const char *cmd, void (*usage)(FILE *), const char *starts, const char *seed,
                           const char *threads, int files, int json, cli_multistart *ms)
{
    long v = 0;
    if (threads && cli_parse_long(cmd, usage, "--threads", threads, 0, 4096, &v)) return CLI_EXIT_USAGE;
    ms->threads = (int)v;
    if (!starts) {
        if (seed || json)
            return cli_usage_error(cmd, usage, "%s needs --multistart N", seed ? "--seed" : "--json");
        return CLI_EXIT_OK;
    }
    if (files)
        return cli_usage_error(cmd, usage, "--multistart reports every start (and --out FILE writes them as "
                               "JSON): --model-out, --history and --plot are for a single run");
    if (cli_parse_long(cmd, usage, "--multistart", starts, 1, 1000000, &ms->starts)) return CLI_EXIT_USAGE;
    if (seed) {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(seed, &end, 10);
        if (end == seed || *end || errno || seed[0] == '-')
            return cli_usage_error(cmd, usage, "--seed: expected an integer from 0 to 2^64 - 1, got '%s'", seed);
        ms->seed = (uint64_t)s;
    }
    ms->json = json;
    return CLI_EXIT_OK;
}

/* ---- the report ---- */

/* The best start: the lowest final psi of those that finished (the first
 * of equals); -1 if none did. */
static long ms_best(const sweep_ledger *L)
{
    long best = -1;
    for (long i = 0; i < L->ncases; i++)
        if (L->status[i] == MBS_OK &&
            (best < 0 || L->rows[(size_t)i * L->ncols + MS_PSI] < L->rows[(size_t)best * L->ncols + MS_PSI]))
            best = i;
    return best;
}

/* The stop words and the verdict of a finished start's row. */
static void ms_explain(const ms_job *j, const double *row, cli_opt_stop *why)
{
    mbs_opt_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.stop_reason, sizeof r.stop_reason, "%s", cli_opt_stop_reason((int)row[MS_STOP]));
    r.pg_norm_scaled = row[MS_PGS];
    cli_opt_stop_explain(&r, j->caller, why);
}

static void ms_text(const ms_job *j, const sweep_ledger *L, long best, cli_buf *b)
{
    const mbs_model *m = j->m;
    int nfree = 0;
    for (int k = 0; k < j->np; k++) nfree += !(j->fixed && j->fixed[k]);
    cli_buf_printf(b, "multistart: %ld starts (seed %llu) drawn uniformly within the bounds of %d free parameter%s\n",
                   L->ncases, (unsigned long long)j->ms->seed, nfree, nfree == 1 ? "" : "s");
    for (long i = 0; i < L->ncases; i++) {
        const double *row = L->rows + (size_t)i * L->ncols;
        if (L->status[i] != MBS_OK) {
            cli_buf_printf(b, "start %ld: FAILED: %s\n", i, L->msg[i] ? L->msg[i] : "");
            continue;
        }
        cli_opt_stop why;
        ms_explain(j, row, &why);
        cli_buf_printf(b, "start %ld: psi %.10e -> %.10e, |g| %.4e, %.0f evaluations (%.0f failed), %.0f iterations%s\n",
                       i, row[MS_PSI0], row[MS_PSI], row[MS_PG], row[MS_EVAL], row[MS_FAILED], row[MS_ITER],
                       i == best ? " (best)" : "");
        cli_buf_printf(b, "    stop: %s (%s); %s\n", why.words, cli_opt_stop_reason((int)row[MS_STOP]), why.verdict);
    }
    if (best < 0) return;
    const double *row = L->rows + (size_t)best * L->ncols, *x0 = row + MS_NFIG, *x = x0 + j->np;
    cli_buf_printf(b, "best: start %ld, psi %.10e\n", best, row[MS_PSI]);
    cli_buf_printf(b, "%-16s %18s %18s\n", "parameter", "start", "optimized");
    for (int k = 0; k < j->np; k++)
        cli_buf_printf(b, "%-16s % 18.10e % 18.10e%s\n", mbs_param_name(m, k), x0[k], x[k],
                       j->fixed && j->fixed[k] ? " (fixed)" : "");
}

static void ms_json_start(const ms_job *j, const sweep_ledger *L, long i, cli_buf *b)
{
    const double *row = L->rows + (size_t)i * L->ncols;
    cli_buf_printf(b, "%s\n    {\"start\": %ld, \"status\": ", i ? "," : "", i);
    if (L->status[i] != MBS_OK) {
        cli_json_str(b, L->msg[i] ? L->msg[i] : "");
        cli_buf_puts(b, "}");
        return;
    }
    cli_opt_stop why;
    ms_explain(j, row, &why);
    cli_buf_puts(b, "\"ok\", \"stop_reason\": ");
    cli_json_str(b, cli_opt_stop_reason((int)row[MS_STOP]));
    cli_buf_puts(b, ", \"stop\": ");
    cli_json_str(b, why.words);
    cli_buf_printf(b, ", \"converged\": %s, \"verdict\": ", why.converged ? "true" : "false");
    cli_json_str(b, why.verdict);
    static const char *const names[MS_NFIG] = {"psi_initial", "psi", "pg_norm", "pg_norm_scaled", "iterations",
                                               "evaluations", "failed_evaluations", NULL, "stages"};
    for (int k = 0; k < MS_NFIG; k++) {
        if (!names[k]) continue;
        cli_buf_printf(b, ", \"%s\": ", names[k]);
        cli_json_num(b, row[k]);
    }
    cli_buf_puts(b, ",\n     \"x0\": ");
    cli_json_vec(b, row + MS_NFIG, j->np);
    cli_buf_puts(b, ", \"x\": ");
    cli_json_vec(b, row + MS_NFIG + j->np, j->np);
    cli_buf_puts(b, "}");
}

static void ms_json(const ms_job *j, const sweep_ledger *L, long best, cli_buf *b)
{
    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, j->ms->model_path);
    cli_buf_printf(b, ",\n  \"starts\": %ld,\n  \"seed\": %llu,\n  \"parameters\": [", L->ncases,
                   (unsigned long long)j->ms->seed);
    for (int k = 0; k < j->np; k++) {
        cli_buf_puts(b, k ? ", " : "");
        cli_json_str(b, mbs_param_name(j->m, k));
    }
    cli_buf_puts(b, "],\n  \"fixed\": [");
    for (int k = 0; k < j->np; k++) cli_buf_printf(b, "%s%s", k ? ", " : "", j->fixed && j->fixed[k] ? "true" : "false");
    cli_buf_puts(b, "],\n  \"best\": ");
    if (best < 0) cli_buf_puts(b, "null");
    else cli_buf_printf(b, "%ld", best);
    cli_buf_puts(b, ",\n  \"runs\": [");
    for (long i = 0; i < L->ncases; i++) ms_json_start(j, L, i, b);
    cli_buf_puts(b, "\n  ]\n}\n");
}

/* Rank 0 (or the one process), every start recorded: the report. */
static int ms_finish(void *user, const char *cmd, sweep_ledger *L)
{
    const ms_job *j = user;
    long best = ms_best(L), failed = 0;
    for (long i = 0; i < L->ncases; i++) failed += L->status[i] != MBS_OK;
    int rc = CLI_EXIT_OK;
    if (!j->ms->json) {
        cli_buf b = {0};
        ms_text(j, L, best, &b);
        rc = cli_buf_emit(&b, stdout, cmd);
        cli_buf_free(&b);
    }
    if (rc == CLI_EXIT_OK && (j->ms->json || j->ms->out)) {
        cli_buf b = {0};
        ms_json(j, L, best, &b);
        if (b.oom) {
            cli_error(cmd, "out of memory");
            rc = CLI_EXIT_FAIL;
        }
        if (rc == CLI_EXIT_OK && j->ms->out &&
            cli_write_atomic(cmd, "--out", j->ms->out, j->ms->model_path, b.s, b.len) != 0)
            rc = CLI_EXIT_FAIL;
        if (rc == CLI_EXIT_OK && j->ms->json) rc = cli_buf_emit(&b, stdout, cmd);
        cli_buf_free(&b);
    }
    if (failed)
        fprintf(stderr, "mbsens %s: %ld of %ld starts failed (their messages are in the report)\n", cmd, failed,
                L->ncases);
    if (rc == CLI_EXIT_OK && best < 0) {
        cli_error(cmd, "every start failed");
        rc = CLI_EXIT_FAIL;
    }
    return rc;
}

/* Every rank: the starts must be drawable (finite
 * bounds); then the ledger. */
static int ms_open(void *user, const char *cmd, int rank, sweep_ledger *L)
{
    ms_job *j = user;
    (void)rank;
    for (int k = 0; k < j->np; k++) {
        if (j->fixed && j->fixed[k]) continue;
        double lo = mbs_param_lower(j->m, k), hi = mbs_param_upper(j->m, k);
        if (!isfinite(lo) || !isfinite(hi) || !(hi > lo)) {
            cli_error(cmd, "--multistart: parameter %s has bounds [%g, %g]: the starts are drawn within finite "
                      "bounds (give it bounds in the model, or hold it with --fix)", mbs_param_name(j->m, k), lo, hi);
            return CLI_EXIT_FAIL;
        }
    }
    return cases_ledger_open(L, cmd, j->ms->starts, MS_NFIG + 2 * j->np, ms_run_cases, j);
}

static void ms_close(void *user, int rank, sweep_ledger *L, int ok)
{
    (void)user, (void)rank, (void)L, (void)ok;
}

int cli_optimize_multistart(const char *cmd, const mbs_model *m, const mbs_opt_options *o, const int *fixed,
                            const cli_multistart *ms)
{
    ms_job j;
    memset(&j, 0, sizeof j);
    j.m = m;
    j.o = *o;
    j.o.callback = NULL;
    j.o.callback_user = NULL;
    j.o.message = NULL;
    j.o.message_user = NULL;
    j.o.sens.threads = 1;
    j.caller = o;
    j.fixed = fixed;
    j.ms = ms;
    j.np = mbs_model_nparams(m);
    if (sweep_mpi_launched()) {
        cases_job job = {&j, ms->threads, 0, 0, 0, ms_open, ms_finish, ms_close, NULL, 0};
        return cases_mpi_main(cmd, &job);
    }
    sweep_ledger L = {0};
    int rc = ms_open(&j, cmd, 0, &L);
    long *idx = rc == CLI_EXIT_OK ? malloc((size_t)ms->starts * sizeof *idx) : NULL;
    if (rc == CLI_EXIT_OK && !idx) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) {
        for (long i = 0; i < ms->starts; i++) idx[i] = i;
        ms_run_cases(&L, idx, ms->starts, ms->threads);
        rc = ms_finish(&j, cmd, &L);
    }
    free(idx);
    if (L.open) sweep_ledger_close(&L);
    return rc;
}
