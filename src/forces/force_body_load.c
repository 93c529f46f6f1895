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

/* f = s F (or s A F): df = ds F + s dF (+ dA s F + A (ds F + s dF) in body
 * axes); the same for the torque; the point moves with dx. */
static void apply_d(const mbs_model *m, const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                    const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *dq,
                    const mreal *dqd, mreal *dqfrc, mreal t)
{
    (void)q; (void)qd; (void)dq; (void)dqd; (void)dqfrc;
    const int i = fe->body[0];
    const mreal s = MBS_K(mbs_force_time_factor)(m, fe, x, t);
    const mreal ds = MBS_K(mbs_force_time_factor_d)(m, fe, x, dx, t);
    mreal f[3], n[3], df[3], dn[3];
    v3_scale(f, x + fe->x_value, s);
    v3_scale(n, x + fe->x_torque, s);
    v3_scale(df, x + fe->x_value, ds);
    v3_scale(dn, x + fe->x_torque, ds);
    if (dx) {
        v3_axpy(df, s, dx + fe->x_value);
        v3_axpy(dn, s, dx + fe->x_torque);
    }
    if (fe->body_axes) {
        mreal a[3], b[3];
        const mreal *A = w->A + 9 * i, *dA = dw->A + 9 * i;
        m3_mv(a, dA, f);
        m3_mv(b, A, df);
        v3_add(df, a, b);
        m3_mv(a, dA, n);
        m3_mv(b, A, dn);
        v3_add(dn, a, b);
        m3_mv(f, A, f);
    }
    fc_add_force_d(dw->xfrc, i, x + fe->x_point[0], dx ? dx + fe->x_point[0] : 0, f, df);
    for (int k = 0; k < 3; k++) dw->xfrc[15 * i + 3 + k] += dn[k];
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_body_load) = { "body_load", apply, 0, apply_d };
