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
    w->qfrc[fe->coord] += x[fe->x_value] * MBS_K(mbs_force_time_factor)(m, fe, x, t);
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_joint_force) = { "joint_force", apply, 0 };
