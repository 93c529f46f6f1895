/*
 * ddm_ali3p.c - direct differentiation of the discrete ALI3-P solution
 * (src/formulations/ali3p.c), semi-recursive, both reference points
 * (thesis §5.4.1, digest thesis_ch5.md S4, with its corrections;
 * docs/formulations.md "Sensitivities of the closed-loop formulations").
 *
 * With ' = d/d rho_j and dx_j the parameter's direction in the model
 * vector, every derivative below is ONE tangent of the residual and the
 * constraints (mbs_form_tangent) along a direction (dq, dqd, dqdd, dx):
 * the partial derivatives with respect to the state and the parameters are
 * never formed separately.
 *
 * t0. The initial state is the assembly with the model's fixed coordinates
 * B (held), the velocity problem, and the penalty accelerations:
 *   [Phi_q; B] z0'  = [-dPhi(0, 0, 0, dx); 0]
 *   [Phi_q; B] zd0' = [-dPhid(z0', 0, 0, dx); 0]                (zd fixed)
 *   (M + Phi_q^T alpha Phi_q) zdd0' = -[dr + dPhi_q^T alpha psi
 *          + Phi_q^T alpha (dPhidd + 2 omega xi dPhid + omega^2 dPhi)](z0', zd0', 0, dx)
 * (psi = Phidd + 2 omega xi Phid + omega^2 Phi; least squares, minimum norm
 * for the first two, as the kinematic problems). When [Phi_q; B] has a null
 * space (too few fixed coordinates) zd0' also takes the turn of that null
 * space, (I - A+ A) A'^T y with A^T y = zd0 (null_space_turn below).
 *
 * Each step: the index-3 stage at convergence is r(z, zd*, zdd*) +
 * Phi_q^T lambda = 0, Phi(z) = 0, with z = z_p + D etc. as in ali3p.c and
 * the predictor from the previous step's PROJECTED values. Its derivative:
 *   S D' + beta h^2 Phi_q^T mu = -beta h^2 w,    Phi_q D' = -dPhi
 *   w = dr + dPhi_q^T lambda   along (z_p', zd_p', zdd_n', dx) at fixed D, lambda
 *   S = M + gamma h C + beta h^2 (K + d(Phi_q^T lambda)/dz)   (the EXACT tangent:
 *       column k is the tangent along (beta h^2 e_k, gamma h e_k, e_k))
 * solved for all parameters exactly in the singular basis of Phi_q^T
 * (step_jacobians_closed.c: the range part from the constraint rows, the
 * null-space part from U_N^T S U_N, one LU per step; mu = lambda' is not
 * needed, D' is unique). z' = z_p' + D', zd*' = zd_p' + gamma/(beta h) D',
 * zdd*' = zdd_n' + D'/(beta h^2).
 *
 * Projections, only where the step applied them (the record's flags),
 * with the same P_hat = M + varsigma alpha Phi_q^T Phi_q (one Cholesky):
 *   velocity  G = M (zd - zd*) + Phi_q^T sigma = 0, sigma = varsigma alpha Phid
 *             (penalty form) or the iterated multiplier:
 *     P_hat zd' = M zd*' - d(M v) - dPhi_q^T sigma - varsigma alpha Phi_q^T dPhid    (penalty)
 *     with v = zd - zd*, tangents along (z', 0, 0, dx) at fixed zd; the
 *     iterative form solves M zd' + Phi^T sigma' = ..., Phi zd' = -dPhid by
 *     the same augmented-Lagrangian iteration with P_hat.
 *   acceleration: the same with zdd, zdd*, kappa and dPhidd along
 *     (z', zd', 0, dx) at fixed zdd (c with the projected zd).
 *   d(M v) = tangent of r at (z, zd, a) minus that at (z, zd, a - v) along the
 *   same direction (r is affine in the accelerations: the Q-terms cancel);
 *   dPhid at fixed zd = its tangent along (z', zd*', 0, dx) minus Phi_q zd*'.
 * A projection that the step skipped leaves zd' = zd*' (zdd' = zdd*').
 *
 * psi is the trapezoidal quadrature of g on the steps (projected states),
 * its gradient that of dg along (z', zd', zdd', dx).
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_impl.h"
#include "step_jacobians_closed.h"
#include "../formulations/form_impl.h"


/* Minimum-norm least-squares solve of [Phi (nc rows); B (fixed coordinates)] X = RHS
 * for nrhs columns (RHS: (nc + nf) x nrhs col-major, X out n x nrhs). Once per run. */
static int lsq_stacked(const mbs_model *m, int n, int nc, const double *Phi, const double *RHS, int nrhs,
                       double *X)
{
    const int nf = m->con.nfixed, rows = nc + nf, ldb = rows > n ? rows : n;
    if (n == 0 || nrhs == 0) return MBS_OK;
    double *A = calloc((size_t)rows * (size_t)n + 1, sizeof(double));
    double *B = calloc((size_t)ldb * (size_t)nrhs + 1, sizeof(double));
    double *s = calloc((size_t)n + 1, sizeof(double));
    int rc = MBS_OK;
    if (!A || !B || !s) {
        rc = MBS_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < n; j++) {
        for (int r = 0; r < nc; r++) A[(size_t)j * rows + r] = Phi[(size_t)r * n + j];
        for (int i = 0; i < nf; i++) A[(size_t)j * rows + nc + i] = m->con.fixed[i] == j ? 1 : 0;
    }
    for (int c = 0; c < nrhs; c++)
        for (int r = 0; r < rows; r++) B[(size_t)c * ldb + r] = RHS[(size_t)c * rows + r];
    lapack_int rank = 0;
    if (rows > 0 && LAPACKE_dgelsd(LAPACK_COL_MAJOR, rows, n, nrhs, A, rows, B, ldb, s, 1e-11, &rank) != 0) {
        rc = MBS_ERR_NUMERIC;
        goto done;
    }
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < n; i++) X[(size_t)c * n + i] = rows > 0 ? B[(size_t)c * ldb + i] : 0;
done:
    free(A);
    free(B);
    free(s);
    return rc;
}

/* ---------------------------------------------------------------- t0 */

/* The velocity problem's solution is the minimum-norm one, zd = A+ c with
 * A = [Phi_q; B]. When A has a null space (no or too few fixed coordinates
 * for the mobility) that null space turns with A, and the derivative of
 * A+ c (c consistent) is
 *     zd' = A+ (c' - A' zd) + (I - A+ A) A'^T y,   y = A+^T zd  (A^T y = zd)
 * with A' = [dPhi_q; 0] along (z', dx). The first part is the least-squares
 * solve above; this adds the second to Zd (nothing when A has full column
 * rank: the term vanishes). */
static int null_space_turn(sens_run *r, double t, const double *z, const double *zd, const double *zdd,
                           const double *Phi, const double *Z, double *Zd)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = m->nq, nc = mbs_model_nconstraints(m), np = r->np, nf = m->con.nfixed, rows = nc + nf;
    const int ld = rows > n ? rows : n;
    double *At = calloc((size_t)n * (size_t)rows + 1, sizeof(double)), *y = calloc((size_t)ld + 1, sizeof(double));
    double *s = calloc((size_t)ld + 1, sizeof(double)), *dPhi = calloc((size_t)nc * (size_t)n + 1, sizeof(double));
    double *dx = calloc((size_t)m->nx + 1, sizeof(double)), *V = calloc((size_t)n * (size_t)np + 1, sizeof(double));
    double *W = calloc((size_t)rows * (size_t)np + 1, sizeof(double)), *U = calloc((size_t)n * (size_t)np + 1, sizeof(double));
    int rc = MBS_OK;
    if (!At || !y || !s || !dPhi || !dx || !V || !W || !U) {
        rc = MBS_ERR_NOMEM;
        goto done;
    }
    /* y: minimum-norm solution of A^T y = zd (A^T: n x rows, column-major) */
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < nc; k++) At[(size_t)k * n + i] = Phi[(size_t)k * n + i];
        for (int k = 0; k < nf; k++) At[(size_t)(nc + k) * n + i] = m->con.fixed[k] == i ? 1 : 0;
        y[i] = zd[i];
    }
    lapack_int rank = 0;
    if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, n, rows, 1, At, n, y, ld, s, 1e-11, &rank) != 0) {
        rc = MBS_ERR_NUMERIC;
        goto done;
    }
    if (rank >= n) goto done;   /* A has full column rank: no null space */
    /* V_j = dPhi_q(z'_j, dx_j)^T y_Phi; W_j = A V_j; U_j = A+ W_j; Zd_j += V_j - U_j */
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, Z + (size_t)j * n, NULL, NULL, dx, NULL, NULL, dPhi, NULL, NULL);
        double *v = V + (size_t)j * n, *w = W + (size_t)j * rows;
        for (int k = 0; k < nc; k++)
            for (int i = 0; i < n; i++) v[i] += dPhi[(size_t)k * n + i] * y[k];
        for (int k = 0; k < nc; k++) {
            double a = 0;
            for (int i = 0; i < n; i++) a += Phi[(size_t)k * n + i] * v[i];
            w[k] = a;
        }
        for (int k = 0; k < nf; k++) w[nc + k] = v[m->con.fixed[k]];
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, W, np, U))) goto done;
    for (size_t k = 0; k < (size_t)n * (size_t)np; k++) Zd[k] += V[k] - U[k];
done:
    free(At);
    free(y);
    free(s);
    free(dPhi);
    free(dx);
    free(V);
    free(W);
    free(U);
    return rc;
}

int sens_loops_kinematic_init(sens_run *r, double t, const double *z, const double *zd, const double *zdd,
                              double *Z, double *Zd, mbs_error *err)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = m->nq, nc = mbs_model_nconstraints(m), np = r->np, nf = m->con.nfixed, rows = nc + nf;
    memset(Z, 0, sizeof(double) * (size_t)n * (size_t)np);
    memset(Zd, 0, sizeof(double) * (size_t)n * (size_t)np);
    if (m->con.ncut + m->con.ndriver == 0 || np == 0) return MBS_OK;   /* open tree: the state is given */
    double *RHS = calloc((size_t)rows * (size_t)np + 1, sizeof(double));
    double *Phi = calloc((size_t)nc * (size_t)n + 1, sizeof(double)), *dx = calloc((size_t)m->nx + 1, sizeof(double));
    double *v = calloc((size_t)nc + 1, sizeof(double));
    int rc = MBS_OK;
    if (!RHS || !Phi || !dx || !v) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    mbs_data_set_time(d, t);
    /* positions: [Phi_q; B] z' = [-dPhi(dx); 0] (the assembly held the fixed coordinates) */
    mbs_form_primal(m, d, t, z, zd, zdd, NULL, NULL, Phi, NULL, NULL);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, NULL, NULL, NULL, dx, NULL, v, NULL, NULL, NULL);
        for (int i = 0; i < nc; i++) RHS[(size_t)j * rows + i] = -v[i];
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, RHS, np, Z))) goto fail;
    /* velocities: [Phi_q; B] zd' = [-dPhid(z', 0, 0, dx) (zd fixed); 0] */
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, Z + (size_t)j * n, NULL, NULL, dx, NULL, NULL, NULL, v, NULL);
        for (int i = 0; i < nc; i++) RHS[(size_t)j * rows + i] = -v[i];
        for (int i = 0; i < nf; i++) RHS[(size_t)j * rows + nc + i] = 0;
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, RHS, np, Zd))) goto fail;
    if ((rc = null_space_turn(r, t, z, zd, zdd, Phi, Z, Zd))) goto fail;
    goto done;
fail:
    mbs_error_set(err, rc, "sensitivity at t = %.9g: initial kinematic sensitivities (least squares)", t);
done:
    free(RHS);
    free(Phi);
    free(dx);
    free(v);
    return rc;
}

/* ---------------------------------------------------------------- driver */

typedef struct {
    sens_run *r;
    mbs_integrator *it;
    const mbs_sim_options *so;
    sens_ali_lin *w;
    double *Y, *Yn;
} ali_ddm;

/* Y <- A Y + B, column by column through the step's linear algebra */
static int ali_advance(void *ctx, double t, double h, const double *q, const double *qd, const double *qdd,
                       mbs_error *err)
{
    ali_ddm *c = ctx;
    const int n = c->r->nq;
    const size_t N3 = 3 * (size_t)n;
    (void)t;
    (void)h;
    sens_ali_rec rec;
    sens_ali_rec_from_step(&rec, mbs_form_last_step(c->it), q, qd, qdd, n, c->w->nc, 0);
    int rc = sens_ali_lin_step(c->w, c->r, c->so, &rec, c->Y, c->Yn, err);
    if (!rc) memcpy(c->Y, c->Yn, sizeof(double) * N3 * (size_t)c->r->np);
    return rc;
}

int sens_ddm_ali3p(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const int n = r->nq, np = r->np;
    const size_t N3 = 3 * (size_t)n, P = (size_t)np;
    sens_ali_lin w;
    memset(&w, 0, sizeof w);
    double *buf = NULL;
    sens_fwd F;
    int rc = sens_fwd_open(&F, r, SENS_FWD_ALI3P, err);
    if (rc) goto done;
    buf = calloc(2 * N3 * P + 1, sizeof(double));
    if (!buf || sens_ali_lin_create(&w, r->m, np)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    mbs_integrator *it = F.it;
    ali_ddm c = { r, it, &F.so, &w, buf, buf + N3 * P };
    if ((rc = sens_ali_lin_init(&w, r, &F.so, F.so.t0, mbs_integrator_q(it), mbs_integrator_qd(it),
                                mbs_integrator_qdd(it), c.Y, err)))
        goto done;
    rc = sens_ddm_march(r, it, &F.so, c.Y, c.Y + n, c.Y + 2 * n, N3, ali_advance, &c, err);
done:
    sens_fwd_close(&F, stats);
    sens_ali_lin_free(&w);
    free(buf);
    return rc;
}
