/*
 * bench_derivatives.c - cost of the analytical derivatives of inverse and
 * forward dynamics (include/mbsens/derivatives.h).
 *
 *   ID      mbs_inverse_dynamics
 *   dID     mbs_inverse_dynamics_derivatives: tau, dtau/dq and dtau/dqd
 *   FD      mbs_forward_dynamics (fr: articulated bodies; semi: CRBA +
 *           Cholesky)
 *   dFD     mbs_forward_dynamics_derivatives: qdd, dqdd/dq, dqdd/dqd and
 *           dqdd/dtau, same algorithm
 *   CD      central differences of our own dynamics for the same two
 *           Jacobians: 4 nq evaluations of ID (or FD), step 1e-6 (Euler
 *           parameters perturbed like any coordinate, as the analytical
 *           derivatives are of the functions as implemented)
 *
 * Models: the generated spatial chains (mbs_generate_chain_json; revolute
 * and spherical joints, fixed base; n = 8 .. 128), the revolute chain with a
 * floating base, and models/human43.json. The revolute chains and human43
 * take the fused pass for 1-DOF trees (src/kernels/jacobians_1dof.c; dFD fr:
 * qdd from the articulated bodies, then the pass; dsemi: no FD pass, qdd
 * from the factor of M; the products by tree-sparse triangular solves on
 * human43, by LAPACK + dgemm on the chains); the
 * spherical and floating-base chains the world-frame kernel
 * (src/kernels/inverse_dynamics_jacobians.c). States are random (seed 1: angles
 * in [-pi, pi], rates in [-1, 1], accelerations in [-1, 1]). The reference
 * point is the default (com). Then the human model: total time of
 * mbs_inverse_dynamics_derivatives over the 301 samples of
 * q_i = sin(2 pi t), t = 0 .. 3 s in steps of 10 ms (Zhakatayev et al.
 * §5.2), best of the repetitions.
 *
 * Usage: bench_derivatives [--quick] [--min-time S] [--reps N] [HUMAN43_JSON]
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef struct ctx {
    const mbs_model *m;
    mbs_data *d;
    int nq;
    double *q, *qd, *qdd, *tau, *out, *A, *B, *C, *qp, *qdp, *t1, *t2;
} ctx;

static void k_id(void *p)
{
    ctx *c = p;
    mbs_inverse_dynamics(c->m, c->d, c->q, c->qd, c->qdd, c->out);
    bench_sink = c->out[0];
}
static void k_did(void *p)
{
    ctx *c = p;
    mbs_inverse_dynamics_derivatives(c->m, c->d, c->q, c->qd, c->qdd, c->out, c->A, c->B);
    bench_sink = c->A[0] + c->B[0];
}
static void k_fr(void *p)
{
    ctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out);
    bench_sink = c->out[0];
}
static void k_dfr(void *p)
{
    ctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, c->out,
                                     c->A, c->B, c->C);
    bench_sink = c->A[0] + c->B[0] + c->C[0];
}
static void k_semi(void *p)
{
    ctx *c = p;
    mbs_forward_dynamics(c->m, c->d, MBS_FD_SEMI_RECURSIVE, c->q, c->qd, c->tau, c->out);
    bench_sink = c->out[0];
}
static void k_dsemi(void *p)
{
    ctx *c = p;
    mbs_forward_dynamics_derivatives(c->m, c->d, MBS_FD_SEMI_RECURSIVE, c->q, c->qd, c->tau, c->out,
                                     c->A, c->B, c->C);
    bench_sink = c->A[0] + c->B[0] + c->C[0];
}

/* Central differences of ID (fd = 0) or fr-FD (fd = 1): dq and dqd columns. */
static void cd_common(ctx *c, int fd)
{
    const int nq = c->nq;
    const double h = 1e-6;
    memcpy(c->qp, c->q, sizeof(double) * (size_t)nq);
    memcpy(c->qdp, c->qd, sizeof(double) * (size_t)nq);
    for (int k = 0; k < 2 * nq; k++) {
        double *v = k < nq ? c->qp + k : c->qdp + k - nq, v0 = *v;
        *v = v0 + h;
        if (fd) mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->qp, c->qdp, c->tau, c->t1);
        else mbs_inverse_dynamics(c->m, c->d, c->qp, c->qdp, c->qdd, c->t1);
        *v = v0 - h;
        if (fd) mbs_forward_dynamics(c->m, c->d, MBS_FD_RECURSIVE, c->qp, c->qdp, c->tau, c->t2);
        else mbs_inverse_dynamics(c->m, c->d, c->qp, c->qdp, c->qdd, c->t2);
        *v = v0;
        double *J = k < nq ? c->A : c->B;
        const int col = k < nq ? k : k - nq;
        for (int r = 0; r < nq; r++) J[r * nq + col] = (c->t1[r] - c->t2[r]) / (2 * h);
    }
    bench_sink = c->A[0];
}
static void k_cd_id(void *p) { cd_common(p, 0); }
static void k_cd_fd(void *p) { cd_common(p, 1); }

static void ctx_init(ctx *c, const mbs_model *m)
{
    bench_rng r;
    c->m = m;
    c->nq = mbs_model_nq(m);
    size_t n = (size_t)c->nq + 1;
    c->d = bench_data(m);
    c->q = calloc(n, sizeof(double)); c->qd = calloc(n, sizeof(double));
    c->qdd = calloc(n, sizeof(double)); c->tau = calloc(n, sizeof(double));
    c->out = calloc(n, sizeof(double)); c->qp = calloc(n, sizeof(double));
    c->qdp = calloc(n, sizeof(double)); c->t1 = calloc(n, sizeof(double));
    c->t2 = calloc(n, sizeof(double));
    c->A = calloc(n * n, sizeof(double)); c->B = calloc(n * n, sizeof(double));
    c->C = calloc(n * n, sizeof(double));
    bench_rng_seed(&r, 1);
    bench_random_state(m, &r, 1.0, 1.0, c->q, c->qd, c->qdd);
    for (int k = 0; k < c->nq; k++) c->tau[k] = bench_rng_range(&r, -1, 1);
    bench_check(mbs_inverse_dynamics_derivatives(m, c->d, c->q, c->qd, c->qdd, NULL, c->A, c->B), c->d, "dID");
    bench_check(mbs_forward_dynamics_derivatives(m, c->d, MBS_FD_RECURSIVE, c->q, c->qd, c->tau, NULL, c->A, c->B, c->C), c->d, "dFD");
}

static void ctx_free(ctx *c)
{
    mbs_data_free(c->d);
    free(c->q); free(c->qd); free(c->qdd); free(c->tau); free(c->out); free(c->qp);
    free(c->qdp); free(c->t1); free(c->t2); free(c->A); free(c->B); free(c->C);
}

static void row(const char *name, const mbs_model *m, int with_cd)
{
    ctx c;
    ctx_init(&c, m);
    bench_fn f_id[3] = { k_id, k_did, k_cd_id }, f_fr[3] = { k_fr, k_dfr, k_cd_fd },
             f_semi[2] = { k_semi, k_dsemi };
    void *cx[3] = { &c, &c, &c };
    bench_result r_id[3], r_fr[3], r_semi[2];
    double q_id[3], q_fr[3], q_semi[2];
    const int ncd = with_cd ? 3 : 2;
    bench_time_many(ncd, f_id, cx, r_id, q_id);
    bench_time_many(ncd, f_fr, cx, r_fr, q_fr);
    bench_time_many(2, f_semi, cx, r_semi, q_semi);
    printf("| %-22s | %3d | %8.2f | %9.2f | %5.1f | %8.2f | %9.2f | %5.1f | %8.2f | %9.2f | %5.1f |",
           name, c.nq, r_id[0].median_ns / 1e3, r_id[1].median_ns / 1e3, q_id[1],
           r_fr[0].median_ns / 1e3, r_fr[1].median_ns / 1e3, q_fr[1],
           r_semi[0].median_ns / 1e3, r_semi[1].median_ns / 1e3, q_semi[1]);
    if (with_cd) printf(" %6.1f | %6.1f |\n", q_id[2] / q_id[1], q_fr[2] / q_fr[1]);
    else printf("      - |      - |\n");
    fflush(stdout);
    ctx_free(&c);
}

/* The human model along q_i = sin(2 pi t), 301 samples. */
typedef struct hctx {
    ctx c;
    double *Q, *QD, *QDD;
} hctx;

static void k_human(void *p)
{
    hctx *h = p;
    const int nq = h->c.nq;
    for (int s = 0; s <= 300; s++)
        mbs_inverse_dynamics_derivatives(h->c.m, h->c.d, h->Q + (size_t)s * nq, h->QD + (size_t)s * nq,
                                         h->QDD + (size_t)s * nq, NULL, h->c.A, h->c.B);
    bench_sink = h->c.A[0];
}

int main(int argc, char **argv)
{
    const char *hpath = bench_parse_args(argc, argv, "[HUMAN43_JSON]");
    mbs_model *human = bench_load_model(bench_model_path(hpath, "human43.json"));
    printf("# bench_derivatives\n\n");
    bench_print_machine(stdout, "");
    printf("\nTimes in microseconds per call (median of %d repetitions of >= %.2f s); "
           "ratios d/primal and CD/analytical per repetition (median).\n\n",
           bench_cfg.reps, bench_cfg.min_time);
    printf("| model                  |  nq |   ID us  |  dID us   | ratio |   fr us  |  dfr us   | ratio |"
           "  semi us |  dsemi us | ratio | CD/dID | CD/dfr |\n");
    printf("|------------------------|-----|----------|-----------|-------|----------|-----------|-------|"
           "----------|-----------|-------|--------|--------|\n");
    const int ns[] = { 8, 16, 32, 64, 128 };
    const struct { mbs_joint_type j; int fb; const char *nm; } kinds[] = {
        { MBS_JOINT_REVOLUTE, 0, "revolute" }, { MBS_JOINT_SPHERICAL, 0, "spherical" },
        { MBS_JOINT_REVOLUTE, 1, "revolute+floating" } };
    for (int t = 0; t < 3; t++)
        for (int a = 0; a < 5; a++) {
            if (bench_cfg.quick && ns[a] > 32) continue;
            mbs_model *m = bench_chain(ns[a], kinds[t].j, kinds[t].fb);
            char name[64];
            snprintf(name, sizeof name, "chain %s n=%d", kinds[t].nm, ns[a]);
            row(name, m, ns[a] <= 64);
            mbs_model_free(m);
        }
    row("human43", human, 1);

    /* the 301-sample trajectory */
    hctx h;
    ctx_init(&h.c, human);
    const int nq = h.c.nq;
    h.Q = malloc(sizeof(double) * 301 * (size_t)nq);
    h.QD = malloc(sizeof(double) * 301 * (size_t)nq);
    h.QDD = malloc(sizeof(double) * 301 * (size_t)nq);
    const double w = 2 * 3.14159265358979323846;
    for (int s = 0; s <= 300; s++)
        for (int k = 0; k < nq; k++) {
            double t = 0.01 * s;
            h.Q[s * nq + k] = sin(w * t);
            h.QD[s * nq + k] = w * cos(w * t);
            h.QDD[s * nq + k] = -w * w * sin(w * t);
        }
    bench_result rh = bench_time(k_human, &h);
    printf("\nhuman43, ID derivatives (dtau/dq and dtau/dqd) at the 301 samples of q_i = sin(2 pi t), "
           "t = 0..3 s: total %.3f ms (median; min %.3f ms), %.2f us per sample\n",
           rh.median_ns / 1e6, rh.min_ns / 1e6, rh.median_ns / 301e3);
    free(h.Q); free(h.QD); free(h.QDD);
    ctx_free(&h.c);
    mbs_model_free(human);
    return 0;
}
