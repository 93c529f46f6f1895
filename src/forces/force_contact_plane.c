/*
 * force_contact_plane.c - a sphere or a circle (a wheel's rim) of a body
 * against a plane fixed to the ground: smooth Kelvin-Voigt normal force
 * with hysteresis damping,
 *     F_n = K s(delta)^n h(1 + chi deltadot),
 * along the plane normal at the contact point (no friction; see force_tire.c).
 * The geometry, the C2 onset s and the positive part h are in
 * force_contact_common.h, evaluated together with their tangent so that
 * apply and apply_d follow one formula. No potential energy is reported
 * (the smoothed law has none in closed form; the element is dissipative
 * with chi > 0 anyway).
 */
#include "force_contact_common.h"

static void apply(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t)
{
    (void)m; (void)q; (void)qd; (void)t;
    MBS_K(ct_apply)(fe, x, w, 0);
}

static void apply_d(const mbs_model *m, const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                    const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *dq,
                    const mreal *dqd, mreal *dqfrc, mreal t)
{
    (void)m; (void)q; (void)qd; (void)dq; (void)dqd; (void)dqfrc; (void)t;
    MBS_K(ct_apply_d)(fe, x, w, dx, dw, 0);
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_contact_plane) = { "contact_plane", apply, 0, apply_d };
