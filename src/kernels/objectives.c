/*
 * objectives.c - objective-function integrands and their tangents
 * (docs/sensitivity.md).
 *
 * An objective is psi = int sum_terms g dt + sum_terminal g(tF), each term
 * g = w |e|^2 (squared) or w e (linear), e = quantity - reference(t). The
 * quantities are read from the workspace after level-2 kinematics (point
 * positions, velocities, accelerations; coordinates; angular velocities),
 * so the same code serves simulations, the complex-step build and, through
 * the tangent below, every sensitivity method. A coordinate's force is read
 * from the inverse dynamics tau (and its tangent dtau) the caller computed
 * at the same state; a squared term with a power p is weight (|e|^2)^(p/2).
 */
#include "kernels.h"
#include "base/algebra.h"
#include "kernels/functions.h"

static const mreal zeros[3];

/* quantity of a term (n components) from the primal workspace */
static int term_value(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                      const mbs_objective_term *tm, const mreal *q, const mreal *qd,
                      const mreal *qdd, const mreal *tau, mreal *v)
{
    switch (tm->quantity) {
    case MBS_OBJQ_POINT_POSITION:
    case MBS_OBJQ_POINT_VELOCITY:
    case MBS_OBJQ_POINT_ACCELERATION: {
        const mbs_point_info *p = &m->point[tm->point];
        const int b = p->body;
        mreal rP[3], s[3], t[3], u[3];
        m3_mv(rP, w->A + 9 * b, x + p->x);
        v3_add(rP, rP, w->o + 3 * b);
        if (tm->quantity == MBS_OBJQ_POINT_POSITION) { v3_copy(v, rP); return 3; }
        v3_sub(s, rP, w->r + 3 * b);
        const mreal *V = w->V + 6 * b, *Vd = w->Vd + 6 * b;
        if (tm->quantity == MBS_OBJQ_POINT_VELOCITY) {
            v3_cross(t, V + 3, s);
            v3_add(v, V, t);
            return 3;
        }
        v3_cross(t, Vd + 3, s);
        v3_cross(u, V + 3, s);
        v3_cross_add(t, V + 3, u);
        v3_add(v, Vd, t);
        return 3;
    }
    case MBS_OBJQ_COORDINATE:
    case MBS_OBJQ_COORDINATE_VELOCITY:
    case MBS_OBJQ_COORDINATE_ACCELERATION:
    case MBS_OBJQ_COORDINATE_FORCE: {
        const mreal *src = tm->quantity == MBS_OBJQ_COORDINATE ? q
                           : tm->quantity == MBS_OBJQ_COORDINATE_VELOCITY ? qd
                           : tm->quantity == MBS_OBJQ_COORDINATE_ACCELERATION ? qdd : tau;
        for (int c = 0; c < tm->ncoord; c++) v[c] = src ? src[tm->coord3[c]] : 0;
        return tm->ncoord;
    }
    case MBS_OBJQ_KINETIC_ENERGY: {
        /* T = sum 1/2 (m |v_G|^2 + w . J w), v_G = v + w x (r_G - r) */
        mreal T = 0;
        for (int i = 1; i <= m->nb; i++) {
            const mreal *V = w->V + 6 * i;
            mreal s[3], vG[3], Jw[3];
            v3_sub(s, w->rG + 3 * i, w->r + 3 * i);
            v3_cross(vG, V + 3, s);
            v3_add(vG, vG, V);
            m3_mv(Jw, w->J + 9 * i, V + 3);
            T += 0.5 * (x[m->body[i].x_mass] * v3_dot(vG, vG) + v3_dot(V + 3, Jw));
        }
        v[0] = T;
        return 1;
    }
    case MBS_OBJQ_ANGULAR_VELOCITY: {
        const mreal *om = w->V + 6 * tm->body + 3;
        if (tm->vector < 0) { v3_copy(v, om); return 3; }
        mreal u[3];
        m3_mv(u, w->A + 9 * tm->body, x + m->vector[tm->vector].x);
        v[0] = v3_dot(om, u);
        return 1;
    }
    }
    return 0;
}

/* tangent of the quantity along the direction held in dw / dq.. / dx */
static void term_value_d(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                         const mreal *dx, const MBS_K(mbs_ws) *dw, const mbs_objective_term *tm,
                         const mreal *dq, const mreal *dqd, const mreal *dqdd, const mreal *dtau, mreal *dv)
{
    switch (tm->quantity) {
    case MBS_OBJQ_POINT_POSITION:
    case MBS_OBJQ_POINT_VELOCITY:
    case MBS_OBJQ_POINT_ACCELERATION: {
        const mbs_point_info *p = &m->point[tm->point];
        const int b = p->body;
        const mreal *A = w->A + 9 * b, *dA = dw->A + 9 * b, *pb = x + p->x;
        const mreal *dpb = dx ? dx + p->x : zeros;
        mreal rP[3], drP[3], t[3];
        m3_mv(rP, A, pb);
        v3_add(rP, rP, w->o + 3 * b);
        m3_mv(drP, dA, pb);
        m3_mv(t, A, dpb);
        v3_add(drP, drP, t);
        v3_add(drP, drP, dw->o + 3 * b);
        if (tm->quantity == MBS_OBJQ_POINT_POSITION) { v3_copy(dv, drP); return; }
        mreal s[3], ds[3];
        v3_sub(s, rP, w->r + 3 * b);
        v3_sub(ds, drP, dw->r + 3 * b);
        const mreal *V = w->V + 6 * b, *dV = dw->V + 6 * b;
        if (tm->quantity == MBS_OBJQ_POINT_VELOCITY) {
            /* v = V + w x s */
            v3_copy(dv, dV);
            v3_cross_add(dv, dV + 3, s);
            v3_cross_add(dv, V + 3, ds);
            return;
        }
        /* a = Vd + al x s + w x (w x s) */
        const mreal *Vd = w->Vd + 6 * b, *dVd = dw->Vd + 6 * b;
        mreal ws[3], dws[3];
        v3_cross(ws, V + 3, s);
        v3_zero(dws);
        v3_cross_add(dws, dV + 3, s);
        v3_cross_add(dws, V + 3, ds);
        v3_copy(dv, dVd);
        v3_cross_add(dv, dVd + 3, s);
        v3_cross_add(dv, Vd + 3, ds);
        v3_cross_add(dv, dV + 3, ws);
        v3_cross_add(dv, V + 3, dws);
        return;
    }
    case MBS_OBJQ_COORDINATE:
    case MBS_OBJQ_COORDINATE_VELOCITY:
    case MBS_OBJQ_COORDINATE_ACCELERATION:
    case MBS_OBJQ_COORDINATE_FORCE: {
        const mreal *src = tm->quantity == MBS_OBJQ_COORDINATE ? dq
                           : tm->quantity == MBS_OBJQ_COORDINATE_VELOCITY ? dqd
                           : tm->quantity == MBS_OBJQ_COORDINATE_ACCELERATION ? dqdd : dtau;
        for (int c = 0; c < tm->ncoord; c++) dv[c] = src ? src[tm->coord3[c]] : 0;
        return;
    }
    case MBS_OBJQ_KINETIC_ENERGY: {
        mreal dT = 0;
        for (int i = 1; i <= m->nb; i++) {
            const mreal *V = w->V + 6 * i, *dV = dw->V + 6 * i;
            const mreal mass = x[m->body[i].x_mass], dmass = dx ? dx[m->body[i].x_mass] : 0;
            mreal s[3], ds[3], vG[3], dvG[3], Jw[3], dJw[3], t[3];
            v3_sub(s, w->rG + 3 * i, w->r + 3 * i);
            v3_sub(ds, dw->rG + 3 * i, dw->r + 3 * i);
            v3_cross(vG, V + 3, s);
            v3_add(vG, vG, V);
            v3_copy(dvG, dV);
            v3_cross_add(dvG, dV + 3, s);
            v3_cross_add(dvG, V + 3, ds);
            m3_mv(Jw, w->J + 9 * i, V + 3);
            m3_mv(dJw, dw->J + 9 * i, V + 3);
            m3_mv(t, w->J + 9 * i, dV + 3);
            v3_add(dJw, dJw, t);
            dT += 0.5 * dmass * v3_dot(vG, vG) + mass * v3_dot(vG, dvG) +
                  0.5 * (v3_dot(dV + 3, Jw) + v3_dot(V + 3, dJw));
        }
        dv[0] = dT;
        return;
    }
    case MBS_OBJQ_ANGULAR_VELOCITY: {
        const mreal *om = w->V + 6 * tm->body + 3, *dom = dw->V + 6 * tm->body + 3;
        if (tm->vector < 0) { v3_copy(dv, dom); return; }
        const mreal *ub = x + m->vector[tm->vector].x;
        mreal u[3], du[3];
        m3_mv(u, w->A + 9 * tm->body, ub);
        m3_mv(du, dw->A + 9 * tm->body, ub);
        dv[0] = v3_dot(dom, u) + v3_dot(om, du);
        return;
    }
    }
}

/* reference of component c at t, and (if dref) its tangent along dx */
static mreal term_ref(const mbs_model *m, const mreal *x, const mbs_objective_term *tm, int c,
                      mreal t, const mreal *dx, mreal *dref)
{
    int f = tm->func[c];
    if (f < 0) {
        if (dref) *dref = 0;
        return tm->ref[c];
    }
    const mbs_func_info *fi = &m->func[f];
    if (dref) {
        *dref = 0;
        if (dx) {
            if (fi->type == MBS_FUNC_SPLINE) {
                /* a spline is linear in its knot values: its tangent is the
                 * spline through the knot tangents */
                *dref = MBS_K(mbs_func_eval)(fi, dx, t, 0);
            } else {
                mreal buf[8];
                MBS_K(mbs_func_dx)(fi, x, t, buf);
                for (int j = 0; j < fi->nx && j < 8; j++) *dref += buf[j] * dx[fi->x + j];
            }
        }
    }
    return MBS_K(mbs_func_eval)(fi, x, t, 0);
}

/* components a term uses: [c0, c1) */
static void term_range(const mbs_objective_term *tm, int n, int *c0, int *c1)
{
    if (n == 1) { *c0 = 0; *c1 = 1; return; }
    if (tm->component >= 0) { *c0 = tm->component; *c1 = tm->component + 1; return; }
    *c0 = 0; *c1 = 3;
}

mreal MBS_K(mbs_objective_integrand)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                     int k, int terminal, const mreal *q, const mreal *qd,
                                     const mreal *qdd, const mreal *tau, mreal t)
{
    const mbs_objective_info *o = &m->obj[k];
    const int t0 = terminal ? o->nintegral : 0, t1 = terminal ? o->nterm : o->nintegral;
    mreal g = 0;
    for (int i = t0; i < t1; i++) {
        const mbs_objective_term *tm = &o->term[i];
        mreal v[3], s = 0;
        const int pow2 = !tm->squared || tm->power == 2;
        int n = term_value(m, x, w, tm, q, qd, qdd, tau, v), c0, c1;
        term_range(tm, n, &c0, &c1);
        for (int c = c0; c < c1; c++) {
            mreal e = v[c] - term_ref(m, x, tm, tm->nref == 1 ? 0 : c, t, 0, 0);
            if (pow2) g += tm->weight * (tm->squared ? e * e : e);
            else s += e * e;
        }
        if (!pow2) g += tm->weight * MPOW(s, 0.5 * tm->power);
    }
    return g;
}

/* d(s^(p/2)) = p/2 s^(p/2 - 1) ds, s = |e|^2 */
mreal MBS_K(mbs_objective_integrand_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                       const mreal *dx, const MBS_K(mbs_ws) *dw, int k, int terminal,
                                       const mreal *q, const mreal *qd, const mreal *qdd, const mreal *tau,
                                       const mreal *dq, const mreal *dqd, const mreal *dqdd, const mreal *dtau,
                                       mreal t)
{
    const mbs_objective_info *o = &m->obj[k];
    const int t0 = terminal ? o->nintegral : 0, t1 = terminal ? o->nterm : o->nintegral;
    mreal dg = 0;
    for (int i = t0; i < t1; i++) {
        const mbs_objective_term *tm = &o->term[i];
        mreal v[3], dv[3], s = 0, ds = 0;
        const int pow2 = !tm->squared || tm->power == 2;
        int n = term_value(m, x, w, tm, q, qd, qdd, tau, v), c0, c1;
        term_value_d(m, x, w, dx, dw, tm, dq, dqd, dqdd, dtau, dv);
        term_range(tm, n, &c0, &c1);
        for (int c = c0; c < c1; c++) {
            mreal dref;
            mreal e = v[c] - term_ref(m, x, tm, tm->nref == 1 ? 0 : c, t, dx, &dref);
            mreal de = dv[c] - dref;
            if (pow2) dg += tm->weight * (tm->squared ? 2 * e * de : de);
            else {
                s += e * e;
                ds += 2 * e * de;
            }
        }
        if (!pow2) dg += tm->weight * 0.5 * tm->power * MPOW(s, 0.5 * tm->power - 1) * ds;
    }
    return dg;
}
