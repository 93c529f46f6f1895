/*
 * cmd_sweep.c - `mbsens sweep SPEC.json [--threads N] [--csv FILE]
 * [--json FILE] [--checkpoint FILE [--resume]] [--chunk N] [--serve-only]
 * [--stats]`: one
 * computation for each case of a spec, on every core of this machine, or
 * on many through MPI (the same command under mpirun; docs/scaling.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "cli_options.h"
#include "cli_util.h"
#include "sweep.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens sweep SPEC.json [--threads N] [--csv FILE] [--json FILE]\n"
          "                    [--checkpoint FILE [--resume]] [--chunk N] [--serve-only]\n"
          "                    [--stats]\n"
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
          "computes too; every rank uses its threads and has its next chunk on the\n"
          "way while it computes one. With --enable-recovery a rank that dies loses\n"
          "only the chunks it held (at most two), which other ranks recompute.\n"
          "\n"
          "Options:\n"
          "  --threads N        threads per process (default: OMP_NUM_THREADS, else\n"
          "                     the cores)\n"
          "  --csv FILE         the table as CSV (default: CSV on standard output)\n"
          "  --json FILE        the table as JSON\n"
          "  --checkpoint FILE  append every finished case to FILE (must not exist)\n"
          "  --resume           continue the sweep of --checkpoint FILE: its cases\n"
          "                     are not recomputed\n"
          "  --chunk N          MPI: cases per hand-out (default: the threads; fewer\n"
          "                     near the end)\n"
          "  --serve-only       MPI: rank 0 hands out cases and computes none\n"
          "  --stats            print the time on standard error (MPI: also the\n"
          "                     hand-outs and where each rank's time went)\n"
          "  -h, --help         show this help and exit\n"
          "Output files appear whole at the end or not at all; the checkpoint\n"
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
    if (!sweep_ledger_done(c->L, i)) {   /* else another rank's result for a case handed out twice is in */
        double *row = malloc(((size_t)c->L->s->ncols + 1) * sizeof *row);
        mbs_error e = {0};
        int rc = row ? sweep_case_run(c->L->s, d, i, row, &e) : MBS_ERR_NOMEM;
        sweep_ledger_record(c->L, i, rc, row, e.msg);
        free(row);
    }
    if (c->L->poll)
        c->L->poll(c->L->poll_arg);
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

int cases_mpi_main(const char *cmd, const cases_job *job)
{
    (void)job;
    cli_error(cmd, "this mbsens was built without MPI");
    return CLI_EXIT_FAIL;
}
#endif

/* ---- the sweep as a job of cases on MPI ranks ---- */

typedef struct sweep_job {
    const sweep_opts *o;
    sweep s;
    sweep_table t;            /* rank 0 */
} sweep_job;

static int sweep_job_open(void *user, const char *cmd, int rank, sweep_ledger *L)
{
    sweep_job *j = user;
    const sweep_opts *o = j->o;
    int rc = sweep_load(&j->s, cmd, o->spec);
    if (rank == 0 && rc == CLI_EXIT_OK && ((o->csv && cli_output_check(cmd, o->csv, o->spec))
                                           || (o->json && cli_output_check(cmd, o->json, o->spec))))
        rc = CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_OK)
        rc = sweep_ledger_open(L, &j->s, cmd, rank == 0 ? o->ckpt : NULL, rank == 0 ? o->resume : 0,
                               sweep_tables(o->csv, o->json) | (o->ckpt ? SWEEP_CKPT_LINE : 0));
    if (rank == 0 && rc == CLI_EXIT_OK)
        rc = sweep_table_open(&j->t, L, cmd, o->spec, o->csv, o->json);
    return rc;
}

static void sweep_job_progress(void *user, sweep_ledger *L)
{
    sweep_job *j = user;
    sweep_table_flush(&j->t, L);
}

static int sweep_job_finish(void *user, const char *cmd, sweep_ledger *L)
{
    sweep_job *j = user;
    int rc = sweep_table_close(&j->t, L, 1);
    if (rc == CLI_EXIT_OK)
        sweep_ledger_report(L, cmd);
    return rc;
}

static void sweep_job_close(void *user, int rank, sweep_ledger *L, int ok)
{
    sweep_job *j = user;
    sweep_table_close(&j->t, L, 0);   /* not finished: its temporary files removed */
    if (rank == 0 && ok && L->open && !L->ckpt_failed && j->o->ckpt)
        remove(j->o->ckpt);
}

int sweep_mpi_main(const char *cmd, const sweep_opts *o)
{
    sweep_job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    cases_job job = {&j, o->threads, o->chunk, o->serve_only, o->stats, sweep_job_open, sweep_job_finish,
                     sweep_job_close, sweep_job_progress, 1};
    int rc = cases_mpi_main(cmd, &job);
    sweep_free(&j.s);
    return rc;
}

/* The tables' writer of a sweep in one process: between its cases, the
 * thread that finds it free writes the rows recorded so far. */
typedef struct local_writer {
    sweep_table *t;
    sweep_ledger *L;
    pthread_mutex_t busy;
} local_writer;

static void write_between_cases(void *p)
{
    local_writer *w = p;
    if (pthread_mutex_trylock(&w->busy) != 0)
        return;
    sweep_table_flush(w->t, w->L);
    pthread_mutex_unlock(&w->busy);
}

/* The sweep in this process. */
static int sweep_local(const char *cmd, const sweep_opts *o)
{
    sweep s;
    sweep_ledger L = {0};
    sweep_table t = {0};
    int rc = sweep_load(&s, cmd, o->spec);
    if (rc == CLI_EXIT_OK && ((o->csv && cli_output_check(cmd, o->csv, o->spec))
                              || (o->json && cli_output_check(cmd, o->json, o->spec))))
        rc = CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_OK)
        rc = sweep_ledger_open(&L, &s, cmd, o->ckpt, o->resume, sweep_tables(o->csv, o->json));
    if (rc == CLI_EXIT_OK)
        rc = sweep_table_open(&t, &L, cmd, o->spec, o->csv, o->json);
    long *idx = rc == CLI_EXIT_OK ? malloc(((size_t)s.ncases + 1) * sizeof *idx) : NULL;
    if (rc == CLI_EXIT_OK && !idx) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK) {
        long n = 0;
        while (n < s.ncases && sweep_ledger_take(&L, idx + n, 1, 0, 0) == 1)
            n++;
        double t0 = omp_get_wtime();
        local_writer w = {&t, &L, PTHREAD_MUTEX_INITIALIZER};
        L.poll = write_between_cases;
        L.poll_arg = &w;
        sweep_run_cases(&L, idx, n, o->threads);
        L.poll = NULL;
        if (o->stats)
            fprintf(stderr, "mbsens %s: %ld cases (%ld computed) on %d threads: %.3f s\n", cmd, s.ncases, n,
                    mbs_batch_threads(o->threads), omp_get_wtime() - t0);
        rc = sweep_table_close(&t, &L, 1);
    }
    sweep_table_close(&t, &L, 0);
    if (rc == CLI_EXIT_OK)
        sweep_ledger_report(&L, cmd);
    int keep_ckpt = rc != CLI_EXIT_OK || L.ckpt_failed;
    free(idx);
    if (L.open)
        sweep_ledger_close(&L);
    if (!keep_ckpt && o->ckpt)
        remove(o->ckpt);
    sweep_free(&s);
    return rc;
}

/* The sweep's processes keep the memory they free for their next cases
 * rather than giving it back to the kernel. With glibc's defaults the free
 * top of a thread's heap goes back to the kernel and large blocks are
 * mapped afresh, so a computing thread of its own arena would fault in
 * fresh pages for every chunk's mbs_data and many cases' buffers, a page
 * fault per page, which is dear on a virtual machine (docs/scaling.md).
 * Fixed thresholds also stop glibc from moving them. */
static void sweep_keep_memory(void)
{
    mallopt(M_MMAP_THRESHOLD, 16 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

typedef struct {
    sweep_opts o;
    long threads, chunk;
} sweep_args;

static const cli_opt sweep_rows[] = {
    CLI_ROW_RANGE(sweep_args, "--threads", threads, 1, 4096, "an integer from 1 to 4096"),
    CLI_ROW(sweep_args, "--csv", NULL, CLI_STRING, o.csv),
    CLI_ROW(sweep_args, "--json", NULL, CLI_STRING, o.json),
    CLI_ROW(sweep_args, "--checkpoint", NULL, CLI_STRING, o.ckpt),
    CLI_ROW_RANGE(sweep_args, "--chunk", chunk, 1, 4096, "an integer from 1 to 4096"),
    CLI_ROW(sweep_args, "--resume", NULL, CLI_FLAG, o.resume),
    CLI_ROW(sweep_args, "--serve-only", NULL, CLI_FLAG, o.serve_only),
    CLI_ROW(sweep_args, "--stats", NULL, CLI_FLAG, o.stats),
};

const cli_command cli_sweep_command = {
    "sweep", usage, sweep_rows, CLI_NELEM(sweep_rows), NULL, 0, 1, 1, "missing SPEC argument", CLI_WORDS_VALUE,
};

int cmd_sweep(int argc, char **argv)
{
    const char *cmd = "sweep";
    const char *pos[1];
    sweep_args a;
    memset(&a, 0, sizeof a);
    int npos = 0;
    int rc = cli_parse(&cli_sweep_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;
    a.o.spec = pos[0];
    a.o.threads = (int)a.threads;   /* 0: not given */
    a.o.chunk = (int)a.chunk;
    if (a.o.resume && !a.o.ckpt)
        return cli_usage_error(cmd, usage, "--resume needs --checkpoint FILE");
    if (a.o.csv && a.o.json && strcmp(a.o.csv, a.o.json) == 0)
        return cli_usage_error(cmd, usage, "--csv and --json name the same file");
    sweep_keep_memory();
    if (sweep_mpi_launched())
        return sweep_mpi_main(cmd, &a.o);
    return sweep_local(cmd, &a.o);
}
