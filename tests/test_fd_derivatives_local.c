/*
 * test_fd_derivatives_local.c - the forward-dynamics derivatives on trees of
 * revolute, prismatic and fixed joints (src/dynamics/fd_derivatives.c,
 * fd_derivatives_local; src/kernels/jacobians_1dof.c): the fully recursive
 * algorithm (qdd from the articulated bodies, then the fused pass) and the
 * semi-recursive one (no forward-dynamics pass: the pass at qdd = 0 for M
 * and the bias, qdd from the factor of M, the pass moved to qdd), each with
 * the tree-sparse triangular solves (branched trees) or LAPACK and dgemm
 * (chain-like trees). On 120 random trees of 12-60 bodies and 60
 * generated revolute chains of 8-48 links (user joint loads on most;
 * AVX2/FMA loops off on every other model, where the processor has them):
 *   - fully recursive and semi-recursive dqdd/dq, dqdd/dqd and dqdd/dtau
 *     against the complex step of the articulated-body kernels, the
 *     semi-recursive qdd against the articulated bodies' (relative,
 *     matrix-wise): within the round-off of the recursions (MBS_ROUNDOFF
 *     of the tree) and of solving with M, 2 n eps times the condition
 *     number of M at the state (long chains: M ill-conditioned), per model;
 *     the world-frame path (taken
 *     with a zero body load: CRBA or ABA, Cholesky, the world-frame
 *     Jacobians) of the same algorithm too;
 *   - one output at a time gives the same entries (to the same bound: the
 *     products may be blocked otherwise);
 *   - both kinds of solve are exercised (the dense criterion of
 *     fd_derivatives.c, recomputed here);
 *   - overflow reported as MBS_ERR_NUMERIC, for both algorithms.
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

#define NTREES 180
static const double H = 1e-30;

/* complex-step Jacobians of the articulated-body FD w.r.t. q, qd and tau
 * (joint loads, no body loads) */
static void cs_fd(const mbs_model *m, const double *qload, const double *q, const double *qd,
                  const double *tau, double *Jq, double *Jqd, double *Jt)
{
    const int nq = m->nq;
    mbs_ws_cs w;
    CHECK(mbs_ws_init_cs(&w, m) == 0, "ws");
    mreal *x = calloc((size_t)m->nx + 1, sizeof(mreal)), *qc = calloc((size_t)nq + 1, sizeof(mreal));
    mreal *qdc = calloc((size_t)nq + 1, sizeof(mreal)), *tc = calloc((size_t)nq + 1, sizeof(mreal));
    mreal *out = calloc((size_t)nq + 1, sizeof(mreal));
    for (int k = 0; k < m->nx; k++) x[k] = m->x[k];
    for (int dir = 0; dir < 3 * nq; dir++) {
        for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; tc[k] = tau[k]; }
        if (dir < nq) qc[dir] += I * H;
        else if (dir < 2 * nq) qdc[dir - nq] += I * H;
        else tc[dir - 2 * nq] += I * H;
        mbs_kin_forward_cs(m, x, &w, qc, qdc, NULL, 1);
        for (int k = 0; k < 15 * (m->nb + 1); k++) w.xfrc[k] = 0;
        for (int k = 0; k < nq; k++) w.qfrc[k] = qload[k];
        mbs_body_terms_cs(m, x, &w);
        mbs_aba_cs(m, &w, qc, qdc, tc, out);
        double *J = dir < nq ? Jq : dir < 2 * nq ? Jqd : Jt;
        const int col = dir % nq;
        for (int r = 0; r < nq; r++) J[r * nq + col] = cimag(out[r]) / H;
    }
    mbs_ws_free_cs(&w);
    free(x); free(qc); free(qdc); free(tc); free(out);
}

static double worst3(const double *a, const double *b, const double *c, const double *ra, const double *rb,
                     const double *rc, int n)
{
    return fmax(fmax(mbs_rel_err(a, ra, n), mbs_rel_err(b, rb, n)), mbs_rel_err(c, rc, n));
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 20261126);
    const unsigned types = (1u << MBS_JOINT_FIXED) | (1u << MBS_JOINT_REVOLUTE) | (1u << MBS_JOINT_PRISMATIC);
    double w_cs = 0, w_semi_world = 0, w_semi_fr = 0, w_qdd = 0, w_single = 0;
    double w_ratio = 0;   /* worst error / its round-off bound */
    int ndense = 0, nsparse = 0, nbig = 0, nabs = 0, nmodels = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = NULL;
        if (tree % 3 == 2) {
            /* a generated chain (spatial revolute joints): the dense branch */
            mbs_error err;
            char *js = mbs_generate_chain_json(8 + mbs_rng_int(&rng, 41), MBS_JOINT_REVOLUTE, 0, &err);
            CHECK(js != NULL, "chain json");
            if (js) m = mbs_model_load_string(js, "chain", &err);
            free(js);
        } else {
            m = mbs_test_random_tree(&rng, 12 + mbs_rng_int(&rng, 49), types);
        }
        CHECK(m != NULL, "tree");
        if (!m) continue;
        const int nq = m->nq;
        const size_t n1 = (size_t)nq + 1, nn = n1 * n1;
        if (nq == 0) { mbs_model_free(m); continue; }
        nmodels++;
        if (mbs_deriv_fd_inverse_dense(m)) ndense++; else nsparse++;
        if (nq >= 32) nbig++;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *tau = calloc(n1, 8), *qload = calloc(n1, 8);
        double *a = calloc(n1, 8), *a2 = calloc(n1, 8), *a3 = calloc(n1, 8), *a4 = calloc(n1, 8);
        double *A = calloc(nn, 8), *B = calloc(nn, 8), *C = calloc(nn, 8);
        double *A2 = calloc(nn, 8), *B2 = calloc(nn, 8), *C2 = calloc(nn, 8);
        double *A3 = calloc(nn, 8), *B3 = calloc(nn, 8), *C3 = calloc(nn, 8);   /* complex step */
        double *A4 = calloc(nn, 8), *B4 = calloc(nn, 8), *C4 = calloc(nn, 8);
        mbs_test_random_state(&rng, m, q, qd, NULL);
        for (int k = 0; k < nq; k++) { qd[k] = mbs_rng_uniform(&rng, -2, 2); tau[k] = mbs_rng_uniform(&rng, -2, 2); }
        mbs_data *d = mbs_data_create(m, NULL);
        if (tree % 2) mbs_jac1_set_avx2(d, 0);
        if (mbs_rng_int(&rng, 4)) {
            double *jl = mbs_data_joint_load(d);
            for (int k = 0; k < nq; k++) jl[k] = qload[k] = mbs_rng_uniform(&rng, -1, 1);
        }
        CHECK(mbs_jac1_usable(m, d), "fused path usable on %s", m->name);
        /* the round-off bound: the recursions' (MBS_ROUNDOFF) and solving with M, n eps kappa(M)
         * (the textbook forward error of a backward-stable solve), twice (both sides of a comparison) */
        CHECK(mbs_mass_matrix(m, d, q, A) == MBS_OK, "M");
        const double ro = MBS_ROUNDOFF(m->nb) + 2 * nq * MBS_EPS * mbs_test_cond_spd(A, nq);
        /* fully recursive against the complex step */
        CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, a, A, B, C) == MBS_OK, "%s",
              mbs_data_error(d));
        cs_fd(m, qload, q, qd, tau, A3, B3, C3);
        const double e_fr = worst3(A, B, C, A3, B3, C3, nq * nq);
        w_cs = fmax(w_cs, e_fr);
        /* semi-recursive: against the fully recursive results, its qdd
         * against the forward dynamics */
        CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, a2, A2, B2, C2) == MBS_OK,
              "%s", mbs_data_error(d));
        const double e_semi = worst3(A2, B2, C2, A3, B3, C3, nq * nq), e_semi_q = mbs_rel_err(a2, a, nq);
        w_semi_fr = fmax(w_semi_fr, fmax(worst3(A2, B2, C2, A, B, C, nq * nq), e_semi_q));
        CHECK(mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, a3) == MBS_OK, "FD semi");
        w_qdd = fmax(w_qdd, mbs_rel_err(a2, a3, nq));
        /* one output at a time */
        for (int alg = 0; alg < 2; alg++) {
            const mbs_fd_algorithm fa = alg ? MBS_FD_SEMI_RECURSIVE : MBS_FD_RECURSIVE;
            const double *RA = alg ? A2 : A, *RB = alg ? B2 : B, *RC = alg ? C2 : C;
            CHECK(mbs_forward_dynamics_derivatives(m, d, fa, q, qd, tau, NULL, A4, NULL, NULL) == MBS_OK, "A only");
            CHECK(mbs_forward_dynamics_derivatives(m, d, fa, q, qd, tau, NULL, NULL, B4, NULL) == MBS_OK, "B only");
            CHECK(mbs_forward_dynamics_derivatives(m, d, fa, q, qd, tau, a4, NULL, NULL, C4) == MBS_OK, "C only");
            w_single = fmax(w_single, fmax(worst3(A4, B4, C4, RA, RB, RC, nq * nq),
                                           mbs_rel_err(a4, alg ? a2 : a, nq)) / ro);
        }
        /* the world-frame path (zero body load) of both algorithms: the same bound */
        {
            const double z3[3] = { 0, 0, 0 };
            mbs_data_add_body_load(d, 1, z3, z3, z3);
            CHECK(!mbs_jac1_usable(m, d), "body load: world-frame path");
            CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, a4, A4, B4, C4) == MBS_OK,
                  "%s", mbs_data_error(d));
            const double g_fr = worst3(A4, B4, C4, A3, B3, C3, nq * nq);
            CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, a4, A4, B4, C4) == MBS_OK,
                  "%s", mbs_data_error(d));
            const double g_semi = worst3(A4, B4, C4, A3, B3, C3, nq * nq), g_semi_q = mbs_rel_err(a4, a, nq);
            w_semi_world = fmax(w_semi_world, fmax(worst3(A2, B2, C2, A4, B4, C4, nq * nq), mbs_rel_err(a2, a4, nq)));
            /* per model: within the round-off of solving with M */
            const double r = fmax(fmax(e_fr, e_semi), e_semi_q) / ro, rg = fmax(fmax(g_fr, g_semi), g_semi_q) / ro;
            CHECK(r <= 1 && rg <= 1, "%s (nq %d, bound %.2e): fr %.2e (world-frame %.2e), semi %.2e (%.2e), "
                  "semi qdd %.2e (%.2e)", m->name, nq, ro, e_fr, g_fr, e_semi, g_semi, e_semi_q, g_semi_q);
            w_ratio = fmax(w_ratio, fmax(r, rg));
            if (e_fr <= 1e-12 && e_semi <= 1e-12 && e_semi_q <= 1e-12) nabs++;
            mbs_data_clear_loads(d);
            double *jl = mbs_data_joint_load(d);
            for (int k = 0; k < nq; k++) jl[k] = qload[k];
        }
        /* overflow: reported, never a silent non-finite value */
        if (tree % 10 == 0) {
            for (int k = 0; k < nq; k++) a3[k] = 1e300;
            for (int alg = 0; alg < 2; alg++) {
                const int rc = mbs_forward_dynamics_derivatives(m, d, alg ? MBS_FD_SEMI_RECURSIVE : MBS_FD_RECURSIVE,
                                                                q, a3, tau, NULL, A3, B3, C3);
                CHECK(rc == MBS_ERR_NUMERIC, "overflow (%s): rc %d", alg ? "semi" : "fr", rc);
            }
        }
        mbs_data_free(d);
        free(q); free(qd); free(tau); free(qload); free(a); free(a2); free(a3); free(a4);
        free(A); free(B); free(C); free(A2); free(B2); free(C2); free(A3); free(B3); free(C3);
        free(A4); free(B4); free(C4);
        mbs_model_free(m);
    }
    printf("trees: %d with the tree-sparse solves, %d with LAPACK (chain-like), %d with nq >= 32\n", nsparse,
           ndense, nbig);
    printf("worst relative error against the complex step: fr %.2e, semi (fused) %.2e of fr; qdd semi vs FD semi "
           "%.2e; semi vs the world-frame semi %.2e; one output at a time %.2e of the bound\n", w_cs, w_semi_fr, w_qdd,
           w_semi_world, w_single);
    printf("models within 1e-12 of the complex step (fr, semi, semi qdd): %d of %d; worst error / its round-off "
           "bound %.3f\n", nabs, nmodels, w_ratio);
    CHECK(nsparse >= 20 && ndense >= 20 && nbig >= 20, "paths covered: %d sparse, %d dense, %d large", nsparse,
          ndense, nbig);
    CHECK(w_single <= 1, "one output at a time: %g of the round-off bound", w_single);
    return mbs_test_summary("fd_derivatives_local");
}
