/*
 * tree_sparse.c - the tree storage (mbsens/sparse.h): the pattern from a
 * parent array, dense copies, the factorizations M = L^T D L and
 * M = L^T L without fill-in, their solves and the dense inverse of a
 * ground subtree's block.
 *
 * Row k holds its ancestors a_0 < a_1 < ... < a_{d-1} and then k. The
 * ancestors of a_m are a_0 .. a_{m-1}, so row a_m is exactly the first
 * m + 1 entries of row k (its diagonal at position m). Both factorizations
 * run over the rows from the last up (Featherstone, "Efficient
 * factorization of the joint-space inertia matrix", 2005): row k, once
 * final, updates the rows of its ancestors, and each update
 * M(a_m, a_j) -= l_m l_j (j <= m) is one contiguous piece of row a_m.
 */
#include "tree_sparse.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#if defined(__GNUC__) && !defined(__clang__)
#define MBS_UNROLL _Pragma("GCC unroll 8")
#else
#define MBS_UNROLL
#endif

void mbs_tree_pattern_free(mbs_tree_pattern *p)
{
    if (!p) return;
    free(p->parent);
    free(p->rowptr);
    free(p->colind);
    free(p->subtree_end);
    memset(p, 0, sizeof *p);
}

/* MBS_OK if every parent[k] is in [-1, k) and the order is depth-first,
 * else MBS_ERR_ARG naming k */
static int pattern_check(int n, const int *parent, mbs_error *err)
{
    for (int k = 0; k < n; k++) {
        const int a = parent[k];
        if (a < -1 || a >= k)
            return mbs_error_set(err, MBS_ERR_ARG, "tree pattern: parent[%d] = %d is not in [-1, %d)", k, a, k);
        /* depth-first: a is -1, k - 1 or an ancestor of k - 1 */
        int b = k - 1;
        while (b > a) b = parent[b];
        if (b != a)
            return mbs_error_set(err, MBS_ERR_ARG, "tree pattern: the velocities are not in depth-first order "
                                 "(parent[%d] = %d is not on the path of %d to the ground)", k, a, k - 1);
    }
    return MBS_OK;
}

int mbs_tree_pattern_create(mbs_tree_pattern *p, int n, const int *parent, mbs_error *err)
{
    if (!p || n < 0 || (n > 0 && !parent))
        return mbs_error_set(err, MBS_ERR_ARG, "tree pattern: NULL pattern or parents, or n = %d < 0", n);
    memset(p, 0, sizeof *p);
    const int rc = pattern_check(n, parent, err);
    if (rc) return rc;
    p->n = n;
    p->parent = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    p->rowptr = malloc(sizeof(int) * (size_t)(n + 1));
    p->subtree_end = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!p->parent || !p->rowptr || !p->subtree_end) goto nomem;
    p->rowptr[0] = 0;
    for (int k = 0; k < n; k++) {
        const int a = parent[k];
        const long long len = a < 0 ? 1 : (long long)(p->rowptr[a + 1] - p->rowptr[a]) + 1;
        if ((long long)p->rowptr[k] + len > INT_MAX) {
            mbs_tree_pattern_free(p);
            return mbs_error_set(err, MBS_ERR_ARG, "tree pattern: more than %d entries", INT_MAX);
        }
        p->rowptr[k + 1] = p->rowptr[k] + (int)len;
        p->parent[k] = a;
    }
    p->nnz = p->rowptr[n];
    p->colind = malloc(sizeof(int) * (size_t)(p->nnz > 0 ? p->nnz : 1));
    if (!p->colind) goto nomem;
    for (int k = 0; k < n; k++) {
        const int a = parent[k], r = p->rowptr[k], len = p->rowptr[k + 1] - r;
        if (a >= 0) memcpy(p->colind + r, p->colind + p->rowptr[a], sizeof(int) * (size_t)(len - 1));
        p->colind[r + len - 1] = k;
        p->subtree_end[k] = k + 1;
    }
    for (int k = n - 1; k >= 0; k--)
        if (parent[k] >= 0 && p->subtree_end[k] > p->subtree_end[parent[k]])
            p->subtree_end[parent[k]] = p->subtree_end[k];
    return MBS_OK;
nomem:
    mbs_tree_pattern_free(p);
    return mbs_error_set(err, MBS_ERR_NOMEM, "tree pattern: out of memory (%d velocities)", n);
}

void mbs_tree_to_dense(const mbs_tree_pattern *p, const double *val, double *M, int ld)
{
    for (int i = 0; i < p->n; i++) memset(M + (size_t)i * ld, 0, sizeof(double) * (size_t)p->n);
    for (int k = 0; k < p->n; k++)
        for (int e = p->rowptr[k]; e < p->rowptr[k + 1]; e++) {
            const int j = p->colind[e];
            M[(size_t)k * ld + j] = val[e];
            M[(size_t)j * ld + k] = val[e];
        }
}

void mbs_tree_from_dense(const mbs_tree_pattern *p, const double *M, int ld, double *val)
{
    for (int k = 0; k < p->n; k++)
        for (int e = p->rowptr[k]; e < p->rowptr[k + 1]; e++) val[e] = M[(size_t)k * ld + p->colind[e]];
}

/* The L^T D L steps of rows r + n - 1 down to r when they are a chain from
 * the ground (row r + i: the columns r .. r + i), stored as one packed
 * lower triangle T (row i at i (i + 1) / 2): the operations of the general
 * loop below in its order, without the column indices. 0, or the 1-based
 * global row of a pivot that is not positive. */
static inline int ltdl_chain(double *T, int n, int r)
{
    /* with n a constant (7), unrolled into straight-line code */
    MBS_UNROLL for (int i = n - 1; i >= 0; i--) {
        double *Lk = T + i * (i + 1) / 2;
        if (!(Lk[i] > 0)) return r + i + 1;
        MBS_UNROLL for (int a = i - 1; a >= 0; a--) {
            const double s = Lk[a] / Lk[i];
            double *Li = T + a * (a + 1) / 2;
            MBS_UNROLL for (int b = 0; b <= a; b++) Li[b] -= s * Lk[b];
            Lk[a] = s;
        }
    }
    return 0;
}

int mbs_tree_ltdl_rows(const mbs_tree_pattern *p, double *val)
{
    const int *rp = p->rowptr, *ci = p->colind;
    for (int k = p->n - 1; k >= 0; k--) {
        double *Lk = val + rp[k];
        const int d = rp[k + 1] - rp[k] - 1;   /* the ancestors of k; its pivot at d */
        if (d > 0 && ci[rp[k]] == k - d) {
            /* the ancestors of k are k - d .. k - 1: rows k - d .. k are a
             * chain (a 7-row one: an Euler-rate floating joint from the
             * ground with no children), done at once */
            const int r = k - d, bad = d == 6 ? ltdl_chain(val + rp[r], 7, r) : ltdl_chain(val + rp[r], d + 1, r);
            if (bad) return bad;
            k = r;
            continue;
        }
        if (!(Lk[d] > 0)) return k + 1;
        for (int a = d - 1; a >= 0; a--) {
            const double s = Lk[a] / Lk[d];
            double *Li = val + rp[ci[rp[k] + a]];
            for (int b = 0; b <= a; b++) Li[b] -= s * Lk[b];
            Lk[a] = s;
        }
    }
    return 0;
}

int mbs_tree_ltl_rows(const mbs_tree_pattern *p, double *val)
{
    const int *rp = p->rowptr, *ci = p->colind;
    for (int k = p->n - 1; k >= 0; k--) {
        double *Lk = val + rp[k];
        const int d = rp[k + 1] - rp[k] - 1;
        if (!(Lk[d] > 0)) return k + 1;
        Lk[d] = sqrt(Lk[d]);
        for (int a = d - 1; a >= 0; a--) Lk[a] /= Lk[d];
        for (int a = d - 1; a >= 0; a--) {
            double *Li = val + rp[ci[rp[k] + a]];
            for (int b = 0; b <= a; b++) Li[b] -= Lk[a] * Lk[b];
        }
    }
    return 0;
}

/* the message of a failed factorization of row k (1-based code) */
static int factor_error(mbs_error *err, const char *form, int code, const double *pivot)
{
    if (!code) return MBS_OK;
    return mbs_error_set(err, MBS_ERR_NUMERIC, "tree factorization %s: the pivot of row %d is %g, not positive "
                         "(the matrix is not positive definite)", form, code - 1, *pivot);
}

int mbs_tree_factor_ltdl(const mbs_tree_pattern *p, double *val, mbs_error *err)
{
    const int code = mbs_tree_ltdl_rows(p, val);
    return factor_error(err, "L^T D L", code, code ? val + p->rowptr[code] - 1 : NULL);
}

int mbs_tree_factor_ltl(const mbs_tree_pattern *p, double *val, mbs_error *err)
{
    const int code = mbs_tree_ltl_rows(p, val);
    return factor_error(err, "L^T L", code, code ? val + p->rowptr[code] - 1 : NULL);
}

/* L^T D L x = b: y = L^-T b and y /= D from the last row up (row k, final
 * once its descendants are done, updates its ancestors), then x = L^-1 y
 * from the first row down (one dot product over row k) */
void mbs_tree_solve_ltdl(const mbs_tree_pattern *p, const double *val, double *x)
{
    const int *rp = p->rowptr, *ci = p->colind;
    for (int k = p->n - 1; k >= 0; k--) {
        const double *Lk = val + rp[k], xk = x[k];
        const int d = rp[k + 1] - rp[k] - 1;
        for (int a = 0; a < d; a++) x[ci[rp[k] + a]] -= Lk[a] * xk;
        x[k] = xk / Lk[d];
    }
    for (int k = 0; k < p->n; k++) {
        const double *Lk = val + rp[k];
        const int d = rp[k + 1] - rp[k] - 1;
        double t = x[k];
        for (int a = 0; a < d; a++) t -= Lk[a] * x[ci[rp[k] + a]];
        x[k] = t;
    }
}

/* L^T L x = b: L^T y = b from the last row up, then L x = y */
void mbs_tree_solve_ltl(const mbs_tree_pattern *p, const double *val, double *x)
{
    const int *rp = p->rowptr, *ci = p->colind;
    for (int k = p->n - 1; k >= 0; k--) {
        const double *Lk = val + rp[k];
        const int d = rp[k + 1] - rp[k] - 1;
        const double xk = x[k] / Lk[d];
        for (int a = 0; a < d; a++) x[ci[rp[k] + a]] -= Lk[a] * xk;
        x[k] = xk;
    }
    for (int k = 0; k < p->n; k++) {
        const double *Lk = val + rp[k];
        const int d = rp[k + 1] - rp[k] - 1;
        double t = x[k];
        for (int a = 0; a < d; a++) t -= Lk[a] * x[ci[rp[k] + a]];
        x[k] = t / Lk[d];
    }
}

/* Column j of the block [r, e) of M^-1 into row j - r of X (M^-1 is
 * symmetric): L^T y = e_j touches only j and its ancestors, so the first
 * sweep walks up j's path; the second runs over the whole block (a ground
 * subtree holds the ancestors of each of its rows). */
static void inverse_column(const mbs_tree_pattern *p, const double *val, int r, int e, int j, double *x)
{
    const int *rp = p->rowptr, *ci = p->colind;
    memset(x, 0, sizeof(double) * (size_t)(e - r));
    x[j - r] = 1;
    for (int k = j; k >= 0; k = p->parent[k]) {
        const double *Lk = val + rp[k], xk = x[k - r];
        const int d = rp[k + 1] - rp[k] - 1;
        for (int a = 0; a < d; a++) x[ci[rp[k] + a] - r] -= Lk[a] * xk;
        x[k - r] = xk / Lk[d];
    }
    for (int k = r; k < e; k++) {
        const double *Lk = val + rp[k];
        const int d = rp[k + 1] - rp[k] - 1;
        double t = x[k - r];
        for (int a = 0; a < d; a++) t -= Lk[a] * x[ci[rp[k] + a] - r];
        x[k - r] = t;
    }
}

int mbs_tree_inverse_block(const mbs_tree_pattern *p, const double *val, int root, double *Minv, int ld,
                           mbs_error *err)
{
    if (root < 0 || root >= p->n || p->parent[root] != -1)
        return mbs_error_set(err, MBS_ERR_ARG, "tree inverse block: %d is not the root of a ground subtree "
                             "(rows 0..%d)", root, p->n - 1);
    const int e = p->subtree_end[root], s = e - root;
    if (ld < s)
        return mbs_error_set(err, MBS_ERR_ARG, "tree inverse block: leading dimension %d below the block size %d",
                             ld, s);
    for (int j = root; j < e; j++) inverse_column(p, val, root, e, j, Minv + (size_t)(j - root) * ld);
    /* the upper triangle mirrors the lower one: exactly symmetric */
    for (int i = 0; i < s; i++)
        for (int j = i + 1; j < s; j++) Minv[(size_t)i * ld + j] = Minv[(size_t)j * ld + i];
    return MBS_OK;
}
