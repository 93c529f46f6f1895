/*
 * trapezoidal.c - the implicit trapezoidal rule: Newmark with beta = 1/4,
 * gamma = 1/2, fixed step (thesis §2.4.1).
 *
 * Step n -> n+1 (h = t_{n+1} - t_n). The velocities and accelerations at
 * n+1 are affine functions of the positions z = z_{n+1} (thesis (2.223),
 * corrected coefficients):
 *
 *   zd(z)  = gamma/(beta h) (z - z_n) - (gamma/beta - 1) zd_n - (gamma/(2 beta) - 1) h zdd_n
 *   zdd(z) = 1/(beta h^2) (z - z_n) - 1/(beta h) zd_n - (1/(2 beta) - 1) zdd_n
 *
 * (for beta = 1/4, gamma = 1/2: z - z_n = h/2 (zd_n + zd), zd - zd_n =
 * h/2 (zdd_n + zdd)). Predictor (2.222): z = z_n + h zd_n + h^2/2 zdd_n,
 * which gives zd = zd_n + h zdd_n and zdd = zdd_n.
 *
 * Newton-Raphson (thesis §2.4.1.2, §6.2.1). The residual is the O(n)
 * Newton-Euler inverse dynamics, r(z) = ID(z, zd(z), zdd(z)) = M zdd - Q,
 * completed for each Euler-parameter joint (rows E, p = z_E):
 *
 *   r'_E = r_E - p (p . r_E) + p (p . pdd + |pd|^2)
 *
 * The component of r_E along p vanishes identically (b p = 0 gives
 * p . r_E = -p . (joint loads on E)); it is replaced by the differentiated
 * normalization p.pdd = -|pd|^2. For |p| = 1 this is exactly the completed
 * system of mbs_forward_dynamics (M + p p^T) zdd = rhs - p (p . rhs + |pd|^2),
 * so Newton and the fixed-point iteration solve the same equations.
 *
 * The tangent dr'/dz scaled by beta h^2 is S' = M' + gamma h C' + beta h^2 K'.
 * With S = M + gamma h C + beta h^2 K (K = dr/dz, C = dr/dzd from the
 * tangent function, M = dr/dzdd by composite inertias):
 *
 *   rows E:        S'_E = (I - p p^T) S_E
 *   block (E, E): += p p^T                                    (from zdd)
 *                 + 2 gamma h p pd^T                          (from zd)
 *                 + beta h^2 [(p.pdd + |pd|^2 - p.r_E) I + p (pdd - r_E)^T]  (from z)
 *
 * Iteration: S' dz = -beta h^2 r', z += dz, zd and zdd from the affine
 * relations, until ||dz||_2 < tolerance.
 *
 * Round-off: written as above, zdd = (z - z_n)/(beta h^2) - ... amplifies the
 * rounding error of z (eps |z|) by 1/(beta h^2). The unknown is therefore the
 * correction D = z - z_pred to the predictor, and the affine relations are
 * evaluated in the equivalent form
 *   z = z_pred + D,  zd = zd_pred + gamma/(beta h) D,  zdd = zdd_n + D/(beta h^2),
 * whose rounding errors are relative to |D| (small), not to |z|.
 *
 * Fixed point (§2.4.1.1): zdd from
 * the forward dynamics at (z, zd), then the Newmark update of z and zd,
 * until the distance to the fixed point is below the tolerance
 * (fixed_point_converged()). It starts from the predictor with the
 * accelerations extrapolated from the last steps of the run (predict()),
 * which leaves fewer iterations to the same tolerance.
 *
 * Tangent velocities (docs/tangent-space.md §9): on a model with a
 * tangent joint the predictor is zp = z_n (+) (h zd_n + h^2/2 zdd_n), the
 * correction D a tangent at zp and z = zp (+) D joint by joint (the other
 * joints add, as above); zd and zdd keep their affine relations. The
 * Newton tangent is S' = M' + gamma h C' + beta h^2 K' J_r(D), K' = dr/dz
 * along the manifold at z (the tangent function's convention) and J_r(D)
 * block diagonal (identity on the additive joints). A tangent joint's
 * quaternion stays unit to round-off, without projection.
 *
 * The step keeps z_{n+1}, zd_{n+1}, zdd_{n+1} explicit (it->q, qd, qdd); the
 * trajectory sensitivities differentiate exactly these relations.
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "integrator_impl.h"
#include "joints/joint.h"
#include "model/model_impl.h"

#define BETA 0.25
#define GAMMA 0.5
#define PRED_ORDER 3           /* the fixed point's predictor: degree of the extrapolation */
#define RATE_AGE 4             /* steps for which the fixed point's measured contraction serves */

typedef struct {
    double *zn, *zdn, *zddn;   /* state at t_n */
    double *z, *zd, *zdd;      /* iterate at t_{n+1} */
    double *zp, *zdp, *D;      /* predictor (z, zd) and the correction D = z - zp */
    double *r0, *r, *dz, *a;   /* raw and completed residual, increment, FD accelerations */
    double *K, *C, *M, *S;     /* nv x nv */
    lapack_int *ipiv;
    double *work;              /* MBS_TANGENT_WORK_SIZE(nq) */
    double *zddh[PRED_ORDER];  /* fixed point: zdd_{n-1}, zdd_{n-2}, ... of this run */
    double hh[PRED_ORDER];     /* hh[k]: the time from zddh[k] to the next newer accelerations */
    int nh;                    /* how many of them are held */
    double rate, rate_h;       /* fixed point: contraction measured in a step of length rate_h */
    int rate_age;              /* steps after the one that measured rate (from RATE_AGE on: none) */
    double stop_rho, stop_ndz; /* fixed point, last step: the rate its test used (-1: none), last increment */
} trap_ws;

static int trap_init(mbs_integrator *it)
{
    const size_t nq = (size_t)(it->nq > 0 ? it->nq : 1), n = (size_t)(it->nv > 0 ? it->nv : 1);
    trap_ws *w = calloc(1, sizeof *w);
    if (!w) return MBS_ERR_NOMEM;
    it->impl = w;
    /* 3 coordinate vectors, 10 velocity-sized ones and the PRED_ORDER of the
     * predictor, 4 matrices, the tangent work */
    double *buf = calloc(3 * nq + (10 + PRED_ORDER) * n + 4 * n * n + MBS_TANGENT_WORK_SIZE(nq), sizeof(double));
    w->ipiv = calloc(n, sizeof *w->ipiv);
    if (!buf || !w->ipiv) {
        free(buf);
        return MBS_ERR_NOMEM;
    }
    double **coords[] = { &w->zn, &w->z, &w->zp };
    double **vec[] = { &w->zdn, &w->zddn, &w->zd, &w->zdd, &w->r0, &w->r, &w->dz, &w->a, &w->zdp, &w->D };
    double *p = buf;
    for (size_t k = 0; k < sizeof coords / sizeof coords[0]; k++, p += nq) *coords[k] = p;
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++, p += n) *vec[k] = p;
    for (int k = 0; k < PRED_ORDER; k++, p += n) w->zddh[k] = p;
    w->K = p; p += n * n;
    w->C = p; p += n * n;
    w->M = p; p += n * n;
    w->S = p; p += n * n;
    w->work = p;
    w->rate_age = RATE_AGE;
    return MBS_OK;
}

static int trap_reset(mbs_integrator *it)
{
    trap_ws *w = it->impl;
    w->nh = 0;                  /* no step of this run yet */
    w->rate_age = RATE_AGE;     /* no contraction measured */
    return MBS_OK;
}

static void trap_free(mbs_integrator *it)
{
    trap_ws *w = it->impl;
    free(w->zn);   /* start of the buffer */
    free(w->ipiv);
    free(w);
    it->impl = NULL;
}

/* z = zp (+) c x joint by joint (c x: a velocity-sized step). */
static void manifold_step(const mbs_model *m, double *z, const double *zp, double c, const double *x)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int qo = jt->qoff, vo = jt->voff;
        if (jt->velocities != MBS_VELOCITIES_TANGENT) {
            for (int k = 0; k < jt->nq; k++) z[qo + k] = zp[qo + k] + c * x[vo + k];
            continue;
        }
        double dz[6];
        for (int k = 0; k < jt->nv; k++) dz[k] = c * x[vo + k];
        mbs_joint_ops_of(jt->type, jt->velocities)->integrate(zp + qo, dz, z + qo);
    }
}

/* z, zd, zdd from the correction D by the affine Newmark relations
 * (z = zp + D where the coordinates and the velocities share their index,
 * z = zp (+) D on a model with tangent velocities). */
static void affine(const mbs_integrator *it, const trap_ws *w, double h)
{
    const double c1 = GAMMA / (BETA * h), d1 = 1 / (BETA * h * h);
    if (it->m->n_quat == it->m->n_euler)
        for (int k = 0; k < it->nq; k++) w->z[k] = w->zp[k] + w->D[k];
    else
        manifold_step(it->m, w->z, w->zp, 1, w->D);
    for (int k = 0; k < it->nv; k++) {
        w->zd[k] = w->zdp[k] + c1 * w->D[k];
        w->zdd[k] = w->zddn[k] + d1 * w->D[k];
    }
}

/* r = r0 completed along p for every Euler-parameter joint. */
static void complete_residual(const mbs_model *m, const trap_ws *w)
{
    memcpy(w->r, w->r0, sizeof(double) * (size_t)m->nv);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = w->z + jt->qoff + jt->euler, *pd = w->zd + e, *pdd = w->zdd + e, *rE = w->r0 + e;
        double pr = 0, c = 0;
        for (int k = 0; k < 4; k++) { pr += p[k] * rE[k]; c += p[k] * pdd[k] + pd[k] * pd[k]; }
        for (int k = 0; k < 4; k++) w->r[e + k] += p[k] * (c - pr);
    }
}

static double norm2(const double *x, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += x[k] * x[k];
    return sqrt(s);
}

/* Completed residual at the current iterate (t of d already set). */
static double residual_norm(mbs_integrator *it, trap_ws *w)
{
    mbs_integ_id(it->m, it->d, w->z, w->zd, w->zdd, w->r0);
    it->st.fevals++;
    complete_residual(it->m, w);
    return norm2(w->r, it->nv);
}

/* S' (column-major) from M, K, C (row-major) at (z, zd, zdd) with raw
 * residual r0; see the top. Shared with the trajectory sensitivities. */
void mbs_trap_assemble_tangent(const mbs_model *m, const double *z, const double *zd, const double *zdd,
                               const double *r0, const double *M, const double *K, const double *C,
                               double h, double *S)
{
    const int nv = m->nv;
    const double ch = GAMMA * h, kh = BETA * h * h;
    for (int r = 0; r < nv; r++)
        for (int c = 0; c < nv; c++)
            S[(size_t)c * nv + r] = M[(size_t)r * nv + c] + ch * C[(size_t)r * nv + c] +
                                    kh * K[(size_t)r * nv + c];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = z + jt->qoff + jt->euler, *pd = zd + e, *pdd = zdd + e, *rE = r0 + e;
        for (int c = 0; c < nv; c++) {
            double *col = S + (size_t)c * nv + e;
            double s = p[0] * col[0] + p[1] * col[1] + p[2] * col[2] + p[3] * col[3];
            for (int k = 0; k < 4; k++) col[k] -= p[k] * s;
        }
        double pr = 0, cE = 0;
        for (int k = 0; k < 4; k++) { pr += p[k] * rE[k]; cE += p[k] * pdd[k] + pd[k] * pd[k]; }
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                S[(size_t)(e + b) * nv + e + a] += p[a] * p[b] + 2 * ch * p[a] * pd[b] +
                                                  kh * ((a == b ? cE - pr : 0) + p[a] * (pdd[b] - rE[b]));
    }
}

/* On a model with tangent velocities K is along the tangents at z =
 * zp (+) D, and dz/dD = J_r(D) joint by joint: K <- K J_r(D) on the columns
 * of every tangent joint. */
static void chart_tangent(const mbs_model *m, trap_ws *w)
{
    const int nv = m->nv;
    for (int i = 1; i <= m->nb && m->n_quat > m->n_euler; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->velocities != MBS_VELOCITIES_TANGENT) continue;
        const int vo = jt->voff, n = jt->nv;
        double Jq[36], Jr[36], row[6];
        mbs_joint_ops_of(jt->type, jt->velocities)->integrate_jacobians(w->zp + jt->qoff, w->D + vo, Jq, Jr);
        for (int r = 0; r < nv; r++) {
            double *Kr = w->K + (size_t)r * nv + vo;
            for (int c = 0; c < n; c++) {
                row[c] = 0;
                for (int k = 0; k < n; k++) row[c] += Kr[k] * Jr[k * n + c];
            }
            memcpy(Kr, row, sizeof(double) * (size_t)n);
        }
    }
}

static void assemble_tangent(const mbs_model *m, trap_ws *w, double h)
{
    chart_tangent(m, w);
    mbs_trap_assemble_tangent(m, w->z, w->zd, w->zdd, w->r0, w->M, w->K, w->C, h, w->S);
}

/* Evaluate, complete and factorize the tangent at the current iterate (the
 * body terms of the iterate are in d: the caller has just evaluated the
 * residual). */
static int factorize_tangent(mbs_integrator *it, trap_ws *w, double h)
{
    const mbs_model *m = it->m;
    const int nv = m->nv;
    mbs_crba(m, &it->d->ws, w->M);
    int rc = it->o.tangent(it->o.tangent_ctx, m, it->d, w->z, w->zd, w->zdd, w->K, w->C, w->work);
    it->st.tangent_evals++;
    if (rc) return mbs_integ_fail(it, rc, "tangent: %s", mbs_data_error(it->d));
    assemble_tangent(m, w, h);
    it->st.factorizations++;
    lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nv, nv, w->S, nv, w->ipiv);
    if (info != 0)
        return mbs_integ_fail(it, MBS_ERR_NUMERIC, "tangent matrix singular (%s)",
                              info > 0 ? m->vel_name[info - 1] : "bad argument");
    return MBS_OK;
}

/* Newton-Raphson. The factorized tangent is re-evaluated at every iteration
 * (mbs_sim_options.tangent_update = iteration: full Newton, quadratic
 * convergence) or at the first iteration of every step (step: modified
 * Newton, linear convergence at a rate ~ the change of the tangent over the
 * step; cheaper when the tangent dominates the cost). The converged
 * solution is the same to the tolerance. */
static int newton(mbs_integrator *it, trap_ws *w, double h, int *iters, double *ndz)
{
    const mbs_model *m = it->m;
    const int nv = m->nv;
    for (int k = 1; k <= it->o.max_iterations; k++) {
        *iters = k;
        mbs_integ_id(m, it->d, w->z, w->zd, w->zdd, w->r0);
        it->st.fevals++;
        complete_residual(m, w);
        double nr = norm2(w->r, nv);
        if (!isfinite(nr))
            return mbs_integ_fail(it, MBS_ERR_NUMERIC, "residual not finite");
        if (k == 1 || it->o.tangent_update == MBS_TANGENT_ITERATION) {
            int rc = factorize_tangent(it, w, h);
            if (rc) return rc;
        }
        for (int c = 0; c < nv; c++) w->dz[c] = -BETA * h * h * w->r[c];
        LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nv, 1, w->S, nv, w->ipiv, w->dz, nv);
        for (int c = 0; c < nv; c++) w->D[c] += w->dz[c];
        affine(it, w, h);
        *ndz = norm2(w->dz, nv);
        if (!isfinite(*ndz)) return mbs_integ_fail(it, MBS_ERR_NUMERIC, "iteration diverged");
        if (*ndz < it->o.tolerance) return MBS_OK;
    }
    return 1;   /* not converged */
}

/* The fixed point's test after iteration k, whose increment has the norm
 * ndz (prev: that of iteration k - 1). The map contracts at a rate rho
 * (docs/formulations.md), so the iterate is within rho / (1 - rho) ndz of
 * the fixed point; rho is estimated by the ratio of the last two
 * increments, at the first iteration by the largest ratio of the last
 * step that iterated more than once, if it is among the last RATE_AGE
 * steps and had the same length. Converged when that distance, or the
 * increment itself, is below the tolerance. Keeps the largest ratio of
 * the step in *rmax. */
static int fixed_point_converged(trap_ws *w, double tol, double h, int k, double ndz, double prev,
                                 double *rmax)
{
    double rho = -1;
    if (k > 1) {
        rho = ndz / prev;
        if (rho > *rmax) *rmax = rho;
    } else if (w->rate_age < RATE_AGE && fabs(w->rate_h - h) <= 1e-6 * h) {
        rho = w->rate;
    }
    w->stop_rho = rho;
    w->stop_ndz = ndz;
    if (ndz < tol) return 1;
    return rho >= 0 && rho < 1 && rho / (1 - rho) * ndz < tol;
}

static int fixed_point(mbs_integrator *it, trap_ws *w, double t1, double h, int *iters, double *ndz)
{
    const int nv = it->nv;
    double prev = 0, rmax = 0;
    for (int k = 1; k <= it->o.max_iterations; k++) {
        *iters = k;
        int rc = mbs_integ_fd(it, t1, w->z, w->zd, w->a);
        if (rc) return rc;
        /* Newmark: z = z_n + h zd_n + h^2/2 ((1 - 2 beta) zdd_n + 2 beta a), i.e.
         * D = beta h^2 (a - zdd_n); zd, zdd from D (zdd = a) */
        double s = 0;
        for (int c = 0; c < nv; c++) {
            double D = BETA * h * h * (w->a[c] - w->zddn[c]);
            double d = D - w->D[c];
            s += d * d;
            w->dz[c] = d;
            w->D[c] = D;
        }
        affine(it, w, h);
        *ndz = sqrt(s);
        if (!isfinite(*ndz)) return mbs_integ_fail(it, MBS_ERR_NUMERIC, "iteration diverged");
        if (fixed_point_converged(w, it->o.tolerance, h, k, *ndz, prev, &rmax)) {
            if (k > 1) {
                w->rate = rmax;
                w->rate_h = h;
                w->rate_age = 0;
            } else if (w->rate_age < RATE_AGE) {
                w->rate_age++;
            }
            return MBS_OK;
        }
        prev = *ndz;
    }
    return 1;
}

/* The state at t_n from the integrator and the predictor from it:
 * zp = zn + h zdn + h^2/2 zddn (on a model with tangent velocities
 * zn (+) (h zdn + h^2/2 zddn)), zdp = zdn + h zddn. */
static void predictor(const mbs_integrator *it, trap_ws *w, double h)
{
    const int nq = it->nq, nv = it->nv;
    memcpy(w->zn, it->q, sizeof(double) * (size_t)nq);
    memcpy(w->zdn, it->qd, sizeof(double) * (size_t)nv);
    memcpy(w->zddn, it->qdd, sizeof(double) * (size_t)nv);
    if (it->m->n_quat == it->m->n_euler) {
        for (int k = 0; k < nq; k++) w->zp[k] = w->zn[k] + h * w->zdn[k] + 0.5 * h * h * w->zddn[k];
    } else {   /* zp = zn (+) (h zdn + h^2/2 zddn), the step in w->dz */
        for (int k = 0; k < nv; k++) w->dz[k] = h * w->zdn[k] + 0.5 * h * h * w->zddn[k];
        manifold_step(it->m, w->zp, w->zn, 1, w->dz);
    }
    for (int k = 0; k < nv; k++) w->zdp[k] = w->zdn[k] + h * w->zddn[k];
}

const double *mbs_trap_fixed_point_stop(const mbs_integrator *it, double *rho, double *ndz)
{
    const trap_ws *w = it->impl;
    *rho = w->stop_rho;
    *ndz = w->stop_ndz;
    return w->dz;
}

/* The discrete equations of a step from the current state, exposed for
 * tests and sensitivity code (integrator_impl.h): at the correction D
 * (z = z_pred + D), the completed residual r' and, if S is not NULL, the
 * scaled tangent S' = beta h^2 dr'/dD (row-major). Uses the integrator's
 * work arrays; the state is not changed. */
int mbs_trap_eval(mbs_integrator *it, double h, const double *D, double *r, double *S)
{
    trap_ws *w = it->impl;
    const mbs_model *m = it->m;
    const int nv = it->nv;
    if (it->o.integrator != MBS_INTEGRATOR_TRAPEZOIDAL) return MBS_ERR_ARG;
    predictor(it, w, h);
    for (int k = 0; k < nv; k++) w->D[k] = D ? D[k] : 0;
    affine(it, w, h);
    mbs_data_set_time(it->d, it->t + h);
    mbs_integ_id(m, it->d, w->z, w->zd, w->zdd, w->r0);
    complete_residual(m, w);
    memcpy(r, w->r, sizeof(double) * (size_t)nv);
    if (!S) return MBS_OK;
    mbs_crba(m, &it->d->ws, w->M);
    int rc = it->o.tangent(it->o.tangent_ctx, m, it->d, w->z, w->zd, w->zdd, w->K, w->C, w->work);
    if (rc) return rc;
    assemble_tangent(m, w, h);
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) S[(size_t)i * nv + j] = w->S[(size_t)j * nv + i];
    return MBS_OK;
}

/* The fixed point's starting correction D (zeros: the predictor of the top,
 * zdd = zdd_n): the accelerations extrapolated by the polynomial through
 * zdd_n and the last k accelerations of the run (k <= PRED_ORDER, as many
 * as there are with steps of length h, to 1e-6), i.e. with the backward
 * differences of zdd, zdd = zdd_n + sum_{j=1..k} nabla^j zdd_n, and
 * D = beta h^2 (zdd - zdd_n). A better start needs fewer iterations to
 * reach the same tolerance; the solution is the fixed point's whatever
 * the start. */
static void predict(trap_ws *w, int nv, double h)
{
    static const double coef[PRED_ORDER + 1][PRED_ORDER + 1] = {
        { 0, 0, 0, 0 }, { 1, -1, 0, 0 }, { 2, -3, 1, 0 }, { 3, -6, 4, -1 } };
    int k = 0;
    while (k < w->nh && fabs(w->hh[k] - h) <= 1e-6 * h) k++;
    if (k == 0) return;
    const double s = BETA * h * h, *c = coef[k];
    for (int i = 0; i < nv; i++) {
        double e = c[0] * w->zddn[i];
        for (int j = 1; j <= k; j++) e += c[j] * w->zddh[j - 1][i];
        w->D[i] = s * e;
    }
}

/* After an accepted step of length h from zdd_n: zdd_n joins the history. */
static void remember(trap_ws *w, int nv, double h)
{
    double *oldest = w->zddh[PRED_ORDER - 1];
    for (int k = PRED_ORDER - 1; k > 0; k--) {
        w->zddh[k] = w->zddh[k - 1];
        w->hh[k] = w->hh[k - 1];
    }
    w->zddh[0] = oldest;
    memcpy(oldest, w->zddn, sizeof(double) * (size_t)nv);
    w->hh[0] = h;
    if (w->nh < PRED_ORDER) w->nh++;
}

static int trap_step(mbs_integrator *it, double h)
{
    trap_ws *w = it->impl;
    const int nv = it->nv;
    const double t1 = it->t + h;
    predictor(it, w, h);
    memset(w->D, 0, sizeof(double) * (size_t)nv);
    const int fp = it->o.solver == MBS_SOLVER_FIXEDPOINT;
    if (fp) predict(w, nv, h);
    affine(it, w, h);
    mbs_data_set_time(it->d, t1);

    int iters = 0;
    double ndz = 0;
    int rc = fp ? fixed_point(it, w, t1, h, &iters, &ndz) : newton(it, w, h, &iters, &ndz);
    const char *name = mbs_nl_solver_name(it->o.solver);
    if (rc < 0) {
        char cause[MBS_ERROR_MSG_LEN];
        memcpy(cause, it->msg, sizeof cause);
        return mbs_integ_fail(it, rc, "trapezoidal rule (%s): failure at t = %.9g (step from t = %.9g, h = %g), "
                              "iteration %d: %s", name, t1, it->t, h, iters, cause);
    }
    if (rc > 0) {
        mbs_data_set_time(it->d, t1);
        double nr = residual_norm(it, w);
        return mbs_integ_fail(it, MBS_ERR_NUMERIC,
                              "trapezoidal rule (%s): no convergence at t = %.9g (step from t = %.9g, h = %g) "
                              "after %d iteration%s: |dz| = %.3e > tolerance %.3e, |residual| = %.3e",
                              name, t1, it->t, h, iters, iters == 1 ? "" : "s", ndz, it->o.tolerance, nr);
    }
    if (fp) remember(w, nv, h);
    mbs_integ_accept(it, w->z, w->zd, w->zdd, t1, iters);
    return MBS_OK;
}

const mbs_integ_method mbs_integ_trapezoidal = {
    "trapezoidal", trap_init, trap_reset, trap_step, 0, NULL, trap_free,
};
