/*
 * lapack-probe.c - which test programs compute with LAPACK/BLAS
 * (scripts/portability-matrix.sh; not part of the library or the suite).
 *
 * Built as a shared object and preloaded (LD_PRELOAD), it stands in for
 * the LAPACKE and CBLAS entry points the library calls (src/, cli/): each
 * forwards to the real routine and, the first time it does real work (a
 * workspace query, lwork = -1, is not work), appends "PID NAME" to the file
 * $MBS_LAPACK_PROBE. Keep the list in step with
 *     grep -rhoE '(LAPACKE|cblas)_[a-z0-9_]+' src cli | sort -u
 * (the matrix script checks that every name found there is wrapped here).
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void note(const char *name, int *done)
{
    if (*done) return;
    *done = 1;
    const char *path = getenv("MBS_LAPACK_PROBE");
    if (!path || !*path) return;
    FILE *fp = fopen(path, "a");
    if (!fp) return;
    fprintf(fp, "%ld %s\n", (long)getpid(), name);
    fclose(fp);
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "lapack-probe: %s not found\n", name);
        abort();
    }
    return f;
}

/* RET NAME(PARAMS) { forward ARGS; record unless QUERY } */
#define WRAP(ret, name, params, args, query)                                                                   \
    ret name params                                                                                            \
    {                                                                                                          \
        static int done;                                                                                       \
        static ret (*f) params;                                                                                \
        if (!f) *(void **)&f = real(#name);                                                                    \
        if (!(query)) note(#name, &done);                                                                      \
        return f args;                                                                                         \
    }

WRAP(lapack_int, LAPACKE_dgelsd,
     (int l, lapack_int m, lapack_int n, lapack_int r, double *a, lapack_int la, double *b, lapack_int lb,
      double *s, double rc, lapack_int *rk),
     (l, m, n, r, a, la, b, lb, s, rc, rk), 0)
WRAP(lapack_int, LAPACKE_dgelsd_work,
     (int l, lapack_int m, lapack_int n, lapack_int r, double *a, lapack_int la, double *b, lapack_int lb,
      double *s, double rc, lapack_int *rk, double *w, lapack_int lw, lapack_int *iw),
     (l, m, n, r, a, la, b, lb, s, rc, rk, w, lw, iw), lw == -1)
WRAP(lapack_int, LAPACKE_dgeqp3,
     (int l, lapack_int m, lapack_int n, double *a, lapack_int la, lapack_int *jp, double *tau),
     (l, m, n, a, la, jp, tau), 0)
WRAP(lapack_int, LAPACKE_dgesvd,
     (int l, char ju, char jv, lapack_int m, lapack_int n, double *a, lapack_int la, double *s, double *u,
      lapack_int lu, double *vt, lapack_int lv, double *sup),
     (l, ju, jv, m, n, a, la, s, u, lu, vt, lv, sup), 0)
WRAP(lapack_int, LAPACKE_dgesvd_work,
     (int l, char ju, char jv, lapack_int m, lapack_int n, double *a, lapack_int la, double *s, double *u,
      lapack_int lu, double *vt, lapack_int lv, double *w, lapack_int lw),
     (l, ju, jv, m, n, a, la, s, u, lu, vt, lv, w, lw), lw == -1)
WRAP(lapack_int, LAPACKE_dgetrf_work, (int l, lapack_int m, lapack_int n, double *a, lapack_int la, lapack_int *p),
     (l, m, n, a, la, p), 0)
WRAP(lapack_int, LAPACKE_dgetrs_work,
     (int l, char t, lapack_int n, lapack_int r, const double *a, lapack_int la, const lapack_int *p, double *b,
      lapack_int lb),
     (l, t, n, r, a, la, p, b, lb), 0)
WRAP(lapack_int, LAPACKE_dpotrf, (int l, char u, lapack_int n, double *a, lapack_int la), (l, u, n, a, la), 0)
WRAP(lapack_int, LAPACKE_dpotrf_work, (int l, char u, lapack_int n, double *a, lapack_int la), (l, u, n, a, la), 0)
WRAP(lapack_int, LAPACKE_dpotri_work, (int l, char u, lapack_int n, double *a, lapack_int la), (l, u, n, a, la), 0)
WRAP(lapack_int, LAPACKE_dpotrs,
     (int l, char u, lapack_int n, lapack_int r, const double *a, lapack_int la, double *b, lapack_int lb),
     (l, u, n, r, a, la, b, lb), 0)
WRAP(lapack_int, LAPACKE_dpotrs_work,
     (int l, char u, lapack_int n, lapack_int r, const double *a, lapack_int la, double *b, lapack_int lb),
     (l, u, n, r, a, la, b, lb), 0)

void cblas_dgemm(const enum CBLAS_ORDER o, const enum CBLAS_TRANSPOSE ta, const enum CBLAS_TRANSPOSE tb,
                 const blasint m, const blasint n, const blasint k, const double al, const double *a,
                 const blasint la, const double *b, const blasint lb, const double be, double *c, const blasint lc)
{
    static int done;
    static void (*f)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint,
                     double, const double *, blasint, const double *, blasint, double, double *, blasint);
    if (!f) *(void **)&f = real("cblas_dgemm");
    note("cblas_dgemm", &done);
    f(o, ta, tb, m, n, k, al, a, la, b, lb, be, c, lc);
}
