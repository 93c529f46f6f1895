/*
 * sweep_mpi.c - the cases of `mbsens sweep` and of `mbsens optimize
 * --multistart` on MPI ranks (built where CMake finds MPI): any job of
 * cases recorded in a ledger (sweep.h, cases_job).
 *
 * Rank 0 holds the ledger (and the checkpoint) and hands out chunks of
 * case indices: its main thread serves the other ranks' requests, one more
 * thread computes chunks of its own (unless --serve-only). A worker rank
 * sends the result rows of its last chunk with its request for the next
 * one, and computes each chunk on its threads. Only the main thread of a
 * rank calls MPI (MPI_THREAD_FUNNELED). Waiting ranks poll and sleep
 * rather than spin, so that a rank's threads keep the cores.
 *
 * Once every case is handed out, a request is answered with a chunk still
 * in flight elsewhere (its result is kept from whichever rank reports
 * first), so a rank that died (mpirun --enable-recovery keeps the others
 * running) loses only its chunk. When every case is finished, rank 0
 * writes the tables, then tells each rank to stop as it reports; a rank
 * silent for longer than a grace time (2 s plus 5 times the longest chunk
 * seen) is taken for dead. Its last word to the others says whether all
 * reported back: only then do the ranks call MPI_Finalize, which would
 * wait for a dead rank forever (without it, a process ends as mpirun
 * --enable-recovery allows).
 *
 * Messages: a chunk is an array of int64 case indices (none: stop); a
 * report is a byte string of records "int64 index, int32 status, int32
 * message length, the row's doubles (status 0), the message".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include <mpi.h>

#include "../cli_util.h"
#include "../sweep.h"

enum { TAG_REPORT = 1, TAG_CHUNK = 2, TAG_END = 3 };

int sweep_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Between polls: a yield of the processor for the first 20 polls after
 * traffic (a reply often comes within microseconds), then sleeps that
 * start at 20 microseconds and double up to 200 while idle: a report
 * waits at most one such sleep for rank 0, and an idle rank wakes at most
 * 5 000 times a second for a short probe. *ns: the state, 0 after
 * traffic. */
static void nap(long *ns, int traffic)
{
    if (traffic || *ns < 20) {
        *ns = traffic ? 0 : *ns + 1;
        sched_yield();
        return;
    }
    *ns = *ns < 20000 ? 20000 : (*ns < 200000 ? 2 * *ns : 200000);
    struct timespec t = {0, *ns};
    nanosleep(&t, NULL);
}

/* ---- reports ---- */

typedef struct report {
    char *b;
    size_t len, cap;
} report;

static int put(report *r, const void *p, size_t n)
{
    if (r->len + n > r->cap) {
        size_t cap = 2 * (r->len + n) + 256;
        char *t = realloc(r->b, cap);
        if (!t)
            return -1;
        r->b = t;
        r->cap = cap;
    }
    memcpy(r->b + r->len, p, n);
    r->len += n;
    return 0;
}

static int pack(report *r, const sweep_ledger *L, const long *idx, int n)
{
    int bad = 0;
    for (int k = 0; k < n; k++) {
        int64_t i = idx[k];
        int32_t st = L->status[i];
        const char *msg = st == MBS_OK ? "" : (L->msg[i] ? L->msg[i] : "");
        int32_t ml = (int32_t)strlen(msg);
        bad |= put(r, &i, sizeof i) | put(r, &st, sizeof st) | put(r, &ml, sizeof ml);
        if (st == MBS_OK)
            bad |= put(r, L->rows + (size_t)i * (size_t)L->ncols, (size_t)L->ncols * sizeof(double));
        bad |= put(r, msg, (size_t)ml);
    }
    return bad;
}

/* Record the cases of a report; -1 if it is malformed. */
static int unpack(sweep_ledger *L, const char *b, size_t len, double *row, char *msg, size_t msgcap)
{
    size_t p = 0, rowb = (size_t)L->ncols * sizeof(double);
    while (p < len) {
        int64_t i;
        int32_t st, ml;
        if (len - p < 16)
            return -1;
        memcpy(&i, b + p, 8), memcpy(&st, b + p + 8, 4), memcpy(&ml, b + p + 12, 4);
        p += 16;
        if (i < 0 || i >= L->ncases || ml < 0 || len - p < (st == MBS_OK ? rowb : 0) + (size_t)ml)
            return -1;
        if (st == MBS_OK) {
            memcpy(row, b + p, rowb);
            p += rowb;
        }
        size_t n = (size_t)ml < msgcap - 1 ? (size_t)ml : msgcap - 1;
        memcpy(msg, b + p, n);
        msg[n] = 0;
        p += (size_t)ml;
        sweep_ledger_record(L, (long)i, st, row, msg);
    }
    return 0;
}

/* ---- worker ranks ---- */

/* Wait for rank 0's last word: 1 if every rank reported back (finalize),
 * 0 if rank 0 gave one up for dead (MPI_Finalize would wait for it
 * forever). */
static int wait_end(void)
{
    int flag = 0, all = 0;
    long ns = 0;
    while (MPI_Iprobe(0, TAG_END, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
        nap(&ns, 0);
    MPI_Recv(&all, 1, MPI_INT, 0, TAG_END, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return all;
}

static int worker(sweep_ledger *L, int threads, int *finalize)
{
    report r = {0};
    int64_t *chunk = NULL;
    long *idx = NULL;
    int cap = 0, rc = CLI_EXIT_OK;
    for (;;) {
        MPI_Send(r.b, (int)r.len, MPI_BYTE, 0, TAG_REPORT, MPI_COMM_WORLD);
        r.len = 0;
        MPI_Status st;
        int flag = 0, n = 0;
        long ns = 0;
        while (MPI_Iprobe(0, TAG_CHUNK, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && !flag)
            nap(&ns, 0);
        MPI_Get_count(&st, MPI_INT64_T, &n);
        if (n > cap) {
            cap = n;
            int64_t *c = realloc(chunk, (size_t)cap * sizeof *chunk);
            long *x = realloc(idx, (size_t)cap * sizeof *idx);
            chunk = c ? c : chunk;
            idx = x ? x : idx;
            if (!c || !x) {
                rc = CLI_EXIT_FAIL;
                break;
            }
        }
        MPI_Recv(chunk, n, MPI_INT64_T, 0, TAG_CHUNK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (n == 0) {
            *finalize = wait_end();
            break;
        }
        for (int k = 0; k < n; k++)
            idx[k] = (long)chunk[k];
        L->run(L, idx, n, threads);
        if (pack(&r, L, idx, n) != 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
    }
    free(r.b);
    free(chunk);
    free(idx);
    return rc;
}

/* ---- rank 0 ---- */

typedef struct server {
    sweep_ledger *L;
    int chunk, threads, size;
    _Atomic int local_done;   /* rank 0's own computing has ended */
    int *stopped;             /* per rank: told to stop */
    double *since;            /* per rank: when its chunk went out (< 0: none) */
    double longest;           /* the longest time a chunk has been out */
    int active;               /* ranks not yet stopped */
    long handouts;
    double bytes;
    char *buf;
    size_t bufcap;
    int64_t *out;
    long *idx;
} server;

static void *local_compute(void *p)
{
    server *sv = p;
    long *idx = malloc((size_t)sv->chunk * sizeof *idx);
    int n;
    while (idx && (n = sweep_ledger_take(sv->L, idx, sv->chunk, 1)) > 0)
        sv->L->run(sv->L, idx, n, sv->threads);
    free(idx);
    sv->local_done = 1;
    return NULL;
}

static int all_done(server *sv)
{
    pthread_mutex_lock(&sv->L->lock);
    int d = sv->L->ndone == sv->L->ncases;
    pthread_mutex_unlock(&sv->L->lock);
    return d && sv->local_done;
}

/* Receive one report, answer it with a chunk or a stop: 1 if a report
 * came, 0 if none, -1 on failure. */
static int serve_one(server *sv, const char *cmd, double *row, char *msg)
{
    MPI_Status st;
    int flag = 0, bytes = 0;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_REPORT, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
        return 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    if ((size_t)bytes > sv->bufcap) {
        char *b = realloc(sv->buf, (size_t)bytes);
        if (!b)
            return -1;
        sv->buf = b;
        sv->bufcap = (size_t)bytes;
    }
    int w = st.MPI_SOURCE;
    MPI_Recv(sv->buf, bytes, MPI_BYTE, w, TAG_REPORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sv->bytes += bytes;
    if (sv->since[w] >= 0 && now() - sv->since[w] > sv->longest)
        sv->longest = now() - sv->since[w];
    if (unpack(sv->L, sv->buf, (size_t)bytes, row, msg, MBS_ERROR_MSG_LEN) != 0)
        cli_error(cmd, "rank %d: malformed report (ignored)", w);
    int n = sv->stopped[w] ? 0 : sweep_ledger_take(sv->L, sv->idx, sv->chunk, 1);
    for (int k = 0; k < n; k++)
        sv->out[k] = sv->idx[k];
    MPI_Send(sv->out, n, MPI_INT64_T, w, TAG_CHUNK, MPI_COMM_WORLD);
    sv->since[w] = n ? now() : -1;
    sv->handouts += n > 0;
    if (n == 0 && !sv->stopped[w]) {
        sv->stopped[w] = 1;
        sv->active--;
    }
    return 1;
}

/* Serve until every case is finished (drain = 0), or until every rank is
 * stopped or taken for dead (drain = 1). */
static int serve(server *sv, const char *cmd, int drain)
{
    double *row = malloc(((size_t)sv->L->ncols + 1) * sizeof *row);
    char *msg = malloc(MBS_ERROR_MSG_LEN);
    double quiet = -1;
    long ns = 0;
    int rc = row && msg ? 0 : -1;
    while (rc == 0) {
        int got = serve_one(sv, cmd, row, msg);
        if (got < 0)
            rc = -1;
        if (got) {
            ns = 0;   /* traffic: the next report may follow at once */
            continue;
        }
        if (!drain && all_done(sv))
            break;
        if (drain && sv->active == 0)
            break;
        if (drain && quiet < 0)
            quiet = now();
        if (drain && now() - quiet > 2 + 5 * sv->longest)
            break;   /* the ranks still out are taken for dead */
        nap(&ns, 0);
    }
    free(row);
    free(msg);
    return rc;
}

static int rank0(sweep_ledger *L, const char *cmd, const cases_job *job, int size, int *finalize)
{
    const int threads = job->threads;
    server sv = {.L = L, .chunk = job->chunk, .threads = threads, .size = size, .active = size - 1};
    sv.stopped = calloc((size_t)size, sizeof *sv.stopped);
    sv.since = malloc((size_t)size * sizeof *sv.since);
    sv.idx = malloc((size_t)job->chunk * sizeof *sv.idx);
    sv.out = malloc((size_t)job->chunk * sizeof *sv.out);
    if (!sv.stopped || !sv.since || !sv.idx || !sv.out) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    for (int w = 0; w < size; w++)
        sv.since[w] = -1;
    sv.stopped[0] = 1;
    double t0 = now(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    pthread_t th;
    int serve_only = job->serve_only && size > 1;
    sv.local_done = serve_only;
    if (!serve_only && pthread_create(&th, NULL, local_compute, &sv) != 0) {
        cli_error(cmd, "cannot start the computing thread of rank 0");
        return CLI_EXIT_FAIL;
    }
    int rc = serve(&sv, cmd, 0) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (!serve_only)
        pthread_join(th, NULL);
    double wall = now() - t0, cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (rc == CLI_EXIT_OK)
        rc = job->finish(job->user, cmd, L);
    if (serve(&sv, cmd, 1) != 0)
        rc = CLI_EXIT_FAIL;
    if (sv.active)
        fprintf(stderr, "mbsens %s: %d rank(s) did not report back (taken for dead; their cases were recomputed)\n",
                cmd, sv.active);
    *finalize = sv.active == 0;
    for (int w = 1; w < size; w++)
        if (sv.stopped[w])
            MPI_Send(finalize, 1, MPI_INT, w, TAG_END, MPI_COMM_WORLD);
    if (job->stats)
        fprintf(stderr, "mbsens %s: %ld cases on %d ranks x %d threads, chunk %d%s: %.3f s, %ld chunks handed out "
                "(%.0f per s), %.0f bytes of reports; serving thread %.3f s CPU\n", cmd, L->ncases, size,
                threads, job->chunk, serve_only ? " (rank 0 serving only)" : "", wall, sv.handouts, sv.handouts / wall,
                sv.bytes, cpu);
    free(sv.stopped), free(sv.since), free(sv.idx), free(sv.out), free(sv.buf);
    return rc;
}

int cases_mpi_main(const char *cmd, const cases_job *job)
{
    int provided = 0, rank = 0, size = 1, finalize = 1;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        cli_error(cmd, "MPI_Init_thread failed");
        return CLI_EXIT_FAIL;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cases_job j = *job;
    j.threads = mbs_batch_threads(job->threads);
    j.chunk = job->chunk > 0 ? job->chunk : j.threads;
    if (provided < MPI_THREAD_FUNNELED && rank == 0)
        fprintf(stderr, "mbsens %s: MPI gives no thread support; going on (only main threads call MPI)\n", cmd);
    sweep_ledger L = {0};
    int rc = CLI_EXIT_OK;
    if (rank == 0)   /* rank 0 checks everything first, so that a bad input is reported once */
        rc = j.open(j.user, cmd, 0, &L);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0 && rc == CLI_EXIT_OK) {
        rc = j.open(j.user, cmd, rank, &L);
        if (rc == CLI_EXIT_OK)
            rc = worker(&L, j.threads, &finalize);
    } else if (rc == CLI_EXIT_OK) {
        rc = rank0(&L, cmd, &j, size, &finalize);
    }
    j.close(j.user, rank, &L, rank == 0 && rc == CLI_EXIT_OK);
    if (L.open)
        sweep_ledger_close(&L);
    if (finalize)   /* else the process ends without it, as mpirun --enable-recovery allows */
        MPI_Finalize();
    return rc;
}
