/*
 * matrixr.c - the semi-recursive Matrix R formulation (thesis §3.2, §3.8;
 * García de Jalón & Bayo's velocity transformation on joint coordinates).
 *
 * Independent coordinates z^i = f(z) (d of them): joint coordinates
 * (B = df/dz constant, a row selector) or global components of body points
 * (B configuration-dependent: the point's row of the topological derivative
 * q_z). With N = Phi_q^T Phi_q + B^T B (SPD when [Phi_q; B] has full column
 * rank; the least-squares form admits redundant constraints), the kinematic
 * problems at given (z^i, zd^i, zdd^i) are
 *   positions      Newton: N dz = Phi_q^T (-Phi) + B^T (z^i - f(z)),  z += dz
 *   velocities     N zd  = Phi_q^T b + B^T zd^i                         (b = -Phi_t)
 *   accelerations  N zdd = Phi_q^T c + B^T (zdd^i - Bd zd)
 * where Bd zd is the point's acceleration at zdd = 0 (0 for coordinates).
 * Then zd = R zd^i + S b, zdd = R (zdd^i - Bd zd) + S c with
 * R = N^-1 B^T, S = N^-1 Phi_q^T, never formed except R (d solves). The
 * equations of motion are the d projections
 *     F = R^T r(z, zd, zdd) = R^T (M zdd - Q) = 0
 * (R^T r = B N^-1 r: one solve). Trapezoidal rule on z^i (correction D^i
 * to the predictor, as src/integrators/trapezoidal.c), Newton-Raphson with
 * the reduced tangent (scaled by beta h^2)
 *     J = R^T (M + gamma h C + beta h^2 K) R,
 * (M, C, K exact: mbs_form_trap_tangent; derivatives of R and of the
 * kinematic maps dropped in the Newton tangent — the sensitivities use the
 * exact derivative), until |dD^i|_2 < tolerance; the kinematic problems are
 * solved at every iterate and once more at the converged z^i. Initial
 * accelerations: F is affine in zdd^i, zdd = zdd_0 + R zdd^i, so
 * (R^T M R) zdd^i = -R^T r(z, zd, zdd_0).
 *
 * Choice of the independent coordinates (at the initial state): the
 * options' list; else the model's "assembly.fixed" coordinates if there are
 * d = n - rank(Phi_q) of them and [Phi_q; B] has full rank; else d
 * coordinates chosen by QR with column pivoting of a basis of the null
 * space of Phi_q (the coordinates that move most independently).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form_impl.h"
#include "model/model_impl.h"
#include "../constraints/constraint.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA
#define KIN_MAX_ITER 50

/* DOF values at level lev (0: positions; 2: + velocities and
 * accelerations from the kinematics in d at (q, qd, qdd)) and, if rows, B. */
static void dof_eval(mbs_form *f, const double *q, const double *qd, const double *qdd, int rows)
{
    const mbs_model *m = f->m;
    const int n = f->n;
    for (int k = 0; k < f->nd; k++) {
        const mbs_dof *g = &f->dof[k];
        double *row = rows ? f->Bm + (size_t)k * n : NULL;
        if (g->point < 0) {
            f->fi[k] = q[g->coord];
            f->fdi[k] = qd ? qd[g->coord] : 0;
            f->fddi[k] = qdd ? qdd[g->coord] : 0;
            if (row) {
                memset(row, 0, sizeof(double) * (size_t)n);
                row[g->coord] = 1;
            }
        } else {
            double v[3];
            const mbs_point_info *p = &m->point[g->point];
            mbs_con_point_component(m, m->x, &f->d->ws, p->body, p->x, g->component, v, row);
            f->fi[k] = v[0];
            f->fdi[k] = v[1];
            f->fddi[k] = v[2];
        }
    }
}

/* N = Phi^T Phi + B^T B into f->N, Cholesky. */
static int factor_N(mbs_form *f)
{
    const int n = f->n;
    memset(f->N, 0, sizeof(double) * (size_t)n * (size_t)n);
    mbs_dense_add_PtP(n, f->nc, f->Phi, 1, f->N);
    mbs_dense_add_PtP(n, f->nd, f->Bm, 1, f->N);
    return n > 0 ? (int)mbs_dense_chol(n, f->N) : 0;
}

/* x = N^-1 (Phi^T a + B^T u) (a or u may be NULL). */
static void solve_N(mbs_form *f, const double *a, const double *u, double *x)
{
    const int n = f->n;
    for (int i = 0; i < n; i++) x[i] = 0;
    if (a) mbs_dense_Ptv(n, f->nc, f->Phi, a, x, 1);
    if (u) mbs_dense_Ptv(n, f->nd, f->Bm, u, x, 1);
    if (n > 0) mbs_dense_chol_solve(n, f->N, x);
}

int mbs_form_matrixr_kinematics(mbs_form *f, double t, const double *zi, const double *zdi, const double *zddi,
                                double *z, double *zd, double *zdd, char *msg, size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc, nd = f->nd;
    int conv = 0;
    double step = 0;
    for (int it = 1; it <= KIN_MAX_ITER; it++) {
        f->nkin = it;
        mbs_kin_forward(m, m->x, &d->ws, z, NULL, NULL, 0);
        mbs_con_kernel(m, m->x, &d->ws, z, NULL, NULL, t, f->phi, f->Phi, NULL, f->b, NULL, NULL);
        dof_eval(f, z, NULL, NULL, 1);
        if (factor_N(f) != 0) {
            snprintf(msg, len, "matrixr: the independent coordinates do not determine the configuration at "
                     "t = %.9g ([Phi_q; B] rank-deficient: a singular position or a bad choice)", t);
            return MBS_ERR_NUMERIC;
        }
        for (int i = 0; i < nc; i++) f->w1[i] = -f->phi[i];
        for (int k = 0; k < nd; k++) f->yd[k] = zi[k] - f->fi[k];
        solve_N(f, f->w1, f->yd, f->dz);
        step = 0;
        double zn = 0;
        for (int i = 0; i < n; i++) {
            step += f->dz[i] * f->dz[i];
            zn += z[i] * z[i];
        }
        step = sqrt(step);
        if (!isfinite(step)) break;
        /* the position z just evaluated solves the problem to 1e-13: it stands (with Phi_q, B and
         * N evaluated there; no extra evaluation after the last correction) */
        if (step <= 1e-13 * (1 + sqrt(zn))) {
            conv = 1;
            break;
        }
        for (int i = 0; i < n; i++) z[i] += f->dz[i];
    }
    if (!conv) {
        snprintf(msg, len, "matrixr: the position problem did not converge at t = %.9g (last |dz| = %.3g)", t,
                 step);
        return MBS_ERR_NUMERIC;
    }
    /* velocities (Phi_q, B, N of the final z) */
    solve_N(f, f->b, zdi, zd);
    /* accelerations: c and Bd zd at zdd = 0 (the positions of z are in d) */
    mbs_kin_velocities(m, &d->ws, z, zd, NULL);
    mbs_con_kernel(m, m->x, &d->ws, z, zd, NULL, t, NULL, NULL, NULL, NULL, f->c, NULL);
    dof_eval(f, z, zd, NULL, 0);
    for (int k = 0; k < nd; k++) f->yd[k] = (zddi ? zddi[k] : 0) - (f->dof[k].point >= 0 ? f->fddi[k] : 0);
    solve_N(f, f->c, f->yd, zdd);
    return MBS_OK;
}

/* One Newton step of the position problem at z^i from z, with Phi, Phi_q,
 * B, f(z) and N (factored) of z in f: z += N^-1 (Phi_q^T (-Phi) + B^T (z^i - f(z))). */
static void position_step(mbs_form *f, const double *zi, double *z)
{
    for (int i = 0; i < f->nc; i++) f->w1[i] = -f->phi[i];
    for (int k = 0; k < f->nd; k++) f->yd[k] = zi[k] - f->fi[k];
    solve_N(f, f->w1, f->yd, f->dz);
    for (int i = 0; i < f->n; i++) z[i] += f->dz[i];
}

/* The kinematic problems at a Newton iterate z^i of a step, to the accuracy
 * the iterate needs (docs/formulations.md, Matrix R). At k = 1, z and zd are
 * the Newmark predictors of all the coordinates (in: their violations are
 * O(h^3) and O(h^2); for joint-coordinate DOFs they agree with the
 * independent predictors exactly); at k > 1, one Newton step of the
 * positions from the previous iterate's z and the velocities, both with the
 * Phi_q and N of that z. Then one kinematics pass at (z, zd) gives Phi,
 * Phi_q, b, c, B, f and N there: the accelerations with them, and the next
 * iterate's position step. The errors (positions O(|dz|^2), velocities
 * O(|dz| |zd|), dz the position step) vanish as the Newton corrections do;
 * the state at the converged z^i comes from mbs_form_matrixr_kinematics.
 * Leaves in d the kinematics of (z, zd) at zdd = 0, as
 * mbs_form_matrixr_kinematics does. */
static int iterate_kinematics(mbs_form *f, double t, int k, const double *zi, const double *zdi,
                              const double *zddi, double *z, double *zd, double *zdd, char *msg, size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    if (k > 1) {
        position_step(f, zi, z);
        solve_N(f, f->b, zdi, zd);
    }
    mbs_kin_forward(m, m->x, &d->ws, z, zd, NULL, 2);
    mbs_con_kernel(m, m->x, &d->ws, z, zd, NULL, t, f->phi, f->Phi, NULL, f->b, f->c, NULL);
    dof_eval(f, z, zd, NULL, 1);
    if (factor_N(f) != 0) goto singular;
    for (int j = 0; j < f->nd; j++) f->yd[j] = zddi[j] - (f->dof[j].point >= 0 ? f->fddi[j] : 0);
    solve_N(f, f->c, f->yd, zdd);
    return MBS_OK;
singular:
    snprintf(msg, len, "matrixr: the independent coordinates do not determine the configuration at "
             "t = %.9g ([Phi_q; B] rank-deficient: a singular position or a bad choice)", t);
    return MBS_ERR_NUMERIC;
}

/* R = N^-1 B^T into f->T (n x nd col-major), N factored. */
static void form_R(mbs_form *f)
{
    const int n = f->n;
    for (int k = 0; k < f->nd; k++) {
        double *col = f->T + (size_t)k * n;
        memcpy(col, f->Bm + (size_t)k * n, sizeof(double) * (size_t)n);
        if (n > 0) mbs_dense_chol_solve(n, f->N, col);
    }
}

/* J = R^T A R (A: n x n; col-major if colmajor, else row-major). */
static void reduce(mbs_form *f, const double *A, int colmajor)
{
    const int n = f->n, nd = f->nd;
    for (int j = 0; j < nd; j++) {
        const double *rj = f->T + (size_t)j * n;
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (colmajor ? A[(size_t)k * n + i] : A[(size_t)i * n + k]) * rj[k];
            f->v1[i] = s;
        }
        for (int i = 0; i < nd; i++) {
            const double *ri = f->T + (size_t)i * n;
            double s = 0;
            for (int k = 0; k < n; k++) s += ri[k] * f->v1[k];
            f->J[(size_t)j * nd + i] = s;
        }
    }
}

/* ---------------------------------------------------------------- choice of coordinates */

/* Smallest singular value / largest of [Phi; B] at the current f->Phi, f->Bm. */
static double stacked_rcond(mbs_form *f)
{
    const int n = f->n, rows = f->nc + f->nd;
    if (n == 0) return 1;
    if (rows < n) return 0;
    double *A = malloc(sizeof(double) * (size_t)rows * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
    double *sup = malloc(sizeof(double) * (size_t)n);
    double rc = 0;
    if (A && s && sup) {
        for (int j = 0; j < n; j++) {
            for (int r = 0; r < f->nc; r++) A[(size_t)j * rows + r] = f->Phi[(size_t)r * n + j];
            for (int r = 0; r < f->nd; r++) A[(size_t)j * rows + f->nc + r] = f->Bm[(size_t)r * n + j];
        }
        if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', rows, n, A, rows, s, NULL, 1, NULL, 1, sup) == 0 && s[0] > 0)
            rc = s[n - 1] / s[0];
    }
    free(A);
    free(s);
    free(sup);
    return rc;
}

int mbs_form_matrixr_setup(mbs_form *f, const double *q, char *msg, size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc;
    const double rtol = 1e-9;
    mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
    mbs_con_kernel(m, m->x, &d->ws, q, NULL, NULL, d->time, f->phi, f->Phi, NULL, NULL, NULL, NULL);
    if (f->nd > 0) {   /* given by the options */
        dof_eval(f, q, NULL, NULL, 1);
        if (stacked_rcond(f) < rtol) {
            snprintf(msg, len, "matrixr: the %d independent coordinates given do not determine the configuration "
                     "([Phi_q; B] rank-deficient at the initial state)", f->nd);
            return MBS_ERR_ARG;
        }
        return MBS_OK;
    }
    /* rank of Phi_q and a basis of its null space (SVD) */
    int rank = 0;
    double *Z = NULL;   /* n x n: right singular vectors, rows of V^T */
    if (nc > 0 && n > 0) {
        double *A = malloc(sizeof(double) * (size_t)nc * (size_t)n), *s = malloc(sizeof(double) * (size_t)n);
        double *U = malloc(sizeof(double) * 1), *sup = malloc(sizeof(double) * (size_t)n);
        Z = malloc(sizeof(double) * (size_t)n * (size_t)n);
        if (!A || !s || !U || !sup || !Z) {
            free(A); free(s); free(U); free(sup); free(Z);
            snprintf(msg, len, "out of memory");
            return MBS_ERR_NOMEM;
        }
        for (int j = 0; j < n; j++)
            for (int r = 0; r < nc; r++) A[(size_t)j * nc + r] = f->Phi[(size_t)r * n + j];
        for (int k = 0; k < n; k++) s[k] = 0;
        lapack_int info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'A', nc, n, A, nc, s, U, 1, Z, n, sup);
        if (info == 0)
            for (int k = 0; k < (nc < n ? nc : n); k++)
                if (s[k] > rtol * s[0]) rank++;
        free(A); free(s); free(U); free(sup);
        if (info != 0) {
            free(Z);
            snprintf(msg, len, "matrixr: SVD of the constraint Jacobian failed");
            return MBS_ERR_NUMERIC;
        }
    }
    const int nd = n - rank;
    f->nd = nd;
    /* the model's fixed coordinates? */
    int ok = 0;
    if (m->con.nfixed == nd) {
        for (int k = 0; k < nd; k++) {
            f->dof[k].point = -1;
            f->dof[k].coord = m->con.fixed[k];
            f->dof[k].component = 0;
        }
        dof_eval(f, q, NULL, NULL, 1);
        ok = stacked_rcond(f) >= rtol;
    }
    if (!ok) {
        /* QR with column pivoting of the null-space basis (rows rank..n-1 of V^T, nd x n) */
        double *W = malloc(sizeof(double) * ((size_t)nd * (size_t)n + 1)), *tau = malloc(sizeof(double) * (size_t)n);
        lapack_int *jp = calloc((size_t)n + 1, sizeof *jp);
        if (!W || !tau || !jp) {
            free(W); free(tau); free(jp); free(Z);
            snprintf(msg, len, "out of memory");
            return MBS_ERR_NOMEM;
        }
        for (int j = 0; j < n; j++)
            for (int r = 0; r < nd; r++)
                W[(size_t)j * nd + r] = Z ? Z[(size_t)j * n + rank + r] : (r == j ? 1.0 : 0.0);
        if (nd > 0) LAPACKE_dgeqp3(LAPACK_COL_MAJOR, nd, n, W, nd, jp, tau);
        for (int k = 0; k < nd; k++) {
            f->dof[k].point = -1;
            f->dof[k].coord = (int)jp[k] - 1;
            f->dof[k].component = 0;
        }
        free(W); free(tau); free(jp);
        dof_eval(f, q, NULL, NULL, 1);
        if (stacked_rcond(f) < rtol) {
            free(Z);
            snprintf(msg, len, "matrixr: no valid choice of independent coordinates found at the initial state");
            return MBS_ERR_NUMERIC;
        }
    }
    free(Z);
    return MBS_OK;
}

/* ---------------------------------------------------------------- accelerations */

int mbs_form_matrixr_accel(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char *msg,
                           size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n;
    mbs_data_set_time(d, t);
    int rc;
    if ((rc = mbs_form_matrixr_setup(f, q, msg, len))) return rc;   /* choose, or validate, the z^i */
    const int nd = f->nd;
    /* independent coordinates of the state, then zdd_0 (zdd^i = 0) */
    mbs_kin_forward(m, m->x, &d->ws, q, qd, NULL, 2);
    dof_eval(f, q, qd, NULL, 0);
    for (int k = 0; k < f->nd; k++) {
        f->zi[k] = f->fi[k];
        f->zdi[k] = f->fdi[k];
    }
    memcpy(f->z, q, sizeof(double) * (size_t)n);
    if ((rc = mbs_form_matrixr_kinematics(f, t, f->zi, f->zdi, NULL, f->z, f->zd, f->zdd, msg, len))) return rc;
    mbs_form_primal_acc(m, d, f->z, f->zd, f->zdd, f->r);
    mbs_crba(m, &d->ws, f->M);
    form_R(f);
    reduce(f, f->M, 0);
    /* zdd^i = -(R^T M R)^-1 R^T r0 */
    for (int k = 0; k < nd; k++) {
        const double *rk = f->T + (size_t)k * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += rk[i] * f->r[i];
        f->zddi[k] = -s;
    }
    if (nd > 0) {
        if (mbs_dense_lu(nd, f->J, f->ipivd) != 0) {
            snprintf(msg, len, "matrixr: the reduced mass matrix R^T M R is singular at t = %.9g", t);
            return MBS_ERR_NUMERIC;
        }
        mbs_dense_lu_solve(nd, f->J, f->ipivd, f->zddi);
    }
    for (int i = 0; i < n; i++) {
        double s = f->zdd[i];
        for (int k = 0; k < nd; k++) s += f->T[(size_t)k * n + i] * f->zddi[k];
        qdd[i] = s;
    }
    /* q, qd are consistent: z, zd reproduce them to round-off; keep the caller's */
    return MBS_OK;
}

/* ---------------------------------------------------------------- sensitivities */

int mbs_form_matrixr_prepare(mbs_form *f, double t, const double *z, const double *zd, const double *zdd)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n;
    mbs_data_set_time(d, t);
    mbs_form_primal(m, d, t, z, zd, zdd, f->r, f->phi, f->Phi, NULL, NULL);
    dof_eval(f, z, zd, zdd, 1);
    if (factor_N(f) != 0) return -1;
    form_R(f);
    memcpy(f->ty, f->r, sizeof(double) * (size_t)n);
    if (n > 0) mbs_dense_chol_solve(n, f->N, f->ty);
    mbs_dense_Pv(n, f->nc, f->Phi, f->ty, f->tP);
    mbs_dense_Pv(n, f->nd, f->Bm, f->ty, f->tB);
    return 0;
}

/* Tangents of the DOF values (level lev: 0 position, 1 velocity, 2
 * acceleration) along the direction in d->dws: yd[k] = a[k] - dval. */
static void dof_rhs(mbs_form *f, const double *dx, const double *a, int lev)
{
    const mbs_model *m = f->m;
    for (int k = 0; k < f->nd; k++) {
        const mbs_dof *g = &f->dof[k];
        f->yd[k] = a ? a[k] : 0;
        if (g->point >= 0) {
            double dv[3];
            const mbs_point_info *p = &m->point[g->point];
            mbs_con_point_component_d(m, m->x, &f->d->ws, dx, &f->d->dws, p->body, p->x, g->component, dv, NULL);
            f->yd[k] -= dv[lev];
        }
    }
}

void mbs_form_matrixr_chain(mbs_form *f, double t, const double *z, const double *zd, const double *zdd,
                            const double *dzi, const double *dzdi, const double *dzddi, const double *dx,
                            double *dz, double *dzd, double *dzdd, double *dF)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc, nd = f->nd;
    /* positions: Phi_q dz = -dPhi|z, B dz = dz^i - df|z */
    mbs_form_tangent(m, d, t, z, zd, zdd, NULL, NULL, NULL, dx, NULL, f->w1, NULL, NULL, NULL);
    for (int i = 0; i < nc; i++) f->w1[i] = -f->w1[i];
    dof_rhs(f, dx, dzi, 0);
    solve_N(f, f->w1, f->yd, dz);
    /* velocities: Phi_q dzd = -dPhid|zd, B dzd = dzd^i - d(B zd)|zd */
    mbs_form_tangent(m, d, t, z, zd, zdd, dz, NULL, NULL, dx, NULL, NULL, NULL, f->w1, NULL);
    for (int i = 0; i < nc; i++) f->w1[i] = -f->w1[i];
    dof_rhs(f, dx, dzdi, 1);
    solve_N(f, f->w1, f->yd, dzd);
    /* accelerations: Phi_q dzdd = -dPhidd|zdd, B dzdd = dzdd^i - d(B zdd + Bd zd)|zdd */
    mbs_form_tangent_from(m, d, t, z, zd, zdd, dz, dzd, NULL, dx, 1, NULL, NULL, NULL, NULL, f->w1);
    for (int i = 0; i < nc; i++) f->w1[i] = -f->w1[i];
    dof_rhs(f, dx, dzddi, 2);
    solve_N(f, f->w1, f->yd, dzdd);
    /* dF = R^T (dr - dPhi_q^T Phi y - dB^T B y),  y = N^-1 r */
    mbs_form_tangent_from(m, d, t, z, zd, zdd, dz, dzd, dzdd, dx, 2, f->v4, NULL, f->dPhi, NULL, NULL);
    mbs_dense_Ptv(n, nc, f->dPhi, f->tP, f->v3, 0);
    for (int i = 0; i < n; i++) f->v4[i] -= f->v3[i];
    for (int k = 0; k < nd; k++) {
        const mbs_dof *g = &f->dof[k];
        if (g->point < 0) continue;
        double dv[3];
        const mbs_point_info *p = &m->point[g->point];
        double *row = f->dB + (size_t)k * n;
        mbs_con_point_component_d(m, m->x, &d->ws, dx, &d->dws, p->body, p->x, g->component, dv, row);
        for (int i = 0; i < n; i++) f->v4[i] -= row[i] * f->tB[k];
    }
    for (int k = 0; k < nd; k++) {
        const double *rk = f->T + (size_t)k * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += rk[i] * f->v4[i];
        dF[k] = s;
    }
}

/* ---------------------------------------------------------------- stepper */


/* long-function: one Matrix-R step: predictor, Newton iteration, then the
 * kinematic problems at the converged point, in the order they run. */
static int mr_step(mbs_form *f, mbs_step_io *io, double h)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nd = f->nd;
    const size_t bytes = sizeof(double) * (size_t)n, dbytes = sizeof(double) * (size_t)nd;
    const double t1 = io->t + h, kh = BETA * h * h, c1 = GAMMA / (BETA * h), d1 = 1 / (BETA * h * h);
    memcpy(f->zin, f->zi, dbytes);
    memcpy(f->zdin, f->zdi, dbytes);
    memcpy(f->zddin, f->zddi, dbytes);
    for (int k = 0; k < nd; k++) {
        f->zip[k] = f->zin[k] + h * f->zdin[k] + 0.5 * h * h * f->zddin[k];
        f->zdip[k] = f->zdin[k] + h * f->zddin[k];
        f->Di[k] = 0;
    }
    /* all the coordinates and velocities: the first iterate is their own predictor */
    for (int i = 0; i < n; i++) {
        f->z[i] = io->q[i] + h * io->qd[i] + 0.5 * h * h * io->qdd[i];
        f->zd[i] = io->qd[i] + h * io->qdd[i];
    }
    mbs_data_set_time(d, t1);
    int iters = 0, conv = 0, rc;
    double ndz = 0;
    for (int k = 1; k <= f->o.max_iterations; k++) {
        iters = k;
        for (int j = 0; j < nd; j++) {
            f->zi[j] = f->zip[j] + f->Di[j];
            f->zdi[j] = f->zdip[j] + c1 * f->Di[j];
            f->zddi[j] = f->zddin[j] + d1 * f->Di[j];
        }
        if ((rc = iterate_kinematics(f, t1, k, f->zi, f->zdi, f->zddi, f->z, f->zd, f->zdd, io->msg,
                                     MBS_ERROR_MSG_LEN)))
            return rc;
        /* the kinematic problems left the kinematics of (z, zd) in d */
        mbs_form_primal_acc(m, d, f->z, f->zd, f->zdd, f->r);
        io->st->fevals++;
        /* F = R^T r = B N^-1 r */
        memcpy(f->v2, f->r, bytes);
        if (n > 0) mbs_dense_chol_solve(n, f->N, f->v2);
        for (int j = 0; j < nd; j++) {
            const double *row = f->Bm + (size_t)j * n;
            double s = 0;
            for (int i = 0; i < n; i++) s += row[i] * f->v2[i];
            f->dDi[j] = -kh * s;
        }
        mbs_form_newton_tangent(f, io->st, k, t1, f->z, f->zd, f->zdd, h, f->S);
        form_R(f);
        reduce(f, f->S, 1);
        io->st->factorizations++;
        if (nd > 0) {
            if (mbs_dense_lu(nd, f->J, f->ipivd) != 0)
                return mbs_fail(io->msg, MBS_ERR_NUMERIC, "matrixr: reduced tangent singular at t = %.9g", t1);
            mbs_dense_lu_solve(nd, f->J, f->ipivd, f->dDi);
        }
        for (int j = 0; j < nd; j++) f->Di[j] += f->dDi[j];
        ndz = mbs_dense_norm(f->dDi, nd);
        if (!isfinite(ndz))
            return mbs_fail(io->msg, MBS_ERR_NUMERIC, "matrixr: iteration diverged at t = %.9g", t1);
        if (ndz < f->o.tolerance) {
            conv = 1;
            break;
        }
    }
    if (!conv)
        return mbs_fail(io->msg, MBS_ERR_NUMERIC,
                              "matrixr (trapezoidal rule): no convergence at t = %.9g (step from t = %.9g, h = %g) "
                              "after %d iterations: |dz^i| = %.3e > tolerance %.3e", t1, io->t, h, iters, ndz,
                              f->o.tolerance);
    /* the state at the converged z^i: the kinematic problems solved there, from the position step
     * of the last iterate (its error is O(|dD^i|^2), so the position problem converges at once) */
    for (int j = 0; j < nd; j++) {
        f->zi[j] = f->zip[j] + f->Di[j];
        f->zdi[j] = f->zdip[j] + c1 * f->Di[j];
        f->zddi[j] = f->zddin[j] + d1 * f->Di[j];
    }
    position_step(f, f->zi, f->z);
    if ((rc = mbs_form_matrixr_kinematics(f, t1, f->zi, f->zdi, f->zddi, f->z, f->zd, f->zdd, io->msg,
                                          MBS_ERROR_MSG_LEN)))
        return rc;
    mbs_form_tangent_done(f, iters);
    /* violations: Phi at z; the velocity and acceleration problems are solved in the least-squares
     * sense, their residuals Phi_q zd - b and Phi_q zdd - c */
    f->viol[0] = mbs_dense_norm(f->phi, f->nc);
    mbs_dense_Pv(n, f->nc, f->Phi, f->zd, f->w1);
    mbs_dense_Pv(n, f->nc, f->Phi, f->zdd, f->w2);
    for (int i = 0; i < f->nc; i++) {
        f->w1[i] -= f->b[i];
        f->w2[i] -= f->c[i];
    }
    f->viol[1] = mbs_dense_norm(f->w1, f->nc);
    f->viol[2] = mbs_dense_norm(f->w2, f->nc);
    f->viol_ready = 1;
    /* the kinematic problems left the kinematics of (z, zd) at zdd = 0 in d: the acceleration pass
     * makes them those of the new state (reused by the bookkeeping) */
    mbs_kin_accelerations(m, &d->ws, f->zdd);
    io->kin_ready = 1;
    mbs_form_step_done(f, t1, h, iters);
    memcpy(f->step.zd_star, f->zd, bytes);
    memcpy(f->step.zdd_star, f->zdd, bytes);
    return MBS_OK;
}


const mbs_stepper mbs_stepper_matrixr = { "matrixr", mr_step };
