/*
 * bench_mujoco_derivatives.c - our forward-dynamics Jacobians against
 * MuJoCo 2.2.2's finite-difference transition Jacobians on the same models.
 *
 *   ours      mbs_forward_dynamics_derivatives(MBS_FD_RECURSIVE): qdd,
 *             dqdd/dq and dqdd/dqd (and, in the last column, dqdd/dtau too);
 *             analytical, exact to round-off
 *   mjd       mjd_transitionFD(m, d, eps = 1e-6, centered, A, NULL, NULL,
 *             NULL): A = d(next state)/d(state), (2 nv) x (2 nv), of one
 *             mj_step, forward (centered = 0) or central (centered = 1)
 *             differences
 *
 * Like for like? Not quite, and the differences favour neither side fully:
 *   - transitionFD differentiates a whole integration step (semi-implicit
 *     Euler with the model's timestep, including mj_integratePos), not the
 *     accelerations; its Jacobian has (2 nv)^2 entries, ours 2 nq^2 (+ nq^2);
 *   - it uses finite differences: 2 nv + 1 (forward) or 4 nv (central)
 *     mj_step-like evaluations, skipping the position stages where it can,
 *     with truncation and round-off errors of order sqrt(eps) (forward) or
 *     eps^(2/3) (central); ours are exact;
 *   - coordinates: MuJoCo uses nv velocities (3 per ball joint, in the
 *     child frame), we use nq Euler parameters (4 per ball);
 *   - MuJoCo's step also runs the constraint/contact machinery, disabled here
 *     by the MJCF flags (no contacts, limits or actuators), and passive forces
 *     are disabled too.
 * The MJCF (mjbridge) and the model pairs are those of bench_mujoco_fd.c
 * (bench_mujoco_common.c), so the two benchmarks always describe the same
 * MuJoCo models.
 *
 * Usage: bench_mujoco_derivatives [--quick] [--min-time S] [--reps N] [HUMAN43_JSON]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "bench_mujoco_common.h"

typedef struct dctx {
    const mbs_model *m;
    mbs_data *d;
    const mjModel *mm;
    mjData *md;
    double *q, *qd, *qdd, *A, *B, *C, *mjA;
    mjtByte centered;
} dctx;

static void t_ours(void *p)
{
    dctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, NULL, c->qdd, c->A,
                                     c->B, NULL);
    bench_sink = c->A[0] + c->B[0];
}
static void t_ours_all(void *p)
{
    dctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, NULL, c->qdd, c->A,
                                     c->B, c->C);
    bench_sink = c->A[0] + c->B[0] + c->C[0];
}
static void t_ours_fd(void *p)
{
    dctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, NULL, c->qdd);
    bench_sink = c->qdd[0];
}
static void t_mjd(void *p)
{
    dctx *c = p;
    mjd_transitionFD(c->mm, c->md, 1e-6, c->centered, c->mjA, NULL, NULL, NULL);
    bench_sink = c->mjA[0];
}

typedef struct dcase {
    const char *label;
    mbs_joint_type joint;
    int n, human;
} dcase;

int main(int argc, char **argv)
{
    const char *human_arg = bench_parse_args(argc, argv, NULL);
    const char *human_path = bench_model_path(human_arg, "human43.json");
    static const dcase cases[] = {
        { "revolute 8", MBS_JOINT_REVOLUTE, 8, 0 },
        { "revolute 16", MBS_JOINT_REVOLUTE, 16, 0 },
        { "revolute 32", MBS_JOINT_REVOLUTE, 32, 0 },
        { "revolute 64", MBS_JOINT_REVOLUTE, 64, 0 },
        { "spherical 8", MBS_JOINT_SPHERICAL, 8, 0 },
        { "spherical 16", MBS_JOINT_SPHERICAL, 16, 0 },
        { "spherical 32", MBS_JOINT_SPHERICAL, 32, 0 },
        { "human43", 0, 0, 1 },
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    printf("# bench_mujoco_derivatives: forward-dynamics Jacobians, mbsens vs MuJoCo %s\n\n",
           mj_versionString());
    bench_print_machine(stdout, "    ");
    printf("    MuJoCo: %s; mjd_transitionFD eps = 1e-6, timestep of the MJCF (default 0.002 s)\n\n",
           mj_versionString());
    printf("Times in microseconds per call (median); ratios per repetition (median).\n"
           "ours = dqdd/dq + dqdd/dqd (+ dqdd/dtau in 'ours all'); FD = mbs_forward_dynamics (fr).\n\n");
    printf("| model          | nq / nv   | FD us  | ours us | ours all us | mjd fwd us | mjd ctr us | mjd fwd / ours | mjd ctr / ours |\n");
    printf("|----------------|-----------|--------|---------|-------------|------------|------------|----------------|----------------|\n");
    for (int c = 0; c < ncases; c++) {
        const dcase *k = &cases[c];
        if (bench_cfg.quick && !k->human && k->n > 16) continue;
        mbs_model *m = k->human ? bench_load_model(human_path) : bench_chain(k->n, k->joint, 0);
        mjb_fill_massless(m, EPS_MASS, EPS_INERTIA);   /* MuJoCo needs mass on moving bodies; both sides see the same model */
        char label[64];
        snprintf(label, sizeof label, "%s", k->label);
        for (char *s = label; *s; s++) if (*s == ' ') *s = '_';
        mjpair P;
        if (mjpair_init(&P, m, label) != 0) return 2;
        const int nq = m->nq, nv = P.nv;
        dctx x;
        memset(&x, 0, sizeof x);
        x.m = m;
        x.d = bench_data(m);
        x.mm = P.mm;
        x.md = mj_makeData(P.mm);
        x.q = calloc((size_t)nq + 1, sizeof(double));
        x.qd = calloc((size_t)nq + 1, sizeof(double));
        x.qdd = calloc((size_t)nq + 1, sizeof(double));
        x.A = calloc((size_t)nq * nq + 1, sizeof(double));
        x.B = calloc((size_t)nq * nq + 1, sizeof(double));
        x.C = calloc((size_t)nq * nq + 1, sizeof(double));
        x.mjA = calloc((size_t)4 * nv * nv + 1, sizeof(double));
        bench_rng r;
        bench_rng_seed(&r, 1);
        bench_random_state(m, &r, 1.0, 1.0, x.q, x.qd, NULL);
        mjb_set_state(&P.map, x.md, x.q, x.qd);
        mj_forward(P.mm, x.md);
        bench_check(mbs_forward_dynamics_derivatives(m, x.d, MBS_FD_RECURSIVE, x.q, x.qd, NULL, x.qdd,
                                                     x.A, x.B, x.C), x.d, "dFD");
        dctx xc = x;
        xc.centered = 1;
        bench_fn fns[5] = { t_ours, t_ours_all, t_mjd, t_mjd, t_ours_fd };
        void *ctx[5] = { &x, &x, &x, &xc, &x };
        bench_result res[5];
        double ratio[5];
        bench_time_many(5, fns, ctx, res, ratio);
        char dims[32];
        snprintf(dims, sizeof dims, "%d / %d", nq, nv);
        printf("| %-14s | %-9s | %6.2f | %7.2f | %11.2f | %10.1f | %10.1f | %14.1f | %14.1f |\n", k->label, dims,
               res[4].median_ns / 1e3, res[0].median_ns / 1e3, res[1].median_ns / 1e3, res[2].median_ns / 1e3,
               res[3].median_ns / 1e3, ratio[2], ratio[3]);
        fflush(stdout);
        mj_deleteData(x.md);
        mbs_data_free(x.d);
        free(x.q); free(x.qd); free(x.qdd); free(x.A); free(x.B); free(x.C); free(x.mjA);
        mjpair_free(&P);
        mbs_model_free(m);
    }
    return 0;
}
