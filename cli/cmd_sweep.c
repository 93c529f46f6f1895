/*
 * cmd_sweep.c - `mbsens sweep SPEC.json [--threads N] [--csv FILE]
 * [--json FILE] [--checkpoint FILE [--resume]] [--chunk N]`: one
 * computation for each case of a spec, on every core of this machine, or
 * on many through MPI (the same command under mpirun; docs/scaling.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "sweep.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens sweep SPEC.json [--threads N] [--csv FILE] [--json FILE]\n"
          "                    [--checkpoint FILE [--resume]] [--chunk N]\n"
          "       mpirun -np K [--enable-recovery] mbsens sweep SPEC.json ...\n"
          "\n"
          "Computes one thing for every case of a sweep: psi and its gradient (any\n"
          "method), a simulation's final state and outputs, or the forward-dynamics\n"
          "derivatives, over a grid, a list or a seeded random sample of parameter\n"
          "values and initial coordinates (SPEC.json: docs/scaling.md). Writes one\n"
          "table with a row per case in case order; a case that fails is recorded\n"
          "with its message and the others carry on. The results do not depend on\n"
          "the number of threads or ranks.\n"
          "\n"
          "Under mpirun, rank 0 hands out chunks of cases as ranks ask for them and\n"
          "computes too; every rank uses its threads. With --enable-recovery a rank\n"
          "that dies loses only its chunk in flight, which another rank recomputes.\n"
          "\n"
          "Options:\n"
          "  --threads N        threads per process (default: OMP_NUM_THREADS, else\n"
          "                     the cores)\n"
          "  --csv FILE         the table as CSV (default: CSV on standard output)\n"
          "  --json FILE        the table as JSON\n"
          "  --checkpoint FILE  append every finished case to FILE (must not exist)\n"
          "  --resume           continue the sweep of --checkpoint FILE: its cases\n"
          "                     are not recomputed\n"
          "  --chunk N          MPI: cases per hand-out (default: the threads)\n"
          "  -h, --help         show this help and exit\n"
          "Output files are written whole at the end or not at all; the checkpoint\n"
          "is removed once they are.\n",
          out);
}

typedef struct run_ctx {
    sweep_ledger *L;
    const long *idx;
} run_ctx;

static int run_one(void *user, const mbs_model *m, mbs_data *d, long k, mbs_error *err)
{
    (void)m, (void)err;
    const run_ctx *c = user;
    long i = c->idx[k];
    double *row = malloc(((size_t)c->L->s->ncols + 1) * sizeof *row);
    mbs_error e = {0};
    int rc = row ? sweep_case_run(c->L->s, d, i, row, &e) : MBS_ERR_NOMEM;
    sweep_ledger_record(c->L, i, rc, row, e.msg);
    free(row);
    return MBS_OK;   /* a failed case is in the ledger; the others carry on */
}

void sweep_run_cases(sweep_ledger *L, const long *idx, long n, int threads)
{
    run_ctx c = {L, idx};
    mbs_batch_run(L->s->m, n, threads, run_one, &c, NULL, NULL);
}

#ifndef MBS_HAVE_MPI
int sweep_mpi_launched(void)
{
    return 0;
}

int sweep_mpi_main(const char *cmd, const char *spec, const char *ckpt, int resume, int threads, int chunk,
                   const char *csv, const char *json)
{
    (void)spec, (void)ckpt, (void)resume, (void)threads, (void)chunk, (void)csv, (void)json;
    cli_error(cmd, "this mbsens was built without MPI");
    return CLI_EXIT_FAIL;
}
#endif

static int parse_count(const char *cmd, const char *opt, const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < 1 || v > 4096)
        return cli_usage_error(cmd, usage, "%s: expected an integer from 1 to 4096, got '%s'", opt, text);
    *out = (int)v;
    return CLI_EXIT_OK;
}

/* The sweep in this process. */
static int sweep_local(const char *cmd, const char *spec, const char *ckpt, int resume, int threads,
                       const char *csv, const char *json)
{
    sweep s;
    sweep_ledger L = {0};
    int rc = sweep_load(&s, cmd, spec);
    if (rc == CLI_EXIT_OK && ((csv && cli_output_check(cmd, csv, spec)) || (json && cli_output_check(cmd, json, spec))))
        rc = CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_OK)
        rc = sweep_ledger_open(&L, &s, cmd, ckpt, resume);
    long *idx = rc == CLI_EXIT_OK ? malloc(((size_t)s.ncases + 1) * sizeof *idx) : NULL;
    if (rc == CLI_EXIT_OK && !idx) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) {
        long n = 0;
        while (n < s.ncases && sweep_ledger_take(&L, idx + n, 1, 0) == 1)
            n++;
        sweep_run_cases(&L, idx, n, threads);
        rc = sweep_ledger_write(&L, cmd, spec, csv, json);
    }
    long failed = 0;
    for (long i = 0; rc == CLI_EXIT_OK && i < s.ncases; i++)
        failed += L.status[i] != MBS_OK;
    if (failed)
        fprintf(stderr, "mbsens %s: %ld of %ld cases failed (their messages are in the table)\n", cmd, failed,
                s.ncases);
    if (rc == CLI_EXIT_OK && L.ckpt_failed)
        cli_error(cmd, "--checkpoint %s: could not be written completely", ckpt);
    free(idx);
    if (L.s)
        sweep_ledger_close(&L);
    if (rc == CLI_EXIT_OK && ckpt)
        remove(ckpt);
    sweep_free(&s);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    const char *cmd = "sweep";
    const char *threads_s = NULL, *csv = NULL, *json = NULL, *ckpt = NULL, *chunk_s = NULL, *pos[1];
    int resume = 0, npos = 0, threads = 0, chunk = 0;
    const cli_option opts[] = {
        {"--threads", NULL, &threads_s, NULL}, {"--csv", NULL, &csv, NULL},
        {"--json", NULL, &json, NULL},         {"--checkpoint", NULL, &ckpt, NULL},
        {"--chunk", NULL, &chunk_s, NULL},     {"--resume", NULL, NULL, &resume},
    };
    int rc = cli_parse(cmd, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), pos, 1, &npos, usage);
    if (rc == CLI_PARSE_HELP)
        return CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (npos != 1)
        return cli_usage_error(cmd, usage, "missing SPEC argument");
    if (threads_s && parse_count(cmd, "--threads", threads_s, &threads) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (chunk_s && parse_count(cmd, "--chunk", chunk_s, &chunk) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (resume && !ckpt)
        return cli_usage_error(cmd, usage, "--resume needs --checkpoint FILE");
    if (csv && json && strcmp(csv, json) == 0)
        return cli_usage_error(cmd, usage, "--csv and --json name the same file");
    if (sweep_mpi_launched())
        return sweep_mpi_main(cmd, pos[0], ckpt, resume, threads, chunk, csv, json);
    return sweep_local(cmd, pos[0], ckpt, resume, threads, csv, json);
}
