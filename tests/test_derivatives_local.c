/*
 * test_derivatives_local.c - the fused ID Jacobians for trees of revolute,
 * prismatic and fixed joints (src/kernels/jacobians_1dof.c), the path that
 * mbs_inverse_dynamics_derivatives takes on such models, on 300 random
 * trees (1-14 bodies, user joint loads on most; half of them with the
 * AVX2/FMA entry loops switched off, where the processor has them):
 * every comparison to round-off: MBS_ROUNDOFF of the tree, plus 2 n eps
 * kappa(M) for the forward-dynamics blocks (solves with M):
 *   - tau against mbs_inverse_dynamics;
 *   - dtau/dq and dtau/dqd against the complex-step derivatives of the
 *     global-axes kernels (matrix-wise, and per column with scale max(1,
 *     |column|));
 *   - against the world-frame kernel it replaces (mbs_rnea_jacobians, taken
 *     with a zero body load) and its mass matrix against mbs_mass_matrix;
 *     one Jacobian at a time gives the same entries (the paired loops may
 *     run with fused multiply-adds);
 *   - exact zeros between independent branches;
 *   - the path is really taken (mbs_jac1_usable), and not taken with a body
 *     load, a spherical joint or another model's data;
 *   - a chain far from the global origin, and the human model;
 *   - the forward-dynamics derivatives on the same path (FD primal, then
 *     -M^-1 dtau/dx): dqdd/dq, dqdd/dqd against the complex step of the
 *     articulated-body kernels, and all three blocks against the
 *     world-frame path, for both FD algorithms;
 *   - overflow reported as MBS_ERR_NUMERIC with the block named.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/derivatives.h"

#define NTREES 300
static const double H = 1e-30;

typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *qd, *qdd, *out;
    const double *qload;
} cs_ctx;

/* complex-step Jacobians of ID w.r.t. q and qd (joint loads, no body loads) */
static void cs_jacobians(cs_ctx *c, const double *q, const double *qd, const double *qdd, double *Jq,
                         double *Jqd)
{
    const int nq = c->m->nq;
    for (int k = 0; k < c->m->nx; k++) c->x[k] = c->m->x[k];
    for (int dir = 0; dir < 2 * nq; dir++) {
        for (int k = 0; k < nq; k++) { c->q[k] = q[k]; c->qd[k] = qd[k]; c->qdd[k] = qdd[k]; }
        if (dir < nq) c->q[dir] += I * H; else c->qd[dir - nq] += I * H;
        mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, c->qdd, 2);
        for (int k = 0; k < 15 * (c->m->nb + 1); k++) c->w.xfrc[k] = 0;
        for (int k = 0; k < nq; k++) c->w.qfrc[k] = c->qload[k];
        mbs_body_terms_cs(c->m, c->x, &c->w);
        mbs_rnea_cs(c->m, &c->w, c->out);
        for (int r = 0; r < nq; r++) {
            const double v = cimag(c->out[r]) / H;
            if (dir < nq) Jq[r * nq + dir] = v; else Jqd[r * nq + dir - nq] = v;
        }
    }
}

/* complex-step Jacobians of the articulated-body FD w.r.t. q and qd */
static void cs_fd_jacobians(cs_ctx *c, const double *q, const double *qd, const double *tau, double *Jq,
                            double *Jqd)
{
    const int nq = c->m->nq;
    mreal *tc = calloc((size_t)nq + 1, sizeof(mreal));
    for (int k = 0; k < c->m->nx; k++) c->x[k] = c->m->x[k];
    for (int dir = 0; dir < 2 * nq; dir++) {
        for (int k = 0; k < nq; k++) { c->q[k] = q[k]; c->qd[k] = qd[k]; tc[k] = tau[k]; }
        if (dir < nq) c->q[dir] += I * H; else c->qd[dir - nq] += I * H;
        mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, NULL, 1);
        for (int k = 0; k < 15 * (c->m->nb + 1); k++) c->w.xfrc[k] = 0;
        for (int k = 0; k < nq; k++) c->w.qfrc[k] = c->qload[k];
        mbs_body_terms_cs(c->m, c->x, &c->w);
        mbs_aba_cs(c->m, &c->w, c->q, c->qd, tc, c->out);
        for (int r = 0; r < nq; r++) {
            const double v = cimag(c->out[r]) / H;
            if (dir < nq) Jq[r * nq + dir] = v; else Jqd[r * nq + dir - nq] = v;
        }
    }
    free(tc);
}

static double col_err(const double *a, const double *ref, int nq)
{
    double worst = 0;
    for (int k = 0; k < nq; k++) {
        double s = 1, e = 0;
        for (int r = 0; r < nq; r++) s = fmax(s, fabs(ref[r * nq + k]));
        for (int r = 0; r < nq; r++) e = fmax(e, fabs(a[r * nq + k] - ref[r * nq + k]));
        worst = fmax(worst, e / s);
    }
    return worst;
}

static int related(const mbs_model *m, int a, int b)
{
    for (int j = b; j > 0; j = m->joint[j].parent) if (j == a) return 1;
    for (int j = a; j > 0; j = m->joint[j].parent) if (j == b) return 1;
    return 0;
}

static int coord_body(const mbs_model *m, int k)
{
    for (int i = 1; i <= m->nb; i++)
        if (k >= m->joint[i].qoff && k < m->joint[i].qoff + m->joint[i].nq) return i;
    return 0;
}

/* The comparisons on one model at one state; returns the worst errors. */
static void compare(mbs_model *m, mbs_rng *rng, double *worst, long *zeros_bad, int with_cs, int no_avx2)
{
    const int nq = m->nq;
    const size_t n1 = (size_t)nq + 1;
    double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *tau = calloc(n1, 8), *t0 = calloc(n1, 8);
    double *A = calloc(n1 * n1, 8), *B = calloc(n1 * n1, 8), *R = calloc(n1 * n1, 8), *S = calloc(n1 * n1, 8);
    double *M = calloc(n1 * n1, 8), *M0 = calloc(n1 * n1, 8), *qload = calloc(n1, 8);
    double *FA = calloc(n1 * n1, 8), *FB = calloc(n1 * n1, 8), *FC = calloc(n1 * n1, 8), *ft = calloc(n1, 8);
    double *GA = calloc(n1 * n1, 8), *GB = calloc(n1 * n1, 8), *GC = calloc(n1 * n1, 8);
    double *CA = calloc(n1 * n1, 8), *CB = calloc(n1 * n1, 8);
    mbs_test_random_state(rng, m, q, qd, qdd);
    for (int k = 0; k < nq; k++) ft[k] = mbs_rng_uniform(rng, -2, 2);
    for (int k = 0; k < nq; k++) { qd[k] = mbs_rng_uniform(rng, -2, 2); qdd[k] = mbs_rng_uniform(rng, -2, 2); }
    mbs_data *d = mbs_data_create(m, NULL);
    if (no_avx2) mbs_jac1_set_avx2(d, 0);
    if (mbs_rng_int(rng, 4)) {
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = qload[k] = mbs_rng_uniform(rng, -1, 1);
    }
    CHECK(mbs_jac1_usable(m, d), "fused path usable on %s", m->name);
    /* every error below as a fraction of its round-off bound: the recursions' (MBS_ROUNDOFF), plus
     * solving with M (2 n eps kappa(M)) for the forward-dynamics blocks */
    CHECK(mbs_mass_matrix(m, d, q, M0) == MBS_OK, "M");
    const double ro_id = MBS_ROUNDOFF(m->nb), ro_fd = ro_id + 2 * nq * MBS_EPS * mbs_test_cond_spd(M0, nq);
    CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, tau, A, B) == MBS_OK, "%s", mbs_data_error(d));
    CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, t0) == MBS_OK, "ID");
    worst[0] = fmax(worst[0], mbs_rel_err(tau, t0, nq) / ro_id);
    if (with_cs) {
        cs_ctx c;
        c.m = m;
        CHECK(mbs_ws_init_cs(&c.w, m) == 0, "ws");
        c.x = calloc((size_t)m->nx, sizeof(mreal));
        c.q = calloc(n1, sizeof(mreal)); c.qd = calloc(n1, sizeof(mreal)); c.qdd = calloc(n1, sizeof(mreal));
        c.out = calloc(n1, sizeof(mreal));
        c.qload = qload;
        cs_jacobians(&c, q, qd, qdd, R, S);
        worst[1] = fmax(worst[1], mbs_rel_err(A, R, nq * nq) / ro_id);
        worst[2] = fmax(worst[2], mbs_rel_err(B, S, nq * nq) / ro_id);
        worst[3] = fmax(worst[3], fmax(col_err(A, R, nq), col_err(B, S, nq)) / ro_id);
        /* forward dynamics derivatives (fused Jacobians, -M^-1 dtau/dx) */
        CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, ft, NULL, FA, FB, FC) == MBS_OK,
              "%s", mbs_data_error(d));
        cs_fd_jacobians(&c, q, qd, ft, CA, CB);
        worst[6] = fmax(worst[6], fmax(mbs_rel_err(FA, CA, nq * nq), mbs_rel_err(FB, CB, nq * nq)) / ro_fd);
        mbs_ws_free_cs(&c.w);
        free(c.x); free(c.q); free(c.qd); free(c.qdd); free(c.out);
    }
    /* the world-frame kernel it replaces (taken with a zero body load),
     * and the mass matrix */
    {
        const double z3[3] = { 0, 0, 0 };
        mbs_data_add_body_load(d, 1, z3, z3, z3);
        CHECK(!mbs_jac1_usable(m, d), "body load: world-frame path");
        CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, R, S) == MBS_OK, "%s", mbs_data_error(d));
        for (int alg = 0; alg < 2; alg++) {
            const mbs_fd_algorithm fa = alg ? MBS_FD_SEMI_RECURSIVE : MBS_FD_RECURSIVE;
            CHECK(mbs_forward_dynamics_derivatives(m, d, fa, q, qd, ft, NULL, GA, GB, GC) == MBS_OK, "FD world");
            if (with_cs && alg == 0)   /* the world-frame path's own distance to the complex step */
                worst[8] = fmax(worst[8], fmax(mbs_rel_err(GA, CA, nq * nq), mbs_rel_err(GB, CB, nq * nq)) / ro_fd);
            mbs_data_clear_loads(d);
            double *jl = mbs_data_joint_load(d);
            for (int k = 0; k < nq; k++) jl[k] = qload[k];
            CHECK(mbs_forward_dynamics_derivatives(m, d, fa, q, qd, ft, NULL, FA, FB, FC) == MBS_OK, "FD fused");
            worst[7] = fmax(worst[7], fmax(fmax(mbs_rel_err(FA, GA, nq * nq), mbs_rel_err(FB, GB, nq * nq)),
                                           mbs_rel_err(FC, GC, nq * nq)) / ro_fd);
            mbs_data_add_body_load(d, 1, z3, z3, z3);
        }
        mbs_data_clear_loads(d);
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = qload[k];
    }
    worst[4] = fmax(worst[4], fmax(mbs_rel_err(A, R, nq * nq), mbs_rel_err(B, S, nq * nq)) / ro_id);
    CHECK(mbs_jac1_id_jacobians(m, d, q, qd, qdd, NULL, NULL, NULL, M) == 0, "M only");
    worst[5] = fmax(worst[5], mbs_rel_err(M, M0, nq * nq) / ro_id);
    /* one Jacobian at a time: the same entries */
    CHECK(mbs_jac1_id_jacobians(m, d, q, qd, qdd, NULL, R, NULL, NULL) == 0, "dq only");
    CHECK(mbs_jac1_id_jacobians(m, d, q, qd, qdd, NULL, NULL, S, NULL) == 0, "dqd only");
    /* (the paired loops may run with fused multiply-adds: equal to round-off) */
    CHECK(mbs_rel_err(R, A, nq * nq) <= ro_id && mbs_rel_err(S, B, nq * nq) <= ro_id, "single-Jacobian calls differ");
    for (int r = 0; r < nq; r++)
        for (int k = 0; k < nq; k++)
            if (!related(m, coord_body(m, r), coord_body(m, k)) && (A[r * nq + k] != 0 || B[r * nq + k] != 0))
                (*zeros_bad)++;
    mbs_data_free(d);
    free(q); free(qd); free(qdd); free(tau); free(t0); free(A); free(B); free(R); free(S);
    free(M); free(M0); free(qload); free(FA); free(FB); free(FC); free(ft); free(GA); free(GB); free(GC);
    free(CA); free(CB);
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 4242);
    const unsigned types = (1u << MBS_JOINT_FIXED) | (1u << MBS_JOINT_REVOLUTE) | (1u << MBS_JOINT_PRISMATIC);
    double worst[9] = { 0 };
    long zeros_bad = 0;
    int seen[3] = { 0 };
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 14), types);
        CHECK(m != NULL, "tree");
        if (!m) continue;
        for (int i = 1; i <= m->nb; i++) seen[m->joint[i].type == MBS_JOINT_FIXED ? 0 : m->joint[i].type == MBS_JOINT_REVOLUTE ? 1 : 2]++;
        compare(m, &rng, worst, &zeros_bad, 1, tree % 2);
        mbs_model_free(m);
    }
    printf("joints: %d fixed, %d revolute, %d prismatic\n", seen[0], seen[1], seen[2]);
    printf("worst relative error, as a fraction of its round-off bound: tau %.3f, dtau/dq vs cs %.3f, dtau/dqd vs "
           "cs %.3f, per column %.3f, vs world-frame kernel %.3f, M %.3f; structural zeros violated: %ld\n",
           worst[0], worst[1], worst[2], worst[3], worst[4], worst[5], zeros_bad);
    printf("FD derivatives: dqdd/dq, dqdd/dqd vs complex step %.3f; all three blocks vs the world-frame path "
           "(fr and semi) %.3f (of their bounds)\n", worst[6], worst[7]);
    CHECK(seen[0] > 100 && seen[1] > 100 && seen[2] > 100, "joint kinds covered");
    for (int k = 0; k < 8; k++) CHECK(worst[k] <= 1, "comparison %d at %g of its round-off bound", k, worst[k]);
    CHECK(zeros_bad == 0, "%ld entries between independent branches not exactly zero", zeros_bad);

    /* a 40-link revolute chain 1000 m from the origin, and the human model */
    {
        double w1[9] = { 0 };
        long zb = 0;
        mbs_error err;
        char *js = mbs_generate_chain_json(40, MBS_JOINT_REVOLUTE, 0, &err);
        CHECK(js != NULL, "chain json");
        /* move the base: the first coordinate of the first joint's
         * parent point (in the ground) 0.0 -> 1000.0 */
        char *far = js ? malloc(strlen(js) + 16) : NULL;
        const char *pp = js ? strstr(js, "\"parent_point\"") : NULL, *z = pp ? strstr(pp, "0.0") : NULL;
        CHECK(far && z, "chain json layout");
        mbs_model *m = NULL, *m0 = js ? mbs_model_load_string(js, "chain40", &err) : NULL;
        if (far && z) {
            const size_t pre = (size_t)(z - js);
            memcpy(far, js, pre);
            strcpy(far + pre, "1000.0");
            strcat(far, z + 3);
            m = mbs_model_load_string(far, "chain40far", &err);
        }
        free(js);
        free(far);
        CHECK(m != NULL && m0 != NULL, "chain");
        if (m && m0) {
            /* translation invariance: the same Jacobians as at the origin
             * (the kernel works about the mass centre), per column */
            const int nq = m->nq;
            double *q = calloc((size_t)nq, 8), *qd = calloc((size_t)nq, 8), *qdd = calloc((size_t)nq, 8);
            double *A = calloc((size_t)nq * nq, 8), *B = calloc((size_t)nq * nq, 8);
            double *A0 = calloc((size_t)nq * nq, 8), *B0 = calloc((size_t)nq * nq, 8);
            mbs_test_random_state(&rng, m, q, qd, qdd);
            mbs_data *d = mbs_data_create(m, NULL), *d0 = mbs_data_create(m0, NULL);
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B) == MBS_OK, "far");
            CHECK(mbs_inverse_dynamics_derivatives(m0, d0, q, qd, qdd, NULL, A0, B0) == MBS_OK, "origin");
            const double ea = col_err(A, A0, nq), eb = col_err(B, B0, nq);
            printf("chain 40, 1 km from the origin against at the origin, per column: dtau/dq %.2e, dtau/dqd %.2e\n",
                   ea, eb);
            CHECK(ea <= MBS_ROUNDOFF(nq) && eb <= MBS_ROUNDOFF(nq), "translation invariance %g %g", ea, eb);
            mbs_data_free(d); mbs_data_free(d0);
            free(q); free(qd); free(qdd); free(A); free(B); free(A0); free(B0);
            /* against the complex step of the global-axes kernels, which
             * work 1 km from the origin (matrix-wise, as for the far chain
             * of test_derivatives_fast; per column printed) */
            compare(m, &rng, w1, &zb, 1, 0);
            printf("chain 40 far (fractions of the round-off bounds): tau %.3f, dq %.3f, dqd %.3f, per column %.3f, "
                   "vs world-frame %.3f, M %.3f\n", w1[0], w1[1], w1[2], w1[3], w1[4], w1[5]);
            CHECK(w1[1] <= 1 && w1[2] <= 1 && w1[4] <= 1 && w1[5] <= 1, "chain 40");
        }
        mbs_model_free(m);
        mbs_model_free(m0);
        mbs_model *hm = mbs_model_load(mbs_test_path("models/human43.json"), &err);
        CHECK(hm != NULL, "human43: %s", err.msg);
        if (hm) {
            double w2[9] = { 0 };
            compare(hm, &rng, w2, &zb, 1, 0);
            compare(hm, &rng, w2, &zb, 1, 1);
            printf("human43 (fractions of the round-off bounds): tau %.3f, dq %.3f, dqd %.3f, per column %.3f, vs "
                   "world-frame %.3f, M %.3f, FD vs cs %.3f, FD vs world-frame %.3f\n", w2[0], w2[1], w2[2], w2[3],
                   w2[4], w2[5], w2[6], w2[7]);
            CHECK(w2[1] <= 1 && w2[2] <= 1 && w2[3] <= 1 && w2[4] <= 1 && w2[5] <= 1, "human");
            /* FD blocks: M of the human is ill-conditioned (massless D-H frames): its condition number
             * enters their bound; the world-frame path's own distance is printed */
            printf("human43 FD vs complex step (of the bound): fused %.3f, world-frame path %.3f\n", w2[6], w2[8]);
            CHECK(w2[6] <= 1 && w2[7] <= 1 && w2[8] <= 1, "human FD %g (world-frame %g), %g", w2[6], w2[8], w2[7]);
            CHECK(zb == 0, "human zeros");
            /* not taken: a body load, another model's data */
            mbs_data *d = mbs_data_create(hm, NULL);
            const double pt[3] = { 0, 0, 0 }, f[3] = { 1, 0, 0 }, n[3] = { 0, 0, 0 };
            mbs_data_add_body_load(d, 5, pt, f, n);
            CHECK(!mbs_jac1_usable(hm, d), "body load: generic path");
            mbs_data_clear_loads(d);
            CHECK(mbs_jac1_usable(hm, d), "loads cleared: fused path");
            mbs_model *other = mbs_test_random_tree(&rng, 3, types);
            CHECK(other && !mbs_jac1_usable(other, d), "another model's data");
            mbs_model_free(other);
            /* overflow: reported, never a silent non-finite value */
            const int nq = hm->nq;
            double *q = calloc((size_t)nq, 8), *qd = calloc((size_t)nq, 8), *A = calloc((size_t)nq * nq, 8);
            for (int k = 0; k < nq; k++) qd[k] = 1e300;
            const int rc = mbs_inverse_dynamics_derivatives(hm, d, q, qd, NULL, NULL, A, NULL);
            CHECK(rc == MBS_ERR_NUMERIC, "overflow: rc %d", rc);
            CHECK(strstr(mbs_data_error(d), "is not finite") != NULL, "message: %s", mbs_data_error(d));
            free(q); free(qd); free(A);
            mbs_data_free(d);
            mbs_model_free(hm);
        }
        /* a spherical joint: not this path */
        mbs_model *sm = mbs_test_random_tree(&rng, 4, 1u << MBS_JOINT_SPHERICAL);
        if (sm) {
            mbs_data *d = mbs_data_create(sm, NULL);
            CHECK(!mbs_jac1_usable(sm, d), "spherical: generic path");
            mbs_data_free(d);
            mbs_model_free(sm);
        }
    }
    return mbs_test_summary("derivatives_local");
}
