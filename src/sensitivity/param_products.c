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
 *
 * Spline knots (a parameter whose targets are values of one spline that
 * only force elements read) are not touched per call: the elements read a
 * function only through its value f(t), so nu . dr/dy = S_f(t) W(t) with
 * one scalar S_f = nu . dr/df per function and the spline's weights W(t).
 * The adjoints accumulate sum w S_f W(t) (or its integral) in O(1) per call
 * through the spline's transposed map (mbs_spline_adj_*, functions.h) and
 * map it to the knots once per backward sweep (sens_pprod_finish): the
 * cost per step does not depend on the number of knots.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "base/algebra.h"
#include "../forces/force.h"
#include "kernels/functions.h"

/* 1 if every target of parameter j is a number of a force element or of a
 * time function used by no objective and no driving constraint (an
 * objective that reads a coordinate force reads every element load) */
static int element_only(const mbs_model *m, int j)
{
    const mbs_param_info *p = &m->param[j];
    if (sens_objectives_read_forces(m)) return 0;
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
        for (int k = 0; k < jt->nv; k++)
            for (int c = 0; c < 6; c++) Wi[c] += bi[6 * k + c] * nu[jt->voff + k];
    }
}

/* nu . (tangent of the residual) for the element-load tangents in dw at a
 * fixed state: -nu . dQq - sum_i W_i . dQv_i */
static double load_tangent_power(const mbs_model *m, const mbs_data *d, const double *nu, const double *W)
{
    const mbs_ws *dw = &d->dws;
    double s = 0;
    for (int k = 0; k < m->nv; k++) s -= nu[k] * dw->qfrc[k];
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
    memset(dw->qfrc, 0, sizeof(double) * (size_t)m->nv);
    mbs_forces_apply_d(m, m->x, &d->ws, dx, dw, q, qd, NULL, NULL, dw->qfrc, d->time);
}

int sens_pprod_init(sens_pprod *pp, const mbs_model *m, int all_obj, mbs_error *err)
{
    memset(pp, 0, sizeof *pp);
    const size_t P = (size_t)m->nparam + 1, F = (size_t)m->nfunc + 1;
    pp->flag = calloc(P, sizeof(int));
    pp->gen = calloc(P, sizeof(int));
    pp->objp = calloc(P, sizeof(int));
    pp->fn = calloc(F, sizeof(int));
    pp->acc_off = calloc(F, sizeof(size_t));
    pp->S = calloc(F, sizeof(double));
    pp->prod = calloc(P, sizeof(double));
    pp->W = calloc(6 * ((size_t)m->nb + 1), sizeof(double));
    pp->dx = calloc((size_t)m->nx + 1, sizeof(double));
    pp->dr = calloc((size_t)m->nv + 1, sizeof(double));
    if (!pp->flag || !pp->gen || !pp->objp || !pp->fn || !pp->acc_off || !pp->S || !pp->prod || !pp->W ||
        !pp->dx || !pp->dr)
        goto nomem;
    sens_param_classify(m, pp->flag);
    /* a program's objective may depend on any parameter (its g_rho): every
     * parameter then takes the per-parameter path, knots included (their
     * per-spline accumulation has no room for an objective's terms) */
    if (all_obj)
        for (int j = 0; j < m->nparam; j++)
            if (pp->flag[j] >= 2) pp->flag[j] = 1;
    size_t nacc = 0;
    for (int j = 0; j < m->nparam; j++) {
        if (pp->flag[j] < 2) pp->gen[pp->ngen++] = j;
        if (pp->flag[j] == 0 || all_obj) pp->objp[pp->nobjp++] = j;
    }
    for (int f = 0; f < m->nfunc; f++) {
        int used = 0;
        for (int j = 0; j < m->nparam && !used; j++) used = pp->flag[j] == 2 + f;
        if (!used) continue;
        pp->acc_off[pp->nfn] = nacc;
        pp->fn[pp->nfn++] = f;
        nacc += 2 * (size_t)m->func[f].n;
    }
    pp->acc = calloc(nacc + 1, sizeof(double));
    pp->nacc = nacc;
    if (!pp->acc) goto nomem;
    return MBS_OK;
nomem:
    sens_pprod_free(pp);
    return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
}

void sens_pprod_free(sens_pprod *pp)
{
    free(pp->flag); free(pp->gen); free(pp->objp); free(pp->fn); free(pp->acc_off); free(pp->S);
    free(pp->prod); free(pp->W); free(pp->dx); free(pp->dr); free(pp->acc);
    memset(pp, 0, sizeof *pp);
}

void sens_pprod_elements_only(sens_pprod *pp)
{
    int k = 0;
    for (int i = 0; i < pp->ngen; i++)
        if (pp->flag[pp->gen[i]] >= 1) pp->gen[k++] = pp->gen[i];
    pp->ngen = k;
}

void sens_pprod_eval(sens_run *r, sens_pprod *pp, const double *q, const double *qd, const double *qdd,
                     const double *nu, int what)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int nv = r->nv;
    double *dx = pp->dx, *dr = pp->dr, *W = pp->W;    /* dx: zero between calls */
    mbs_deriv_id_primal(m, d, q, qd, qdd, dr);
    int any_fast = (what & 2) && pp->nfn > 0;
    if (what & 1)
        for (int i = 0; i < pp->ngen && !any_fast; i++) any_fast = pp->flag[pp->gen[i]] == 1;
    if (any_fast) {
        virtual_twists(m, &d->ws, nu, W);
        /* zero kinematic tangents: the element tangents then see a fixed state */
        mbs_ws_zero_kinematics(&d->dws);
    }
    if (what & 1)
        for (int i = 0; i < pp->ngen; i++) {
            const int j = pp->gen[i];
            const mbs_param_info *p = &m->param[j];
            for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] += p->scale[t];
            if (pp->flag[j] == 0) {
                /* a tangent sweep of the Newton-Euler residual (O(n)) */
                mbs_deriv_id_tangent(m, d, q, qd, qdd, NULL, NULL, NULL, dx, dr, 1, m->nb + 1);
                double s = 0;
                for (int k = 0; k < nv; k++) s += nu[k] * dr[k];
                pp->prod[i] = s;
            } else {
                /* element loads' tangent along dx_j at the fixed state */
                load_tangent(m, d, q, qd, dx);
                pp->prod[i] = load_tangent_power(m, d, nu, W);
            }
            for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] = 0;
            if (pp->flag[j] == 0 && any_fast) {
                /* the sweep overwrote the kinematic tangents: zero them again */
                mbs_ws_zero_kinematics(&d->dws);
            }
        }
    if (!(what & 2)) return;
    /* spline functions: the loads depend on a function's numbers only through
     * its value f(t) (the elements' time factor), so along any direction dy
     * of its values the load tangent is (d load/d f) W(t).dy. One tangent
     * along the unit value of the knot nearest to t, where W_k(t) is of
     * order one, divided by W_k(t), gives S_f = nu . dr/df (O(1): the
     * tangent of a unit direction touches a few knots). */
    for (int i = 0; i < pp->nfn; i++) {
        const mbs_func_info *fi = &m->func[pp->fn[i]];
        const int k = mbs_spline_nearest_knot(fi, d->time);
        dx[fi->x + k] = 1;
        load_tangent(m, d, q, qd, dx);
        double T = load_tangent_power(m, d, nu, W);
        double df = mbs_func_eval_d(fi, m->x, dx, d->time);
        dx[fi->x + k] = 0;
        if (!(fabs(df) > 0.25)) {
            /* not expected (W_k(t_k) = 1); the all-ones values instead,
             * whose spline is 1: O(n) */
            for (int c = 0; c < fi->nx; c++) dx[fi->x + c] = 1;
            load_tangent(m, d, q, qd, dx);
            T = load_tangent_power(m, d, nu, W);
            df = mbs_func_eval_d(fi, m->x, dx, d->time);
            for (int c = 0; c < fi->nx; c++) dx[fi->x + c] = 0;
        }
        pp->S[i] = T / df;
    }
}

void sens_pprod_add(sens_run *r, sens_pprod *pp, double t, double w, double *grad)
{
    for (int i = 0; i < pp->ngen; i++) grad[pp->gen[i]] += w * pp->prod[i];
    for (int i = 0; i < pp->nfn; i++)
        mbs_spline_adj_add(&r->m->func[pp->fn[i]], t, w * pp->S[i], pp->acc + pp->acc_off[i]);
}

void sens_pprod_finish(sens_run *r, sens_pprod *pp, double *grad)
{
    const mbs_model *m = r->m;
    for (int i = 0; i < pp->nfn; i++) {
        const int f = pp->fn[i];
        const mbs_func_info *fi = &m->func[f];
        double *acc = pp->acc + pp->acc_off[i];
        mbs_spline_adj_finish(fi, acc, acc);       /* knot gradients in acc[0 .. n) */
        for (int j = 0; j < r->np; j++) {
            if (pp->flag[j] != 2 + f) continue;
            const mbs_param_info *p = &m->param[j];
            for (int t = 0; t < p->ntargets; t++) grad[j] += p->scale[t] * acc[p->target[t] - fi->x];
        }
    }
    memset(pp->acc, 0, sizeof(double) * pp->nacc);
}

void sens_solve_mprime(sens_run *r, const double *q, const double *qd, const double *x, double *y,
                       double *scratch)
{
    /* the articulated-body factors at (q, qd) (fully recursive forward
     * dynamics, O(n)), whatever formulation r runs: M' is the same matrix */
    mbs_fd_in_workspace(r->m, r->d, MBS_FD_RECURSIVE, q, qd, NULL, scratch);
    mbs_aba_solve(r->m, &r->d->ws, &r->d->dws, x, y);
}
