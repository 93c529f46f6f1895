/*
 * bench_tangent_robots.c - the floating-base robots in both velocity
 * conventions: ns/call of inverse dynamics (ID), forward dynamics (FD,
 * fully recursive), their derivatives (dID: tau, dtau/dq, dtau/dv; dFD:
 * vd, dvd/dq, dvd/dv, dvd/dtau, fully recursive), with the floating base's
 * velocities as Euler-parameter rates ("euler") and as the body twist
 * ("tangent", mbs_model_with_velocities), the eight kernels of a robot
 * timed side by side (interleaved repetitions), and the ratios dID/ID and
 * dFD/FD within each convention.
 *
 * Robots: a1, solo12, simple_humanoid, talos_full_v2 from
 * ../shared/data/example-robot-data (or $MBS_URDF_DIR), floating base
 * "root_joint", balance_inertia; or the one URDF given. State: a random
 * Euler-rate state (bench_random_state, seed 7), its tangent velocities by
 * mbs_velocity_from_rates, random tau.
 *
 * Usage: bench_tangent_robots [--quick] [--min-time S] [--reps N] [ROBOT.urdf]
 * Environment: MBS_URDF_DIR; MBS_BENCH_PROFILE=CONV:KERNEL[:N] (CONV euler
 * or tangent, KERNEL ID FD dID dFD: run only that N times, default 1000,
 * for valgrind --tool=callgrind --toggle-collect).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_common.h"
#include "mbsens/manifold.h"

static const char *const ROBOTS[] = { "a1.urdf", "solo12.urdf", "simple_humanoid.urdf", "talos_full_v2.urdf" };
#define NROBOTS ((int)(sizeof ROBOTS / sizeof ROBOTS[0]))

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    double *q, *v, *vd, *tau, *out, *A, *B, *C;
} tctx;

static void t_id(void *p)
{
    tctx *c = p;
    mbs_inverse_dynamics(c->m, c->d, c->q, c->v, c->vd, c->out);
    bench_sink = c->out[0];
}
static void t_fd(void *p)
{
    tctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->v, c->tau, c->out);
    bench_sink = c->out[0];
}
static void t_did(void *p)
{
    tctx *c = p;
    mbs_inverse_dynamics_derivatives(c->m, c->d, c->q, c->v, c->vd, c->out, c->A, c->B);
    bench_sink = c->A[0];
}
static void t_dfd(void *p)
{
    tctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->v, c->tau, c->out, c->A, c->B, c->C);
    bench_sink = c->A[0];
}

static void ctx_init(tctx *c, const mbs_model *m, const double *q)
{
    const int nv = mbs_model_nv(m), nq = mbs_model_nq(m);
    const size_t n2 = (size_t)nv * nv;
    c->m = m;
    c->d = bench_data(m);
    c->q = malloc(sizeof(double) * (size_t)nq);
    memcpy(c->q, q, sizeof(double) * (size_t)nq);
    c->v = malloc(sizeof(double) * (size_t)nv);
    c->vd = malloc(sizeof(double) * (size_t)nv);
    c->tau = malloc(sizeof(double) * (size_t)nv);
    c->out = malloc(sizeof(double) * (size_t)nv);
    c->A = malloc(sizeof(double) * n2);
    c->B = malloc(sizeof(double) * n2);
    c->C = malloc(sizeof(double) * n2);
}

static void ctx_free(tctx *c)
{
    mbs_data_free(c->d);
    free(c->q); free(c->v); free(c->vd); free(c->tau); free(c->out); free(c->A); free(c->B); free(c->C);
}

static int run(const char *path, const char *label)
{
    mbs_urdf_options o = { 1, 0, NULL, NULL, 1, MBS_VELOCITIES_EULER_RATES };
    mbs_error err;
    mbs_model *mE = mbs_model_load_urdf(path, &o, &err);
    mbs_model *mT = mE ? mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &err) : NULL;
    if (!mE || !mT) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        mbs_model_free(mE);
        return -1;
    }
    const int nq = mbs_model_nq(mE), nvT = mbs_model_nv(mT);
    double *q = malloc(sizeof(double) * (size_t)nq);
    tctx c[2];
    ctx_init(&c[0], mE, q);
    bench_rng rng;
    bench_rng_seed(&rng, 7);
    bench_random_state(mE, &rng, 1, 1, c[0].q, c[0].v, c[0].vd);
    for (int k = 0; k < nq; k++) c[0].tau[k] = bench_rng_range(&rng, -1, 1);
    memcpy(q, c[0].q, sizeof(double) * (size_t)nq);
    ctx_init(&c[1], mT, q);
    bench_check(mbs_velocity_from_rates(mT, q, c[0].v, c[0].vd, c[1].v, c[1].vd), NULL, "velocities");
    /* the same generalized forces: tau_v = T^T tau_q */
    double *T = malloc(sizeof(double) * (size_t)nq * (size_t)nvT);
    mbs_velocity_map(mT, q, T);
    for (int k = 0; k < nvT; k++) {
        c[1].tau[k] = 0;
        for (int r = 0; r < nq; r++) c[1].tau[k] += T[r * nvT + k] * c[0].tau[r];
    }
    free(T);
    const bench_fn fns[4] = { t_id, t_fd, t_did, t_dfd };
    const char *prof = getenv("MBS_BENCH_PROFILE");
    if (prof && *prof) {
        static const char *const names[4] = { "ID", "FD", "dID", "dFD" };
        char buf[64], *kern, *cnt;
        snprintf(buf, sizeof buf, "%s", prof);
        kern = strchr(buf, ':');
        if (kern) *kern++ = '\0';
        cnt = kern ? strchr(kern, ':') : NULL;
        if (cnt) *cnt++ = '\0';
        const long n = cnt ? atol(cnt) : 1000;
        const int conv = strcmp(buf, "tangent") == 0;
        for (int k = 0; kern && k < 4; k++)
            if (strcmp(kern, names[k]) == 0)
                for (long i = 0; i < n; i++) fns[k](&c[conv]);
    } else {
        bench_fn f8[8];
        void *cp[8];
        for (int k = 0; k < 8; k++) { f8[k] = fns[k % 4]; cp[k] = &c[k / 4]; }
        bench_result res[8];
        double ratio[8];
        bench_time_many(8, f8, cp, res, ratio);
        for (int v = 0; v < 2; v++) {
            const double *r = ratio + 4 * v;
            printf("| %-16s | %-7s | %2d (%2d) | %7.0f | %7.0f | %8.0f | %8.0f | %5.2f | %5.2f |\n", label,
                   v ? "tangent" : "euler", mbs_model_nv(c[v].m), nq, res[4 * v].median_ns,
                   res[4 * v + 1].median_ns, res[4 * v + 2].median_ns, res[4 * v + 3].median_ns, r[2] / r[0],
                   r[3] / r[1]);
        }
        fflush(stdout);
    }
    ctx_free(&c[0]);
    ctx_free(&c[1]);
    free(q);
    mbs_model_free(mT);
    mbs_model_free(mE);
    return 0;
}

int main(int argc, char **argv)
{
    const char *one = bench_parse_args(argc, argv, "[ROBOT.urdf]");
    char dir[4096], path[8192];
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else snprintf(dir, sizeof dir, "%s/../shared/data/example-robot-data",
                  getenv("MBS_SOURCE_DIR") ? getenv("MBS_SOURCE_DIR") : MBS_BENCH_SOURCE_DIR);
    const int profile = getenv("MBS_BENCH_PROFILE") && *getenv("MBS_BENCH_PROFILE");
    if (!profile) {
        bench_print_machine(stdout, "# ");
        printf("# ns/call (median of interleaved repetitions); ratios: medians of per-repetition ratios\n");
        printf("| %-16s | %-7s | %-7s | %7s | %7s | %8s | %8s | %5s | %5s |\n", "robot", "vel", "nv (nq)", "ID",
               "FD", "dID", "dFD", "dID/ID", "dFD/FD");
        printf("|---|---|---|---|---|---|---|---|---|\n");
    }
    int fails = 0;
    if (one) return run(one, one) ? 1 : 0;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("bench_tangent_robots: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return 0;
    }
    for (int r = 0; r < NROBOTS; r++) {
        snprintf(path, sizeof path, "%s/%s", dir, ROBOTS[r]);
        char label[64];
        snprintf(label, sizeof label, "%.*s", (int)(strlen(ROBOTS[r]) - 5), ROBOTS[r]);
        fails += run(path, label) != 0;
    }
    if (!profile) bench_print_footer(stdout);
    return fails ? 1 : 0;
}
