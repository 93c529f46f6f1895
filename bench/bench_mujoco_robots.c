/*
 * bench_mujoco_robots.c - the 16 example robots (URDF, ../shared/data/
 * example-robot-data or $MBS_URDF_DIR): ns/call of our inverse dynamics,
 * mass matrix, fully recursive forward dynamics, inverse-dynamics
 * derivatives (dtau/dq, dtau/dqd) and forward-dynamics derivatives
 * (dqdd/dq, dqdd/dqd, dqdd/dtau; fully recursive), against MuJoCo 2.2.2 on
 * the same URDF: mj_rne (with the position and velocity stages it needs),
 * mj_crb + mj_factorM (with the position stages), mj_forward, and
 * mjd_transitionFD (centered, eps 1e-6: MuJoCo's own derivatives, finite
 * differences of mj_step). Ratios are ours / MuJoCo (lower is better),
 * medians of per-repetition ratios of interleaved timings (bench_common.h).
 * Targets: FD <= 0.5 x mj_forward; FD derivatives >= 30 x faster than
 * mjd_transitionFD.
 *
 * MuJoCo loads the URDF copy that tests/test_mujoco_crosscheck.c checks
 * (mjb_write_urdf_copy, mjbridge/mjbridge.h: visual and collision removed,
 * balanceinertia; icub_reduced's point masses get m (1e-4 m)^2 of inertia)
 * but with fusestatic="true", its default and the fair setting: our loader
 * merges fixed joints too.
 * Contacts, limits, passive forces and the constraint solver are disabled.
 * Fixed base, and floating base (a free joint "root_joint") for the robots
 * that walk (MBS_BENCH_FLOATING=0 to skip).
 *
 * Usage: bench_mujoco_robots [--quick] [--min-time S] [--reps N] [ROBOT.urdf]
 * Environment: MBS_URDF_DIR (the robots), MBS_BENCH_FLOATING=0 (fixed base
 * only; "only": floating base only), MBS_BENCH_PROFILE=KERNEL[:N] (run only that kernel N times, for
 * valgrind --tool=callgrind; KERNEL: ID M FD dID dFD mj_rne crb mj_forward mjd, and, for the fully
 * recursive FD in the other velocity convention, FDt (the model's copy with tangent velocities,
 * mbs_model_with_velocities, at the same state: v = T^+ qd, tau = 0) and FDtg (the same through the
 * global-axes kernels, mbs_data_set_fr_frames), FDg (the model through the global-axes kernels))
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_common.h"
#include "mjbridge.h"

static const char *const ROBOTS[] = {
    "double_pendulum.urdf", "ur5_robot.urdf", "kinova.urdf", "panda.urdf", "a1.urdf", "anymal.urdf",
    "go2.urdf", "hyq_no_sensors.urdf", "solo12.urdf", "baxter.urdf", "simple_humanoid.urdf",
    "icub_reduced.urdf", "pr2.urdf", "romeo_small.urdf", "talos_reduced.urdf", "talos_full_v2.urdf",
};
#define NROBOTS ((int)(sizeof ROBOTS / sizeof ROBOTS[0]))
/* robots also timed on a floating base */
static int walks(const char *f)
{
    static const char *const w[] = { "a1.urdf", "anymal.urdf", "go2.urdf", "hyq_no_sensors.urdf", "solo12.urdf",
                                     "simple_humanoid.urdf", "icub_reduced.urdf", "romeo_small.urdf",
                                     "talos_reduced.urdf", "talos_full_v2.urdf", NULL };
    for (int k = 0; w[k]; k++)
        if (strcmp(f, w[k]) == 0) return 1;
    return 0;
}

/* ---------------------------------------------------------------- kernels */

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    const mjModel *mm;
    mjData *md;
    const double *q, *qd, *qdd, *tau;
    double *out, *A, *B, *C;
} tctx;

static void t_id(void *p) { tctx *c = p; mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->out); bench_sink = c->out[0]; }
static void t_mm(void *p) { tctx *c = p; mbs_mass_matrix(c->m, c->d, c->q, c->A); bench_sink = c->A[0]; }
static void t_fd(void *p) { tctx *c = p; mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out); bench_sink = c->out[0]; }
static void t_did(void *p)
{
    tctx *c = p;
    mbs_inverse_dynamics_derivatives(c->m, c->d, c->q, c->qd, c->qdd, c->out, c->A, c->B);
    bench_sink = c->A[0];
}
static void t_dfd(void *p)
{
    tctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out, c->A, c->B, c->C);
    bench_sink = c->A[0];
}
static void t_mj_rne(void *p)
{
    tctx *c = p;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_comVel(c->mm, c->md);
    mj_rne(c->mm, c->md, 1, c->out);
    bench_sink = c->out[0];
}
static void t_mj_crb(void *p)
{
    tctx *c = p;
    mj_kinematics(c->mm, c->md); mj_comPos(c->mm, c->md); mj_crb(c->mm, c->md); mj_factorM(c->mm, c->md);
    bench_sink = c->md->qLD[0];
}
static void t_mj_forward(void *p) { tctx *c = p; mj_forward(c->mm, c->md); bench_sink = c->md->qacc[0]; }
static void t_mj_dtrans(void *p)
{
    tctx *c = p;
    mjd_transitionFD(c->mm, c->md, 1e-6, 1, c->A, c->B, NULL, NULL);
    bench_sink = c->A[0];
}

typedef struct {
    bench_result r[9];
    double ratio[4];    /* ID, M, FD, FD derivatives: ours / MuJoCo */
} row;

static void print_row(const char *label, const char *base, int nv, const row *R)
{
    printf("| %-20s | %-8s | %3d | %8.0f | %8.0f | %8.0f | %9.0f | %9.0f | %8.0f | %8.0f | %8.0f | %10.0f "
           "| %5.2f | %5.2f | %5.2f | %6.1f |\n",
           label, base, nv, R->r[0].median_ns, R->r[1].median_ns, R->r[2].median_ns, R->r[3].median_ns,
           R->r[4].median_ns, R->r[5].median_ns, R->r[6].median_ns, R->r[7].median_ns, R->r[8].median_ns,
           R->ratio[0], R->ratio[1], R->ratio[2], 1 / R->ratio[3]);
    fflush(stdout);
}

static int run(const char *dir, const char *file, int floating, const char *tmpdir, row *R, int *nv_out)
{
    char src[8192], dst[8192], mjerr[1024] = "";
    snprintf(src, sizeof src, "%s/%s", dir, file);
    snprintf(dst, sizeof dst, "%s/%s", tmpdir, file);
    const int icub = strcmp(file, "icub_reduced.urdf") == 0;
    if (mjb_write_urdf_copy(src, dst, floating, icub, 1) != 0) return -1;
    mjModel *mm = mj_loadXML(dst, NULL, mjerr, sizeof mjerr);
    mbs_urdf_options o = { floating && !icub, 0, NULL, NULL, 1, MBS_VELOCITIES_EULER_RATES };
    mbs_error err;
    mbs_model *m = mbs_model_load_urdf(icub ? dst : src, &o, &err);
    unlink(dst);
    if (!mm || !m) {
        fprintf(stderr, "%s: %s\n", file, mm ? err.msg : mjerr);
        mj_deleteModel(mm);
        mbs_model_free(m);
        return -1;
    }
    mjb_disable_extras(mm);
    const int nq = m->nq, nv = mm->nv;
    *nv_out = nv;
    mjb_map P;
    if (mjb_map_init(&P, m, mm, file) != 0) {
        mjb_map_free(&P);
        mbs_model_free(m);
        mj_deleteModel(mm);
        return -1;
    }
    size_t big = (size_t)(nq > nv ? nq : nv);
    double *q = malloc(big * sizeof *q), *qd = malloc(big * sizeof *qd), *qdd = malloc(big * sizeof *qdd);
    double *tau = calloc(big, sizeof *tau), *qacc = malloc(big * sizeof *qacc);
    bench_rng rng;
    bench_rng_seed(&rng, 7);
    bench_random_state(m, &rng, 1.0, 1.0, q, qd, qdd);
    for (int k = 0; k < nq; k++) tau[k] = 0;
    tctx c[2];
    for (int k = 0; k < 2; k++) {
        memset(&c[k], 0, sizeof c[k]);
        c[k].m = m;
        c[k].d = bench_data(m);
        c[k].mm = mm;
        c[k].md = mj_makeData(mm);
        c[k].q = q; c[k].qd = qd; c[k].qdd = qdd; c[k].tau = tau;
        c[k].out = malloc(big * sizeof(double));
        size_t n2 = 2 * big;
        c[k].A = malloc(n2 * n2 * sizeof(double));
        c[k].B = malloc(n2 * n2 * sizeof(double));
        c[k].C = malloc(n2 * n2 * sizeof(double));
        mjb_set_state(&P, c[k].md, q, qd);
        mj_forward(mm, c[k].md);
    }
    mjb_qacc_from_ours(&P, q, qd, qdd, qacc);
    mju_copy(c[1].md->qacc, qacc, nv);
    /* MBS_BENCH_PROFILE=NAME[:N]: only run kernel NAME (ID M FD dID dFD
     * mj_rne crb mj_forward mjd) N times (default 1000), for callgrind */
    const char *prof = getenv("MBS_BENCH_PROFILE");
    if (prof && *prof) {
        static const char *const names[] = { "ID", "M", "FD", "dID", "dFD", "mj_rne", "crb", "mj_forward", "mjd" };
        const bench_fn fns[] = { t_id, t_mm, t_fd, t_did, t_dfd, t_mj_rne, t_mj_crb, t_mj_forward, t_mj_dtrans };
        char name[32];
        long n = 1000;
        snprintf(name, sizeof name, "%s", prof);
        char *colon = strchr(name, ':');
        if (colon) {
            *colon = '\0';
            n = atol(colon + 1);
        }
        for (int k = 0; k < 9; k++)
            if (strcmp(name, names[k]) == 0)
                for (long i = 0; i < n; i++) fns[k](&c[k < 5 ? 0 : 1]);
        if (!strcmp(name, "FDt") || !strcmp(name, "FDtg") || !strcmp(name, "FDg")) {
            mbs_model *mt = strcmp(name, "FDg") ? mbs_model_with_velocities(m, MBS_VELOCITIES_TANGENT, &err) : m;
            if (!mt) { fprintf(stderr, "%s: %s\n", file, err.msg); exit(2); }
            double *v = calloc(big, sizeof *v);
            bench_check(mbs_velocity_from_rates(mt, q, qd, NULL, v, NULL), NULL, "velocities");
            tctx ct = c[0];
            ct.m = mt;
            ct.d = bench_data(mt);
            ct.qd = v;
            if (strcmp(name, "FDt")) mbs_data_set_fr_frames(ct.d, MBS_FR_GLOBAL);
            bench_fn volatile fd = t_fd;   /* a call, as the others, for --toggle-collect=t_fd */
            for (long i = 0; i < n; i++) fd(&ct);
            mbs_data_free(ct.d);
            if (mt != m) mbs_model_free(mt);
            free(v);
        }
        memset(R, 0, sizeof *R);
        for (int k = 0; k < 4; k++) R->ratio[k] = 1;
        goto cleanup;
    }
    void *cp[2] = { &c[0], &c[1] };
    double ratio[2];
    bench_result res[2];
    const bench_fn pairs[4][2] = { { t_id, t_mj_rne }, { t_mm, t_mj_crb }, { t_fd, t_mj_forward }, { t_dfd, t_mj_dtrans } };
    const int slot[4][2] = { { 0, 5 }, { 1, 6 }, { 2, 7 }, { 4, 8 } };
    for (int k = 0; k < 4; k++) {
        bench_time_many(2, pairs[k], cp, res, ratio);
        R->r[slot[k][0]] = res[0];
        R->r[slot[k][1]] = res[1];
        R->ratio[k] = 1 / ratio[1];
        if (k == 0) mju_copy(c[1].md->qacc, qacc, nv);
    }
    R->r[3] = bench_time(t_did, &c[0]);
cleanup:
    for (int k = 0; k < 2; k++) {
        mbs_data_free(c[k].d);
        mj_deleteData(c[k].md);
        free(c[k].out); free(c[k].A); free(c[k].B); free(c[k].C);
    }
    free(q); free(qd); free(qdd); free(tau); free(qacc);
    mjb_map_free(&P);
    mbs_model_free(m);
    mj_deleteModel(mm);
    return 0;
}

int main(int argc, char **argv)
{
    const char *one = bench_parse_args(argc, argv, "[ROBOT.urdf]");
    char dir[4096];
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env) snprintf(dir, sizeof dir, "%s", env);
    else snprintf(dir, sizeof dir, "%s/../shared/data/example-robot-data",
                  getenv("MBS_SOURCE_DIR") ? getenv("MBS_SOURCE_DIR") : MBS_BENCH_SOURCE_DIR);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("bench_mujoco_robots: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return 0;
    }
    char tmpdir[] = "/tmp/mbs_bench_robots_XXXXXX";
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    const char *fl = getenv("MBS_BENCH_FLOATING");
    const int do_floating = !(fl && strcmp(fl, "0") == 0), do_fixed = !(fl && strcmp(fl, "only") == 0);
    bench_print_machine(stdout, "# ");
    printf("# ns/call (median); ratios ours / MuJoCo; last column: mjd_transitionFD / our FD derivatives\n");
    printf("| %-20s | %-8s | %3s | %8s | %8s | %8s | %9s | %9s | %8s | %8s | %8s | %10s | %5s | %5s | %5s | %6s |\n",
           "robot", "base", "nv", "ID", "M", "FD", "dID", "dFD", "mj_rne", "crb+fac", "mj_fwd", "mjd_trFD",
           "ID", "M", "FD", "dFD x");
    printf("|%s|\n", "---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---");
    int fails = 0;
    double worst_fd = 0, worst_dfd = INFINITY;
    for (int r = 0; r < NROBOTS; r++) {
        if (one && strcmp(one, ROBOTS[r]) != 0) continue;
        for (int floating = 0; floating <= 1; floating++) {
            if (floating && (!do_floating || !walks(ROBOTS[r]))) continue;
            if (!floating && !do_fixed) continue;
            row R;
            int nv = 0;
            if (run(dir, ROBOTS[r], floating, tmpdir, &R, &nv) != 0) { fails++; continue; }
            char label[64];
            snprintf(label, sizeof label, "%.*s", (int)(strlen(ROBOTS[r]) - 5), ROBOTS[r]);
            print_row(label, floating ? "floating" : "fixed", nv, &R);
            if (R.ratio[2] > worst_fd) worst_fd = R.ratio[2];
            if (1 / R.ratio[3] < worst_dfd) worst_dfd = 1 / R.ratio[3];
        }
    }
    rmdir(tmpdir);
    printf("# worst FD ratio %.2f (target <= 0.5); smallest FD-derivative speed-up %.1f x (target >= 30)\n",
           worst_fd, worst_dfd);
    bench_print_footer(stdout);
    return fails ? 1 : 0;
}
