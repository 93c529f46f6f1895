/*
 * test_derivatives_sparse.c - the derivative patterns and the derivatives
 * in pattern order (mbsens/sparse.h) against the dense functions:
 * random trees of every joint type (forests: a joint's parent is drawn
 * among the ground and the earlier bodies), the same with spring-dampers
 * and body loads between bodies of different subtrees, and a robot
 * (human43) plus N = 10 and 100 free bodies.
 *
 * What is asserted, and why each bound holds:
 *  - every dense entry outside the pattern is exactly 0 (the pattern is
 *    structural: the kernels never write there);
 *  - inverse dynamics: sparse = dense at every pattern position, exactly
 *    (==): the sparse function runs the dense one's operations in the same
 *    order on those entries. The dense data gets a zero body load, which
 *    routes the 1-DOF trees to the all-columns kernel the sparse function
 *    uses (the fused pass of jacobians_1dof.c is another order of the
 *    same sums);
 *  - forward dynamics: the right-hand sides are the same numbers; the
 *    dense code solves with LAPACK or the tree factor L^T L on nv x nv
 *    arrays, the sparse one with the per-subtree inverse from L^T D L. Both
 *    are backward-stable solves, so each is within 2 nv eps kappa(M') of
 *    the exact product (relative, norm-wise; Higham, Thm 10.4 and 7.2), and
 *    they differ by at most twice that, plus the round-off of the shared
 *    ID Jacobians (MBS_ROUNDOFF, testutil.h). kappa from mbs_test_cond_spd
 *    on M' = M + sum p p^T, formed here from mbs_mass_matrix;
 *  - no allocation in the sparse calls (alloc_count.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "mbs_testing.h"
#include "random_model.h"
#include "testutil.h"

static long allocs;
static double worst_fd;

/* M' of the model at q (dense, row-major): M plus p p^T on each Euler quadruple */
static void completed_mass(const mbs_model *m, mbs_data *d, const double *q, double *M)
{
    const int nv = mbs_model_nv(m);
    CHECK(mbs_mass_matrix(m, d, q, M) == MBS_OK, "M: %s", mbs_data_error(d));
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler, eq = jt->qoff + jt->euler;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) M[(size_t)(e + r) * nv + e + c] += q[eq + r] * q[eq + c];
    }
}

/* 1 if (r, c) is in the pattern */
static int in_pattern(const int *ptr, const int *ind, int r, int c)
{
    for (int p = ptr[c]; p < ptr[c + 1]; p++)
        if (ind[p] == r) return 1;
    return 0;
}

/* dense entries outside the pattern are 0; sparse = dense on it (exact
 * when tol < 0, else relative to the dense array's largest entry);
 * returns the relative difference */
static double compare(const int *ptr, const int *ind, int nv, const double *sp, const double *D, double tol,
                      const char *what)
{
    int outside = 0, differ = 0;
    double dmax = 0, emax = 0;
    char *in = calloc((size_t)nv * nv + 1, 1);
    for (int c = 0; c < nv; c++)
        for (int p = ptr[c]; p < ptr[c + 1]; p++) {
            const int r = ind[p];
            in[(size_t)r * nv + c] = 1;
            if (sp[p] != D[(size_t)r * nv + c]) differ++;
            emax = fmax(emax, fabs(sp[p] - D[(size_t)r * nv + c]));
        }
    for (size_t k = 0; k < (size_t)nv * nv; k++) {
        if (!in[k] && D[k] != 0) outside++;
        dmax = fmax(dmax, fabs(D[k]));
    }
    free(in);
    CHECK(outside == 0, "%s: %d dense entries outside the pattern are not 0", what, outside);
    if (tol < 0) CHECK(differ == 0, "%s: %d entries differ from the dense ones (largest %g)", what, differ, emax);
    const double rel = dmax > 0 ? emax / dmax : emax;
    if (tol >= 0) CHECK(rel <= tol, "%s: relative difference %g > %g", what, rel, tol);
    return rel;
}

static void check_model(const mbs_model *m, mbs_rng *rng, const char *what)
{
    mbs_error err;
    const int nv = mbs_model_nv(m), nq = mbs_model_nq(m);
    const size_t n1 = (size_t)nv + 1, nn = n1 * n1;
    const int nid = mbs_sparsity_nnz(m, MBS_SPARSITY_ID), nfd = mbs_sparsity_nnz(m, MBS_SPARSITY_FD);
    CHECK(nid >= nv && nfd >= nv, "%s: nnz %d %d", what, nid, nfd);
    int *ip = malloc(sizeof(int) * n1), *ii = malloc(sizeof(int) * ((size_t)nid + 1));
    int *fp = malloc(sizeof(int) * n1), *fi = malloc(sizeof(int) * ((size_t)nfd + 1));
    CHECK(mbs_sparsity_pattern(m, MBS_SPARSITY_ID, ip, ii, &err) == MBS_OK, "%s", err.msg);
    CHECK(mbs_sparsity_pattern(m, MBS_SPARSITY_FD, fp, fi, &err) == MBS_OK, "%s", err.msg);
    for (int c = 0; c < nv; c++) {   /* sorted rows, the diagonal present */
        for (int p = ip[c] + 1; p < ip[c + 1]; p++) CHECK(ii[p - 1] < ii[p], "%s: ID rows unsorted", what);
        for (int p = fp[c] + 1; p < fp[c + 1]; p++) CHECK(fi[p - 1] < fi[p], "%s: FD rows unsorted", what);
        CHECK(in_pattern(ip, ii, c, c) && in_pattern(fp, fi, c, c), "%s: diagonal %d", what, c);
    }
    double *q = calloc((size_t)nq + 1, 8), *v = calloc(n1, 8), *vd = calloc(n1, 8), *tau = calloc(n1, 8);
    double *A = calloc(nn, 8), *B = calloc(nn, 8), *C = calloc(nn, 8), *M = calloc(nn, 8);
    double *sa = calloc((size_t)(nid > nfd ? nid : nfd) + 1, 8), *sb = calloc((size_t)(nid > nfd ? nid : nfd) + 1, 8);
    double *sc = calloc((size_t)nfd + 1, 8), *t1 = calloc(n1, 8), *t2 = calloc(n1, 8);
    mbs_test_random_state(rng, m, q, v, vd);
    for (int k = 0; k < nv; k++) tau[k] = mbs_rng_uniform(rng, -2, 2);
    mbs_data *dd = mbs_data_create(m, NULL), *ds = mbs_data_create(m, NULL);
    const double zero[3] = { 0, 0, 0 };
    if (m->nb > 0) mbs_data_add_body_load(dd, 1, NULL, zero, NULL);
    /* inverse dynamics */
    CHECK(mbs_inverse_dynamics_derivatives(m, dd, q, v, vd, t1, A, B) == MBS_OK, "%s", mbs_data_error(dd));
    mbs_alloc_counting = 1;
    const long a0 = mbs_alloc_count;
    CHECK(mbs_inverse_dynamics_derivatives_sparse(m, ds, q, v, vd, t2, sa, sb) == MBS_OK, "%s", mbs_data_error(ds));
    allocs += mbs_alloc_count - a0;
    if (mbs_alloc_count - a0) fprintf(stderr, "ID: %ld allocations (%s)\n", mbs_alloc_count - a0, what);
    mbs_alloc_counting = 0;
    CHECK(memcmp(t1, t2, sizeof(double) * (size_t)nv) == 0, "%s: tau differs", what);
    compare(ip, ii, nv, sa, A, -1, what);
    compare(ip, ii, nv, sb, B, -1, what);
    /* Euler parameters off |p| = 1 by 1e-9 (within the state check): the
     * per-column sweeps instead of the all-columns kernel, in both */
    int euler = 0;
    for (int i = 1; i <= m->nb; i++)
        if (m->joint[i].euler >= 0) {
            euler = 1;
            for (int k = 0; k < 4; k++) q[m->joint[i].qoff + m->joint[i].euler + k] *= 1 + 1e-9;
        }
    if (euler) {
        CHECK(mbs_inverse_dynamics_derivatives(m, dd, q, v, vd, t1, A, B) == MBS_OK, "%s", mbs_data_error(dd));
        CHECK(mbs_inverse_dynamics_derivatives_sparse(m, ds, q, v, vd, t2, sa, sb) == MBS_OK, "%s",
              mbs_data_error(ds));
        compare(ip, ii, nv, sa, A, -1, what);
        compare(ip, ii, nv, sb, B, -1, what);
        for (int i = 1; i <= m->nb; i++)
            if (m->joint[i].euler >= 0)
                for (int k = 0; k < 4; k++) q[m->joint[i].qoff + m->joint[i].euler + k] /= 1 + 1e-9;
    }
    /* forward dynamics, both algorithms */
    completed_mass(m, dd, q, M);
    const double tol = 2 * (MBS_ROUNDOFF(m->nb) + 2.0 * nv * MBS_EPS * mbs_test_cond_spd(M, nv));
    for (int alg = 0; alg < 2; alg++) {
        const mbs_fd_algorithm fa = alg ? MBS_FD_SEMI_RECURSIVE : MBS_FD_RECURSIVE;
        CHECK(mbs_forward_dynamics_derivatives(m, dd, fa, q, v, tau, t1, A, B, C) == MBS_OK, "%s", mbs_data_error(dd));
        mbs_alloc_counting = 1;
        const long a1 = mbs_alloc_count;
        CHECK(mbs_forward_dynamics_derivatives_sparse(m, ds, fa, q, v, tau, t2, sa, sb, sc) == MBS_OK, "%s",
              mbs_data_error(ds));
        allocs += mbs_alloc_count - a1;
        if (mbs_alloc_count - a1) fprintf(stderr, "FD alg %d: %ld allocations (%s)\n", alg, mbs_alloc_count - a1, what);
        mbs_alloc_counting = 0;
        CHECK(mbs_rel_err(t2, t1, nv) <= tol, "%s: vd %g", what, mbs_rel_err(t2, t1, nv));
        worst_fd = fmax(worst_fd, compare(fp, fi, nv, sa, A, tol, what) / tol);
        worst_fd = fmax(worst_fd, compare(fp, fi, nv, sb, B, tol, what) / tol);
        worst_fd = fmax(worst_fd, compare(fp, fi, nv, sc, C, tol, what) / tol);
    }
    mbs_data_free(dd);
    mbs_data_free(ds);
    free(ip); free(ii); free(fp); free(fi); free(q); free(v); free(vd); free(tau);
    free(A); free(B); free(C); free(M); free(sa); free(sb); free(sc); free(t1); free(t2);
}

/* a random forest with spring-dampers and body loads between random
 * bodies: elements appended to the JSON text of a random tree */
static mbs_model *forest_with_elements(mbs_rng *r, int nb)
{
    mbs_error err;
    mbs_model *t = mbs_test_random_tree(r, nb, 0);
    if (!t) return NULL;
    char *json = mbs_model_to_json(t, &err);
    CHECK(json != NULL, "to json: %s", err.msg);
    const size_t len = json ? strlen(json) : 0;
    char *text = malloc(len + 4096), *at = text;
    if (!json || !text) { free(json); free(text); mbs_model_free(t); return NULL; }
    memcpy(text, json, len);
    at = text + len;
    while (at > text && at[-1] != '}') at--;
    at--;   /* the closing brace of the model */
    at += sprintf(at, ", \"forces\": [");
    const int ne = 1 + mbs_rng_int(r, 3);
    for (int el = 0; el < ne; el++) {
        const int b1 = 1 + mbs_rng_int(r, nb), b2 = 1 + mbs_rng_int(r, nb);
        if (el % 2 == 0 && b1 != b2)
            at += sprintf(at, "%s{\"name\": \"fe%d\", \"type\": \"spring_damper\", \"body1\": \"%s\", "
                          "\"point1\": [0.1, 0, 0], \"body2\": \"%s\", \"point2\": [0, 0.2, 0.1], "
                          "\"stiffness\": %.3f, \"damping\": %.3f, \"length\": 0.4}", el ? ", " : "", el,
                          mbs_body_name(t, b1), mbs_body_name(t, b2), mbs_rng_uniform(r, 1, 40), mbs_rng_uniform(r, 0, 3));
        else
            at += sprintf(at, "%s{\"name\": \"fe%d\", \"type\": \"body_load\", \"body\": \"%s\", "
                          "\"force\": [0.5, -1, 2], \"torque\": [0.1, 0.2, -0.3], \"axes\": \"body\"}",
                          el ? ", " : "", el, mbs_body_name(t, b1));
    }
    sprintf(at, "]}");
    mbs_model *m = mbs_model_load_string(text, "forest", &err);
    CHECK(m != NULL, "forest with elements: %s", m ? "" : err.msg);
    free(json);
    free(text);
    mbs_model_free(t);
    return m;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2111);
    for (int tree = 0; tree < 60; tree++) {
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 10), 0);
        CHECK(m != NULL, "random tree");
        if (!m) continue;
        check_model(m, &rng, "random tree");
        mbs_model_free(m);
    }
    for (int tree = 0; tree < 40; tree++) {
        mbs_model *m = forest_with_elements(&rng, 2 + mbs_rng_int(&rng, 8));
        if (!m) continue;
        check_model(m, &rng, "forest with elements");
        mbs_model_free(m);
    }
    mbs_error err;
    mbs_model *robot = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(robot != NULL, "human43: %s", err.msg);
    for (int n = 10; robot && n <= 100; n *= 10) {
        char *text = mbs_generate_free_bodies_json(robot, n, &err);
        mbs_model *m = text ? mbs_model_load_string(text, "free bodies", &err) : NULL;
        free(text);
        CHECK(m != NULL, "human43 + %d: %s", n, err.msg);
        if (!m) continue;
        /* one FD block per free body, the robot's own */
        const int nb1 = (mbs_model_nv(m) - mbs_model_nv(robot)) / n;   /* a free body's velocities */
        CHECK(mbs_sparsity_nnz(m, MBS_SPARSITY_FD) == mbs_sparsity_nnz(robot, MBS_SPARSITY_FD) + nb1 * nb1 * n,
              "human43 + %d: FD nnz %d", n, mbs_sparsity_nnz(m, MBS_SPARSITY_FD));
        check_model(m, &rng, "human43 + free bodies");
        mbs_model_free(m);
    }
    mbs_model_free(robot);
    if (MBS_COUNT_ALLOC) CHECK(allocs == 0, "the sparse calls allocated %ld times", allocs);
    printf("forward dynamics: largest difference %.3g of its bound\n", worst_fd);
    return mbs_test_summary("test_derivatives_sparse");
}
