/*
 * bench_common.c - timing, machine description, models and random states
 * for the benchmark programs (see bench_common.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef MBS_SOURCE_DIR
#define MBS_SOURCE_DIR "."
#endif
#ifndef MBS_BUILD_TYPE
#define MBS_BUILD_TYPE "unknown"
#endif
#ifndef MBS_C_FLAGS
#define MBS_C_FLAGS "unknown"
#endif
#ifndef MBS_C_COMPILER
#define MBS_C_COMPILER "unknown"
#endif

/* OpenBLAS (the LAPACK behind the semi-recursive solver) reports its build. */
extern char *openblas_get_config(void);
extern int openblas_get_num_threads(void);
extern void openblas_set_num_threads(int n);

bench_config bench_cfg = { 0.2, 5, 0, 0 };
volatile double bench_sink;

static void usage(const char *argv0, const char *extra)
{
    fprintf(stderr,
            "usage: %s [--quick] [--min-time S] [--reps N] [--clock wall|cpu] [HUMAN43_JSON]\n"
            "  --quick        short runs (0.02 s x 3 repetitions), for smoke tests\n"
            "  --clock C      wall: CLOCK_MONOTONIC (default); cpu: CLOCK_THREAD_CPUTIME_ID\n"
            "                 (excludes time the benchmark was descheduled; for shared machines)\n"
            "  --min-time S   seconds per timed repetition (default 0.2)\n"
            "  --reps N       repetitions, median reported (default 5)\n"
            "  HUMAN43_JSON   path of models/human43.json (default: $MBS_SOURCE_DIR/models,\n"
            "                 else %s/models)\n%s",
            argv0, MBS_SOURCE_DIR, extra ? extra : "");
}

const char *bench_parse_args(int argc, char **argv, const char *usage_extra)
{
    const char *path = NULL;
    /* One core per kernel: OpenBLAS's threads make the small Cholesky of
     * the semi-recursive solver slower and disturb the other timings on a
     * 2-core machine. OPENBLAS_NUM_THREADS, if set, is respected. */
    if (!getenv("OPENBLAS_NUM_THREADS")) openblas_set_num_threads(1);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) {
            bench_cfg.quick = 1;
            bench_cfg.min_time = 0.02;
            bench_cfg.reps = 3;
        } else if (!strcmp(a, "--min-time") && i + 1 < argc) {
            bench_cfg.min_time = atof(argv[++i]);
            if (!(bench_cfg.min_time > 0)) { usage(argv[0], usage_extra); exit(2); }
        } else if (!strcmp(a, "--reps") && i + 1 < argc) {
            bench_cfg.reps = atoi(argv[++i]);
            if (bench_cfg.reps < 1 || bench_cfg.reps > BENCH_MAX_REPS) { usage(argv[0], usage_extra); exit(2); }
        } else if (!strcmp(a, "--clock") && i + 1 < argc) {
            const char *c = argv[++i];
            if (!strcmp(c, "cpu")) bench_cfg.cpu_clock = 1;
            else if (!strcmp(c, "wall")) bench_cfg.cpu_clock = 0;
            else { usage(argv[0], usage_extra); exit(2); }
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(argv[0], usage_extra);
            exit(0);
        } else if (a[0] == '-' || path) {
            usage(argv[0], usage_extra);
            exit(2);
        } else {
            path = a;
        }
    }
    return path;
}

double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(bench_cfg.cpu_clock ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Calls per repetition so that one repetition takes >= min_time. */
static long calibrate(bench_fn fn, void *ctx)
{
    fn(ctx);                                   /* warm caches */
    const double target = bench_cfg.min_time * 1e9;
    long n = 1;
    for (;;) {
        double t0 = bench_now_ns();
        for (long k = 0; k < n; k++) fn(ctx);
        double dt = bench_now_ns() - t0;
        if (dt >= 0.1 * target || n >= (1L << 40)) {
            double per = dt / (double)n;
            long it = (long)ceil(1.05 * target / (per > 0 ? per : 1));
            return it > 0 ? it : 1;
        }
        n *= 2;
    }
}

static double cpu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Largest wall-clock / thread-CPU-time ratio of any repetition: 1 when the
 * benchmark had its core to itself, larger when it was descheduled. */
static double worst_disturbance = 1;

static double wall_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run_rep(bench_fn fn, void *ctx, long iters)
{
    double c0 = cpu_now_ns(), t0 = wall_now_ns();
    for (long k = 0; k < iters; k++) fn(ctx);
    double wall = wall_now_ns() - t0, cpu = cpu_now_ns() - c0;
    if (cpu > 0 && wall / cpu > worst_disturbance) worst_disturbance = wall / cpu;
    return (bench_cfg.cpu_clock ? cpu : wall) / (double)iters;
}

static void loadavg(char *buf, size_t len)
{
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = 0;
    if (f) {
        if (fgets(buf, (int)len, f)) {
            size_t n = strlen(buf);
            while (n && buf[n - 1] == '\n') buf[--n] = 0;
        }
        fclose(f);
    }
    if (!buf[0]) snprintf(buf, len, "?");
}

void bench_print_footer(FILE *out)
{
    char la[128];
    loadavg(la, sizeof la);
    fprintf(out, "Measurement quality: largest wall / thread-CPU time of any repetition %.3f "
                 "(1.000 = never descheduled); load average at the end: %s\n", worst_disturbance, la);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_time_many(int k, const bench_fn *fns, void *const *ctxs,
                     bench_result *res, double *ratio)
{
    long iters[BENCH_MAX_KERNELS];
    double t[BENCH_MAX_KERNELS][BENCH_MAX_REPS];
    const int reps = bench_cfg.reps;
    if (k > BENCH_MAX_KERNELS) { fprintf(stderr, "bench_time_many: too many kernels\n"); exit(2); }
    for (int j = 0; j < k; j++) iters[j] = calibrate(fns[j], ctxs[j]);
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < k; j++) t[j][r] = run_rep(fns[j], ctxs[j], iters[j]);
    for (int j = 0; j < k; j++) {
        double rr[BENCH_MAX_REPS];
        if (ratio) {
            for (int r = 0; r < reps; r++) rr[r] = t[j][r] / t[0][r];
            ratio[j] = median(rr, reps);
        }
        double mn = t[j][0], mx = t[j][0];
        for (int r = 0; r < reps; r++) {
            if (t[j][r] < mn) mn = t[j][r];
            if (t[j][r] > mx) mx = t[j][r];
        }
        res[j].min_ns = mn;
        res[j].max_ns = mx;
        res[j].iters = iters[j];
        res[j].median_ns = median(t[j], reps);
    }
}

bench_result bench_time(bench_fn fn, void *ctx)
{
    bench_result r;
    bench_time_many(1, &fn, &ctx, &r, NULL);
    return r;
}

double bench_spread_pct(const bench_result *r)
{
    return r->median_ns > 0 ? 100.0 * (r->max_ns - r->min_ns) / r->median_ns : 0;
}

/* ---- machine description ---- */

static void cpuinfo_field(const char *key, char *out, size_t len, int *count)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[1024];
    size_t kl = strlen(key);
    out[0] = 0;
    if (count) *count = 0;
    if (!f) { snprintf(out, len, "?"); return; }
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) != 0) continue;
        const char *c = strchr(line, ':');
        if (!c) continue;
        if (count) (*count)++;
        if (!out[0]) {
            c++;
            while (*c == ' ' || *c == '\t') c++;
            snprintf(out, len, "%s", c);
            size_t n = strlen(out);
            while (n && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = 0;
        }
    }
    fclose(f);
}

void bench_print_machine(FILE *out, const char *prefix)
{
    char model[256], mhz[64], cache[64], flags[8192];
    int nproc = 0;
    struct utsname u;
    cpuinfo_field("model name", model, sizeof model, &nproc);
    cpuinfo_field("cpu MHz", mhz, sizeof mhz, NULL);
    cpuinfo_field("cache size", cache, sizeof cache, NULL);
    cpuinfo_field("flags", flags, sizeof flags, NULL);
    const char *simd = strstr(flags, "avx512f") ? "avx512f avx2 fma"
                     : strstr(flags, "avx2") ? "avx2" : strstr(flags, "avx") ? "avx" : "sse2";
    int hyper = strstr(flags, "hypervisor") != NULL;
    fprintf(out, "%scpu: %s (%d logical CPUs online: %ld, %s MHz, cache %s, SIMD: %s%s)\n",
            prefix, model, nproc, sysconf(_SC_NPROCESSORS_ONLN), mhz, cache, simd,
            hyper ? ", virtual machine" : "");
    if (uname(&u) == 0)
        fprintf(out, "%skernel: %s %s %s\n", prefix, u.sysname, u.release, u.machine);
    fprintf(out, "%scompiler: %s (__VERSION__ %s)\n", prefix, MBS_C_COMPILER,
#ifdef __VERSION__
            __VERSION__
#else
            "?"
#endif
    );
    fprintf(out, "%sbuild type: %s; C flags: %s\n", prefix, MBS_BUILD_TYPE, MBS_C_FLAGS);
#ifdef NDEBUG
    fprintf(out, "%sassertions: off (NDEBUG)\n", prefix);
#else
    fprintf(out, "%sassertions: on\n", prefix);
#endif
    fprintf(out, "%smbsens: %s\n", prefix, mbs_version());
    const char *obt = getenv("OPENBLAS_NUM_THREADS");
    fprintf(out, "%sOpenBLAS: %s; threads %d (%s%s)\n", prefix, openblas_get_config(),
            openblas_get_num_threads(), obt ? "OPENBLAS_NUM_THREADS=" : "set to 1 by the bench: OPENBLAS_NUM_THREADS unset",
            obt ? obt : "");
    fprintf(out, "%stiming: %s, >= %.3g s per repetition, median of %d repetitions%s\n", prefix,
            bench_cfg.cpu_clock ? "CLOCK_THREAD_CPUTIME_ID (--clock cpu)" : "CLOCK_MONOTONIC",
            bench_cfg.min_time, bench_cfg.reps, bench_cfg.quick ? " (QUICK MODE: not for the record)" : "");
    char la[128];
    loadavg(la, sizeof la);
    fprintf(out, "%sload average at start: %s\n", prefix, la);
    time_t now = time(NULL);
    struct tm tmv;
    char date[64];
    if (gmtime_r(&now, &tmv) && strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tmv))
        fprintf(out, "%sdate: %s\n", prefix, date);
}

/* ---- models ---- */

const char *bench_model_path(const char *override, const char *name)
{
    static char buf[4096];
    if (override) return override;
    const char *env = getenv("MBS_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/models/%s", env && env[0] ? env : MBS_SOURCE_DIR, name);
    return buf;
}

mbs_model *bench_load_model(const char *path)
{
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load(path, &err);
    if (!m) {
        fprintf(stderr, "bench: cannot load %s: %s\n", path, err.msg);
        exit(2);
    }
    return m;
}

mbs_model *bench_chain(int n, mbs_joint_type joint, int floating_base)
{
    mbs_error err = { 0, "" };
    char *json = mbs_generate_chain_json(n, joint, floating_base, &err);
    if (!json) {
        fprintf(stderr, "bench: mbs_generate_chain_json(%d): %s\n", n, err.msg);
        exit(2);
    }
    char name[64];
    snprintf(name, sizeof name, "chain_%s_%d%s", mbs_joint_type_name(joint), n,
             floating_base ? "_floating" : "");
    mbs_model *m = mbs_model_load_string(json, name, &err);
    free(json);
    if (!m) {
        fprintf(stderr, "bench: generated chain %s: %s\n", name, err.msg);
        exit(2);
    }
    return m;
}

mbs_data *bench_data(const mbs_model *m)
{
    mbs_error err = { 0, "" };
    mbs_data *d = mbs_data_create(m, &err);
    if (!d) {
        fprintf(stderr, "bench: mbs_data_create: %s\n", err.msg);
        exit(2);
    }
    return d;
}

void bench_check(int rc, const mbs_data *d, const char *what)
{
    if (rc != MBS_OK) {
        fprintf(stderr, "bench: %s failed: %s (%s)\n", what, mbs_status_string(rc),
                d ? mbs_data_error(d) : "");
        exit(2);
    }
}

/* ---- random numbers and states ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void bench_rng_seed(bench_rng *r, uint64_t seed)
{
    for (int k = 0; k < 4; k++) r->s[k] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double bench_rng_uniform(bench_rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return (double)(res >> 11) * 0x1.0p-53;
}

double bench_rng_range(bench_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * bench_rng_uniform(r);
}

/* Uniformly distributed unit quaternion (Shoemake). */
static void random_quat(bench_rng *r, double p[4])
{
    const double pi = 3.14159265358979323846;
    double u1 = bench_rng_uniform(r), u2 = bench_rng_uniform(r), u3 = bench_rng_uniform(r);
    double a = sqrt(1 - u1), b = sqrt(u1);
    p[0] = a * sin(2 * pi * u2);
    p[1] = a * cos(2 * pi * u2);
    p[2] = b * sin(2 * pi * u3);
    p[3] = b * cos(2 * pi * u3);
}

/* Euler-parameter block at p (q), pd, pdd (may be NULL). */
static void random_euler(bench_rng *r, double w, double a, double *p, double *pd, double *pdd)
{
    double om[3], al[3], t[4];
    random_quat(r, p);
    for (int k = 0; k < 3; k++) om[k] = bench_rng_range(r, -w, w);
    for (int k = 0; k < 3; k++) al[k] = bench_rng_range(r, -a, a);
    mbs_euler_rates_from_omega(p, om, pd);
    if (pdd) {
        double pp = pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3];
        mbs_euler_rates_from_omega(p, al, t);   /* 1/2 E^T alpha */
        for (int k = 0; k < 4; k++) pdd[k] = t[k] - p[k] * pp;
    }
}

void bench_random_state(const mbs_model *m, bench_rng *r, double w, double a,
                        double *q, double *qd, double *qdd)
{
    const double pi = 3.14159265358979323846;
    const int nb = mbs_model_nbodies(m);
    for (int i = 1; i <= nb; i++) {
        const int off = mbs_joint_coord_offset(m, i), n = mbs_joint_nq(m, i);
        double *qi = q + off, *qdi = qd + off, *qddi = qdd ? qdd + off : NULL;
        double tmp[7];
        if (!qddi) qddi = tmp;
        switch (mbs_joint_type_of(m, i)) {
        case MBS_JOINT_SPHERICAL:
            random_euler(r, w, a, qi, qdi, qddi);
            break;
        case MBS_JOINT_FLOATING:
            for (int k = 0; k < 3; k++) {
                qi[k] = bench_rng_range(r, -0.5, 0.5);
                qdi[k] = bench_rng_range(r, -w, w);
                qddi[k] = bench_rng_range(r, -a, a);
            }
            random_euler(r, w, a, qi + 3, qdi + 3, qddi + 3);
            break;
        default: {
            /* translations: prismatic s; cylindrical s (first); planar s1, s2 */
            mbs_joint_type t = mbs_joint_type_of(m, i);
            for (int k = 0; k < n; k++) {
                int transl = t == MBS_JOINT_PRISMATIC || (t == MBS_JOINT_CYLINDRICAL && k == 0) ||
                             (t == MBS_JOINT_PLANAR && k < 2);
                qi[k] = transl ? bench_rng_range(r, -0.5, 0.5) : bench_rng_range(r, -pi, pi);
                qdi[k] = bench_rng_range(r, -w, w);
                qddi[k] = bench_rng_range(r, -a, a);
            }
        }
        }
    }
}
