/*
 * index1.c - Lagrange multipliers at acceleration level (thesis App. D;
 * Kang & Yoon §2, after Bae & Haug):
 *
 *     M zdd + Phi_q^T lambda = Q,    Phi_q zdd = c - 2 omega xi Phid - omega^2 Phi
 *
 * (the last two terms only with Baumgarte stabilization, o.baumgarte).
 * Recursive constraint reduction: the open-tree accelerations
 * zdd0 = M'^-1 Q come from the forward dynamics of the options (fully
 * recursive articulated bodies, or semi-recursive Cholesky), the columns
 * Y = M'^-1 Phi_q^T from as many solves with the same factors (O(n) each for
 * the articulated-body algorithm), then
 *     (Phi_q Y) lambda = Phi_q zdd0 - c + 2 omega xi Phid + omega^2 Phi,
 *     zdd = zdd0 - Y lambda
 * (Kang & Yoon accumulate Phi_q M^-1 Phi_q^T through the tree; the products
 * are the same). Phi_q Y is solved in the least-squares, minimum-norm sense
 * (SVD), so redundant constraints are handled (lambda is then the
 * minimum-norm multiplier; zdd is unique). M' is M completed for the Euler
 * parameters (p.pdd = -|pd|^2, as for open trees): the Euler normalization
 * rows are therefore not among the constraints here, and the integrator
 * projects |p| = 1 after each step as it does for open trees.
 *
 * When every row is a coordinate driver q_k - f_k(t) of a distinct
 * velocity (f->prescribed: no loop closures, fully recursive forward
 * dynamics), Phi_q is a set of unit rows and the equations say that the
 * driven accelerations are known,
 *     qdd_k = f_k'' - 2 omega xi Phid_k - omega^2 Phi_k,
 * and lambda_k = -(M' qdd - Q)_k. The articulated-body pass then takes
 * the driven velocities as prescribed motions (hybrid dynamics,
 * mbs_aba_prescribed): one sweep gives the other accelerations and the
 * forces of the driven ones, with no Y and no least squares. Both routes
 * solve the same equations; they differ by round-off.
 *
 * Without stabilization the constraint violations drift (quadratically in
 * time at position level); with Baumgarte they stay bounded. The result is
 * an ODE zdd = f(z, zd) for rk4, cvodes or the trapezoidal fixed point.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "form_impl.h"
#include "model/model_impl.h"
#include "dynamics/derivatives.h"
#include "../constraints/constraint.h"

/* The open-tree accelerations qdd0, the factors of M' for the solves and
 * the kinematics of (q, qd, qdd0) in d (the constraint rows read them).
 * Fully recursive: the forward dynamics in the workspace and its
 * acceleration pass; the inverse dynamics at the solution that
 * mbs_deriv_fd_primal adds (tid) serves derivatives along a direction,
 * and the solves here have none: f->tid stays zero for them. */
static int tree_accelerations(mbs_form *f, const double *q, const double *qd)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    if (f->o.formulation != MBS_FD_RECURSIVE)
        return mbs_deriv_fd_primal(m, d, f->o.formulation, q, qd, NULL, f->qdd0, f->tid);
    int rc = mbs_fd_in_workspace(m, d, MBS_FD_RECURSIVE, q, qd, NULL, f->qdd0);
    if (!rc) mbs_kin_accelerations(m, &d->ws, f->qdd0);
    return rc;
}

/* The index-1 accelerations when the rows are coordinate drivers only
 * (f->prescribed): the driven accelerations from the laws, the rest and
 * the multipliers from one hybrid articulated-body pass. */
static int index1_prescribed(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char *msg,
                             size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const double om = f->o.omega, xi = f->o.xi;
    for (int k = 0; k < m->con.ndriver; k++) {
        const mbs_driver_info *dr = &m->con.driver[k];
        double fv, fd, fdd;
        mbs_driver_law(m, dr, m->x, t, &fv, &fd, &fdd);
        double a = fdd;
        if (f->o.baumgarte) a -= 2 * om * xi * (qd[f->drv_v[k]] - fd) + om * om * (q[dr->coord] - fv);
        qdd[f->drv_v[k]] = a;
    }
    int rc = mbs_fd_prescribed_in_workspace(m, d, q, qd, NULL, f->presc, qdd, f->frc);
    if (rc) {
        snprintf(msg, len, "index1: forward dynamics of the tree: %s", mbs_data_error(d));
        return rc;
    }
    memset(f->step.lambda, 0, sizeof(double) * (size_t)f->nc);
    for (int k = 0; k < m->con.ndriver; k++) {
        const double lam = -f->frc[f->drv_v[k]];
        if (!isfinite(lam)) {
            snprintf(msg, len, "index1: multiplier of driver %s is not finite at t = %.9g", m->con.driver[k].name, t);
            return MBS_ERR_NUMERIC;
        }
        f->step.lambda[m->con.driver[k].row] = lam;
    }
    return MBS_OK;
}

int mbs_form_index1_accel(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char *msg,
                          size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nr = f->nr;
    const mbs_fd_algorithm alg = f->o.formulation;
    mbs_data_set_time(d, t);
    if (f->prescribed) return index1_prescribed(f, t, q, qd, qdd, msg, len);
    int rc = tree_accelerations(f, q, qd);
    if (rc) {
        snprintf(msg, len, "index1: forward dynamics of the tree: %s", mbs_data_error(d));
        return rc;
    }
    if (nr == 0) {
        memcpy(qdd, f->qdd0, sizeof(double) * (size_t)n);
        return MBS_OK;
    }
    /* constraints with the kinematics of (q, qd, qdd0) left in d: phidd = Phi qdd0 - c */
    mbs_con_kernel(m, m->x, &d->ws, q, qd, f->qdd0, t, f->phi, f->Phi, f->phid, NULL, NULL, f->phidd);
    for (int k = 0; k < nr; k++) {
        double *y = f->Y + (size_t)k * n;
        for (int i = 0; i < n; i++) f->v1[i] = -f->Phi[(size_t)k * n + i];
        mbs_deriv_fd_solve(m, d, alg, q, qd, NULL, f->qdd0, f->tid, NULL, NULL, f->v1, y);
    }
    /* A = Phi Y (nr x nr, col-major), gam */
    for (int j = 0; j < nr; j++) {
        const double *y = f->Y + (size_t)j * n;
        for (int i = 0; i < nr; i++) {
            const double *p = f->Phi + (size_t)i * n;
            double s = 0;
            for (int k = 0; k < n; k++) s += p[k] * y[k];
            f->A[(size_t)j * nr + i] = s;
        }
    }
    const double om = f->o.omega, xi = f->o.xi;
    for (int i = 0; i < nr; i++) {
        f->gam[i] = f->phidd[i];
        if (f->o.baumgarte) f->gam[i] += 2 * om * xi * f->phid[i] + om * om * f->phi[i];
    }
    lapack_int rank = 0;
    lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, nr, nr, 1, f->A, nr, f->gam, nr, f->sv, 1e-12, &rank,
                                          f->lswork, f->lwork, f->iwork);
    if (info != 0) {
        snprintf(msg, len, "index1: the multiplier system could not be solved at t = %.9g", t);
        return MBS_ERR_NUMERIC;
    }
    for (int i = 0; i < n; i++) {
        double s = f->qdd0[i];
        for (int k = 0; k < nr; k++) s -= f->Y[(size_t)k * n + i] * f->gam[k];
        qdd[i] = s;
    }
    memset(f->step.lambda, 0, sizeof(double) * (size_t)f->nc);
    memcpy(f->step.lambda, f->gam, sizeof(double) * (size_t)nr);
    for (int i = 0; i < n; i++)
        if (!isfinite(qdd[i])) {
            snprintf(msg, len, "index1: acceleration of %s is not finite at t = %.9g", m->coord_name[i], t);
            return MBS_ERR_NUMERIC;
        }
    return MBS_OK;
}
