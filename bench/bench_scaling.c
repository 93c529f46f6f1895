/*
 * bench_scaling.c - speed-up on the cores of this machine and on MPI
 * ranks (docs/scaling.md, docs/benchmarks.md).
 *
 *   build/bench/bench_scaling [--reps N] [--quick] [--only SECTION]
 *
 * Side by side in one run, every ratio of issue 18's targets and what
 * explains them. Each comparison is N repetitions (default 3; the talos
 * batch, 0.3 s a repetition, 5 N up to 31), each a run of one side right
 * after the other's, after an untimed run of each (the OpenMP team
 * started, the output arrays touched); the speed-up is the median of the
 * per-repetition ratios (with their range), the times the medians:
 *   1. 64 five-bar discrete-adjoint gradients (mbs_batch_sensitivity, 64
 *      parameter vectors): 1 thread vs 2 threads;
 *   2. one five-bar DDM gradient (5 parameters, tf 1 s, dt 1 ms), its
 *      parameter columns on 1 vs 2 threads (mbs_sens_options.threads),
 *      ALI3-P and Matrix R, with the time per step;
 *   3. what a meeting of a team of 2 costs: 20 000 (--quick: 2 000)
 *      fork-and-joins of a parallel region with 0, 4 and 25 us of serial
 *      work between them, and as many barriers of one team, against one
 *      thread doing the same;
 *   4. `mbsens optimize --multistart 8` on the three-link arm,
 *      --threads 1 vs 2 (whole processes);
 *   5. 10^4 forward-dynamics derivatives of talos_full_v2 at random
 *      states (mbs_batch_evaluate): 1 vs 2 threads, with the ratio of CPU
 *      times; and the same computation with each thread's results written
 *      over a few rows of its own (in cache), which tells the cost of
 *      streaming the 468 MB of results to memory from that of computing;
 *   6. the sweeps 1 and 5 through `mbsens sweep` under mpirun -np 1 vs
 *      -np 2 (one thread per rank; the times rank 0 measures, without
 *      MPI's start-up: from the first hand-out to the CSV table written,
 *      and to the last result), with rank 1's phases (--stats);
 *   7. rank 0's hand-out rate: no-op cases, chunks of one, rank 0 serving
 *      only, with 1 and 2 workers;
 *   8. the machine's ceiling: synthetic cases that share nothing between
 *      the threads (compute in registers, passes over 256 kB to 32 MB of
 *      each thread's own memory, results streamed at the talos batch's
 *      rate), 1 vs 2 threads. Sections 1, 5 and 6 also print, right after
 *      each target, the ceiling of synthetic cases of that target's
 *      footprint (docs/scaling.md, "The machine's ceiling").
 * --only runs one section: batch (1), ddm (2), meetings (3), multistart
 * (4), talos-batch (5), fivebar-sweep and talos-sweep (6), handout (7),
 * ceiling (8).
 * Each line gives wall and CPU seconds and the 1-minute load average when
 * it was measured: on a machine shared with other work the ratios are
 * depressed, and the load says by how much to distrust them.
 */
#define _GNU_SOURCE   /* sched_setaffinity */
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <omp.h>

#include "bench_common.h"

#ifndef MBS_CLI_PATH
#define MBS_CLI_PATH "mbsens"
#endif

typedef struct span {
    double wall, cpu, load;
} span;

static volatile double spin_sink;

/* The section --only names (NULL: all). */
static const char *only;

static int want(const char *section)
{
    return !only || strcmp(only, section) == 0;
}

static double clock_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double load1(void)
{
    double l[1] = {-1};
    return getloadavg(l, 1) == 1 ? l[0] : -1;
}

static int by_wall(const void *a, const void *b)
{
    double x = ((const span *)a)->wall, y = ((const span *)b)->wall;
    return (x > y) - (x < y);
}

typedef int (*job_fn)(void *ctx, int threads);

/* A side-by-side comparison: the medians (by wall time) of each side, and
 * the median of the per-repetition ratios (the two runs of a repetition
 * follow each other, so they see the same machine), with its range. */
typedef struct pair {
    span s[2];
    double ratio, lo, hi;     /* wall[0] / wall[1]: median, smallest, largest */
    double cpu;               /* median of cpu[1] / cpu[0]: above 1, the same work cost more CPU */
    int reps;
} pair;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pair_finish(pair *p, span r[2][BENCH_MAX_REPS], int reps)
{
    double q[BENCH_MAX_REPS], c[BENCH_MAX_REPS];
    for (int k = 0; k < reps; k++) {
        q[k] = r[0][k].wall / r[1][k].wall;
        c[k] = r[0][k].cpu > 0 ? r[1][k].cpu / r[0][k].cpu : 0;
    }
    qsort(q, (size_t)reps, sizeof *q, by_value);
    qsort(c, (size_t)reps, sizeof *c, by_value);
    p->ratio = q[reps / 2], p->lo = q[0], p->hi = q[reps - 1], p->cpu = c[reps / 2], p->reps = reps;
    for (int j = 0; j < 2; j++) {
        qsort(r[j], (size_t)reps, sizeof(span), by_wall);
        p->s[j] = r[j][reps / 2];
    }
}

static void run_job(job_fn job, void *ctx, int threads)
{
    if (job(ctx, threads) != 0) {
        fprintf(stderr, "bench_scaling: a job failed\n");
        exit(2);
    }
}

/* reps alternating runs of job with t[0] and t[1] threads, after an
 * untimed run of each (the team started, the output arrays touched). */
static pair compare(job_fn job, void *ctx, const int t[2], int reps)
{
    span r[2][BENCH_MAX_REPS];
    for (int j = 0; j < 2; j++)
        run_job(job, ctx, t[j]);
    for (int k = 0; k < reps; k++)
        for (int j = 0; j < 2; j++) {
            double w = clock_s(CLOCK_MONOTONIC), c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            run_job(job, ctx, t[j]);
            r[j][k] = (span){clock_s(CLOCK_MONOTONIC) - w, clock_s(CLOCK_PROCESS_CPUTIME_ID) - c, load1()};
        }
    pair p;
    pair_finish(&p, r, reps);
    return p;
}

static void report(const char *what, const char *a, const char *b, const pair *p, double target)
{
    const span *s = p->s;
    printf("%s\n  %-12s wall %8.3f s  cpu %8.3f s  load %5.2f\n  %-12s wall %8.3f s  cpu %8.3f s  load %5.2f\n",
           what, a, s[0].wall, s[0].cpu, s[0].load, b, s[1].wall, s[1].cpu, s[1].load);
    printf("  speed-up %.2fx (median of %d paired ratios, %.2f to %.2f; cpu %s / %s %.2f)", p->ratio, p->reps, p->lo,
           p->hi, b, a, p->cpu);
    if (target > 0)
        printf(" (target >= %.1fx: %s)", target,
               p->ratio >= target ? "met" : s[1].load > 2.5 ? "not met at this load" : "not met");
    printf("\n");
}

/* ---- 8. the machine's ceiling: synthetic cases of a given footprint ---- */

/* A synthetic case, handed out as mbs_batch_run hands out cases (dynamic,
 * one at a time): `spin` rounds of 8 independent multiply-adds in
 * registers (compute), `passes` passes over `resident` bytes of the
 * thread's own buffer, and `stream` bytes of results written over row i
 * of an array larger than the caches (a batch's results landing in the
 * caller's arrays). A pass visits every 64-byte line of the buffer once,
 * in a random cycle (each line holds the index of the next), reading and
 * writing it: no prefetcher can guess the next line, so a pass costs the
 * latency of the cache level the buffer lives in, and two threads whose
 * buffers together overflow a cache they share (two hardware threads of
 * one core share its L1 and L2) slow each other. Nothing is shared
 * between the threads but the loop's counter: the speed-up on 2 threads
 * is what the machine gives for work of that footprint. */
typedef struct synth_job {
    long n, spin, passes;
    size_t resident, stream;  /* bytes */
    double *buf[2], *out;
    double sink;
} synth_job;

static double synth_rounds_per_us;   /* of synth_spin, measured once */

static double synth_spin(long rounds, double seed)
{
    double x[8], s = 0;
    for (int k = 0; k < 8; k++)
        x[k] = seed + k;
    for (long r = 0; r < rounds; r++)
        for (int k = 0; k < 8; k++)
            x[k] = x[k] * 0.999999 + 1e-9;
    for (int k = 0; k < 8; k++)
        s += x[k];
    return s;
}

static double synth_case(const synth_job *j, long i, double *buf)
{
    double s = synth_spin(j->spin, (double)i);
    const size_t lines = j->resident / 64, w = j->stream / sizeof(double);
    size_t at = 0;
    for (long p = 0; p < j->passes; p++)
        for (size_t k = 0; k < lines; k++) {
            double *line = buf + 8 * at;
            at = (size_t)line[0];
            line[1] += s;
        }
    s += (double)at;
    double *o = j->out ? j->out + (size_t)i * w : NULL;
    for (size_t k = 0; o && k < w; k++)
        o[k] = s + (double)k;
    return s;
}

static int synth_run(void *ctx, int threads)
{
    synth_job *j = ctx;
    double s = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : s)
    for (long i = 0; i < j->n; i++)
        s += synth_case(j, i, j->buf[omp_get_thread_num()]);
    j->sink += s;
    return 0;
}

/* A buffer of `lines` 64-byte lines, line k holding (in its first double)
 * the index of the next line of one random cycle through all of them
 * (Sattolo's shuffle). */
static double *synth_cycle(size_t lines, uint64_t seed)
{
    double *b = calloc(8 * lines + 8, sizeof(double));
    size_t *perm = malloc((lines + 1) * sizeof *perm);
    if (!b || !perm) {
        free(b), free(perm);
        return NULL;
    }
    bench_rng r;
    bench_rng_seed(&r, seed);
    for (size_t k = 0; k < lines; k++)
        perm[k] = k;
    for (size_t k = lines; k-- > 1;) {
        size_t i = (size_t)(bench_rng_uniform(&r) * (double)k), t = perm[k];
        perm[k] = perm[i < k ? i : k - 1], perm[i < k ? i : k - 1] = t;
    }
    for (size_t k = 0; k < lines; k++)
        b[8 * perm[k]] = (double)perm[(k + 1) % lines];
    free(perm);
    return b;
}

/* A synthetic job of case_us of compute, `passes` passes over `resident`
 * bytes and `stream` bytes of results per case, with as many cases as take
 * about 0.2 s on one thread (at least 16; the results' array at most
 * 512 MB). NULL if out of memory. */
static synth_job *synth_make(double case_us, size_t resident, long passes, size_t stream)
{
    if (synth_rounds_per_us == 0) {
        double c = clock_s(CLOCK_THREAD_CPUTIME_ID);
        spin_sink += synth_spin(10000000, 1);
        synth_rounds_per_us = 1e7 / (1e6 * (clock_s(CLOCK_THREAD_CPUTIME_ID) - c));
    }
    synth_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    *j = (synth_job){1, (long)(case_us * synth_rounds_per_us), passes, resident, stream, {NULL, NULL}, NULL, 0};
    for (int t = 0; t < 2; t++)
        j->buf[t] = synth_cycle(resident / 64, (uint64_t)t + 1);
    double *probe = stream ? calloc(1, stream) : NULL;
    j->out = probe;
    long k = 0;
    double c = 0, c0 = 0;
    for (; j->buf[0] && (k < 2 || c - c0 < 0.02); k++) {   /* the first case touches the pages: untimed */
        j->sink += synth_case(j, 0, j->buf[0]);
        c = clock_s(CLOCK_THREAD_CPUTIME_ID);
        if (k == 0)
            c0 = c;
    }
    double per = k > 1 ? (c - c0) / (double)(k - 1) : 0;
    long n = per > 0 ? (long)(0.2 / per) : 16;
    if (stream && (double)n * (double)stream > 512e6)
        n = (long)(512e6 / (double)stream);
    j->n = n < 16 ? 16 : n;
    free(probe);
    j->out = stream ? malloc((size_t)j->n * stream) : NULL;
    if (!j->buf[0] || !j->buf[1] || (stream && !j->out)) {
        free(j->buf[0]), free(j->buf[1]), free(j->out), free(j);
        return NULL;
    }
    return j;
}

static void synth_free(synth_job *j)
{
    if (j)
        free(j->buf[0]), free(j->buf[1]), free(j->out), free(j);
}

/* The ceiling beside a target: the synthetic job's speed-up on 2 threads,
 * measured right after the target (reps paired runs). */
static void ceiling_line(const char *what, double case_us, size_t resident, long passes, size_t stream, int reps)
{
    const int t[2] = {1, 2};
    synth_job *j = synth_make(case_us, resident, passes, stream);
    if (!j) {
        printf("  ceiling: %s: out of memory\n", what);
        return;
    }
    pair p = compare(synth_run, j, t, reps);
    printf("  ceiling now, synthetic cases (%s): %.2fx (%.2f to %.2f; cpu 2 threads / 1 thread %.2f; %.1f us a case "
           "on 1 thread)\n", what, p.ratio, p.lo, p.hi, p.cpu, 1e6 * p.s[0].wall / (double)j->n);
    synth_free(j);
}

/* The section: compute-bound cases, cases going through 24 kB to 32 MB
 * of their own per thread, and cases writing results at the talos batch's
 * rate (talos_us of compute and a row of talos_row bytes each). */
static void bench_ceiling(int reps, double talos_us, size_t talos_row)
{
    printf("the machine's ceiling: synthetic cases on 1 vs 2 threads, nothing shared between the threads\n"
           "  (a pass over R bytes visits its R / 64 cache lines in a random cycle, so each visit costs the latency\n"
           "  of the cache the buffer lives in; how to read these against the targets: docs/scaling.md,\n"
           "  \"The machine's ceiling\")\n");
    ceiling_line("compute only, 1 ms each, in registers", 1000, 0, 0, 0, reps);
    const size_t kb[5] = {24, 256, 768, 4096, 32768};
    for (int k = 0; k < 5; k++) {
        char what[120];
        snprintf(what, sizeof what, "%5zu kB of its own per thread, passes each: %ld", kb[k], 1 + 4096 / (long)kb[k]);
        ceiling_line(what, 0, kb[k] << 10, 1 + 4096 / (long)kb[k], 0, reps);
    }
    char what[160];
    snprintf(what, sizeof what, "%.1f us of compute + a %.1f kB row of results to memory each, the talos batch's rate",
             talos_us, (double)talos_row / 1e3);
    ceiling_line(what, talos_us, 0, 0, talos_row, 5 * reps < BENCH_MAX_REPS ? 5 * reps : BENCH_MAX_REPS);
}

/* ---- the same cases in two processes ---- */

typedef int (*slice_fn)(void *ctx, long first, long count);

/* Pin the calling process to CPU cpu (-1: every CPU again). */
static void pin_to_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int k = 0; k < CPU_SETSIZE && k < 1024; k++)
        if (cpu < 0 || k == cpu)
            CPU_SET(k, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* The cases taken `chunk` at a time from a counter shared by the two
 * processes, as a batch's threads take them from their loop. */
static int take_chunks(slice_fn fn, void *ctx, long n, long chunk, atomic_long *next)
{
    int rc = 0;
    for (long i; rc == 0 && (i = atomic_fetch_add(next, chunk)) < n;)
        rc = fn(ctx, i, i + chunk < n ? chunk : n - i);
    return rc;
}

/* The child's side: all the cases once, untimed, then its share of the
 * cases on each byte read from `go`, its CPU seconds (-1: failed) written
 * back on `done`; it ends when `go` closes. */
static void halves_child(slice_fn fn, void *ctx, long n, long chunk, atomic_long *next, int go, int done)
{
    char b;
    pin_to_cpu(1);
    if (fn(ctx, 0, n) != 0)   /* every page it may write made its own */
        _exit(1);
    while (read(go, &b, 1) == 1) {
        double c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        int rc = take_chunks(fn, ctx, n, chunk, next);
        c = rc ? -1 : clock_s(CLOCK_PROCESS_CPUTIME_ID) - c;
        if (write(done, &c, sizeof c) != (ssize_t)sizeof c)
            break;
    }
    _exit(0);
}

/* reps paired runs: the n cases on one thread in this process, then the
 * cases shared, `chunk` at a time, by this process and a child process
 * forked once, pinned to CPUs 0 and 1 (a process woken from a pipe starts
 * on its waker's CPU and waits there until the scheduler moves it), after
 * an untimed round in which each process runs every case, making its own
 * copies of the pages it writes. The processes share nothing but the
 * machine and the counter: the speed-up is what two cores give for this
 * very work, with no team, no shared heap and no shared library state.
 * Cases of equal cost go in halves (chunk n / 2: one mbs_data each, as
 * a thread of a batch has); cases of unequal cost one at a time. */
static int compare_processes(slice_fn fn, void *ctx, long n, long chunk, int reps, pair *p)
{
    int go[2], done[2];
    atomic_long *next = mmap(NULL, sizeof *next, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (next == MAP_FAILED)
        return -1;
    if (pipe(go)) {
        munmap(next, sizeof *next);
        return -1;
    }
    if (pipe(done)) {
        close(go[0]), close(go[1]), munmap(next, sizeof *next);
        return -1;
    }
    fflush(stdout);
    void (*pipe_handler)(int) = signal(SIGPIPE, SIG_IGN);   /* a child that died: a failed write */
    pid_t kid = fork();
    if (kid == 0) {
        close(go[1]), close(done[0]);
        halves_child(fn, ctx, n, chunk, next, go[0], done[1]);
    }
    close(go[0]), close(done[1]);
    span r[2][BENCH_MAX_REPS];
    int bad = kid < 0;
    for (int k = -1; k < reps && !bad; k++) {
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        bad = fn(ctx, 0, n) != 0;
        pin_to_cpu(0);
        atomic_store(next, 0);
        double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID), cc = -1;
        bad = bad || write(go[1], "g", 1) != 1 || take_chunks(fn, ctx, n, chunk, next) != 0 ||
              read(done[0], &cc, sizeof cc) != (ssize_t)sizeof cc || cc < 0;
        double w2 = clock_s(CLOCK_MONOTONIC), c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID), l = load1();
        pin_to_cpu(-1);
        if (k >= 0) {
            r[0][k] = (span){w1 - w0, c1 - c0, l};
            r[1][k] = (span){w2 - w1, c2 - c1 + cc, l};
        }
    }
    close(go[1]), close(done[0]);
    if (kid > 0)
        waitpid(kid, NULL, 0);
    munmap(next, sizeof *next);
    signal(SIGPIPE, pipe_handler);
    if (!bad)
        pair_finish(p, r, reps);
    return bad ? -1 : 0;
}

static void processes_line(slice_fn fn, void *ctx, long n, long chunk, int reps)
{
    pair p;
    if (compare_processes(fn, ctx, n, chunk, reps, &p) != 0) {
        printf("  the same cases in two processes: failed\n");
        return;
    }
    printf("  the same cases on two processes of one thread, %ld at a time (sharing nothing but the machine): %.2fx "
           "(%.2f to %.2f; cpu 2 processes / 1 %.2f)\n", chunk, p.ratio, p.lo, p.hi, p.cpu);
}

/* ---- 1. five-bar davm batch ---- */

typedef struct fivebar_job {
    const mbs_model *m;
    mbs_sens_options o;
    long n;
    double *rho, *psi, *grad;
} fivebar_job;

static int fivebar_batch(void *ctx, int threads)
{
    fivebar_job *j = ctx;
    return mbs_batch_sensitivity(j->m, &j->o, j->n, j->rho, j->psi, j->grad, threads, NULL, NULL);
}

static int fivebar_slice(void *ctx, long first, long count)
{
    fivebar_job *j = ctx;
    const size_t np = (size_t)mbs_model_nparams(j->m), no = (size_t)mbs_model_nobjectives(j->m), f = (size_t)first;
    return mbs_batch_sensitivity(j->m, &j->o, count, j->rho + f * np, j->psi + f * no, j->grad + f * no * np, 1, NULL,
                                 NULL);
}

/* ---- 2. talos FD derivatives ---- */

typedef struct talos_job {
    const mbs_model *m;
    long n;
    mbs_batch_eval e;
} talos_job;

static int talos_batch(void *ctx, int threads)
{
    talos_job *j = ctx;
    return mbs_batch_evaluate(j->m, j->n, &j->e, threads, NULL, NULL);
}

static int talos_slice(void *ctx, long first, long count)
{
    const talos_job *j = ctx;
    const size_t nq = (size_t)mbs_model_nq(j->m), f = (size_t)first;
    mbs_batch_eval e = j->e;
    e.q += f * nq, e.qd += f * nq, e.u += f * nq;
    for (int k = 0; k < 4; k++)
        e.out[k] += f * nq * (k ? nq : 1);
    return mbs_batch_evaluate(j->m, count, &e, 1, NULL, NULL);
}

/* ---- 2b. five-bar DDM columns ---- */

typedef struct ddm_job {
    const mbs_model *m;
    mbs_sens_options o;
} ddm_job;

static int ddm_columns(void *ctx, int threads)
{
    ddm_job *j = ctx;
    mbs_sens_result res = {0};
    j->o.threads = threads;
    int rc = mbs_sensitivity(j->m, &j->o, &res, NULL);
    mbs_sens_result_free(&res);
    return rc;
}

/* ---- 2c. multistart (the command) ---- */

static int multistart_cmd(void *ctx, int threads)
{
    (void)ctx;
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s optimize %s --multistart 8 --seed 1 --max-iter 20 --tf 1 --threads %d >/dev/null 2>&1",
             MBS_CLI_PATH, bench_model_path(NULL, "arm3.json"), threads);
    return system(cmd) == 0 ? 0 : 1;
}

/* ---- 4, 5. mpirun ---- */

/* What rank 0's --stats says of one mpirun: the span from the first
 * hand-out to the last result, the tables' writing after it, the
 * hand-outs per second, the serving thread's CPU, and rank 1's phases. */
typedef struct sweep_run {
    double span, tables, rate, serve_cpu;
    char worker[400];
} sweep_run;

static void parse_stats(const char *line, sweep_run *o)
{
    const char *p = strstr(line, "threads, chunk"), *q;
    double s, r;
    if (p && (p = strchr(p, ':')) && sscanf(p, ": %lf s, %*d chunks handed out (%lf per s)", &s, &r) == 2) {
        o->span = s, o->rate = r;
        if ((q = strstr(p, "serving thread")))
            sscanf(q, "serving thread %lf", &o->serve_cpu);
        if ((q = strstr(p, "tables written in")))
            sscanf(q, "tables written in %lf", &o->tables);
    } else if ((p = strstr(line, "rank 1: computing"))) {
        snprintf(o->worker, sizeof o->worker, "%s", p);
        o->worker[strcspn(o->worker, "\n")] = 0;
    }
}

/* mpirun -np np mbsens sweep spec ... --csv csv; 0, or -1 on failure. */
static int mpirun_sweep(const char *spec, int np, const char *extra, const char *csv, sweep_run *o)
{
    char cmd[2048], line[512];
    char log[] = "/tmp/bench_scaling_XXXXXX";
    int fd = mkstemp(log);
    if (fd < 0)
        return -1;
    close(fd);
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe --bind-to none "
             "-np %d %s sweep %s --threads 1 --csv %s --stats %s >%s 2>&1",
             np, MBS_CLI_PATH, spec, csv, extra, log);
    *o = (sweep_run){-1, 0, 0, 0, ""};
    if (system(cmd) == 0) {
        FILE *f = fopen(log, "r");
        while (f && fgets(line, sizeof line, f))
            parse_stats(line, o);
        if (f)
            fclose(f);
    }
    remove(log);
    return o->span < 0 ? -1 : 0;
}

static void write_spec(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "bench_scaling: cannot write %s\n", path);
        exit(2);
    }
}

/* reps paired runs of -np 1 and -np 2: the speed-up of the sweep with its
 * tables written (what the user waits for, less MPI's start-up), and of
 * the span alone (the cases computed). */
static void mpi_compare(const char *what, const char *spec, const char *csv, const char *extra, int reps,
                        double target)
{
    span r[2][BENCH_MAX_REPS], c[2][BENCH_MAX_REPS];
    sweep_run o = {0};
    for (int k = 0; k < reps; k++)
        for (int j = 0; j < 2; j++) {
            double t0 = clock_s(CLOCK_MONOTONIC);
            if (mpirun_sweep(spec, j + 1, extra, csv, &o) != 0) {
                printf("%s\n  mpirun failed (is OpenMPI installed and mbsens built with it?)\n", what);
                return;
            }
            double l = load1();
            r[j][k] = (span){o.span + o.tables, clock_s(CLOCK_MONOTONIC) - t0, l};
            c[j][k] = (span){o.span, o.tables, l};
        }
    pair p, q;
    pair_finish(&p, r, reps);
    pair_finish(&q, c, reps);
    const span *m = p.s;
    printf("%s\n  -np 1  sweep and tables %8.3f s (mpirun in all %6.3f s)  load %5.2f\n"
           "  -np 2  sweep and tables %8.3f s (mpirun in all %6.3f s)  load %5.2f\n"
           "  speed-up %.2fx (median of %d paired ratios, %.2f to %.2f) (target >= %.1fx: %s)\n"
           "  the cases alone (first hand-out to last result): %.3f / %.3f s, speed-up %.2fx (%.2f to %.2f)\n"
           "  -np 2, last run: %s\n",
           what, m[0].wall, m[0].cpu, m[0].load, m[1].wall, m[1].cpu, m[1].load, p.ratio, reps, p.lo, p.hi, target,
           p.ratio >= target ? "met" : m[1].load > 2.5 ? "not met at this load" : "not met", q.s[0].wall,
           q.s[1].wall, q.ratio, q.lo, q.hi, o.worker);
}

/* The example robots: $MBS_URDF_DIR, else shared/data/example-robot-data
 * one or two levels above the source tree (a checkout or a worktree). */
static const char *urdf_dir(void)
{
    static char dir[1024];
    const char *env = getenv("MBS_URDF_DIR");
    if (env)
        return env;
    for (int up = 1; up <= 2; up++) {
        snprintf(dir, sizeof dir, "%s/%s../shared/data/example-robot-data", MBS_SOURCE_DIR, up == 2 ? "../" : "");
        if (access(dir, R_OK) == 0)
            return dir;
    }
    return MBS_SOURCE_DIR "/../shared/data/example-robot-data";
}

static mbs_model *load_talos(void)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/talos_full_v2.urdf", urdf_dir());
    mbs_error err = {0};
    mbs_model *m = mbs_model_load(path, &err);
    if (!m)
        printf("talos_full_v2: %s (set MBS_URDF_DIR)\n", err.msg);
    return m;
}

static void bench_fivebar(const mbs_model *fb, int reps)
{
    const int t[2] = {1, 2};
    fivebar_job fj = {fb, mbs_sens_options_default(fb), 64, NULL, NULL, NULL};
    fj.o.method = MBS_SENS_DAVM;
    int np = mbs_model_nparams(fb), no = mbs_model_nobjectives(fb);
    fj.rho = malloc(64 * (size_t)np * sizeof(double));
    fj.psi = malloc(64 * (size_t)no * sizeof(double));
    fj.grad = malloc(64 * (size_t)(no * np) * sizeof(double));
    bench_rng r;
    bench_rng_seed(&r, 18);
    for (int i = 0; i < 64 * np; i++)
        fj.rho[i] = mbs_param_value(fb, i % np) * bench_rng_range(&r, 0.95, 1.05);
    pair p = compare(fivebar_batch, &fj, t, reps);
    report("five-bar: 64 davm gradients (tf 1 s, dt 1 ms, 5 parameters), mbs_batch_sensitivity", "1 thread",
           "2 threads", &p, 1.8);
    printf("  per case: %.1f ms (1 thread)\n", 1e3 * p.s[0].wall / 64);
    ceiling_line("a tenth of a case's mix: 2.2 ms of compute + 21 passes over 512 kB of its own", 2200, 512 << 10, 21,
                 0, reps);
    processes_line(fivebar_slice, &fj, 64, 1, reps);
    free(fj.rho), free(fj.psi), free(fj.grad);
}

static void bench_ddm(const mbs_model *fb, int reps)
{
    const int t[2] = {1, 2};
    for (int k = 0; k < 2; k++) {
        ddm_job dj = {fb, mbs_sens_options_default(fb)};
        dj.o.method = MBS_SENS_DDM;
        dj.o.sim.loop = k ? MBS_LOOP_MATRIXR : MBS_LOOP_ALI3P;
        pair p = compare(ddm_columns, &dj, t, reps);
        char what[200];
        snprintf(what, sizeof what, "five-bar: one ddm gradient (%s, tf 1 s, dt 1 ms, 5 parameters), its columns on "
                 "mbs_sens_options.threads", k ? "matrixr" : "ali3p");
        report(what, "1 thread", "2 threads", &p, 1.6);
        double steps = floor(dj.o.sim.tf / dj.o.sim.dt + 0.5);
        printf("  per step: %.1f us (1 thread), %.1f us (2 threads)\n", 1e6 * p.s[0].wall / steps,
               1e6 * p.s[1].wall / steps);
    }
}

/* ---- 2d. what a meeting of a team of two costs ---- */

/* n steps of a dependent chain of multiply-adds on this thread (a few
 * cycles each; bench_meetings measures them). */
static void spin_work(long n)
{
    double x = spin_sink;
    for (long k = 0; k < n; k++)
        x = x * 0.999999 + 1e-9;
    spin_sink = x;
}

typedef struct meeting_job {
    int n;                    /* meetings */
    long gap, inside;         /* spin_work steps between meetings (thread 0) and inside (each thread) */
    int barrier;              /* 1: one team, n barriers; 0: n parallel regions (fork and join) */
} meeting_job;

static int meetings(void *ctx, int threads)
{
    const meeting_job *j = ctx;
    if (j->barrier) {
#pragma omp parallel num_threads(threads)
        for (int k = 0; k < j->n; k++) {
            spin_work(j->inside);
#pragma omp barrier
        }
        return 0;
    }
    for (int k = 0; k < j->n; k++) {
        spin_work(j->gap);
#pragma omp parallel num_threads(threads) if (threads > 1)
        spin_work(j->inside);
    }
    return 0;
}

/* A team of 2 against 1 thread doing the same (each thread of the team does
 * what the one thread does): the difference per meeting is what the
 * meeting costs. With the gap of serial work the DDM leaves between its
 * team's meetings (a few us), and without. */
static void bench_meetings(int reps, int n)
{
    const int t[2] = {1, 2};
    meeting_job cal = {1, 0, 1000000, 0};
    double w = clock_s(CLOCK_THREAD_CPUTIME_ID);
    spin_work(cal.inside);
    double unit = (clock_s(CLOCK_THREAD_CPUTIME_ID) - w) / 1e6;   /* s per work_ns unit */
    printf("OpenMP: what a meeting of a team of 2 costs (libgomp; OMP_WAIT_POLICY %s)\n",
           getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "unset");
    const long gaps_us[3] = {0, 4, 25};
    for (int g = 0; g < 4; g++) {
        meeting_job j = {n, g < 3 ? (long)(gaps_us[g] * 1e-6 / unit) : 0, (long)(1e-6 / unit), g == 3};
        pair p = compare(meetings, &j, t, reps);
        double per = (p.s[1].wall - p.s[0].wall) / j.n;
        if (g < 3)
            printf("  fork and join, %2ld us of serial work between meetings, 1 us inside: %6.2f us per meeting"
                   "  load %5.2f\n", gaps_us[g], 1e6 * per, p.s[1].load);
        else
            printf("  a barrier of one team, 1 us of work between barriers:              %6.2f us per barrier"
                   "  load %5.2f\n", 1e6 * per, p.s[1].load);
    }
}

/* ---- 2e. the talos batch with its results kept in cache ---- */

typedef struct ring_job {
    const talos_job *tj;
    size_t nq, row;           /* row: doubles of one case's results */
    double *ring;             /* per thread, 4 rows, reused */
    long first;               /* the cases are first, first + 1, ... */
} ring_job;

static int ring_case(void *user, const mbs_model *m, mbs_data *d, long i, mbs_error *err)
{
    (void)err;
    const ring_job *c = user;
    const mbs_batch_eval *e = &c->tj->e;
    size_t nq = c->nq, k = (size_t)(c->first + i);
    double *o = c->ring + ((size_t)omp_get_thread_num() * 4 + k % 4) * c->row;
    mbs_data_set_ref(d, e->ref);
    return mbs_forward_dynamics_derivatives(m, d, e->alg, e->q + k * nq, e->qd + k * nq, e->u + k * nq, o, o + nq,
                                            o + nq + nq * nq, o + nq + 2 * nq * nq);
}

static int ring_batch(void *ctx, int threads)
{
    ring_job *j = ctx;
    j->first = 0;
    return mbs_batch_run(j->tj->m, j->tj->n, threads, ring_case, j, NULL, NULL);
}

static int ring_slice(void *ctx, long first, long count)
{
    ring_job *j = ctx;
    j->first = first;
    return mbs_batch_run(j->tj->m, count, 1, ring_case, j, NULL, NULL);
}

/* The talos batch's time per evaluation on one thread and its row of
 * results in bytes, as measured (else this machine's quiet figure): the
 * rate of the ceiling section's streaming cases. */
static double talos_eval_us = 19.6;
static size_t talos_row = 46816;

static void bench_talos(int reps, long ntalos)
{
    const int t[2] = {1, 2};
    mbs_model *ta = load_talos();
    if (!ta)
        return;
    size_t nq = (size_t)mbs_model_nq(ta);
    talos_job tj = {ta, ntalos, {MBS_BATCH_FD_DERIVATIVES, MBS_FD_RECURSIVE, MBS_REF_COM, NULL, NULL, NULL, {0}}};
    double *q = malloc((size_t)ntalos * nq * sizeof *q), *qd = malloc((size_t)ntalos * nq * sizeof *q);
    double *u = calloc((size_t)ntalos * nq, sizeof *q);
    for (int k = 0; k < 4; k++)
        tj.e.out[k] = malloc((size_t)ntalos * nq * (k ? nq : 1) * sizeof(double));
    bench_rng r;
    bench_rng_seed(&r, 18);
    for (long i = 0; i < ntalos; i++)
        bench_random_state(ta, &r, 1.0, 1.0, q + i * nq, qd + i * nq, NULL);
    tj.e.q = q, tj.e.qd = qd, tj.e.u = u;
    int treps = 5 * reps < BENCH_MAX_REPS ? 5 * reps : BENCH_MAX_REPS;   /* 0.3 s a repetition */
    pair p = compare(talos_batch, &tj, t, treps);
    char what[200];
    double mb = (double)ntalos * (double)(nq + 3 * nq * nq) * sizeof(double) / 1e6;
    snprintf(what, sizeof what, "talos_full_v2 (nq %zu): %ld forward-dynamics derivatives, mbs_batch_evaluate "
             "(%.0f MB of results)", nq, ntalos, mb);
    report(what, "1 thread", "2 threads", &p, 1.8);
    printf("  per evaluation: %.1f us (1 thread); results written at %.1f GB/s (2 threads)\n",
           1e6 * p.s[0].wall / (double)ntalos, mb / 1e3 / p.s[1].wall);
    talos_eval_us = 1e6 * p.s[0].wall / (double)ntalos, talos_row = (nq + 3 * nq * nq) * sizeof(double);
    snprintf(what, sizeof what, "%.1f us of compute + its %.1f kB row of results to memory each", talos_eval_us,
             (double)talos_row / 1e3);
    ceiling_line(what, talos_eval_us, 0, 0, talos_row, treps);
    processes_line(talos_slice, &tj, ntalos, ntalos / 2, treps);
    ring_job rj = {&tj, nq, nq + 3 * nq * nq, malloc(2 * 4 * (nq + 3 * nq * nq) * sizeof(double)), 0};
    if (rj.ring) {
        p = compare(ring_batch, &rj, t, treps);
        report("  the same, each thread writing its results over 4 rows of its own (kept in cache), mbs_batch_run",
               "1 thread", "2 threads", &p, 0);
        snprintf(what, sizeof what, "%.1f us of compute + 1 pass over 832 kB of its own each", 2 * talos_eval_us);
        ceiling_line(what, 2 * talos_eval_us, 832 << 10, 1, 0, treps);
        processes_line(ring_slice, &rj, ntalos, ntalos / 2, treps);
    }
    free(rj.ring);
    for (int k = 0; k < 4; k++)
        free(tj.e.out[k]);
    free(q), free(qd), free(u);
    mbs_model_free(ta);
}

static void bench_threads(int reps, long ntalos)
{
    const int t[2] = {1, 2};
    if (want("batch") || want("ddm")) {
        mbs_model *fb = bench_load_model(bench_model_path(NULL, "fivebar.json"));
        if (want("batch"))
            bench_fivebar(fb, reps);
        if (want("ddm"))
            bench_ddm(fb, reps);
        mbs_model_free(fb);
    }
    if (want("meetings"))
        bench_meetings(reps, bench_cfg.quick ? 2000 : 20000);
    if (want("multistart")) {
        pair p = compare(multistart_cmd, NULL, t, reps);
        report("three-link arm: mbsens optimize --multistart 8 (20 iterations each, tf 1 s), whole process",
               "--threads 1", "--threads 2", &p, 0);
        printf("  (cpu: of this process only; the optimizations run in the child)\n");
    }
    if (want("talos-batch"))
        bench_talos(reps, ntalos);
    if (want("ceiling"))
        bench_ceiling(reps, talos_eval_us, talos_row);
}

static void bench_mpi(int reps, long ntalos)
{
    char dir[] = "/tmp/bench_scaling_dir_XXXXXX";
    if (!mkdtemp(dir))
        return;
    char fbs[128], tas[128], nop[128], csv[128], text[2048];
    snprintf(fbs, sizeof fbs, "%s/fivebar.json", dir);
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    snprintf(tas, sizeof tas, "%s/talos.json", dir);
    snprintf(nop, sizeof nop, "%s/noop.json", dir);
    snprintf(text, sizeof text,
             "{ \"model\": \"%s\",\n  \"random\": { \"count\": 64, \"seed\": 18, \"variables\": {\n"
             "    \"L_s1\": { \"uniform\": [2.1, 2.3] }, \"m_A1\": { \"uniform\": [0.95, 1.05] } } },\n"
             "  \"compute\": { \"what\": \"sensitivity\", \"method\": \"davm\" } }\n",
             bench_model_path(NULL, "fivebar.json"));
    write_spec(fbs, text);
    if (want("fivebar-sweep")) {
        mpi_compare("five-bar: 64 davm gradients through mbsens sweep, mpirun", fbs, csv, "", reps, 1.8);
        ceiling_line("as the five-bar batch's, on 2 threads: 2.2 ms of compute + 21 passes over 512 kB", 2200,
                     512 << 10, 21, 0, reps);
    }

    mbs_model *ta = want("talos-sweep") ? load_talos() : NULL;
    if (ta) {
        snprintf(text, sizeof text,
                 "{ \"model\": \"%s/talos_full_v2.urdf\",\n  \"random\": { \"count\": %ld, \"seed\": 18, "
                 "\"variables\": {\n    \"q0.%s\": { \"uniform\": [-1, 1] }, \"q0.%s\": { \"uniform\": [-1, 1] } } },\n"
                 "  \"compute\": { \"what\": \"derivatives\", \"write\": [\"qdd\"] } }\n",
                 urdf_dir(), ntalos,
                 mbs_coord_name(ta, 0), mbs_coord_name(ta, mbs_model_nq(ta) - 1));
        write_spec(tas, text);
        mpi_compare("talos_full_v2: forward-dynamics derivatives through mbsens sweep (chunks of 200), mpirun", tas,
                    csv, "--chunk 200", reps, 1.8);
        ceiling_line("as the talos batch's in cache, on 2 threads: compute + 1 pass over 832 kB", 2 * talos_eval_us,
                     832 << 10, 1, 0, reps);
        mbs_model_free(ta);
    }

    snprintf(text, sizeof text,
             "{ \"model\": \"%s\",\n  \"grid\": { \"L_s1\": { \"from\": 2, \"to\": 2.4, \"count\": 20000 } },\n"
             "  \"compute\": { \"what\": \"none\" } }\n",
             bench_model_path(NULL, "fivebar.json"));
    write_spec(nop, text);
    if (want("handout"))
        printf("rank 0 hand-out rate: 20000 no-op cases, chunks of 1, --serve-only\n");
    for (int np = 2; np <= 3 && want("handout"); np++) {
        sweep_run o;
        mpirun_sweep(nop, np, "--chunk 1 --serve-only", "/dev/null", &o);
        double rate = o.rate, cpu = o.serve_cpu, w = o.span;
        printf("  %d worker(s): %.3f s, %.0f hand-outs per s (%.1f us each), rank 0 serving CPU %.1f us per "
               "hand-out  load %5.2f\n", np - 1, w, rate, rate > 0 ? 1e6 / rate : 0,
               rate > 0 && w > 0 ? 1e6 * cpu / (rate * w) : 0, load1());
    }
    if (want("handout"))
        printf("  messages: a hand-out is 8 bytes per case; a report is, per case, 24 bytes + 8 per value + the\n"
           "  message + the case's rows of the tables as text (five-bar davm, CSV only: 3 psi + 15 gradient\n"
           "  entries, 168 bytes + a row of 20 numbers)\n");
    remove(fbs), remove(tas), remove(nop), remove(csv), rmdir(dir);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);   /* each figure as soon as it is measured */
    bench_cfg.reps = 3;
    for (int i = 1; i + 1 < argc; i++)   /* --only SECTION, taken out before the common options */
        if (strcmp(argv[i], "--only") == 0) {
            only = argv[i + 1];
            memmove(argv + i, argv + i + 2, (size_t)(argc - i - 2) * sizeof *argv);
            argc -= 2;
            argv[argc] = NULL;
            break;
        }
    static const char *const sections[] = {"batch", "ddm", "meetings", "multistart", "talos-batch", "fivebar-sweep",
                                           "talos-sweep", "handout", "ceiling"};
    int known = !only;
    for (size_t k = 0; k < sizeof sections / sizeof *sections; k++)
        known |= only && strcmp(only, sections[k]) == 0;
    if (!known) {
        fprintf(stderr, "bench_scaling: --only %s: not a section\n", only);
        return 2;
    }
    bench_parse_args(argc, argv, "  --only SECTION batch, ddm, meetings, multistart, talos-batch, fivebar-sweep,\n"
                                 "                 talos-sweep, handout or ceiling: that section alone\n");
    int reps = bench_cfg.reps < 1 ? 1 : bench_cfg.reps > BENCH_MAX_REPS ? BENCH_MAX_REPS : bench_cfg.reps;
    long ntalos = bench_cfg.quick ? 1000 : 10000;
    bench_print_machine(stdout, "# ");
    printf("# load average at start: %.2f; %d repetitions, medians\n", load1(), reps);
    bench_threads(reps, ntalos);
    bench_mpi(reps, ntalos);
    bench_print_footer(stdout);
    return 0;
}
