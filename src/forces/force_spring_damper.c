/*
 * force_spring_damper.c - point-to-point spring-damper.
 *
 * Between point 1 (body1) and point 2 (body2), d = r2 - r1:
 *   l    = sqrt(d.d + eps^2)          (eps = 1e-8 l_init, see below)
 *   ldot = d.(v2 - v1) / l
 *   F    = k (l - l0) + c ldot        (tension positive)
 *   f1   = F d / l on point 1,  f2 = -f1 on point 2
 *   V    = 1/2 k (l - l0)^2
 * so that f = -dV/dr exactly and the element's power is
 * -dV/dt - c ldot^2.
 *
 * Zero length: the direction d/|d| is undefined when the points meet.
 * The loader rejects elements whose points coincide in the initial
 * configuration; at run time, the length is regularized with
 * eps = 1e-8 x (initial length), a constant of the element, so the force
 * is a smooth function everywhere (also for complex-step and analytical
 * derivatives), changes nothing visible at ordinary lengths (relative
 * effect eps^2 / 2 l^2 < 1e-16 for l > l_init / 100), and vanishes
 * continuously (as d/eps) when the points meet instead of producing NaN.
 * mbs_forces_degenerate() reports elements shorter than 1e-6 l_init.
 */
#include "force.h"
#include "force_common.h"

static void geometry(const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                     mreal *d, mreal *dv, mreal *l, int vel)
{
    mreal r1[3], r2[3], v1[3], v2[3];
    fc_point(w->A, w->o, w->V, w->r, fe->body[0], x + fe->x_point[0], r1, vel ? v1 : 0);
    fc_point(w->A, w->o, w->V, w->r, fe->body[1], x + fe->x_point[1], r2, vel ? v2 : 0);
    v3_sub(d, r2, r1);
    if (vel) v3_sub(dv, v2, v1);
    *l = MSQRT(v3_dot(d, d) + fe->eps * fe->eps);
}

static void apply(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t)
{
    (void)m; (void)q; (void)qd; (void)t;
    mreal d[3], dv[3], l, f[3];
    geometry(fe, x, w, d, dv, &l, 1);
    const mreal ld = v3_dot(d, dv) / l;
    const mreal F = x[fe->x_stiffness] * (l - x[fe->x_free]) + x[fe->x_damping] * ld;
    v3_scale(f, d, F / l);
    fc_add_force(w->xfrc, fe->body[0], x + fe->x_point[0], f);
    v3_scale(f, f, -1);
    fc_add_force(w->xfrc, fe->body[1], x + fe->x_point[1], f);
}

static mreal energy(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                    const MBS_K(mbs_ws) *w, const mreal *q)
{
    (void)m; (void)q;
    mreal d[3], l;
    geometry(fe, x, w, d, 0, &l, 0);
    const mreal s = l - x[fe->x_free];
    return 0.5 * x[fe->x_stiffness] * s * s;
}

/* Tangent: with dd, ddv the tangents of d and v2 - v1,
 *   dl = d.dd / l,   dldot = (dd.dv + d.ddv)/l - ldot dl / l
 *   dF = dk (l - l0) + k (dl - dl0) + dc ldot + c dldot
 *   df1 = (dF / l - F dl / l^2) d + (F / l) dd */
static void apply_d(const mbs_model *m, const mbs_force_info *fe, const mreal *x, const MBS_K(mbs_ws) *w,
                    const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd, const mreal *dq,
                    const mreal *dqd, mreal *dqfrc, mreal t)
{
    (void)m; (void)q; (void)qd; (void)dq; (void)dqd; (void)dqfrc; (void)t;
    mreal r[2][3], v[2][3], dr[2][3], dv[2][3];
    const mreal *dp[2];   /* the points' tangents in dx (NULL: zero) */
    for (int s = 0; s < 2; s++) {
        const int b = fe->body[s], xp = fe->x_point[s];
        const mreal *d = dx ? dx + xp : 0;
        dp[s] = d && (d[0] != 0 || d[1] != 0 || d[2] != 0) ? d : 0;
        fc_point(w->A, w->o, w->V, w->r, b, x + xp, r[s], v[s]);
        fc_point_tangent(w->A, w->V, w->r, dw->A, dw->o, dw->V, dw->r, b, x + xp, dp[s], r[s], dr[s], dv[s]);
    }
    mreal d[3], dd[3], u[3], du[3];
    v3_sub(d, r[1], r[0]);
    v3_sub(dd, dr[1], dr[0]);
    v3_sub(u, v[1], v[0]);
    v3_sub(du, dv[1], dv[0]);
    const mreal l = MSQRT(v3_dot(d, d) + fe->eps * fe->eps);
    const mreal dl = v3_dot(d, dd) / l;
    const mreal ld = v3_dot(d, u) / l;
    const mreal dld = (v3_dot(dd, u) + v3_dot(d, du)) / l - ld * dl / l;
    const mreal k = x[fe->x_stiffness], c = x[fe->x_damping], l0 = x[fe->x_free];
    const mreal F = k * (l - l0) + c * ld;
    mreal dF = k * dl + c * dld;
    if (dx) dF += dx[fe->x_stiffness] * (l - l0) - k * dx[fe->x_free] + dx[fe->x_damping] * ld;
    mreal f[3], df[3];
    v3_scale(f, d, F / l);
    v3_scale(df, d, dF / l - F * dl / (l * l));
    v3_axpy(df, F / l, dd);
    const int b0 = fe->body[0], b1 = fe->body[1], x0 = fe->x_point[0], x1 = fe->x_point[1];
    fc_add_force_d(dw->xfrc, b0, x + x0, dp[0], f, df);
    v3_scale(f, f, -1);
    v3_scale(df, df, -1);
    fc_add_force_d(dw->xfrc, b1, x + x1, dp[1], f, df);
}

const MBS_K(mbs_force_ops) MBS_K(mbs_force_spring_damper) = { "spring_damper", apply, energy, apply_d };
