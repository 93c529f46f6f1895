/*
 * dense.c - small dense linear algebra (dense.h): A += s Phi^T Phi,
 * Phi^T v, Phi x, the norm, LU with partial pivoting and Cholesky, each
 * specialized for the sizes 1..8, LAPACK above 24 unknowns.
 */
#include <math.h>
#include <stddef.h>

#include "base/dense.h"

/* The closed-loop systems of the models here are small (n = 4 for the
 * five-bar and the slider-crank), where loop control and index arithmetic
 * cost more than the flops. Each helper is written once as an inline body
 * over n and instantiated for the sizes 1..8 (constant n: the compiler
 * unrolls), the general body otherwise. The arithmetic, and its order, is
 * the same in every instance: the results are identical. */
#if defined(__GNUC__)
#define DENSE_INLINE static inline __attribute__((always_inline))
#else
#define DENSE_INLINE static inline
#endif
#define DENSE_BY_SIZE(n, call)                                                                                   \
    switch (n) {                                                                                                 \
    case 1: { enum { N_ = 1 }; call; } break;                                                                   \
    case 2: { enum { N_ = 2 }; call; } break;                                                                   \
    case 3: { enum { N_ = 3 }; call; } break;                                                                   \
    case 4: { enum { N_ = 4 }; call; } break;                                                                   \
    case 5: { enum { N_ = 5 }; call; } break;                                                                   \
    case 6: { enum { N_ = 6 }; call; } break;                                                                   \
    case 7: { enum { N_ = 7 }; call; } break;                                                                   \
    case 8: { enum { N_ = 8 }; call; } break;                                                                   \
    default: { const int N_ = (n); call; } break;                                                                \
    }

DENSE_INLINE void add_PtP_n(int n, int rows, const double *Phi, double s, double *A)
{
    for (int r = 0; r < rows; r++) {
        const double *p = Phi + (size_t)r * n;
        for (int j = 0; j < n; j++) {
            const double pj = s * p[j];
            if (pj == 0) continue;
            double *col = A + (size_t)j * n;
            for (int i = 0; i < n; i++) col[i] += p[i] * pj;
        }
    }
}

void mbs_dense_add_PtP(int n, int rows, const double *Phi, double s, double *A)
{
    DENSE_BY_SIZE(n, add_PtP_n(N_, rows, Phi, s, A))
}

DENSE_INLINE void Ptv_n(int n, int rows, const double *Phi, const double *v, double *y, int add)
{
    if (!add)
        for (int i = 0; i < n; i++) y[i] = 0;
    for (int r = 0; r < rows; r++) {
        const double *p = Phi + (size_t)r * n;
        const double vr = v[r];
        if (vr == 0) continue;
        for (int i = 0; i < n; i++) y[i] += p[i] * vr;
    }
}

void mbs_dense_Ptv(int n, int rows, const double *Phi, const double *v, double *y, int add)
{
    DENSE_BY_SIZE(n, Ptv_n(N_, rows, Phi, v, y, add))
}

DENSE_INLINE void Pv_n(int n, int rows, const double *Phi, const double *x, double *y)
{
    for (int r = 0; r < rows; r++) {
        const double *p = Phi + (size_t)r * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += p[i] * x[i];
        y[r] = s;
    }
}

void mbs_dense_Pv(int n, int rows, const double *Phi, const double *x, double *y)
{
    DENSE_BY_SIZE(n, Pv_n(N_, rows, Phi, x, y))
}

double mbs_dense_norm(const double *v, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += v[k] * v[k];
    return sqrt(s);
}

/* Small dense factorizations (column-major). The models of this library
 * have tens of coordinates at most per loop system, where LAPACK's call
 * overhead dominates; above SMALL the LAPACK routines are used. Pivots are
 * 1-based, as LAPACK's. */
#define SMALL 24

DENSE_INLINE int lu_n(int n, double *A, lapack_int *piv)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        double big = fabs(A[(size_t)k * n + k]);
        for (int i = k + 1; i < n; i++)
            if (fabs(A[(size_t)k * n + i]) > big) { big = fabs(A[(size_t)k * n + i]); p = i; }
        piv[k] = p + 1;
        if (!(big > 0)) return k + 1;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = A[(size_t)j * n + k];
                A[(size_t)j * n + k] = A[(size_t)j * n + p];
                A[(size_t)j * n + p] = t;
            }
        const double inv = 1 / A[(size_t)k * n + k];
        for (int i = k + 1; i < n; i++) A[(size_t)k * n + i] *= inv;
        for (int j = k + 1; j < n; j++) {
            const double a = A[(size_t)j * n + k];
            if (a == 0) continue;
            double *cj = A + (size_t)j * n;
            const double *ck = A + (size_t)k * n;
            for (int i = k + 1; i < n; i++) cj[i] -= ck[i] * a;
        }
    }
    return 0;
}

int mbs_dense_lu(int n, double *A, lapack_int *piv)
{
    if (n > SMALL) return (int)LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, A, n, piv);
    int rc = 0;
    DENSE_BY_SIZE(n, rc = lu_n(N_, A, piv))
    return rc;
}

DENSE_INLINE void lu_solve_n(int n, const double *A, const lapack_int *piv, double *b)
{
    for (int k = 0; k < n; k++) {
        const int p = (int)piv[k] - 1;
        if (p != k) { double t = b[k]; b[k] = b[p]; b[p] = t; }
    }
    for (int k = 0; k < n; k++) {
        const double bk = b[k];
        const double *ck = A + (size_t)k * n;
        for (int i = k + 1; i < n; i++) b[i] -= ck[i] * bk;
    }
    for (int k = n - 1; k >= 0; k--) {
        b[k] /= A[(size_t)k * n + k];
        const double bk = b[k];
        const double *ck = A + (size_t)k * n;
        for (int i = 0; i < k; i++) b[i] -= ck[i] * bk;
    }
}

void mbs_dense_lu_solve(int n, const double *A, const lapack_int *piv, double *b)
{
    if (n > SMALL) {
        LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', n, 1, A, n, piv, b, n);
        return;
    }
    DENSE_BY_SIZE(n, lu_solve_n(N_, A, piv, b))
}

DENSE_INLINE int chol_n(int n, double *A)
{
    for (int j = 0; j < n; j++) {
        double *cj = A + (size_t)j * n;
        double d = cj[j];
        for (int k = 0; k < j; k++) d -= A[(size_t)k * n + j] * A[(size_t)k * n + j];
        if (!(d > 0)) return j + 1;
        d = sqrt(d);
        cj[j] = d;
        for (int i = j + 1; i < n; i++) {
            double s = cj[i];
            for (int k = 0; k < j; k++) s -= A[(size_t)k * n + i] * A[(size_t)k * n + j];
            cj[i] = s / d;
        }
    }
    return 0;
}

int mbs_dense_chol(int n, double *A)
{
    if (n > SMALL) return (int)LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, A, n);
    int rc = 0;
    DENSE_BY_SIZE(n, rc = chol_n(N_, A))
    return rc;
}

DENSE_INLINE void chol_solve_n(int n, const double *A, double *b)
{
    for (int j = 0; j < n; j++) {   /* L y = b */
        const double *cj = A + (size_t)j * n;
        b[j] /= cj[j];
        const double bj = b[j];
        for (int i = j + 1; i < n; i++) b[i] -= cj[i] * bj;
    }
    for (int j = n - 1; j >= 0; j--) {   /* L^T x = y */
        const double *cj = A + (size_t)j * n;
        double s = b[j];
        for (int i = j + 1; i < n; i++) s -= cj[i] * b[i];
        b[j] = s / cj[j];
    }
}

void mbs_dense_chol_solve(int n, const double *A, double *b)
{
    if (n > SMALL) {
        LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, A, n, b, n);
        return;
    }
    DENSE_BY_SIZE(n, chol_solve_n(N_, A, b))
}
