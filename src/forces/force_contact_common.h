/*
 * force_contact_common.h - the contact kernel shared by contact_plane
 * (force_contact_plane.c) and tire (force_tire.c): geometry, smooth normal
 * force, tire friction, and their tangent, evaluated together (internal,
 * templated over mreal like every kernel; docs/model-format.md "Contact and
 * tire forces").
 *
 * Numbers of an element, x[fe->x + ...]:
 *   CT_K    stiffness K (N/m^n)          CT_N    exponent n (>= 1)
 *   CT_CHI  hysteresis chi (s/m)         CT_R    radius R (m)
 *   CT_EPS  onset smoothing eps (m)      CT_P0   plane point (global, 3)
 *   CT_NRM  plane normal (global, 3)     CT_AX   circle axis (body axes, 3)
 *   contact_plane only: CT_MU friction coefficient mu, CT_VS slip speed v_s (m/s)
 *   tire only: TR_KC kappa_c, TR_AC alpha_c, TR_MUX mu_x, TR_MUY mu_y,
 *   TR_V0 speed regularization v0 (m/s).
 * The element's body is fe->body[0]; its centre point (sphere or circle
 * centre, body-local) is x[fe->x_point[0] .. +2].
 *
 * Geometry (n the plane normal, c the centre, a = A abar the circle axis):
 *   sphere  u~ = n
 *   circle  u = n - (n.a) a,  u~ = u / sqrt(u.u + 1e-12)  (the direction from
 *           the contact point to the centre, in the wheel plane)
 *   P = c - R u~ (contact point),  rho = P - c
 *   delta = -n.(P - p0)  (penetration),  deltadot = -n.v_P,
 *   v_P = v_c + w x rho  (velocity of the body point at P; for both shapes
 *   it equals d(delta)/dt exactly: P slides along the rim tangent, normal to n)
 * Normal force (Hunt-Crossley / Lankarani-Nikravesh hysteresis damping, the
 * law Flores & Lankarani review; chi = 3 (1 - e^2) / (4 v_ref) from a
 * coefficient of restitution e at the reference impact speed v_ref):
 *   F_n = K s(delta)^n  h(1 + chi deltadot)
 * with two C2 positive parts (no jump in the force or its derivative, so
 * the sensitivities are meaningful through the contact onset):
 *   s(d)  = 0 (d <= 0), d (d >= eps), eps P(d/eps) between,
 *           P(t) = 6 t^3 - 8 t^4 + 3 t^5 (P, P', P'' match at both ends)
 *   h(y)  = the same with width 0.1: keeps F_n >= 0 when the bodies separate
 *           fast (1 + chi deltadot < 0) instead of pulling them together.
 * Tire (linearized friction after Luque et al.): e_x = a x u~ (the rolling
 * direction of a positive spin about a), e_y = n x e_x,
 *   V = sqrt((e_x.v_c)^2 + v0^2),  kappa = -(e_x.v_P) / V,  tan(alpha) = (e_y.v_P) / V
 *   F_x = mu_x F_n sat(kappa / kappa_c),  F_y = -mu_y F_n sat(tan(alpha) / alpha_c)
 * sat: the identity up to 0.9, 1 from 1.1 on (odd), C2 in between (a C2
 * smoothing of |z| over |z| < 0.1 at the corners). So the slip stiffnesses
 * are mu_x F_n / kappa_c and mu_y F_n / alpha_c, saturating at mu F_n.
 * Contact_plane friction (regularized Coulomb; zero when mu = 0): with the
 * slip velocity v_t = v_P - (n.v_P) n of the body point at P,
 *   F_t = -mu F_n v_t / sqrt(v_t.v_t + v_s^2)
 * (smooth; viscous with coefficient mu F_n / v_s near standstill, mu F_n
 * against the slip once |v_t| >> v_s).
 * The loads: f = F_n n (+ F_x e_x + F_y e_y, or + F_t) at the centre point
 * and the torque rho x f (the force acts at P).
 *
 * Allocation-free; every decision is taken on real parts (complex step).
 */
#ifndef MBS_FORCE_CONTACT_COMMON_H
#define MBS_FORCE_CONTACT_COMMON_H
#endif

#ifdef MBS_COMPLEX
#ifndef MBS_CT_BODY_CS
#define MBS_CT_BODY_CS
#define MBS_CT_BODY
#endif
#else
#ifndef MBS_CT_BODY_D
#define MBS_CT_BODY_D
#define MBS_CT_BODY
#endif
#endif

#ifdef MBS_CT_BODY
#undef MBS_CT_BODY

#include "force.h"
#include "force_common.h"

#include "model/force_contact_layout.h"

#define CT_UEPS2 1e-12   /* regularization of |u|^2 (circle axis along the normal) */
#define CT_H_W 0.1       /* width of the positive part of the damping factor */
#define CT_SAT_W 0.1     /* half-width of the smoothed corners of sat */

#ifdef MBS_COMPLEX
#define CT_EXP(x) cexp(x)
#define CT_LOG(x) clog(x)
#else
#define CT_EXP(x) exp(x)
#define CT_LOG(x) log(x)
#endif

/* C2 positive part of x with width e (e may carry a tangent de):
 * value, and its partial derivatives *px (wrt x) and *pe (wrt e). */
static inline mreal MBS_K(ct_pp)(mreal x, mreal e, mreal *px, mreal *pe)
{
    const double xr = MRE(x);
    if (xr <= 0) {
        *px = 0;
        *pe = 0;
        return 0;
    }
    if (xr >= MRE(e)) {
        *px = 1;
        *pe = 0;
        return x;
    }
    const mreal t = x / e, t2 = t * t;
    const mreal P = t2 * t * (6 - 8 * t + 3 * t2), dP = t2 * (18 - 32 * t + 15 * t2);
    *px = dP;
    *pe = P - t * dP;
    return e * P;
}

/* C2 smoothing of |z| over |z| < w: 3w/8 + 3z^2/(4w) - z^4/(8w^3) */
static inline mreal MBS_K(ct_sabs)(mreal z, double w, mreal *dz)
{
    const double zr = MRE(z);
    if (zr >= w) {
        *dz = 1;
        return z;
    }
    if (zr <= -w) {
        *dz = -1;
        return -z;
    }
    const mreal z2 = z * z;
    *dz = 3 * z / (2 * w) - z2 * z / (2 * w * w * w);
    return 3 * w / 8 + 3 * z2 / (4 * w) - z2 * z2 / (8 * w * w * w);
}

/* Smooth saturation x - max~(0, x - 1) + max~(0, -x - 1). */
static inline mreal MBS_K(ct_sat)(mreal x, mreal *dx)
{
    mreal d1, d2;
    const mreal r1 = 0.5 * ((x - 1) + MBS_K(ct_sabs)(x - 1, CT_SAT_W, &d1));
    const mreal r2 = 0.5 * ((-x - 1) + MBS_K(ct_sabs)(-x - 1, CT_SAT_W, &d2));
    *dx = 1 - 0.5 * (1 + d1) - 0.5 * (1 + d2);
    return x - r1 + r2;
}

static inline mreal MBS_K(ct_dot_d)(const mreal *a, const mreal *da, const mreal *b, const mreal *db)
{
    return v3_dot(da, b) + v3_dot(a, db);
}

/* d(a x b) = da x b + a x db */
static inline void MBS_K(ct_cross_d)(mreal *out, const mreal *a, const mreal *da, const mreal *b, const mreal *db)
{
    v3_cross(out, da, b);
    v3_cross_add(out, a, db);
}

/* Regularized Coulomb friction of a contact_plane (header comment), added
 * to f and its tangent to df; de NULL: a zero direction of the numbers. */
static inline void MBS_K(ct_friction)(const mreal *e, const mreal *de, const mreal *n, const mreal *dn,
                                      const mreal *vP, const mreal *dvP, mreal Fn, mreal dFn, mreal *f, mreal *df)
{
    const mreal mu = e[CT_MU], dmu = de ? de[CT_MU] : 0;
    if (MRE(mu) == 0 && MIM(mu) == 0 && MRE(dmu) == 0 && MIM(dmu) == 0) return;
    const mreal vs = e[CT_VS], dvs = de ? de[CT_VS] : 0;
    const mreal vn = v3_dot(n, vP), dvn = MBS_K(ct_dot_d)(n, dn, vP, dvP);
    mreal vt[3], dvt[3];
    for (int k = 0; k < 3; k++) {
        vt[k] = vP[k] - vn * n[k];
        dvt[k] = dvP[k] - dvn * n[k] - vn * dn[k];
    }
    const mreal s = MSQRT(v3_dot(vt, vt) + vs * vs), ds = (v3_dot(vt, dvt) + vs * dvs) / s;
    const mreal g = mu * Fn / s, dg = (dmu * Fn + mu * dFn) / s - mu * Fn * ds / (s * s);
    for (int k = 0; k < 3; k++) {
        f[k] -= g * vt[k];
        df[k] -= dg * vt[k] + g * dvt[k];
    }
}

/* The loads of a contact_plane (tire = 0) or tire (tire = 1) element and
 * their tangent: f (global force at the centre point), tq (global torque),
 * df, dtq along the kinematic tangents of dw and the model-vector direction
 * dx (dw NULL: a zero direction, dx NULL: zero). Returns 0 when the body
 * is out of contact (every output zero).
 * long-function: one contact law (penetration, normal force, tire slip
 * forces, each with its tangent) that reads best as one sequence. */
static inline int MBS_K(ct_eval)(const mbs_force_info *fe, const mreal *x, const mreal *dx,
                                 const MBS_K(mbs_ws) *w, const MBS_K(mbs_ws) *dw, int tire,
                                 mreal *f, mreal *tq, mreal *df, mreal *dtq)
{
    static const mreal Z3[3] = { 0, 0, 0 }, Z9[9] = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    v3_zero(f);
    v3_zero(tq);
    v3_zero(df);
    v3_zero(dtq);
    const int i = fe->body[0];
    const mreal *e = x + fe->x, *de = dx ? dx + fe->x : NULL;
#define DE(k) (de ? de[k] : 0)
#define DV(k) (de ? de + (k) : Z3)
    const mreal *cb = x + fe->x_point[0], *dcb = dx ? dx + fe->x_point[0] : NULL;
    mreal c[3], vc[3], dc[3], dvc[3];
    fc_point(w->A, w->o, w->V, w->r, i, cb, c, vc);
    if (dw) {
        fc_point_d(w->A, w->o, w->V, w->r, dw->A, dw->o, dw->V, dw->r, i, cb, dcb, c, dc, dvc);
    } else {   /* primal only (dx is NULL then) */
        v3_zero(dc);
        v3_zero(dvc);
    }
    const mreal *A = w->A + 9 * i, *dA = dw ? dw->A + 9 * i : Z9;
    const mreal *om = w->V + 6 * i + 3, *dom = dw ? dw->V + 6 * i + 3 : Z3;
    const mreal *n = e + CT_NRM, *dn = DV(CT_NRM);
    const mreal *p0 = e + CT_P0, *dp0 = DV(CT_P0);
    const mreal R = e[CT_R], dR = DE(CT_R);

    /* u~ and its tangent */
    mreal ut[3], dut[3], a[3], da[3];
    if (fe->shape == 1) {
        mreal t[3];
        m3_mv(a, A, e + CT_AX);
        m3_mv(da, dA, e + CT_AX);
        m3_mv(t, A, DV(CT_AX));
        v3_add(da, da, t);
        const mreal na = v3_dot(n, a), dna = MBS_K(ct_dot_d)(n, dn, a, da);
        mreal u[3], du[3];
        for (int k = 0; k < 3; k++) {
            u[k] = n[k] - na * a[k];
            du[k] = dn[k] - dna * a[k] - na * da[k];
        }
        const mreal ul = MSQRT(v3_dot(u, u) + CT_UEPS2), dul = v3_dot(u, du) / ul;
        for (int k = 0; k < 3; k++) {
            ut[k] = u[k] / ul;
            dut[k] = (du[k] - ut[k] * dul) / ul;
        }
    } else {
        v3_copy(ut, n);
        v3_copy(dut, dn);
        v3_zero(a);
        v3_zero(da);
    }
    mreal rho[3], drho[3], s[3], ds[3], vP[3], dvP[3];
    for (int k = 0; k < 3; k++) {
        rho[k] = -R * ut[k];
        drho[k] = -dR * ut[k] - R * dut[k];
        s[k] = c[k] + rho[k] - p0[k];
        ds[k] = dc[k] + drho[k] - dp0[k];
    }
    const mreal delta = -v3_dot(n, s), ddelta = -MBS_K(ct_dot_d)(n, dn, s, ds);
    if (MRE(delta) <= 0) return 0;
    v3_cross(vP, om, rho);
    v3_add(vP, vP, vc);
    MBS_K(ct_cross_d)(dvP, om, dom, rho, drho);
    v3_add(dvP, dvP, dvc);
    const mreal rate = -v3_dot(n, vP), drate = -MBS_K(ct_dot_d)(n, dn, vP, dvP);

    /* F_n = K s(delta)^n h(1 + chi rate) */
    mreal sx, se;
    const mreal eps = e[CT_EPS];
    const mreal sd = MBS_K(ct_pp)(delta, eps, &sx, &se);
    const mreal dsd = sx * ddelta + se * DE(CT_EPS);
    if (MRE(sd) <= 0) return 0;
    const mreal ne = e[CT_N], lg = CT_LOG(sd);
    const mreal pw = CT_EXP(ne * lg), dpw = pw * (DE(CT_N) * lg + ne * dsd / sd);
    const mreal chi = e[CT_CHI];
    const mreal y = 1 + chi * rate, dy = DE(CT_CHI) * rate + chi * drate;
    mreal hy, hw;
    const mreal h = MBS_K(ct_pp)(y, CT_H_W, &hy, &hw);
    const mreal dh = hy * dy;
    const mreal K = e[CT_K];
    const mreal Fn = K * pw * h, dFn = DE(CT_K) * pw * h + K * dpw * h + K * pw * dh;
    for (int k = 0; k < 3; k++) {
        f[k] = Fn * n[k];
        df[k] = dFn * n[k] + Fn * dn[k];
    }
    if (!tire) MBS_K(ct_friction)(e, de, n, dn, vP, dvP, Fn, dFn, f, df);
    if (tire) {
        mreal ex[3], dex[3], ey[3], dey[3];
        v3_cross(ex, a, ut);
        MBS_K(ct_cross_d)(dex, a, da, ut, dut);
        v3_cross(ey, n, ex);
        MBS_K(ct_cross_d)(dey, n, dn, ex, dex);
        const mreal Vx = v3_dot(ex, vc), dVx = MBS_K(ct_dot_d)(ex, dex, vc, dvc);
        const mreal v0 = e[TR_V0];
        const mreal Vb = MSQRT(Vx * Vx + v0 * v0), dVb = (Vx * dVx + v0 * DE(TR_V0)) / Vb;
        const mreal sxv = v3_dot(ex, vP), dsxv = MBS_K(ct_dot_d)(ex, dex, vP, dvP);
        const mreal syv = v3_dot(ey, vP), dsyv = MBS_K(ct_dot_d)(ey, dey, vP, dvP);
        const mreal kap = -sxv / Vb, dkap = -dsxv / Vb + sxv * dVb / (Vb * Vb);
        const mreal bet = syv / Vb, dbet = dsyv / Vb - syv * dVb / (Vb * Vb);
        const mreal kc = e[TR_KC], ac = e[TR_AC];
        const mreal zx = kap / kc, dzx = dkap / kc - kap * DE(TR_KC) / (kc * kc);
        const mreal zy = bet / ac, dzy = dbet / ac - bet * DE(TR_AC) / (ac * ac);
        mreal gx, gy;
        const mreal Sx = MBS_K(ct_sat)(zx, &gx), Sy = MBS_K(ct_sat)(zy, &gy);
        const mreal mux = e[TR_MUX], muy = e[TR_MUY];
        const mreal Fx = mux * Fn * Sx, dFx = DE(TR_MUX) * Fn * Sx + mux * dFn * Sx + mux * Fn * gx * dzx;
        const mreal Fy = -muy * Fn * Sy, dFy = -(DE(TR_MUY) * Fn * Sy + muy * dFn * Sy + muy * Fn * gy * dzy);
        for (int k = 0; k < 3; k++) {
            f[k] += Fx * ex[k] + Fy * ey[k];
            df[k] += dFx * ex[k] + Fx * dex[k] + dFy * ey[k] + Fy * dey[k];
        }
    }
    v3_cross(tq, rho, f);
    MBS_K(ct_cross_d)(dtq, rho, drho, f, df);
#undef DE
#undef DV
    return 1;
}

static inline void MBS_K(ct_apply)(const mbs_force_info *fe, const mreal *x, MBS_K(mbs_ws) *w, int tire)
{
    mreal f[3], tq[3], df[3], dtq[3];
    if (!MBS_K(ct_eval)(fe, x, NULL, w, NULL, tire, f, tq, df, dtq)) return;
    fc_add_force(w->xfrc, fe->body[0], x + fe->x_point[0], f);
    fc_add_torque(w->xfrc, fe->body[0], tq);
}

static inline void MBS_K(ct_apply_d)(const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                                     const mreal *dx, MBS_K(mbs_ws) *dw, int tire)
{
    mreal f[3], tq[3], df[3], dtq[3];
    if (!MBS_K(ct_eval)(fe, x, dx, w, dw, tire, f, tq, df, dtq)) return;
    const int i = fe->body[0];
    fc_add_force_d(dw->xfrc, i, x + fe->x_point[0], dx ? dx + fe->x_point[0] : NULL, f, df);
    for (int k = 0; k < 3; k++) dw->xfrc[15 * i + 3 + k] += dtq[k];
}

#endif
