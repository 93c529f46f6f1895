/*
 * force_tire.c - a wheel (circle of a body) rolling on a ground plane: the
 * normal force of force_contact_plane.c plus a linearized tire friction
 * model (after Luque, Alvarez & Vera 2004, as used in the thesis's buggy and
 * bicycle, Tables 7.15 and 7.24):
 *     F_x =  mu_x F_n sat(kappa / kappa_c)      (longitudinal, along e_x)
 *     F_y = -mu_y F_n sat(tan(alpha) / alpha_c) (lateral, along e_y)
 * with the longitudinal slip kappa and the slip angle alpha of the contact
 * point and a smooth, odd saturation: linear with slopes mu F_n / kappa_c and
 * mu F_n / alpha_c (the slip stiffnesses grow with the load), saturating at
 * mu F_n. Longitudinal and lateral saturation are independent (no friction
 * ellipse). The forward speed in the slip denominators is regularized,
 * sqrt(V^2 + v0^2), so the force stays smooth through standstill (it then
 * acts as a stiff viscous friction of coefficient mu F_n / (kappa_c v0)).
 * Equations and smoothness: force_contact_common.h, docs/model-format.md.
 */
#include "force_contact_common.h"

static void apply(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t)
{
    (void)m; (void)q; (void)qd; (void)t;
    MBS_K(ct_apply)(fe, x, w, 1);
}

static void apply_d(const mbs_model *m, const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                    const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *dq,
                    const mreal *dqd, mreal *dqfrc, mreal t)
{
    (void)m; (void)q; (void)qd; (void)dq; (void)dqd; (void)dqfrc; (void)t;
    MBS_K(ct_apply_d)(fe, x, w, dx, dw, 1);
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_tire) = { "tire", apply, 0, apply_d };
