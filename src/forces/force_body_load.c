/*
 * force_body_load.c - external force and torque on a body point:
 *   f = F s(t),  n = N s(t)               (global axes), or
 *   f = A_i F s(t),  n = A_i N s(t)       (body axes: they turn with the body),
 * with s the time function (1 without one). The force acts at the body
 * point pbar (default: the centre of mass); the torque is a free vector.
 */
#include "force.h"
#include "force_common.h"

static void apply(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t)
{
    (void)q; (void)qd;
    const int i = fe->body[0];
    const mreal s = MBS_K(mbs_force_time_factor)(m, fe, x, t);
    mreal f[3], n[3];
    v3_scale(f, x + fe->x_value, s);
    v3_scale(n, x + fe->x_torque, s);
    if (fe->body_axes) {
        m3_mv(f, w->A + 9 * i, f);
        m3_mv(n, w->A + 9 * i, n);
    }
    fc_add_force(w->xfrc, i, x + fe->x_point[0], f);
    fc_add_torque(w->xfrc, i, n);
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_body_load) = { "body_load", apply, 0 };
