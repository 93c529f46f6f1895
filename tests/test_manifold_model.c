/*
 * test_manifold_model.c - the public manifold operations of
 * mbsens/manifold.h (mbs_integrate, mbs_difference and their Jacobians) on
 * random trees with every joint type, each in both velocity conventions
 * (the Euler-rate model and its copy with tangent spherical and floating
 * joints, mbs_model_with_velocities):
 *   - the Jacobians, full nv x nv (block diagonal), against the complex step
 *     along the manifold (the joints' operations in the complex build,
 *     q (+) i h e_k, h = 1e-20) and against central differences along the
 *     manifold ((f(q (+) e e_k) (-) f(q (+) (-e e_k))) / 2e, in the tangent
 *     at f(q));
 *   - round trips: q (+) (q (-) q1) = q1 as rotations for any q1, and
 *     q (-) (q (+) v dt) = v dt where the step turns by less than pi;
 *   - |p| = 1 to round-off after a tangent step; an Euler-rate step adds;
 *     q1 may be q;
 *   - NULL arguments give MBS_ERR_ARG.
 * Tolerances, relative to max(1, |reference|) per entry:
 *   - complex step: both sides are one evaluation of a closed form of a few
 *     dozen operations on numbers of size <= (1 + |t|)(1 + |w|)^2 (<= 20
 *     here), each within a few ulp: TOL_CS = 1e-13 (design bound of
 *     docs/tangent-space.md §13);
 *   - central differences with e = eps^(1/3): truncation e^2 |f'''| / 6 plus
 *     round-off eps |f| / e, both eps^(2/3) = 3.7e-11 times the size of f and
 *     its third derivative along one direction (polynomials and analytic
 *     coefficients of the numbers above, <= 50): TOL_FD = 2e-9;
 *   - round trips and the norm: a few closed forms of O(1) numbers:
 *     ROUND = 64 eps times the scale of the coordinates.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/manifold.h"

#define NTREES 200
static const double H = 1e-20;
static const double TOL_CS = 1e-13;
static const double TOL_FD = 2e-9;
static const double ROUND = 64 * DBL_EPSILON;

typedef double complex cx;

/* the complex build of the public loops: q1 = q (+) d (d: nv) */
static void integrate_cs(const mbs_model *m, const cx *q, const cx *d, cx *q1)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq > 0) mbs_joint_ops_of_cs(jt->type, jt->velocities)->integrate(q + jt->qoff, d + jt->voff, q1 + jt->qoff);
    }
}
static void difference_cs(const mbs_model *m, const cx *q0, const cx *q1, cx *d)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->nq > 0) mbs_joint_ops_of_cs(jt->type, jt->velocities)->difference(q0 + jt->qoff, q1 + jt->qoff, d + jt->voff);
    }
}

/* the four functions as one: which = 0 Jq, 1 Jv (of q (+) v dt), 2 J0,
 * 3 J1 (of q0 (-) q1); column k of the complex step, nv entries */
static void cs_column(const mbs_model *m, int which, const double *qa, const double *qb, const double *v, double dt,
                      int k, double *col)
{
    const int nq = m->nq, nv = m->nv;
    cx *a = calloc((size_t)nq, sizeof *a), *b = calloc((size_t)nq, sizeof *b), *c = calloc((size_t)nq, sizeof *c);
    cx *e = calloc((size_t)nv, sizeof *e), *d = calloc((size_t)nv, sizeof *d), *r = calloc((size_t)nv, sizeof *r);
    cx *z = calloc((size_t)nq, sizeof *z);
    for (int j = 0; j < nq; j++) a[j] = qa[j];
    for (int j = 0; j < nq; j++) b[j] = qb[j];
    e[k] = I * H;
    if (which <= 1) {
        /* base point q1 = q (+) v dt in the complex build, then the perturbed one */
        for (int j = 0; j < nv; j++) d[j] = v[j] * dt;
        integrate_cs(m, a, d, c);
        if (which == 0) {
            integrate_cs(m, a, e, z);
            integrate_cs(m, z, d, b);
        } else {
            for (int j = 0; j < nv; j++) d[j] = (v[j] + (j == k ? I * H : 0)) * dt;
            integrate_cs(m, a, d, b);
        }
        difference_cs(m, c, b, r);
    } else if (which == 2) {
        integrate_cs(m, a, e, z);
        difference_cs(m, z, b, r);
    } else {
        integrate_cs(m, b, e, z);
        difference_cs(m, a, z, r);
    }
    for (int j = 0; j < nv; j++) col[j] = cimag(r[j]) / H;
    free(a); free(b); free(c); free(e); free(d); free(r); free(z);
}

/* column k by central differences along the manifold (public functions only) */
static void fd_column(const mbs_model *m, int which, const double *qa, const double *qb, const double *v, double dt,
                      int k, double *col)
{
    const int nq = m->nq, nv = m->nv;
    const double eps = cbrt(DBL_EPSILON);
    double *z = calloc((size_t)nq, sizeof *z), *f = calloc((size_t)nq, sizeof *f), *e = calloc((size_t)nv, sizeof *e);
    double *w = calloc((size_t)nv, sizeof *w), *r[2], *base = calloc((size_t)nq, sizeof *base);
    r[0] = calloc((size_t)nv, sizeof *r[0]);
    r[1] = calloc((size_t)nv, sizeof *r[1]);
    mbs_integrate(m, qa, v, dt, base);
    for (int s = 0; s < 2; s++) {
        memset(e, 0, sizeof *e * (size_t)nv);
        e[k] = s ? -eps : eps;
        if (which == 0) {
            mbs_integrate(m, qa, e, 1, z);
            mbs_integrate(m, z, v, dt, f);
            mbs_difference(m, base, f, r[s]);
        } else if (which == 1) {
            memcpy(w, v, sizeof *w * (size_t)nv);
            w[k] += e[k];
            mbs_integrate(m, qa, w, dt, f);
            mbs_difference(m, base, f, r[s]);
        } else if (which == 2) {
            mbs_integrate(m, qa, e, 1, z);
            mbs_difference(m, z, qb, r[s]);
        } else {
            mbs_integrate(m, qb, e, 1, z);
            mbs_difference(m, qa, z, r[s]);
        }
    }
    for (int j = 0; j < nv; j++) col[j] = (r[0][j] - r[1][j]) / (2 * eps);
    free(z); free(f); free(e); free(w); free(r[0]); free(r[1]); free(base);
}

typedef struct { double cs, fd, trip, norm; int nball, nfree; } worst;

/* worst of |J(r, k) - col(r)| / max(1, |col(r)|) over the columns */
static void check_jacobians(const mbs_model *m, const double *qa, const double *qb, const double *v, double dt,
                            worst *W)
{
    const int nv = m->nv;
    double *J[4], *col = malloc(sizeof *col * (size_t)nv);
    for (int w = 0; w < 4; w++) J[w] = malloc(sizeof *J[w] * (size_t)nv * (size_t)nv);
    CHECK(mbs_integrate_jacobians(m, qa, v, dt, J[0], J[1]) == MBS_OK, "integrate_jacobians");
    CHECK(mbs_difference_jacobians(m, qa, qb, J[2], J[3]) == MBS_OK, "difference_jacobians");
    for (int w = 0; w < 4; w++)
        for (int k = 0; k < nv; k++)
            for (int ref = 0; ref < 2; ref++) {
                (ref ? fd_column : cs_column)(m, w, qa, qb, v, dt, k, col);
                double e = 0;
                for (int r = 0; r < nv; r++) e = fmax(e, fabs(J[w][r * nv + k] - col[r]) / fmax(1, fabs(col[r])));
                double *wo = ref ? &W->fd : &W->cs;
                *wo = fmax(*wo, e);
                CHECK(e <= (ref ? TOL_FD : TOL_CS), "%s: Jacobian %d column %d against the %s: %.3g",
                      mbs_model_name(m), w, k, ref ? "central difference" : "complex step", e);
            }
    /* NULL outputs are allowed and leave the other one as computed */
    double *J1 = malloc(sizeof *J1 * (size_t)nv * (size_t)nv);
    mbs_integrate_jacobians(m, qa, v, dt, NULL, J1);
    CHECK(memcmp(J1, J[1], sizeof *J1 * (size_t)nv * (size_t)nv) == 0, "Jv alone");
    mbs_difference_jacobians(m, qa, qb, NULL, J1);
    CHECK(memcmp(J1, J[3], sizeof *J1 * (size_t)nv * (size_t)nv) == 0, "J1 alone");
    free(J1);
    for (int w = 0; w < 4; w++) free(J[w]);
    free(col);
}

/* same rotation (p or -p) and translation: the largest difference */
static double config_diff(const mbs_model *m, const double *a, const double *b)
{
    double e = 0;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        double ep = 0, em = 0;
        for (int k = 0; k < jt->nq; k++) {
            const int in_quat = jt->quat >= 0 && k >= jt->quat && k < jt->quat + 4;
            ep = fmax(ep, fabs(a[jt->qoff + k] - b[jt->qoff + k]));
            em = fmax(em, fabs(a[jt->qoff + k] - (in_quat ? -1 : 1) * b[jt->qoff + k]));
        }
        e = fmax(e, fmin(ep, em));
    }
    return e;
}

static void check_round_trips(const mbs_model *m, const double *q, const double *qb, const double *v, double dt,
                              worst *W)
{
    const int nq = m->nq, nv = m->nv;
    double *q1 = malloc(sizeof *q1 * (size_t)nq), *q2 = malloc(sizeof *q2 * (size_t)nq);
    double *d = malloc(sizeof *d * (size_t)nv), *qr = malloc(sizeof *qr * (size_t)nq);
    double scale = 1;
    for (int k = 0; k < nq; k++) scale = fmax(scale, fabs(q[k]));
    CHECK(mbs_integrate(m, q, v, dt, q1) == MBS_OK, "integrate");
    /* q (-) (q (+) v dt) = v dt (every rotation step below pi here) */
    CHECK(mbs_difference(m, q, q1, d) == MBS_OK, "difference");
    double e = 0;
    for (int k = 0; k < nv; k++) e = fmax(e, fabs(d[k] - v[k] * dt));
    W->trip = fmax(W->trip, e / scale);
    CHECK(e <= 4 * ROUND * scale, "%s: (q (+) v dt) (-) q - v dt = %.3g", mbs_model_name(m), e);
    /* in place */
    memcpy(q2, q, sizeof *q2 * (size_t)nq);
    mbs_integrate(m, q2, v, dt, q2);
    CHECK(memcmp(q2, q1, sizeof *q1 * (size_t)nq) == 0, "%s: integrate in place", mbs_model_name(m));
    /* the joints: a tangent quaternion keeps |p| = 1, the others add */
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->velocities == MBS_VELOCITIES_TANGENT) {
            const double *p = q1 + jt->qoff + jt->quat;
            double n = fabs(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]) - 1);
            W->norm = fmax(W->norm, n);
            CHECK(n <= ROUND, "%s: joint %s: ||p| - 1| = %.3g after a step", mbs_model_name(m), jt->name, n);
            W->nball += jt->type == MBS_JOINT_SPHERICAL;
            W->nfree += jt->type == MBS_JOINT_FLOATING;
        } else {
            for (int k = 0; k < jt->nq; k++)
                CHECK(q1[jt->qoff + k] == q[jt->qoff + k] + v[jt->voff + k] * dt, "%s: joint %s adds",
                      mbs_model_name(m), jt->name);
        }
    }
    /* q (+) (q (-) qb) = qb for another configuration, any rotation between */
    mbs_difference(m, q, qb, d);
    mbs_integrate(m, q, d, 1, qr);
    e = config_diff(m, qr, qb);
    W->trip = fmax(W->trip, e / scale);
    CHECK(e <= ROUND * scale, "%s: q (+) (q (-) qb) - qb = %.3g", mbs_model_name(m), e);
    free(q1); free(q2); free(d); free(qr);
}

static void check_args(const mbs_model *m)
{
    double x[64] = { 0 };
    CHECK(mbs_integrate(NULL, x, x, 1, x) == MBS_ERR_ARG && mbs_integrate(m, x, NULL, 1, x) == MBS_ERR_ARG,
          "integrate: NULL");
    CHECK(mbs_difference(m, NULL, x, x) == MBS_ERR_ARG && mbs_difference(m, x, x, NULL) == MBS_ERR_ARG,
          "difference: NULL");
    CHECK(mbs_integrate_jacobians(m, x, NULL, 1, x, x) == MBS_ERR_ARG, "integrate_jacobians: NULL");
    CHECK(mbs_difference_jacobians(m, NULL, x, x, x) == MBS_ERR_ARG, "difference_jacobians: NULL");
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2111);
    worst W = { 0, 0, 0, 0, 0, 0 };
    for (int t = 0; t < NTREES; t++) {
        mbs_error err = { 0, "" };
        mbs_model *mE = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 8), 0);
        CHECK(mE != NULL, "random tree");
        if (!mE) continue;
        mbs_model *mT = mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &err);
        CHECK(mT != NULL, "tangent copy: %s", err.msg);
        const int nq = mE->nq;
        double *qa = malloc(sizeof *qa * (size_t)nq), *qb = malloc(sizeof *qb * (size_t)nq);
        double *v = malloc(sizeof *v * (size_t)nq);
        mbs_test_random_state(&rng, mE, qa, NULL, NULL);
        mbs_test_random_state(&rng, mE, qb, NULL, NULL);
        /* |v_k| <= 1, dt <= 1.5: a rotation step |w dt| <= 1.5 sqrt 3 < pi */
        for (int k = 0; k < nq; k++) v[k] = mbs_rng_uniform(&rng, -1, 1);
        const double dt = mbs_rng_uniform(&rng, 0.1, 1.5);
        for (int c = 0; c < 2; c++) {
            const mbs_model *m = c ? mT : mE;
            if (!m) continue;
            check_jacobians(m, qa, qb, v, dt, &W);
            check_round_trips(m, qa, qb, v, dt, &W);
        }
        if (t == 0 && mT) check_args(mT);
        free(qa); free(qb); free(v);
        mbs_model_free(mT);
        mbs_model_free(mE);
    }
    CHECK(W.nball > 0 && W.nfree > 0, "tangent joints covered: %d spherical, %d floating", W.nball, W.nfree);
    printf("worst: complex step %.2e (bound %.0e), central differences %.2e (bound %.0e), round trips %.2e "
           "(bound %.2e), ||p| - 1| %.2e (bound %.2e); %d spherical, %d floating tangent joints\n",
           W.cs, TOL_CS, W.fd, TOL_FD, W.trip, ROUND, W.norm, ROUND, W.nball, W.nfree);
    return mbs_test_summary("test_manifold_model");
}
