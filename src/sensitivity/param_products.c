/*
 * param_products.c - the products nu . dr/drho_j for all parameters at once,
 * as the adjoint methods need them (docs/sensitivity.md, "What each method
 * costs").
 *
 * nu . r is the virtual power of the residual forces under the virtual
 * velocities nu. A parameter that only sets numbers of force elements and
 * time functions (stiffness, damping, free length, load magnitudes, spline
 * knots...) changes only the element loads, linearly in the element's own
 * numbers, at a fixed state. Its product is then the virtual power of the
 * load tangent:
 *     nu . dr/drho_j = -nu . dQq_j - sum_i W_i . dQv_i,j
 * with W_i = B_i W_h + b_i nu_i the virtual twists (one pass for all
 * parameters) and dQq, dQv the tangents of the element loads along dx_j,
 * which only the elements touching x_j produce: O(1) per such parameter.
 * Every other parameter takes one tangent sweep of the Newton-Euler
 * residual (O(n)).
 */
#include <string.h>

#include "sens_impl.h"
#include "../algebra.h"
#include "../forces/force.h"

/* 1 if every target of parameter j is a number of a force element or of a
 * time function used by no objective and no driving constraint */
static int element_only(const mbs_model *m, int j)
{
    const mbs_param_info *p = &m->param[j];
    for (int t = 0; t < p->ntargets; t++) {
        int x = p->target[t], ok = 0;
        for (int k = 0; k < m->nforce && !ok; k++)
            if (x >= m->force[k].x && x < m->force[k].x + m->force[k].nx) ok = 1;
        for (int k = 0; k < m->nfunc && !ok; k++)
            if (x >= m->func[k].x && x < m->func[k].x + m->func[k].nx) {
                ok = 1;
                for (int o = 0; o < m->nobj; o++)
                    for (int s = 0; s < m->obj[o].nterm; s++)
                        for (int c = 0; c < 3; c++)
                            if (m->obj[o].term[s].func[c] == k) ok = 0;
                /* a driving constraint's function moves the constraints, not an element */
                for (int r = 0; r < m->con.ndriver; r++)
                    if (m->con.driver[r].func == k) ok = 0;
            }
        if (!ok) return 0;
    }
    return 1;
}

/* the spline function whose values all targets of parameter j set, or -1 */
static int knot_function(const mbs_model *m, int j)
{
    const mbs_param_info *p = &m->param[j];
    int f = -1;
    for (int t = 0; t < p->ntargets; t++) {
        int x = p->target[t], ft = -1;
        for (int k = 0; k < m->nfunc; k++)
            if (m->func[k].type == MBS_FUNC_SPLINE && x >= m->func[k].x && x < m->func[k].x + m->func[k].nx) ft = k;
        if (ft < 0 || (f >= 0 && ft != f)) return -1;
        f = ft;
    }
    return f;
}

/* flags: 0 general, 1 element-only, 2 + F: element-only and every target is
 * a knot value of spline function F (linear in its values: products from
 * the knot weights, O(1) each after one O(knots) pass per step) */
void sens_param_classify(const mbs_model *m, int *element_only_flags)
{
    for (int j = 0; j < m->nparam; j++) {
        element_only_flags[j] = element_only(m, j);
        if (element_only_flags[j]) {
            int f = knot_function(m, j);
            if (f >= 0) element_only_flags[j] = 2 + f;
        }
    }
}

/* W_i = B_i W_h + b_i nu_i (positions in ws) into W (6 per body) */
static void virtual_twists(const mbs_model *m, const mbs_ws *w, const double *nu, double *W)
{
    memset(W, 0, sizeof(double) * 6);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        double *Wi = W + 6 * i;
        s6_twist_shift(Wi, w->a + 3 * i, W + 6 * jt->parent);
        const double *bi = w->b + MBS_BSTRIDE * i;
        for (int k = 0; k < jt->nq; k++)
            for (int c = 0; c < 6; c++) Wi[c] += bi[6 * k + c] * nu[jt->qoff + k];
    }
}

/* nu . (tangent of the residual) for the element-load tangents in dw at a
 * fixed state: -nu . dQq - sum_i W_i . dQv_i */
static double load_tangent_power(const mbs_model *m, const mbs_data *d, const double *nu, const double *W)
{
    const mbs_ws *dw = &d->dws;
    double s = 0;
    for (int k = 0; k < m->nq; k++) s -= nu[k] * dw->qfrc[k];
    for (int i = 1; i <= m->nb; i++) {
        const double *L = dw->xfrc + 15 * i;
        int nz = 0;
        for (int c = 0; c < 15 && !nz; c++) nz = L[c] != 0;
        if (!nz) continue;
        /* dQv = [df; dn + eps(A dP) - (A c) x df + g x df], g = r_G - r_i */
        const double *A = d->ws.A + 9 * i, *ci = m->x + m->body[i].x_com;
        double AP[9], Ac[3], g[3], Q[6], t3[3];
        m3_mul(AP, A, L + 6);
        m3_mv(Ac, A, ci);
        v3_sub(g, d->ws.rG + 3 * i, d->ws.r + 3 * i);
        v3_copy(Q, L);
        Q[3] = L[3] + AP[5] - AP[7];
        Q[4] = L[4] + AP[6] - AP[2];
        Q[5] = L[5] + AP[1] - AP[3];
        v3_cross(t3, Ac, L);
        v3_sub(Q + 3, Q + 3, t3);
        v3_cross_add(Q + 3, g, L);
        s -= s6_dot(W + 6 * i, Q);
    }
    return s;
}

/* element-load tangents along dx (kinematic tangents zero) into d->dws */
static void load_tangent(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *dx)
{
    mbs_ws *dw = &d->dws;
    memset(dw->xfrc, 0, sizeof(double) * 15 * ((size_t)m->nb + 1));
    memset(dw->qfrc, 0, sizeof(double) * (size_t)m->nq);
    mbs_forces_apply_d(m, m->x, &d->ws, dx, dw, q, qd, NULL, NULL, dw->qfrc, d->time);
}

void sens_param_products(sens_run *r, const double *q, const double *qd, const double *qdd,
                         const double *nu, const int *eonly, double *out, double *W, double *dx,
                         double *dr)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int nq = r->nq;
    mbs_deriv_id_primal(m, d, q, qd, qdd, dr);
    memset(dx, 0, sizeof(double) * (size_t)m->nx);
    int any_fast = 0;
    for (int j = 0; j < r->np; j++) any_fast |= eonly[j];
    if (any_fast) {
        virtual_twists(m, &d->ws, nu, W);
        /* zero kinematic tangents: the element tangents then see a fixed state */
        mbs_ws *dw = &d->dws;
        const size_t nb1 = (size_t)m->nb + 1;
        memset(dw->A, 0, sizeof(double) * 9 * nb1);
        memset(dw->o, 0, sizeof(double) * 3 * nb1);
        memset(dw->r, 0, sizeof(double) * 3 * nb1);
        memset(dw->rG, 0, sizeof(double) * 3 * nb1);
        memset(dw->V, 0, sizeof(double) * 6 * nb1);
    }
    for (int j = 0; j < r->np; j++) {
        if (!eonly[j]) {
            mbs_deriv_param_dx(m, j, dx);
            mbs_deriv_id_tangent(m, d, q, qd, qdd, NULL, NULL, NULL, dx, dr, 1, m->nb + 1);
            double s = 0;
            for (int k = 0; k < nq; k++) s += nu[k] * dr[k];
            out[j] = s;
            memset(dx, 0, sizeof(double) * (size_t)m->nx);
            continue;
        }
        if (eonly[j] >= 2) continue;         /* spline knots: below */
        /* element loads' tangent along dx_j at the fixed state (dx is zero
         * outside the targets between parameters) */
        const mbs_param_info *p = &m->param[j];
        for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] += p->scale[t];
        load_tangent(m, d, q, qd, dx);
        for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] = 0;
        out[j] = load_tangent_power(m, d, nu, W);
    }
    /* spline knots: one tangent per function along its constant-one
     * direction (the spline through all-ones values is 1: the load at unit
     * time factor), times the knot weights W_k(t) */
    for (int f = 0; f < m->nfunc; f++) {
        int used = 0;
        for (int j = 0; j < r->np && !used; j++) used = eonly[j] == 2 + f;
        if (!used) continue;
        const mbs_func_info *fi = &m->func[f];
        for (int k = 0; k < fi->nx; k++) dx[fi->x + k] = 1;
        load_tangent(m, d, q, qd, dx);
        const double S = load_tangent_power(m, d, nu, W);
        /* the weights, with dx's block as scratch */
        mbs_func_dx(fi, m->x, d->time, dx + fi->x);
        for (int j = 0; j < r->np; j++) {
            if (eonly[j] != 2 + f) continue;
            const mbs_param_info *p = &m->param[j];
            double s = 0;
            for (int t = 0; t < p->ntargets; t++) s += p->scale[t] * dx[p->target[t]];
            out[j] = s * S;
        }
        for (int k = 0; k < fi->nx; k++) dx[fi->x + k] = 0;
    }
}

void sens_solve_mprime(sens_run *r, const double *q, const double *qd, const double *x, double *y,
                       double *scratch)
{
    /* the articulated-body factors at (q, qd) (fully recursive forward
     * dynamics, O(n)), whatever formulation r runs: M' is the same matrix */
    mbs_fd_unchecked(r->m, r->d, MBS_FD_RECURSIVE, q, qd, NULL, scratch);
    mbs_aba_solve(r->m, &r->d->ws, &r->d->dws, x, y);
}
