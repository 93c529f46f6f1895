/*
 * bench_common.h - helpers shared by the benchmark programs (bench/bench_*.c).
 *
 * Timing: a kernel is a function of one context pointer. It is run in a
 * loop long enough to take at least `min_time` seconds (0.2 s by default),
 * and that is repeated `reps` times (5); the result is the median of the
 * per-repetition ns/call (CLOCK_MONOTONIC). Kernels that are compared with
 * each other are timed side by side: their repetitions are interleaved
 * (A B C, A B C, ...), so slow drifts of a noisy machine hit all of them,
 * and ratios are taken repetition by repetition (median of the ratios).
 *
 * Options understood by every bench program (bench_parse_args):
 *   --quick          0.02 s x 3 repetitions (smoke test, numbers unreliable)
 *   --min-time S     seconds per repetition (default 0.2)
 *   --reps N         repetitions (default 5, odd is best)
 *   --clock cpu      time with CLOCK_THREAD_CPUTIME_ID instead of
 *                    CLOCK_MONOTONIC: excludes the time the benchmark was
 *                    descheduled (shared machines); the footer reports the
 *                    largest wall/CPU ratio either way
 * The remaining argument (if any) is the path of models/human43.json.
 * Unless OPENBLAS_NUM_THREADS is set, OpenBLAS is made single-threaded.
 */
#ifndef MBS_BENCH_COMMON_H
#define MBS_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "mbsens/mbsens.h"

#define BENCH_MAX_KERNELS 8
#define BENCH_MAX_REPS 31

typedef void (*bench_fn)(void *ctx);

typedef struct bench_config {
    double min_time;   /* seconds per repetition */
    int reps;          /* repetitions */
    int quick;
    int cpu_clock;     /* 1: thread CPU time instead of CLOCK_MONOTONIC */
} bench_config;

extern bench_config bench_cfg;

typedef struct bench_result {
    double median_ns;  /* median over repetitions of ns/call */
    double min_ns, max_ns;
    long iters;        /* calls per repetition */
} bench_result;

/* Parse the common options; returns the first non-option argument (the
 * model path) or NULL. Exits with a usage message on a bad option. */
const char *bench_parse_args(int argc, char **argv, const char *usage_extra);

double bench_now_ns(void);

/* Time one kernel. */
bench_result bench_time(bench_fn fn, void *ctx);

/* Time k kernels side by side (interleaved repetitions). res[j] for kernel j;
 * ratio[j] (may be NULL) = median over repetitions of t_j / t_0. */
void bench_time_many(int k, const bench_fn *fns, void *const *ctxs,
                     bench_result *res, double *ratio);

/* Spread of the repetitions, (max - min) / median, in percent. */
double bench_spread_pct(const bench_result *r);

/* Machine, compiler and build description (one "key: value" per line,
 * each prefixed by `prefix`, e.g. "" or "# "). */
void bench_print_machine(FILE *out, const char *prefix);

/* Last line of a bench program: how disturbed the timings were (largest
 * wall-clock / thread-CPU-time ratio of any repetition) and the load. */
void bench_print_footer(FILE *out);

/* Path of a shipped model: `override` if not NULL, else
 * $MBS_SOURCE_DIR/models/<name>, else <source dir at compile time>/models/<name>.
 * Returns a static buffer. */
const char *bench_model_path(const char *override, const char *name);

/* Load a model or exit(2) with the error. */
mbs_model *bench_load_model(const char *path);
/* Generated spatial chain (mbs_generate_chain_json) or exit(2). */
mbs_model *bench_chain(int n, mbs_joint_type joint, int floating_base);
mbs_data *bench_data(const mbs_model *m);

/* Deterministic random numbers (xoshiro256**), uniform in [0, 1). */
typedef struct bench_rng { uint64_t s[4]; } bench_rng;
void bench_rng_seed(bench_rng *r, uint64_t seed);
double bench_rng_uniform(bench_rng *r);
double bench_rng_range(bench_rng *r, double lo, double hi);

/* A random state of model m: angles uniform in [-pi, pi], translations in
 * [-0.5, 0.5] m, Euler parameters uniform on the unit sphere; joint rates
 * uniform in [-w, w] (rad/s, m/s), Euler-parameter rates from a random
 * relative angular velocity with components in [-w, w]. qdd (may be NULL)
 * uniform in [-a, a] with p.pdd = -|pd|^2 for Euler parameters. */
void bench_random_state(const mbs_model *m, bench_rng *r, double w, double a,
                        double *q, double *qd, double *qdd);

/* Abort with a message if rc != MBS_OK. */
void bench_check(int rc, const mbs_data *d, const char *what);

/* Keep a value alive so the compiler cannot drop the computation. */
extern volatile double bench_sink;

#endif
