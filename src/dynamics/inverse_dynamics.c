/*
 * inverse_dynamics.c - mbs_inverse_dynamics, mbs_bias_forces and
 * mbs_mass_matrix: the public entry points over the kernels' Newton-Euler
 * pass and composite inertias, with the state and result checks.
 */
#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "kernels/results.h"

int mbs_inverse_dynamics(const mbs_model *m, mbs_data *d, const double *q,
                         const double *qd, const double *qdd, double *tau)
{
    int rc = mbs_data_check_state(d, q, qd, qdd);
    if (rc) return rc;
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    mbs_rnea(m, &d->ws, tau);
    rc = mbs_data_results(d, "inverse dynamics", MBS_RESULTS({ "tau", tau, m->nv, 1, MBS_IX_COORD, 0 }));
    return rc ? rc : mbs_data_kinematics_results(d, q, qd, qdd);
}

int mbs_bias_forces(const mbs_model *m, mbs_data *d, const double *q,
                    const double *qd, double *h)
{
    return mbs_inverse_dynamics(m, d, q, qd, NULL, h);
}

int mbs_mass_matrix(const mbs_model *m, mbs_data *d, const double *q, double *M)
{
    int rc = mbs_data_check_state(d, q, NULL, NULL);
    if (rc) return rc;
    if (d->model == m && mbs_crbajf_usable(d)) {
        const double s = mbs_crbajf_mass_matrix(m, d, q, 0, M);   /* joint frames (crba_joint_frames.c) */
        if (s - s == 0) {   /* every entry finite (the upper triangle is a copy of the lower) */
            d->err[0] = 0;
            return MBS_OK;
        }
    } else {
        mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
        mbs_mass_terms(m, m->x, &d->ws);
        mbs_crba(m, &d->ws, M);
    }
    return mbs_data_results(d, "mass matrix", MBS_RESULTS({ "M", M, m->nv, m->nv, MBS_IX_COORD, MBS_IX_COORD }));
}
