/*
 * test_index1_prescribed.c - the index-1 formulation with coordinate
 * drivers only: the driven coordinates as prescribed motions of the
 * articulated-body pass (hybrid dynamics, src/formulations/index1.c)
 * against the general route through Y = M'^-1 Phi_q^T and the multipliers'
 * least squares, on random trees of every joint type with drivers on
 * random coordinates (some under joint springs and joint forces), at
 * random states and times, with and without Baumgarte stabilization.
 *
 * Both routes solve the same linear system
 *     K [qdd; lambda] = [Q; gamma],   K = [M' Phi_q^T; Phi_q 0],
 * each with a backward error of the order of the unit round-off eps times
 * the size of the system, so their solutions x differ by at most about
 *     |x_h - x_y|_2 <= c (n + nr) eps cond_2(K) |x|_2
 * (first-order perturbation of a linear system); the test computes
 * cond_2(K) from the singular values of K (M' from the composite-inertia
 * mass matrix completed for the Euler parameters) and takes c = 4 (two
 * solvers, each within 2 (n + nr) eps). Also: the driven accelerations of the hybrid route are
 * the laws' exactly, and the route is taken only where it applies.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "mbs_testing.h"
#include "testutil.h"
#include "random_model.h"
#include "random_loops.h"

#define NMODELS 40

/* cond_2 of K = [M' Phi^T; Phi 0] (Phi: nr unit rows at the driven
 * velocities, M' = M + sum_k P_k P_k^T the mass matrix completed along
 * each Euler-parameter block p_k, docs/formulations.md) at q; -1 on
 * failure. Uses its own data (the form's keeps the last evaluation). */
static double kkt_condition(mbs_form *f, const double *q)
{
    const mbs_model *m = f->m;
    const int n = m->nv, nr = f->nr, nk = n + nr;
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    double *M = calloc((size_t)n * n, sizeof(double)), *K = calloc((size_t)nk * nk, sizeof(double));
    double *sv = calloc((size_t)nk, sizeof(double)), *sup = calloc((size_t)nk, sizeof(double));
    double cond = -1;
    if (!d || !M || !K || !sv || !sup || mbs_mass_matrix(m, d, q, M) != MBS_OK) goto out;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const double *p = q + jt->qoff + jt->euler;
        const int v = jt->voff + jt->euler;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) M[(size_t)(v + r) * n + v + c] += p[r] * p[c];
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) K[(size_t)j * nk + i] = M[(size_t)i * n + j];
    for (int k = 0; k < nr; k++) {
        const int v = f->drv_v[k];
        K[(size_t)v * nk + n + k] = 1;        /* Phi */
        K[(size_t)(n + k) * nk + v] = 1;      /* Phi^T */
    }
    if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', nk, nk, K, nk, sv, NULL, 1, NULL, 1, sup) == 0 &&
        sv[nk - 1] > 0)
        cond = sv[0] / sv[nk - 1];
out:
    free(M); free(K); free(sv); free(sup);
    mbs_data_free(d);
    return cond;
}

/* One random driven tree: both routes at a few random states. */
static void compare_routes(mbs_rng *r, int it, double *worst)
{
    const int nb = 2 + mbs_rng_int(r, 9), ndriver = 1 + mbs_rng_int(r, 4);
    mbs_model *m = mbs_test_random_tree_driven(r, nb, 0, ndriver);
    CHECK(m != NULL, "random driven tree %d", it);
    if (!m) return;
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    mbs_sim_options o = mbs_model_sim_options(m);
    o.loop = MBS_LOOP_INDEX1;
    o.formulation = MBS_FD_RECURSIVE;
    o.baumgarte = it % 2;
    o.omega = 10;
    o.xi = 1;
    mbs_form *f = d ? mbs_form_create(m, d, &o, &err) : NULL;
    CHECK(f != NULL && f->prescribed == 1 && f->nr == m->con.ndriver, "tree %d: the prescribed route applies", it);
    const int n = m->nv, nq = m->nq;
    double *q = calloc((size_t)nq, sizeof(double)), *qd = calloc((size_t)n, sizeof(double));
    double *ah = calloc((size_t)n, sizeof(double)), *ay = calloc((size_t)n, sizeof(double));
    double *lh = calloc((size_t)f->nc + 1, sizeof(double)), *ly = calloc((size_t)f->nc + 1, sizeof(double));
    char msg[MBS_ERROR_MSG_LEN];
    for (int s = 0; f && f->prescribed && s < 3; s++) {
        mbs_test_random_state(r, m, q, qd, NULL);
        const double t = mbs_rng_uniform(r, 0, 2);
        f->prescribed = 1;
        int rc = mbs_form_index1_accel(f, t, q, qd, ah, msg, sizeof msg);
        CHECK(rc == MBS_OK, "tree %d: hybrid route: %s", it, msg);
        memcpy(lh, f->step.lambda, sizeof(double) * (size_t)f->nc);
        /* the driven accelerations are the laws' (with Baumgarte's terms) */
        for (int k = 0; k < m->con.ndriver; k++) {
            double fv, fd, fdd;
            mbs_driver_law(m, &m->con.driver[k], m->x, t, &fv, &fd, &fdd);
            const int v = f->drv_v[k];
            double a = fdd;
            if (o.baumgarte) a -= 2 * o.omega * o.xi * (qd[v] - fd) + o.omega * o.omega * (q[m->con.driver[k].coord] - fv);
            CHECK(ah[v] == a, "tree %d: driven acceleration %g, law %g", it, ah[v], a);
        }
        f->prescribed = 0;
        rc = mbs_form_index1_accel(f, t, q, qd, ay, msg, sizeof msg);
        f->prescribed = 1;
        CHECK(rc == MBS_OK, "tree %d: Y route: %s", it, msg);
        memcpy(ly, f->step.lambda, sizeof(double) * (size_t)f->nc);
        const double cond = kkt_condition(f, q);
        CHECK(cond > 0, "tree %d: condition of the KKT matrix", it);
        double dx = 0, x = 0;
        for (int i = 0; i < n; i++) { dx += (ah[i] - ay[i]) * (ah[i] - ay[i]); x += ay[i] * ay[i]; }
        for (int k = 0; k < f->nr; k++) { dx += (lh[k] - ly[k]) * (lh[k] - ly[k]); x += ly[k] * ly[k]; }
        dx = sqrt(dx);
        x = sqrt(x);
        const double unit = (n + f->nr) * DBL_EPSILON * cond * x, tol = 4 * unit;
        CHECK(dx <= tol, "tree %d (%d bodies, %d drivers), state %d: |x_h - x_y| = %.3e > %.3e (cond %.3e, |x| %.3e)",
              it, nb, f->nr, s, dx, tol, cond, x);
        if (unit > 0 && dx / unit > *worst) *worst = dx / unit;
    }
    free(q); free(qd); free(ah); free(ay); free(lh); free(ly);
    mbs_form_free(f);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* The route is not taken where it does not apply: closed loops, the
 * semi-recursive forward dynamics. */
static void route_scope(mbs_rng *r)
{
    mbs_error err;
    int types[1] = { MBS_JOINT_REVOLUTE };
    double *qc = NULL;
    mbs_model *m = mbs_test_random_loops(r, 4, 1, types, 1, &qc);
    CHECK(m != NULL, "random loop model");
    mbs_data *d = m ? mbs_data_create(m, &err) : NULL;
    mbs_sim_options o = m ? mbs_model_sim_options(m) : (mbs_sim_options){ 0 };
    o.loop = MBS_LOOP_INDEX1;
    o.formulation = MBS_FD_RECURSIVE;
    mbs_form *f = d ? mbs_form_create(m, d, &o, &err) : NULL;
    CHECK(f != NULL && f->prescribed == 0, "closed loops: the Y route");
    mbs_form_free(f);
    mbs_data_free(d);
    mbs_model_free(m);
    free(qc);
    m = mbs_test_random_tree_driven(r, 5, 0, 2);
    d = m ? mbs_data_create(m, &err) : NULL;
    o = m ? mbs_model_sim_options(m) : o;
    o.loop = MBS_LOOP_INDEX1;
    o.formulation = MBS_FD_SEMI_RECURSIVE;
    f = d ? mbs_form_create(m, d, &o, &err) : NULL;
    CHECK(f != NULL && f->prescribed == 0, "semi-recursive forward dynamics: the Y route");
    mbs_form_free(f);
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 1919);
    double worst = 0;
    for (int it = 0; it < NMODELS; it++) compare_routes(&rng, it, &worst);
    printf("hybrid vs Y route over %d random driven trees: largest |x_h - x_y| / ((n + nr) eps cond(K) |x|) = %.3g "
           "(bound 4)\n", NMODELS, worst);
    route_scope(&rng);
    return mbs_test_summary("index1_prescribed");
}
