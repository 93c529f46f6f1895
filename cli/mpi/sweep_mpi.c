/*
 * sweep_mpi.c - the cases of `mbsens sweep` and of `mbsens optimize
 * --multistart` on MPI ranks (built where CMake finds MPI): any job of
 * cases recorded in a ledger (sweep.h, cases_job).
 *
 * Rank 0 holds the ledger (and the checkpoint) and hands out chunks of
 * case indices: its main thread serves the other ranks' requests, one more
 * thread computes chunks of its own (unless --serve-only) and serves the
 * requests waiting between its cases too (where the job's cases call the
 * ledger's poll), so that requests are answered within a case's time
 * while the main thread sleeps longer. A worker rank
 * keeps two chunks coming: it asks twice at the start, then sends the
 * result rows of each chunk as a request for one more, so that its next
 * chunk is there when it finishes one. It computes each chunk on its
 * threads. Near the end the chunks shrink (at most a share of the cases
 * left each, sweep_ledger_take), so that a rank holding two chunks does
 * not finish long after the others. Only the main thread of a worker rank
 * calls MPI; on rank 0 the serving thread and the computing thread take
 * turns under a mutex (MPI_THREAD_SERIALIZED; where MPI does not provide
 * it, only the main thread serves).
 * Waiting ranks poll and sleep rather than spin, so that a rank's threads
 * keep the cores.
 *
 * Rank 0 answers a request with new cases; when there are none, a rank
 * holding no chunk gets cases still in flight elsewhere (their results
 * are kept from whichever rank reports first), so a rank that died (mpirun
 * --enable-recovery keeps the others running) loses only the chunks it
 * held, at most two; any other request gets an empty answer, which ends
 * that request for good. A rank has two requests to spend: after its
 * second empty answer it holds and asks for nothing, and stops. When every
 * case is finished, rank 0 writes the tables, then answers the ranks still
 * out as they report; a rank silent for longer than a grace time (2 s plus
 * 5 times the longest time a chunk has been out) is taken for dead. Its last word to
 * the others says whether all stopped: only then do the ranks call
 * MPI_Finalize, which would wait for a dead rank forever (without it, a
 * process ends as mpirun --enable-recovery allows).
 *
 * Messages: a chunk is an array of int64 case indices (none: an empty
 * answer); a report is a byte string of records "int64 index, int32
 * status, int32 lengths of the message, of the case's CSV and JSON rows
 * and of its checkpoint line, the row's doubles (status 0), the message,
 * the CSV row, the JSON row, the checkpoint line" (none: one of the two
 * requests at the start). A sweep's rows of the tables and its checkpoint
 * lines are formatted by the rank that computed the case (when it records
 * it), so rank 0 only copies their bytes into the tables and appends a
 * report's lines to the checkpoint in one write.
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
enum { AHEAD = 2 };   /* chunks a worker rank holds or has asked for */
enum { RECORD_HEAD = 28 };   /* bytes of a report's record before its row: index, status, 4 lengths */

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
 * start at 20 microseconds and double up to cap nanoseconds while idle
 * (NAP_CAP: a report waits at most one such sleep for rank 0, and an idle
 * rank wakes at most 5 000 times a second for a short probe). *ns: the
 * state, 0 after traffic. */
enum { NAP_CAP = 200000, NAP_CAP_COMPUTING = 2000000 };
static void nap(long *ns, int traffic, long cap)
{
    if (traffic || *ns < 20) {
        *ns = traffic ? 0 : *ns + 1;
        sched_yield();
        return;
    }
    *ns = *ns < 20000 ? 20000 : (*ns < cap / 2 ? 2 * *ns : cap);
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
        const char *text[3];
        int32_t len[4] = {(int32_t)strlen(msg)};
        for (int t = 0; t < 3; t++) {
            int have = L->text[t] && L->text[t][i];
            text[t] = have ? L->text[t][i] : "";
            len[t + 1] = have ? (int32_t)L->tlen[t][i] : 0;
        }
        bad |= put(r, &i, sizeof i) | put(r, &st, sizeof st) | put(r, len, sizeof len);
        if (st == MBS_OK)
            bad |= put(r, sweep_ledger_row(L, (long)i), (size_t)L->ncols * sizeof(double));
        bad |= put(r, msg, (size_t)len[0]) | put(r, text[0], (size_t)len[1]) | put(r, text[1], (size_t)len[2])
               | put(r, text[2], (size_t)len[3]);
    }
    return bad;
}

/* Record the cases of a report, their checkpoint lines flushed together;
 * -1 if it is malformed. */
static int unpack(sweep_ledger *L, const char *b, size_t len, double *row, char *msg, size_t msgcap)
{
    size_t p = 0, rowb = (size_t)L->ncols * sizeof(double);
    int bad = 0;
    while (p < len && !bad) {
        int64_t i;
        int32_t st, ml[4];
        if (len - p < RECORD_HEAD) {
            bad = 1;
            break;
        }
        memcpy(&i, b + p, 8), memcpy(&st, b + p + 8, 4), memcpy(ml, b + p + 12, sizeof ml);
        p += RECORD_HEAD;
        if (i < 0 || i >= L->ncases || ml[0] < 0 || ml[1] < 0 || ml[2] < 0 || ml[3] < 0
            || len - p < (st == MBS_OK ? rowb : 0) + (size_t)ml[0] + (size_t)ml[1] + (size_t)ml[2]
                             + (size_t)ml[3]) {
            bad = 1;
            break;
        }
        if (st == MBS_OK) {
            memcpy(row, b + p, rowb);
            p += rowb;
        }
        size_t n = (size_t)ml[0] < msgcap - 1 ? (size_t)ml[0] : msgcap - 1;
        memcpy(msg, b + p, n);
        msg[n] = 0;
        p += (size_t)ml[0];
        const char *text[3] = {b + p, b + p + ml[1], b + p + ml[1] + ml[2]};
        const size_t tl[3] = {(size_t)ml[1], (size_t)ml[2], (size_t)ml[3]};
        p += tl[0] + tl[1] + tl[2];
        sweep_ledger_record_text(L, (long)i, st, row, msg, text, tl);
    }
    if (p > 0)
        sweep_ledger_checkpoint_flush(L);
    return bad ? -1 : 0;
}

/* ---- --stats: where a rank's time goes ---- */

/* Seconds of wall time per phase of a rank (CPU seconds for computing). */
typedef struct phases {
    double compute, compute_cpu;  /* the chunks' cases: wall, process CPU */
    double pack, send, wait;      /* worker: packing and sending reports, waiting for chunks */
    double recv, answer, idle;    /* rank 0's serving: receiving and recording reports, answering, napping */
    double progress;              /* rank 0's serving: the job's progress (a sweep's rows written) */
    long chunks, cases, naps;
} phases;

static void phases_print(const char *cmd, int rank, const phases *p)
{
    fprintf(stderr, "mbsens %s: rank %d: computing %.3f s (CPU %.3f s) in %ld chunks of %ld cases", cmd, rank,
            p->compute, p->compute_cpu, p->chunks, p->cases);
    if (rank > 0)
        fprintf(stderr, "; packing %.3f s, sending %.3f s, waiting for chunks %.3f s\n", p->pack, p->send, p->wait);
    else
        fprintf(stderr, "; serving: receiving and recording %.3f s, answering %.3f s, writing rows %.3f s, "
                "napping %.3f s (%ld naps)\n", p->recv, p->answer, p->progress, p->idle, p->naps);
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
        nap(&ns, 0, NAP_CAP);
    MPI_Recv(&all, 1, MPI_INT, 0, TAG_END, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return all;
}

typedef struct chunk_buf {
    int64_t *ids;
    long *idx;
    int cap;
} chunk_buf;

/* Wait for rank 0's next answer and receive it into c->idx: its count of
 * cases (0: an empty answer), -1 out of memory. */
static int next_chunk(chunk_buf *c)
{
    MPI_Status st;
    int flag = 0, n = 0;
    long ns = 0;
    while (MPI_Iprobe(0, TAG_CHUNK, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && !flag)
        nap(&ns, 0, NAP_CAP);
    MPI_Get_count(&st, MPI_INT64_T, &n);
    if (n > c->cap) {
        int64_t *a = realloc(c->ids, (size_t)n * sizeof *a);
        c->ids = a ? a : c->ids;
        long *x = realloc(c->idx, (size_t)n * sizeof *x);
        c->idx = x ? x : c->idx;
        if (!a || !x)
            return -1;
        c->cap = n;
    }
    MPI_Recv(c->ids, n, MPI_INT64_T, 0, TAG_CHUNK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < n; k++)
        c->idx[k] = (long)c->ids[k];
    return n;
}

/* AHEAD requests at the start, then one with the report of every chunk:
 * while the worker computes one chunk, its next one is on its way. A
 * report is sent without waiting for rank 0 to take it (MPI_Isend, from
 * one of AHEAD buffers, reused once its send is complete), so the worker
 * goes on with the chunk it holds while rank 0 gets round to it. Each
 * empty answer ends a request for good; the rank stops when none is left,
 * after exactly AHEAD empty answers. */
static int worker(sweep_ledger *L, int threads, phases *ph, int *finalize)
{
    report r[AHEAD] = {{0}};
    MPI_Request sent[AHEAD];
    chunk_buf c = {0};
    int rc = CLI_EXIT_OK, asked = AHEAD, slot = 0;
    for (int k = 0; k < AHEAD; k++) {
        sent[k] = MPI_REQUEST_NULL;
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_REPORT, MPI_COMM_WORLD);
    }
    while (asked > 0) {
        double t = now();
        int n = next_chunk(&c);
        asked--;
        ph->wait += now() - t;
        if (n < 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        if (n == 0)
            continue;
        double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        t = now();
        L->run(L, c.idx, n, threads);
        ph->compute_cpu += clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        ph->compute += now() - t;
        ph->chunks++;
        ph->cases += n;
        t = now();
        MPI_Wait(&sent[slot], MPI_STATUS_IGNORE);   /* the buffer's last report, AHEAD chunks ago */
        r[slot].len = 0;
        if (pack(&r[slot], L, c.idx, n) != 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        sweep_ledger_release(L, c.idx, 0, n);   /* their texts are in the report */
        ph->pack += now() - t;
        t = now();
        MPI_Isend(r[slot].b, (int)r[slot].len, MPI_BYTE, 0, TAG_REPORT, MPI_COMM_WORLD, &sent[slot]);
        slot = (slot + 1) % AHEAD;
        ph->send += now() - t;
        asked++;
    }
    MPI_Waitall(AHEAD, sent, MPI_STATUSES_IGNORE);
    if (rc == CLI_EXIT_OK)
        *finalize = wait_end();
    for (int k = 0; k < AHEAD; k++)
        free(r[k].b);
    free(c.ids);
    free(c.idx);
    return rc;
}

/* ---- rank 0 ---- */

/* Per worker rank: the chunks handed out and not yet reported, oldest
 * first (a worker computes them in the order received). */
typedef struct flight {
    int n, head;              /* chunks out; the oldest in slot head */
    int64_t *ids;             /* AHEAD slots of `chunk` indices: the sends' buffers */
    MPI_Request req[AHEAD];
    double since[AHEAD];      /* when each slot went out */
    int empties;              /* empty answers sent: AHEAD of them stop the rank */
    double first, last;       /* --stats: its first request and its last report (0: none yet) */
} flight;

typedef struct server {
    sweep_ledger *L;
    const cases_job *job;
    int chunk, threads, size;
    int share;                /* chunks out at once at most: AHEAD per worker rank, one for rank 0's own */
    _Atomic int local_done;   /* rank 0's own computing has ended */
    flight *fl;               /* per rank */
    double longest;           /* the longest time any chunk has been out */
    int active;               /* worker ranks not yet stopped */
    long handouts;
    double bytes;
    char *buf;
    size_t bufcap;
    long *idx;
    double t0;                /* when serving began */
    phases ph;                /* rank 0: the serving thread's and (compute) its computing thread's */
    const char *cmd;
    double *row;              /* a report's case being recorded */
    char *msg;
    _Atomic int failed;       /* a report could not be received */
    pthread_mutex_t mpi;      /* held by the thread that serves (and calls MPI) */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;      /* the computing thread has ended: the serving thread's sleep is over */
} server;

static void *local_compute(void *p)
{
    server *sv = p;
    long *idx = malloc((size_t)sv->chunk * sizeof *idx);
    int n;
    while (idx && (n = sweep_ledger_take(sv->L, idx, sv->chunk, 1, sv->share)) > 0) {
        double t = now();
        sv->L->run(sv->L, idx, n, sv->threads);
        sv->ph.compute += now() - t;
        sv->ph.chunks++;
        sv->ph.cases += n;
    }
    free(idx);
    pthread_mutex_lock(&sv->wake_lock);
    sv->local_done = 1;
    pthread_cond_signal(&sv->wake);
    pthread_mutex_unlock(&sv->wake_lock);
    return NULL;
}

static int all_done(server *sv)
{
    pthread_mutex_lock(&sv->L->lock);
    int d = sv->L->ndone == sv->L->ncases;
    pthread_mutex_unlock(&sv->L->lock);
    return d && sv->local_done;
}

/* Receive a report from any rank, if one is there, and record it: its
 * rank, -1 if none, -2 on failure. A non-empty report is the oldest chunk
 * of its rank's flight (the send of which is therefore complete). */
static int take_report(server *sv, const char *cmd, double *row, char *msg)
{
    MPI_Status st;
    int flag = 0, bytes = 0;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_REPORT, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
        return -1;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    if ((size_t)bytes > sv->bufcap) {
        char *b = realloc(sv->buf, (size_t)bytes);
        if (!b)
            return -2;
        sv->buf = b;
        sv->bufcap = (size_t)bytes;
    }
    int w = st.MPI_SOURCE;
    MPI_Recv(sv->buf, bytes, MPI_BYTE, w, TAG_REPORT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sv->bytes += bytes;
    flight *f = &sv->fl[w];
    f->last = now() - sv->t0;
    if (f->first == 0)
        f->first = f->last;
    if (bytes > 0 && f->n > 0) {
        MPI_Wait(&f->req[f->head], MPI_STATUS_IGNORE);
        if (now() - f->since[f->head] > sv->longest)
            sv->longest = now() - f->since[f->head];
        f->head = (f->head + 1) % AHEAD;
        f->n--;
    }
    if (unpack(sv->L, sv->buf, (size_t)bytes, row, msg, MBS_ERROR_MSG_LEN) != 0)
        cli_error(cmd, "rank %d: malformed report (ignored)", w);
    return w;
}

/* Answer a request of rank w: new cases; else, if w holds none, cases
 * in flight elsewhere (a dead rank's are computed again), never its own;
 * else (or once every case is finished) an empty answer. */
static void answer(server *sv, int w)
{
    flight *f = &sv->fl[w];
    int n = sweep_ledger_take(sv->L, sv->idx, sv->chunk, 0, sv->share);
    if (n == 0 && f->n == 0)
        n = sweep_ledger_take(sv->L, sv->idx, sv->chunk, 1, sv->share);
    if (n == 0) {
        MPI_Send(NULL, 0, MPI_INT64_T, w, TAG_CHUNK, MPI_COMM_WORLD);
        if (++f->empties == AHEAD)
            sv->active--;
        return;
    }
    int s = (f->head + f->n) % AHEAD;
    int64_t *ids = f->ids + (size_t)s * (size_t)sv->chunk;
    for (int k = 0; k < n; k++)
        ids[k] = sv->idx[k];
    MPI_Isend(ids, n, MPI_INT64_T, w, TAG_CHUNK, MPI_COMM_WORLD, &f->req[s]);
    f->since[s] = now();
    f->n++;
    sv->handouts++;
}

/* The job's use of the cases recorded so far, while they are computed. */
static void progress(server *sv)
{
    if (!sv->job->progress)
        return;
    double t = now();
    sv->job->progress(sv->job->user, sv->L);
    sv->ph.progress += now() - t;
}

/* One round of serving, by the thread holding sv->mpi: a report received,
 * recorded and answered if one is there, and the job's progress. 1 if
 * a report is received. */
static int serve_step(server *sv, int drain)
{
    double t = now();
    int w = take_report(sv, sv->cmd, sv->row, sv->msg);
    if (w == -2)
        sv->failed = 1;
    if (w >= 0) {
        double t1 = now();
        answer(sv, w);
        sv->ph.recv += t1 - t, sv->ph.answer += now() - t1;
    }
    if (!drain)
        progress(sv);
    return w >= 0;
}

/* Rank 0's computing thread between its cases (the ledger's poll): it
 * serves the reports that are waiting, unless the serving thread is at
 * it. Requests are then answered within a case's time, and the serving
 * thread, which wakes less often meanwhile, costs the cores less. */
static void serve_between_cases(void *p)
{
    server *sv = p;
    if (pthread_mutex_trylock(&sv->mpi) != 0)
        return;
    while (serve_step(sv, 0) > 0 && !sv->failed)
        continue;
    pthread_mutex_unlock(&sv->mpi);
}

/* The serving thread's sleep while rank 0's computing thread serves
 * between its cases: NAP_CAP_COMPUTING, cut short when that thread ends
 * (the last reports and the tables are then the serving thread's). */
static void backstop_nap(server *sv)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += NAP_CAP_COMPUTING;
    t.tv_sec += t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    pthread_mutex_lock(&sv->wake_lock);
    while (!sv->local_done && pthread_cond_timedwait(&sv->wake, &sv->wake_lock, &t) == 0)
        continue;
    pthread_mutex_unlock(&sv->wake_lock);
}

/* Serve until every case is finished (drain = 0), or until every rank is
 * stopped or taken for dead (drain = 1). While rank 0's computing thread
 * serves between its cases, the serving thread is only its backstop (for
 * a case that may be long): it sleeps NAP_CAP_COMPUTING between its
 * rounds, traffic or not, since each wake-up takes a core from a
 * computing thread (a context switch and the cost of a sleep). */
static int serve(server *sv, int drain)
{
    double quiet = -1;
    long ns = 0;
    while (!sv->failed) {
        int backstop = !drain && sv->L->poll && !sv->local_done;
        pthread_mutex_lock(&sv->mpi);
        int got = serve_step(sv, drain);
        pthread_mutex_unlock(&sv->mpi);
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
        double t = now();
        if (backstop)
            backstop_nap(sv);
        else
            nap(&ns, 0, NAP_CAP);
        sv->ph.idle += now() - t;
        sv->ph.naps++;
    }
    return sv->failed ? -1 : 0;
}

/* Tell every rank that stopped whether all did (finalize); say how many
 * did not, and how many chunks they held. */
static void end_ranks(server *sv, const char *cmd, int *finalize)
{
    int held = 0;
    for (int w = 1; w < sv->size; w++)
        held += sv->fl[w].empties < AHEAD ? sv->fl[w].n : 0;
    if (sv->active)
        fprintf(stderr, "mbsens %s: %d rank(s) did not report back (taken for dead; the %d chunk(s) they held "
                "were computed by others)\n", cmd, sv->active, held);
    *finalize = sv->active == 0;
    for (int w = 1; w < sv->size; w++)
        if (sv->fl[w].empties == AHEAD)
            MPI_Send(finalize, 1, MPI_INT, w, TAG_END, MPI_COMM_WORLD);
}

static int server_open(server *sv, sweep_ledger *L, const char *cmd, const cases_job *job, int size)
{
    *sv = (server){.L = L, .job = job, .cmd = cmd, .chunk = job->chunk, .threads = job->threads, .size = size,
                   .active = size - 1};
    pthread_mutex_init(&sv->mpi, NULL);
    pthread_mutex_init(&sv->wake_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sv->wake, &ca);
    pthread_condattr_destroy(&ca);
    sv->fl = calloc((size_t)size, sizeof *sv->fl);
    sv->idx = malloc((size_t)job->chunk * sizeof *sv->idx);
    sv->row = malloc(((size_t)L->ncols + 1) * sizeof *sv->row);
    sv->msg = malloc(MBS_ERROR_MSG_LEN);
    if (!sv->fl || !sv->idx || !sv->row || !sv->msg)
        return -1;
    sv->fl[0].empties = AHEAD;   /* rank 0 asks for nothing */
    for (int w = 1; w < size; w++)
        if (!(sv->fl[w].ids = malloc((size_t)AHEAD * (size_t)job->chunk * sizeof *sv->fl[w].ids)))
            return -1;
    return 0;
}

static void server_close(server *sv)
{
    for (int w = 0; sv->fl && w < sv->size; w++)
        free(sv->fl[w].ids);
    free(sv->fl), free(sv->idx), free(sv->buf), free(sv->row), free(sv->msg);
    pthread_mutex_destroy(&sv->mpi);
    pthread_mutex_destroy(&sv->wake_lock);
    pthread_cond_destroy(&sv->wake);
}

/* --stats on rank 0: the span, the hand-outs, where rank 0's time went
 * and when each rank first asked and last reported. */
static void rank0_stats(const server *sv, const char *cmd, const cases_job *job, int serve_only, const double t[4])
{
    double wall = t[0];
    fprintf(stderr, "mbsens %s: %ld cases on %d ranks x %d threads, chunk %d%s: %.3f s, %ld chunks handed out "
            "(%.0f per s), %.0f bytes of reports; serving thread %.3f s CPU; tables written in %.3f s\n", cmd,
            sv->L->ncases, sv->size, job->threads, job->chunk, serve_only ? " (rank 0 serving only)" : "", wall,
            sv->handouts, sv->handouts / wall, sv->bytes, t[1], t[3]);
    phases p = sv->ph;
    p.compute_cpu = t[2] - t[1];
    phases_print(cmd, 0, &p);
    for (int w = 1; w < sv->size; w++)
        fprintf(stderr, "mbsens %s: rank %d: first request at %.3f s, last report at %.3f s\n", cmd, w,
                sv->fl[w].first, sv->fl[w].last);
}

static int rank0(sweep_ledger *L, const char *cmd, const cases_job *job, int size, int serialized, int *finalize)
{
    server sv;
    if (server_open(&sv, L, cmd, job, size) != 0) {
        server_close(&sv);
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), p0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    sv.t0 = now();
    pthread_t th;
    int serve_only = job->serve_only && size > 1;
    sv.local_done = serve_only;
    sv.share = AHEAD * (size - 1) + !serve_only;
    if (!serve_only && serialized && job->polls) {
        L->poll = serve_between_cases;
        L->poll_arg = &sv;
    }
    if (!serve_only && pthread_create(&th, NULL, local_compute, &sv) != 0) {
        L->poll = NULL;
        server_close(&sv);
        cli_error(cmd, "cannot start the computing thread of rank 0");
        return CLI_EXIT_FAIL;
    }
    int rc = serve(&sv, 0) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (!serve_only)
        pthread_join(th, NULL);
    L->poll = NULL;
    /* the span, the serving thread's CPU, the process's CPU, the tables' writing */
    double t[4] = {now() - sv.t0, clock_s(CLOCK_THREAD_CPUTIME_ID) - c0, clock_s(CLOCK_PROCESS_CPUTIME_ID) - p0, 0};
    if (rc == CLI_EXIT_OK)
        rc = job->finish(job->user, cmd, L);
    t[3] = now() - sv.t0 - t[0];
    if (serve(&sv, 1) != 0)
        rc = CLI_EXIT_FAIL;
    end_ranks(&sv, cmd, finalize);
    if (job->stats)
        rank0_stats(&sv, cmd, job, serve_only, t);
    server_close(&sv);
    return rc;
}

int cases_mpi_main(const char *cmd, const cases_job *job)
{
    int provided = 0, rank = 0, size = 1, finalize = 1;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
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
    /* Every rank opens the job at once (a worker waiting for rank 0 to
     * load the model first would start that much later); a worker holds
     * its messages back, so that a bad input is reported once, by rank 0,
     * and says why only when it alone failed (another node's files). */
    sweep_ledger L = {0};
    if (rank != 0)
        cli_hold_messages();
    int mine = j.open(j.user, cmd, rank, &L), rc = mine;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank != 0)
        cli_release_messages(rc == CLI_EXIT_OK && mine != CLI_EXIT_OK);
    if (rank != 0 && rc == CLI_EXIT_OK) {
        rc = mine;
        phases ph = {0};
        if (rc == CLI_EXIT_OK)
            rc = worker(&L, j.threads, &ph, &finalize);
        if (rc == CLI_EXIT_OK && j.stats)
            phases_print(cmd, rank, &ph);
    } else if (rc == CLI_EXIT_OK) {
        rc = rank0(&L, cmd, &j, size, provided >= MPI_THREAD_SERIALIZED, &finalize);
    }
    j.close(j.user, rank, &L, rank == 0 && rc == CLI_EXIT_OK);
    if (L.open)
        sweep_ledger_close(&L);
    if (finalize)   /* else the process ends without it, as mpirun --enable-recovery allows */
        MPI_Finalize();
    return rc;
}
