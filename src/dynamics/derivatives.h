/*
 * derivatives.h - the building blocks of the derivatives (id_derivatives.c,
 * fd_derivatives.c, param_dx.c) shared with each other and with the
 * trajectory-sensitivity code (internal).
 */
#ifndef MBS_DERIVATIVES_IMPL_H
#define MBS_DERIVATIVES_IMPL_H

#include <string.h>

#include "kernels/data.h"
#include "kernels/results.h"

/* dx = d x / d rho_k: the unit direction of parameter k in the model vector. */
void mbs_deriv_param_dx(const mbs_model *m, int k, double *dx);
/* dx = sum_k drho_k d x / d rho_k (drho NULL: zero) */
void mbs_deriv_param_direction(const mbs_model *m, const double *drho, double *dx);

/* The results check of a derivative (n values, what names them): 0 or the
 * error left in d. */
static inline int mbs_deriv_check_finite(mbs_data *d, const double *v, int n, const char *what)
{
    /* the results check of every public call (src/kernels/results.c): nv rows of
     * coordinates, columns of coordinates or (d.../drho) of parameters */
    const int nv = d->model->nv > 0 ? d->model->nv : 1, cols = n / nv;
    const mbs_index_kind ck = strstr(what, "drho") ? MBS_IX_PARAM : cols == nv ? MBS_IX_COORD : MBS_IX_NONE;
    return mbs_data_results(d, "derivatives", MBS_RESULTS({ what, v, nv, cols, MBS_IX_COORD, ck }));
}

/* The element load tangent L of a body (15 entries, the layout of
 * ws.xfrc: force, torque, the P block) as the wrench W = [f; n] about the
 * origin, with A and o the body's rotation and origin; 0 if L is zero. */
static inline int mbs_deriv_load_wrench(const double *A, const double *o, const double *L, double W[6])
{
    if (L[0] == 0 && L[1] == 0 && L[2] == 0 && L[3] == 0 && L[4] == 0 && L[5] == 0) {
        int zero = 1;
        for (int c = 6; c < 15; c++) zero &= L[c] == 0;
        if (zero) return 0;
    }
    double AP[9];
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++)
            AP[3 * a + c] = A[3 * a] * L[6 + c] + A[3 * a + 1] * L[9 + c] + A[3 * a + 2] * L[12 + c];
    W[0] = L[0]; W[1] = L[1]; W[2] = L[2];
    W[3] = L[3] + AP[5] - AP[7] + o[1] * L[2] - o[2] * L[1];
    W[4] = L[4] + AP[6] - AP[2] + o[2] * L[0] - o[0] * L[2];
    W[5] = L[5] + AP[1] - AP[3] + o[0] * L[1] - o[1] * L[0];
    return 1;
}

/* The work of wrench W (about the origin) on the motion column col
 * ([b_lin; b_ang] at the point r): [b_lin + r x b_ang; b_ang] . W */
static inline double mbs_deriv_column_work(const double *col, const double *r, const double W[6])
{
    const double sl0 = col[0] + r[1] * col[5] - r[2] * col[4];
    const double sl1 = col[1] + r[2] * col[3] - r[0] * col[5];
    const double sl2 = col[2] + r[0] * col[4] - r[1] * col[3];
    return sl0 * W[0] + sl1 * W[1] + sl2 * W[2] + col[3] * W[3] + col[4] * W[4] + col[5] * W[5];
}

/* 1 if the FD derivatives form M'^-1 densely (LAPACK: chain-like trees)
 * rather than with the tree sparsity (src/dynamics/fd_derivatives.c) */
int mbs_deriv_fd_inverse_dense(const mbs_model *m);

/* Primal Newton-Euler at (q, qd, qdd) (loads at the data's time), leaving in
 * d->ws everything the tangents need; tau = ID. No state checks. */
void mbs_deriv_id_primal(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                         const double *qdd, double *tau);

/* Tangent of ID along (dq, dqd, dqdd, dx) (any NULL = 0) at the primal left by
 * mbs_deriv_id_primal; bodies first..last-1 and the path to the root (pass
 * 1, nb + 1 for a general direction). Leaves the tangent kinematics in
 * d->dws (used by the objective tangents). */
void mbs_deriv_id_tangent(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                          const double *qdd, const double *dq, const double *dqd,
                          const double *dqdd, const double *dx, double *dtau, int first, int last);

/* 1 if the all-columns kernel applies at q (every Euler quadruple on
 * |p| = 1 to 1e-14; id_derivatives.c), else the per-column sweeps. */
int mbs_deriv_id_fast(const mbs_model *m, const double *q);

/* dtau/dq and dtau/dqd (either may be NULL; M: the mass matrix, or NULL) at
 * the completed Newton-Euler primal left in d->ws at (q, qd, qdd)
 * (id_derivatives.c). */
void mbs_deriv_id_jacobians(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                            const double *qdd, double *dtau_dq, double *dtau_dqd, double *M);

/* mbs_inverse_dynamics_derivatives without the state checks (integrator
 * states slightly off |p| = 1). */
int mbs_deriv_id_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *qdd, double *tau, double *dtau_dq, double *dtau_dqd);

/* Forward dynamics qdd = FD(q, qd, tau) leaving the factors (articulated
 * inertias, or the Cholesky factor of M' in d->scratch for the
 * semi-recursive algorithm) and a completed Newton-Euler pass at (q, qd,
 * qdd) in d->ws; tid = ID(q, qd, qdd). No state checks. */
int mbs_deriv_fd_primal(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                        const double *qd, const double *tau, double *qdd, double *tid);
/* dqdd from rhs = dE = (tangent of ID at fixed qdd) - dtau (overwritten), with
 * the Euler-parameter completion terms along the state direction (dq, dqd). */
void mbs_deriv_fd_solve(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                        const double *qd, const double *tau, const double *qdd, const double *tid,
                        const double *dq, const double *dqd, double *rhs, double *dqdd);

#endif
