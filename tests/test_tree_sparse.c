/*
 * test_tree_sparse.c - the tree storage and its factorizations
 * (mbsens/sparse.h) against LAPACK's Cholesky: random trees, chains and
 * chains of 7 from the ground with random matrices of their pattern, mass matrices of random models and
 * of human43; the sparse mass matrix against the dense one (bit for bit);
 * the pattern itself, its errors and a failed factorization.
 *
 * Tolerance of every comparison (x from the tree factor, x' from LAPACK's
 * dpotrf + dpotrs, the same b). Each solve is backward stable (Higham,
 * Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm 10.4; the
 * tree forms are the same eliminations taken in another order, the LTDL
 * form with one division per row more): the computed x solves
 * (M + dM) x = b with |dM| <= gamma_{3n+2} |L^T| |D| |L| (D = I for the
 * Cholesky forms), gamma_k = k u / (1 - k u), u = DBL_EPSILON / 2, n the
 * longest sum of products, at most the size. |L^T||D||L| is positive
 * semidefinite with the diagonal of L^T D L = M, so its 2-norm is at most
 * its trace, trace(M). To first order ||x - x*|| / ||x*|| <= eta / (1 - eta)
 * with eta = cond(M) gamma_{3n+2} trace(M) / lambda_max(M) (x* exact), and
 * the two computed solutions differ by at most twice that:
 *
 *   tol = 2 eta / (1 - eta),  cond(M) = lambda_max / lambda_min from dsyev
 *
 * (dsyev's lambda_min carries an absolute error of a few n u lambda_max,
 * a relative one below 1e-7 at the largest cond(M) met here, 4.6e6). This is
 * cond(M) x n x eps times trace(M) / lambda_max(M) and a small constant.
 * The columns of a block of M^-1 are solves with b = e_j: the same bound per
 * column. The models with Euler parameters are left out: their M is
 * singular along p (the derivative code completes it first).
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "random_model.h"
#include "testutil.h"

#define NMAX 64

static double worst, cond_max;   /* the largest error / tol and cond(M) seen */

static double vnorm(const double *x, int n, int stride)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[(size_t)i * stride] * x[(size_t)i * stride];
    return sqrt(s);
}

static double vdiff(const double *x, const double *y, int n, int stride)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        const double t = x[(size_t)i * stride] - y[(size_t)i * stride];
        s += t * t;
    }
    return sqrt(s);
}

/* tol of the header for the dense symmetric M (n x n, row-major) */
static double tolerance(const double *M, int n)
{
    static double A[NMAX * NMAX], w[NMAX];
    memcpy(A, M, sizeof(double) * (size_t)n * n);
    CHECK(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'L', n, A, n, w) == 0, "dsyev");
    double tr = 0;
    for (int i = 0; i < n; i++) tr += M[i * n + i];
    const double u = DBL_EPSILON / 2, k = 3.0 * n + 2, gamma = k * u / (1 - k * u);
    const double eta = w[n - 1] / w[0] * gamma * tr / w[n - 1];
    cond_max = fmax(cond_max, w[n - 1] / w[0]);
    CHECK(w[0] > 0 && eta < 0.5, "the bound applies: lambda_min %g, eta %g", w[0], eta);
    return 2 * eta / (1 - eta);
}

/* Factor the tree-stored M both ways, solve, invert each ground block and
 * compare with LAPACK on its dense copy M (n x n). */
static void compare(const mbs_tree_pattern *p, const double *M, mbs_rng *r, const char *what)
{
    const int n = p->n;
    static double C[NMAX * NMAX], X[NMAX * NMAX], Y[NMAX * NMAX], b[NMAX], x1[NMAX], x2[NMAX];
    double *v1 = malloc(sizeof(double) * (size_t)p->nnz), *v2 = malloc(sizeof(double) * (size_t)p->nnz);
    const double tol = tolerance(M, n);
    mbs_error err;
    mbs_tree_from_dense(p, M, n, v1);
    mbs_tree_to_dense(p, v1, C, n);
    CHECK(memcmp(C, M, sizeof(double) * (size_t)n * n) == 0, "%s: to_dense(from_dense(M)) == M", what);
    memcpy(v2, v1, sizeof(double) * (size_t)p->nnz);
    CHECK(mbs_tree_factor_ltdl(p, v1, &err) == MBS_OK, "%s: ltdl", what);
    CHECK(mbs_tree_factor_ltl(p, v2, &err) == MBS_OK, "%s: ltl", what);
    memcpy(C, M, sizeof(double) * (size_t)n * n);
    CHECK(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, C, n) == 0, "%s: dpotrf", what);
    for (int i = 0; i < n; i++) b[i] = x1[i] = x2[i] = mbs_rng_uniform(r, -1, 1);
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, 1, C, n, b, 1);
    mbs_tree_solve_ltdl(p, v1, x1);
    mbs_tree_solve_ltl(p, v2, x2);
    const double e1 = vdiff(x1, b, n, 1) / vnorm(b, n, 1), e2 = vdiff(x2, b, n, 1) / vnorm(b, n, 1);
    CHECK(e1 <= tol && e2 <= tol, "%s: solves ltdl %g, ltl %g, tol %g", what, e1, e2, tol);
    worst = fmax(worst, fmax(e1, e2) / tol);
    /* M^-1 by LAPACK: dpotrs on the identity */
    for (int i = 0; i < n * n; i++) X[i] = i % (n + 1) == 0;
    LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, n, C, n, X, n);
    for (int root = 0; root < n; root = p->subtree_end[root]) {
        const int s = p->subtree_end[root] - root;
        CHECK(mbs_tree_inverse_block(p, v1, root, Y, s, &err) == MBS_OK, "%s: block %d", what, root);
        for (int j = 0; j < s; j++) {
            const double *xl = X + root + j;   /* column root + j of M^-1 */
            for (int i = 0; i < s; i++) {
                x1[i] = Y[i * s + j];
                x2[i] = xl[(size_t)(root + i) * n];
            }
            const double e = vdiff(x1, x2, s, 1) / vnorm(x2, s, 1);
            /* the rest of the column is outside the block: zero */
            const double out = vnorm(xl, root, n) + vnorm(xl + (size_t)(root + s) * n, n - root - s, n);
            CHECK(e <= tol && out <= tol * vnorm(x2, s, 1), "%s: block %d column %d: %g, outside %g, tol %g", what,
                  root, j, e, out, tol);
            worst = fmax(worst, e / tol);
            for (int i = 0; i < j; i++) CHECK(Y[i * s + j] == Y[j * s + i], "%s: symmetric", what);
        }
    }
    free(v1);
    free(v2);
}

/* a random depth-first parent array: a chain (kind 1), chains of 7 from
 * the ground (kind 2: the pattern of floating joints in Euler rates, each
 * carrying one body, which the factorizations take as packed triangles),
 * or each k under k - 1, one of its ancestors or the ground (kind 0) */
static void random_parents(mbs_rng *r, int n, int kind, int *parent)
{
    for (int k = 0; k < n; k++) {
        if (kind == 1 || k == 0) {
            parent[k] = k - 1;
            continue;
        }
        if (kind == 2) {
            parent[k] = k % 7 ? k - 1 : -1;
            continue;
        }
        int depth = 0;
        for (int a = k - 1; a >= 0; a = parent[a]) depth++;
        int up = mbs_rng_int(r, depth + 1), a = k - 1;   /* up = depth: the ground */
        while (up-- > 0) a = parent[a];
        parent[k] = a;
    }
}

/* M = L^T D L with L unit lower triangular on the pattern, the entries of
 * row k in [-1, 1] / sqrt(its ancestors) (cond(L) stays moderate on long
 * chains), and D = 10^U(-6, 0): positive definite, pattern of the tree */
static void random_matrix(mbs_rng *r, const mbs_tree_pattern *p, double *M)
{
    const int n = p->n;
    static double L[NMAX * NMAX], D[NMAX];
    memset(L, 0, sizeof L);
    for (int k = 0; k < n; k++) {
        const double s = 1 / sqrt(fmax(1, p->rowptr[k + 1] - p->rowptr[k] - 1));
        for (int e = p->rowptr[k]; e < p->rowptr[k + 1] - 1; e++)
            L[k * n + p->colind[e]] = s * mbs_rng_uniform(r, -1, 1);
        L[k * n + k] = 1;
        D[k] = pow(10, mbs_rng_uniform(r, -6, 0));
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += L[k * n + i] * D[k] * L[k * n + j];
            M[i * n + j] = M[j * n + i] = s;
        }
}

static void test_random(void)
{
    mbs_rng r;
    mbs_rng_seed(&r, 21);
    static double M[NMAX * NMAX];
    int parent[NMAX];
    for (int t = 0; t < 300; t++) {
        const int n = 1 + mbs_rng_int(&r, NMAX), kind = t % 4 == 0 ? 1 : t % 4 == 1 ? 2 : 0;
        random_parents(&r, n, kind, parent);
        mbs_tree_pattern p;
        mbs_error err;
        CHECK(mbs_tree_pattern_create(&p, n, parent, &err) == MBS_OK, "pattern: %s", err.msg);
        random_matrix(&r, &p, M);
        char what[64];
        snprintf(what, sizeof what, "%s %d (n = %d)", kind == 1 ? "chain" : kind == 2 ? "chains of 7" : "tree", t, n);
        compare(&p, M, &r, what);
        mbs_tree_pattern_free(&p);
    }
}

/* the mass matrix of a model: exactly zero outside the tree pattern, the
 * sparse one its lower triangle bit for bit, and (factor: no Euler
 * parameters) factored and solved as above, from that lower triangle (the
 * diagonal block of a joint with several coordinates is symmetric to
 * round-off only) */
static void test_model(const mbs_model *m, mbs_rng *r, int factor, const char *what)
{
    static double M[NMAX * NMAX], C[NMAX * NMAX];
    const int n = mbs_model_nv(m);
    mbs_tree_pattern p;
    mbs_error err;
    CHECK(n <= NMAX, "%s: size %d", what, n);
    CHECK(mbs_model_tree_pattern(m, &p, &err) == MBS_OK, "%s: pattern: %s", what, err.msg);
    CHECK(p.n == n, "%s: pattern size %d, nv %d", what, p.n, n);
    mbs_data *d = mbs_data_create(m, &err);
    double *q = malloc(sizeof(double) * (size_t)mbs_model_nq(m)), *val = malloc(sizeof(double) * (size_t)p.nnz);
    double *sp = malloc(sizeof(double) * (size_t)p.nnz);
    mbs_test_random_state(r, m, q, NULL, NULL);
    CHECK(mbs_mass_matrix(m, d, q, M) == MBS_OK, "%s: mass matrix", what);
    CHECK(mbs_mass_matrix_sparse(m, d, q, &p, sp) == MBS_OK, "%s: sparse mass matrix", what);
    for (int e = 0; e < p.nnz; e++) val[e] = 1;
    mbs_tree_to_dense(&p, val, C, n);   /* 1 on the pattern, 0 elsewhere */
    int outside = 0;
    for (int i = 0; i < n * n; i++) outside += C[i] == 0 && M[i] != 0;
    CHECK(outside == 0, "%s: %d entries of M outside the pattern are not zero", what, outside);
    mbs_tree_from_dense(&p, M, n, val);
    CHECK(memcmp(val, sp, sizeof(double) * (size_t)p.nnz) == 0, "%s: sparse M = dense M bit for bit", what);
    mbs_tree_to_dense(&p, val, M, n);
    if (n > 0 && factor) compare(&p, M, r, what);
    free(sp);
    free(val);
    free(q);
    mbs_data_free(d);
    mbs_tree_pattern_free(&p);
}

static void test_models(void)
{
    mbs_rng r;
    mbs_rng_seed(&r, 43);
    const unsigned euler = (1u << MBS_JOINT_SPHERICAL) | (1u << MBS_JOINT_FLOATING);
    const unsigned types = ~euler & ((1u << MBS_JOINT_TYPE_COUNT) - 1);
    for (int t = 0; t < 200; t++) {
        mbs_model *m = mbs_test_random_tree(&r, 1 + mbs_rng_int(&r, 12), t % 2 ? types : 0);
        CHECK(m != NULL, "random tree %d", t);
        if (!m) continue;
        char what[64];
        snprintf(what, sizeof what, "random model %d", t);
        test_model(m, &r, t % 2, what);
        mbs_model_free(m);
    }
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(m != NULL, "human43: %s", err.msg);
    if (m) {
        test_model(m, &r, 1, "human43");
        /* a pattern that is not the model's */
        mbs_tree_pattern p;
        int parent[43];
        for (int k = 0; k < 43; k++) parent[k] = k - 1;
        mbs_data *d = mbs_data_create(m, &err);
        double q[43] = { 0 }, val[43 * 44 / 2];
        CHECK(mbs_tree_pattern_create(&p, 43, parent, &err) == MBS_OK, "chain pattern");
        CHECK(mbs_mass_matrix_sparse(m, d, q, &p, val) == MBS_ERR_ARG && strstr(mbs_data_error(d), "not the model"),
              "another pattern: %s", mbs_data_error(d));
        mbs_tree_pattern_free(&p);
        mbs_data_free(d);
        mbs_model_free(m);
    }
}

/* a small tree by hand: rows, columns, subtrees; the errors */
static void test_pattern(void)
{
    const int parent[7] = { -1, 0, 1, 0, 3, -1, 5 };
    const int rowptr[8] = { 0, 1, 3, 6, 8, 11, 12, 14 };
    const int colind[14] = { 0, 0, 1, 0, 1, 2, 0, 3, 0, 3, 4, 5, 5, 6 };
    const int end[7] = { 5, 3, 3, 5, 5, 7, 7 };
    mbs_tree_pattern p;
    mbs_error err;
    CHECK(mbs_tree_pattern_create(&p, 7, parent, &err) == MBS_OK, "create: %s", err.msg);
    CHECK(p.nnz == 14 && !memcmp(p.rowptr, rowptr, sizeof rowptr) && !memcmp(p.colind, colind, sizeof colind) &&
          !memcmp(p.subtree_end, end, sizeof end), "the pattern of the small tree");
    double val[14] = { 1, 0, 1, 0, 0, 1, 0, -1, 0, 0, 1, 1, 0, 1 }, Y[4];
    CHECK(mbs_tree_factor_ltdl(&p, val, &err) == MBS_ERR_NUMERIC && strstr(err.msg, "pivot of row 3"),
          "a negative pivot: %s", err.msg);
    CHECK(mbs_tree_inverse_block(&p, val, 3, Y, 2, &err) == MBS_ERR_ARG && strstr(err.msg, "3 is not the root"),
          "inverse block at a non-root: %s", err.msg);
    mbs_tree_pattern_free(&p);
    const int bad1[2] = { -1, 1 }, bad2[3] = { -1, -1, 0 };
    CHECK(mbs_tree_pattern_create(&p, 2, bad1, &err) == MBS_ERR_ARG && strstr(err.msg, "parent[1] = 1"),
          "a parent not before its child: %s", err.msg);
    CHECK(mbs_tree_pattern_create(&p, 3, bad2, &err) == MBS_ERR_ARG && strstr(err.msg, "depth-first"),
          "not depth-first: %s", err.msg);
    CHECK(mbs_tree_pattern_create(&p, 0, NULL, &err) == MBS_OK && p.nnz == 0, "the empty tree");
    mbs_tree_pattern_free(&p);
}

int main(void)
{
    test_pattern();
    test_random();
    test_models();
    printf("largest error / tolerance: %.3g, largest cond(M): %.3g\n", worst, cond_max);
    return mbs_test_summary("test_tree_sparse");
}
