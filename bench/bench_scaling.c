/*
 * bench_scaling.c - speed-up on the cores of this machine and on MPI
 * ranks (docs/scaling.md, docs/benchmarks.md).
 *
 *   build/bench/bench_scaling [--reps N] [--quick]
 *
 * Side by side in one run, each figure the median of N repetitions
 * (default 3) taken alternately after an untimed run of each:
 *   1. 64 five-bar discrete-adjoint gradients (mbs_batch_sensitivity, 64
 *      parameter vectors): 1 thread vs 2 threads;
 *   2. 10^4 forward-dynamics derivatives of talos_full_v2 at random
 *      states (mbs_batch_evaluate): 1 vs 2 threads;
 *   2b. one five-bar DDM gradient (5 parameters, tf 1 s, dt 1 ms), its
 *      parameter columns on 1 vs 2 threads (mbs_sens_options.threads),
 *      ALI3-P and Matrix R;
 *   2c. `mbsens optimize --multistart 8` on the three-link arm,
 *      --threads 1 vs 2 (whole processes);
 *   3. the sweeps 1 and 2 through `mbsens sweep` under mpirun -np 1 vs
 *      -np 2 (one thread per rank; the time rank 0 measures from the first
 *      hand-out to the last result, without MPI's start-up);
 *   4. rank 0's hand-out rate: no-op cases, chunks of one, rank 0 serving
 *      only, with 1 and 2 workers.
 * Each line gives wall and CPU seconds and the 1-minute load average when
 * it was measured: on a machine shared with other work the ratios are
 * depressed, and the load says by how much to distrust them.
 */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"

#ifndef MBS_CLI_PATH
#define MBS_CLI_PATH "mbsens"
#endif

typedef struct span {
    double wall, cpu, load;
} span;

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

/* Median (by wall time) of reps alternating runs of job with t[0] and t[1]
 * threads, into s[0], s[1]. */
static void compare(job_fn job, void *ctx, const int t[2], int reps, span s[2])
{
    span r[2][BENCH_MAX_REPS];
    for (int j = 0; j < 2; j++)   /* warm-up, untimed: the first touch of the output arrays */
        if (job(ctx, t[j]) != 0) {
            fprintf(stderr, "bench_scaling: a job failed\n");
            exit(2);
        }
    for (int k = 0; k < reps; k++)
        for (int j = 0; j < 2; j++) {
            double w = clock_s(CLOCK_MONOTONIC), c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            if (job(ctx, t[j]) != 0) {
                fprintf(stderr, "bench_scaling: a job failed\n");
                exit(2);
            }
            r[j][k] = (span){clock_s(CLOCK_MONOTONIC) - w, clock_s(CLOCK_PROCESS_CPUTIME_ID) - c, load1()};
        }
    for (int j = 0; j < 2; j++) {
        qsort(r[j], (size_t)reps, sizeof(span), by_wall);
        s[j] = r[j][reps / 2];
    }
}

static void report(const char *what, const char *a, const char *b, const span s[2], double target)
{
    double ratio = s[0].wall / s[1].wall;
    printf("%s\n  %-12s wall %8.3f s  cpu %8.3f s  load %5.2f\n  %-12s wall %8.3f s  cpu %8.3f s  load %5.2f\n"
           "  speed-up %.2fx (target >= %.1fx: %s)\n",
           what, a, s[0].wall, s[0].cpu, s[0].load, b, s[1].wall, s[1].cpu, s[1].load, ratio, target,
           ratio >= target ? "met" : s[1].load > 2.5 ? "not met at this load" : "not met");
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

/* mpirun -np np mbsens sweep spec ...; the seconds and hand-outs per
 * second from --stats (rank 0's span); -1 on failure. */
static double mpirun_sweep(const char *spec, int np, const char *extra, double *rate, double *serve_cpu)
{
    char cmd[2048], line[512];
    char log[] = "/tmp/bench_scaling_XXXXXX";
    int fd = mkstemp(log);
    if (fd < 0)
        return -1;
    close(fd);
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe --bind-to none "
             "-np %d %s sweep %s --threads 1 --csv /dev/null --stats %s >%s 2>&1",
             np, MBS_CLI_PATH, spec, extra, log);
    double secs = -1;
    if (system(cmd) == 0) {
        FILE *f = fopen(log, "r");
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "threads, chunk");
            double s, r, c = 0;
            if (p && (p = strchr(p, ':')) && sscanf(p, ": %lf s, %*d chunks handed out (%lf per s)", &s, &r) == 2) {
                secs = s;
                const char *q = strstr(p, "serving thread");
                if (q)
                    sscanf(q, "serving thread %lf", &c);
                if (rate)
                    *rate = r;
                if (serve_cpu)
                    *serve_cpu = c;
            }
        }
        if (f)
            fclose(f);
    }
    remove(log);
    return secs;
}

static void write_spec(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "bench_scaling: cannot write %s\n", path);
        exit(2);
    }
}

static void mpi_compare(const char *what, const char *spec, const char *extra, int reps, double target)
{
    span s[2][BENCH_MAX_REPS];
    for (int k = 0; k < reps; k++)
        for (int j = 0; j < 2; j++) {
            double c = clock_s(CLOCK_MONOTONIC);
            double w = mpirun_sweep(spec, j + 1, extra, NULL, NULL);
            if (w < 0) {
                printf("%s\n  mpirun failed (is OpenMPI installed and mbsens built with it?)\n", what);
                return;
            }
            s[j][k] = (span){w, clock_s(CLOCK_MONOTONIC) - c, load1()};
        }
    span m[2];
    for (int j = 0; j < 2; j++) {
        qsort(s[j], (size_t)reps, sizeof(span), by_wall);
        m[j] = s[j][reps / 2];
    }
    double ratio = m[0].wall / m[1].wall;
    printf("%s\n  -np 1  sweep %8.3f s (mpirun in all %6.3f s)  load %5.2f\n"
           "  -np 2  sweep %8.3f s (mpirun in all %6.3f s)  load %5.2f\n  speed-up %.2fx (target >= %.1fx: %s)\n",
           what, m[0].wall, m[0].cpu, m[0].load, m[1].wall, m[1].cpu, m[1].load, ratio, target,
           ratio >= target ? "met" : m[1].load > 2.5 ? "not met at this load" : "not met");
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

static void bench_threads(int reps, long ntalos)
{
    const int t[2] = {1, 2};
    span s[2];
    mbs_model *fb = bench_load_model(bench_model_path(NULL, "fivebar.json"));
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
    compare(fivebar_batch, &fj, t, reps, s);
    report("five-bar: 64 davm gradients (tf 1 s, dt 1 ms, 5 parameters), mbs_batch_sensitivity", "1 thread",
           "2 threads", s, 1.8);
    printf("  per case: %.1f ms (1 thread)\n", 1e3 * s[0].wall / 64);
    free(fj.rho), free(fj.psi), free(fj.grad);
    for (int k = 0; k < 2; k++) {
        ddm_job dj = {fb, mbs_sens_options_default(fb)};
        dj.o.method = MBS_SENS_DDM;
        dj.o.sim.loop = k ? MBS_LOOP_MATRIXR : MBS_LOOP_ALI3P;
        compare(ddm_columns, &dj, t, reps, s);
        char what[200];
        snprintf(what, sizeof what, "five-bar: one ddm gradient (%s, tf 1 s, dt 1 ms, 5 parameters), its columns on "
                 "mbs_sens_options.threads", k ? "matrixr" : "ali3p");
        report(what, "1 thread", "2 threads", s, 1.6);
    }
    mbs_model_free(fb);
    compare(multistart_cmd, NULL, t, reps, s);
    report("three-link arm: mbsens optimize --multistart 8 (20 iterations each, tf 1 s), whole process", "--threads 1",
           "--threads 2", s, 1.8);
    printf("  (cpu: of this process only; the optimizations run in the child)\n");

    mbs_model *ta = load_talos();
    if (!ta)
        return;
    size_t nq = (size_t)mbs_model_nq(ta);
    talos_job tj = {ta, ntalos, {MBS_BATCH_FD_DERIVATIVES, MBS_FD_RECURSIVE, MBS_REF_COM, NULL, NULL, NULL, {0}}};
    double *q = malloc((size_t)ntalos * nq * sizeof *q), *qd = malloc((size_t)ntalos * nq * sizeof *q);
    double *u = calloc((size_t)ntalos * nq, sizeof *q);
    for (int k = 0; k < 4; k++)
        tj.e.out[k] = malloc((size_t)ntalos * nq * (k ? nq : 1) * sizeof(double));
    for (long i = 0; i < ntalos; i++)
        bench_random_state(ta, &r, 1.0, 1.0, q + i * nq, qd + i * nq, NULL);
    tj.e.q = q, tj.e.qd = qd, tj.e.u = u;
    compare(talos_batch, &tj, t, reps, s);
    char what[200];
    snprintf(what, sizeof what, "talos_full_v2 (nq %zu): %ld forward-dynamics derivatives, mbs_batch_evaluate", nq,
             ntalos);
    report(what, "1 thread", "2 threads", s, 1.8);
    printf("  per evaluation: %.1f us (1 thread)\n", 1e6 * s[0].wall / (double)ntalos);
    for (int k = 0; k < 4; k++)
        free(tj.e.out[k]);
    free(q), free(qd), free(u);
    mbs_model_free(ta);
}

static void bench_mpi(int reps, long ntalos)
{
    char dir[] = "/tmp/bench_scaling_dir_XXXXXX";
    if (!mkdtemp(dir))
        return;
    char fbs[128], tas[128], nop[128], text[2048];
    snprintf(fbs, sizeof fbs, "%s/fivebar.json", dir);
    snprintf(tas, sizeof tas, "%s/talos.json", dir);
    snprintf(nop, sizeof nop, "%s/noop.json", dir);
    snprintf(text, sizeof text,
             "{ \"model\": \"%s\",\n  \"random\": { \"count\": 64, \"seed\": 18, \"variables\": {\n"
             "    \"L_s1\": { \"uniform\": [2.1, 2.3] }, \"m_A1\": { \"uniform\": [0.95, 1.05] } } },\n"
             "  \"compute\": { \"what\": \"sensitivity\", \"method\": \"davm\" } }\n",
             bench_model_path(NULL, "fivebar.json"));
    write_spec(fbs, text);
    mpi_compare("five-bar: 64 davm gradients through mbsens sweep, mpirun", fbs, "", reps, 1.8);

    mbs_model *ta = load_talos();
    if (ta) {
        snprintf(text, sizeof text,
                 "{ \"model\": \"%s/talos_full_v2.urdf\",\n  \"random\": { \"count\": %ld, \"seed\": 18, "
                 "\"variables\": {\n    \"q0.%s\": { \"uniform\": [-1, 1] }, \"q0.%s\": { \"uniform\": [-1, 1] } } },\n"
                 "  \"compute\": { \"what\": \"derivatives\", \"write\": [\"qdd\"] } }\n",
                 urdf_dir(), ntalos,
                 mbs_coord_name(ta, 0), mbs_coord_name(ta, mbs_model_nq(ta) - 1));
        write_spec(tas, text);
        mpi_compare("talos_full_v2: forward-dynamics derivatives through mbsens sweep (chunks of 200), mpirun", tas,
                    "--chunk 200", reps, 1.8);
        mbs_model_free(ta);
    }

    snprintf(text, sizeof text,
             "{ \"model\": \"%s\",\n  \"grid\": { \"L_s1\": { \"from\": 2, \"to\": 2.4, \"count\": 20000 } },\n"
             "  \"compute\": { \"what\": \"none\" } }\n",
             bench_model_path(NULL, "fivebar.json"));
    write_spec(nop, text);
    printf("rank 0 hand-out rate: 20000 no-op cases, chunks of 1, --serve-only\n");
    for (int np = 2; np <= 3; np++) {
        double rate = 0, cpu = 0, w = mpirun_sweep(nop, np, "--chunk 1 --serve-only", &rate, &cpu);
        printf("  %d worker(s): %.3f s, %.0f hand-outs per s (%.1f us each), rank 0 serving CPU %.1f us per "
               "hand-out  load %5.2f\n", np - 1, w, rate, rate > 0 ? 1e6 / rate : 0,
               rate > 0 && w > 0 ? 1e6 * cpu / (rate * w) : 0, load1());
    }
    printf("  messages: a hand-out is 8 bytes per case; a report is 16 bytes + 8 per value + the message\n"
           "  (five-bar davm: 3 psi + 15 gradient entries = 160 bytes per case)\n");
    remove(fbs), remove(tas), remove(nop), rmdir(dir);
}

int main(int argc, char **argv)
{
    bench_cfg.reps = 3;
    bench_parse_args(argc, argv, "");
    int reps = bench_cfg.reps < 1 ? 1 : bench_cfg.reps > BENCH_MAX_REPS ? BENCH_MAX_REPS : bench_cfg.reps;
    long ntalos = bench_cfg.quick ? 1000 : 10000;
    bench_print_machine(stdout, "# ");
    printf("# load average at start: %.2f; %d repetitions, medians\n", load1(), reps);
    bench_threads(reps, ntalos);
    bench_mpi(reps, ntalos);
    bench_print_footer(stdout);
    return 0;
}
