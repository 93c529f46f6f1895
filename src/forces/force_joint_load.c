/*
 * force_joint_load.c - applied generalized force on one joint coordinate
 * (a motor torque on an angle, a force on a slide):
 *   Q_k += value * f(t)      (f = 1 without a time function).
 * Not on Euler parameters (rejected at load: a generalized force there
 * must be orthogonal to p; apply torques with body loads instead).
 */
#include "force.h"

static void apply(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t)
{
    (void)q; (void)qd;
    w->qfrc[fe->vel] += x[fe->x_value] * MBS_K(mbs_force_time_factor)(m, fe, x, t);
}

/* dQ_k = da f(t) + a df(t) (only model-vector directions act) */
static void apply_d(const mbs_model *m, const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                    const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *dq,
                    const mreal *dqd, mreal *dqfrc, mreal t)
{
    (void)w; (void)dw; (void)q; (void)qd; (void)dq; (void)dqd;
    if (!dx) return;
    dqfrc[fe->vel] += dx[fe->x_value] * MBS_K(mbs_force_time_factor)(m, fe, x, t) +
                        x[fe->x_value] * MBS_K(mbs_force_time_factor_d)(m, fe, x, dx, t);
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_joint_force) = { "joint_force", apply, 0, apply_d };
