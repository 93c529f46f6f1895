/*
 * cavm_loops.c - continuous adjoint (CAVM) of the closed-loop
 * formulations Matrix R and ALI3-P (docs/sensitivity.md "CAVM of
 * the closed-loop formulations").
 *
 * Both formulations discretize the same constrained equations of motion;
 * the continuous adjoint differentiates those equations, not a
 * discretization, so one adjoint serves both: the ODE in the independent
 * coordinates y = [z^i; zd^i] of Matrix R,
 *     y' = f(y, rho) = [zd^i; a(z^i, zd^i, rho)],
 *     a: R^T r(z, zd, zdd) = 0 with (z, zd, zdd) the kinematic problems at
 *        (z^i, zd^i, a) (src/formulations/matrixr.c),
 * and psi = int g(z, zd, zdd, rho, t) dt + G(...)|tF. Composed with the
 * kinematic maps and with a, g is a function g~(y, rho, t) of the state:
 *     lambda' = -f_y^T lambda - g~_y^T,      lambda(tF) = G~_y^T
 *     dpsi/drho = G~_rho + lambda(t0)^T y0' + int (g~_rho + lambda2^T a_rho) dt
 * with lambda = [lambda1; lambda2], f_y = [0 I; A1 A2], A = da/dy, and y0'
 * from the assembly and velocity problem at t0 (the model's fixed
 * coordinates held). ALI3-P's index-3 augmented-Lagrangian DAE has, at
 * convergence of its multiplier iteration, the solution of the same
 * constrained equations, so its continuous gradient is the same: the
 * forward run is the chosen formulation's (1 ms steps in the thesis
 * tests; psi by its trapezoidal quadrature, as the DDM; the initial
 * state), the adjoint runs in independent coordinates on its own
 * trajectory from that initial state (below).
 *
 * Per evaluation instant (t, y): the kinematic problems at (z^i, zd^i)
 * (Newton warm-started from the stored z), zdd^i from the reduced mass
 * matrix Mb = R^T M R, then one tangent of the chain z^i -> (z, zd, zdd)
 * -> F = R^T r (mbs_form_matrixr_chain) per direction: the 2 nd unit
 * directions of y and the np parameter directions. Each gives dF; the
 * acceleration's response is da = -Mb^-1 dF and, since zdd is affine in
 * zdd^i with coefficient R, the total tangents (dz, dzd, dzdd + R da) give
 * the columns of A, a_rho and, through the objectives' tangents,
 * g~_y and g~_rho of every objective at once.
 *
 * Trajectory: a continuous adjoint is as accurate as the trajectory it
 * sees; the trapezoidal one (O(h^2)) put the five-bar's gradient 6e-4 off
 * at 1 ms. So the adjoint's trajectory is RK4 on y' = f(y) on the forward
 * grid (accelerations only: cheap), stored as (z^i, zd^i, zdd^i) and z.
 * Backward integration: the adjoint ODE is linear with coefficients that
 * depend only on the forward state, so an implicit method needs no
 * iteration: Adams-Moulton of order 6 (a 2 nd x 2 nd LU per step, one
 * evaluation per step at the node), started by RK4 with the midpoint state
 * from quintic Hermite interpolation of (z^i, zd^i, zdd^i) (also for a step
 * next to a shorter one). All objectives are integrated together.
 *
 * Parameters that only set numbers of force elements and time functions
 * (stiffness, free lengths, spline knots; not read by an objective or a
 * driving constraint, and no program objective) move no kinematic
 * quantity: along one of them the chain gives dF = R^T dr/drho_j only, so
 * a_rho_j = -Mb^-1 R^T dr/drho_j, g~_rho_j = g_zdd R a_rho_j, and the
 * integrand of their I is
 *     I_j' = (l2 + (g_zdd R)^T) . a_rho_j = nu . dr/drho_j,
 *     nu = -R Mb^-1 (l2 + (g_zdd R)^T)          (Mb symmetric)
 * an adjoint product (sens_pprod) for all of them at once. They have no
 * column: each evaluation keeps what nu needs (R, Mb's factor, g_zdd R by
 * n_d objective tangents, the state), and every value of the integrand the
 * backward scheme uses (each RK4 stage, each node's value in the
 * Adams-Moulton ring) is taken as a snapshot of the products and added
 * with the weight the scheme gives it. The cost per step does not grow
 * with the number of such parameters beyond O(1) each (O(1) per spline).
 *
 * Everything is allocated once per run; the steps do not allocate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "../formulations/form_impl.h"
#include "../constraints/constraint.h"

/* Adams-Moulton, AMK steps (order AMK + 1): coefficients of F at the new node, then back */
#define AMK 5
static const double AM[AMK + 1] = { 475.0 / 1440, 1427.0 / 1440, -798.0 / 1440, 482.0 / 1440, -173.0 / 1440,
                                    27.0 / 1440 };

/* derivatives at one instant */
typedef struct {
    double *Fy;     /* nd x nc (col-major, column c = direction c): da/dy (c < 2 nd), da/drho */
    double *gy;     /* nobj x nc (row-major): total g~ derivatives along the same directions */
    /* for the products of the skipped parameters: the state, R (n x nd col-major), Mb's LU,
     * g_zdd R (nobj x nd) */
    double t, *st, *R, *Mb, *gzR;
    lapack_int *piv;
} cl_eval;

/* one value of the skipped parameters' integrand: per objective, the products and spline scalars */
typedef struct {
    double t, *v;   /* nobj x (ngen + nfn) */
} cl_snap;

typedef struct {
    sens_run *r;
    mbs_form *f;
    mbs_data *df;   /* the form's data (the objectives use r->d) */
    int n, nd, np, no, ncol;
    /* trajectory: nodes 0..nn-1 */
    int nn, cap;
    double *tt, *Y, *Zs;   /* cap; cap x 3 nd (zi, zdi, zddi); cap x 2 n (z, zd) */
    /* evaluation */
    double *z, *zd, *zdd0, *zdd, *F0, *Mb, *dF, *da, *e, *tz, *tzd, *tzdd, *dx, *g, *dg;
    lapack_int *piv;
    /* interpolation */
    double *yi, *ydi, *zw, *rk;
    /* adjoint */
    double *L, *Lt, *K1, *K2, *K3, *K4, *y0p, *Fr, *Jm;
    lapack_int *jp;
    cl_eval E[3];
    /* skipped (element-only) parameters */
    int *skip, any_skip;
    sens_pprod *pp;          /* one per objective */
    cl_snap snap[AMK + 4];   /* the Adams-Moulton ring, then the RK4 stages K2, K3, K4 and the terminal value */
    double *gacc;            /* nobj x np: their integrals */
    double *nu, *l0;         /* n; nd zeros */
    char msg[MBS_ERROR_MSG_LEN];
} cl_ws;

/* DOF values (z^i, zd^i, zdd^i) of the state (q, qd, qdd) */
static void dof_values(cl_ws *w, const double *q, const double *qd, const double *qdd, double *out)
{
    const mbs_model *m = w->r->m;
    const mbs_form *f = w->f;
    const int nd = w->nd;
    int kin = 0;
    for (int k = 0; k < nd; k++) {
        const mbs_dof *g = &f->dof[k];
        if (g->point < 0) {
            out[k] = q[g->coord];
            out[nd + k] = qd[g->coord];
            out[2 * nd + k] = qdd[g->coord];
        } else {
            double v[3];
            const mbs_point_info *p = &m->point[g->point];
            if (!kin) {
                mbs_kin_forward(m, m->x, &w->df->ws, q, qd, qdd, 2);
                kin = 1;
            }
            mbs_con_point_component(m, m->x, &w->df->ws, p->body, p->x, g->component, v, NULL);
            out[k] = v[0];
            out[nd + k] = v[1];
            out[2 * nd + k] = v[2];
        }
    }
}

/* Mb (nd x nd col-major) = R^T M R from f->M (n x n) and R = f->T */
static void reduced_mass(cl_ws *w)
{
    const int n = w->n, nd = w->nd;
    const double *M = w->f->M, *T = w->f->T;
    for (int j = 0; j < nd; j++) {
        const double *rj = T + (size_t)j * n;
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += M[(size_t)i * n + k] * rj[k];
            w->e[i] = s;
        }
        for (int i = 0; i < nd; i++) {
            const double *ri = T + (size_t)i * n;
            double s = 0;
            for (int k = 0; k < n; k++) s += ri[k] * w->e[k];
            w->Mb[(size_t)j * nd + i] = s;
        }
    }
}

/* The derivatives at (t, y = [zi; zdi]) into E; z (n) holds a warm start for
 * the position problem. terminal: of the terminal parts G (else the
 * integrands g). Returns non-zero with w->msg on failure. */
/* The state at (t, y = [zi; zdi]): the kinematic problems (z in w->z as the
 * warm start), the accelerations zdd^i (w->F0) and zdd (w->zdd) of the
 * constrained equations; Mb LU-factored. */
static int accelerations(cl_ws *w, double t, const double *zi, const double *zdi)
{
    const mbs_model *m = w->r->m;
    mbs_form *f = w->f;
    const int n = w->n, nd = w->nd;
    mbs_data_set_time(w->df, t);
    int rc = mbs_form_matrixr_kinematics(f, t, zi, zdi, NULL, w->z, w->zd, w->zdd0, w->msg, sizeof w->msg);
    if (rc) return rc;
    if (mbs_form_matrixr_prepare(f, t, w->z, w->zd, w->zdd0)) {
        snprintf(w->msg, sizeof w->msg, "cavm at t = %.9g: [Phi_q; B] singular", t);
        return MBS_ERR_NUMERIC;
    }
    /* zdd^i = -Mb^-1 R^T r(z, zd, zdd_0); zdd = zdd_0 + R zdd^i */
    mbs_crba(m, &w->df->ws, f->M);
    reduced_mass(w);
    if (nd > 0 && mbs_dense_lu(nd, w->Mb, w->piv) != 0) {
        snprintf(w->msg, sizeof w->msg, "cavm at t = %.9g: reduced mass matrix R^T M R singular", t);
        return MBS_ERR_NUMERIC;
    }
    for (int k = 0; k < nd; k++) w->F0[k] = -f->tB[k];
    if (nd > 0) mbs_dense_lu_solve(nd, w->Mb, w->piv, w->F0);
    for (int i = 0; i < n; i++) {
        double s = w->zdd0[i];
        for (int k = 0; k < nd; k++) s += f->T[(size_t)k * n + i] * w->F0[k];
        w->zdd[i] = s;
    }
    return MBS_OK;
}

static int evaluate(cl_ws *w, double t, const double *zi, const double *zdi, int terminal, cl_eval *E)
{
    sens_run *r = w->r;
    const mbs_model *m = r->m;
    mbs_form *f = w->f;
    const int n = w->n, nd = w->nd, no = w->no;
    int rc = accelerations(w, t, zi, zdi);
    if (rc) return rc;
    if (mbs_form_matrixr_prepare(f, t, w->z, w->zd, w->zdd)) {
        snprintf(w->msg, sizeof w->msg, "cavm at t = %.9g: [Phi_q; B] singular", t);
        return MBS_ERR_NUMERIC;
    }
    /* the objectives at the state (primal in r->d) */
    sens_objectives(r, w->z, w->zd, w->zdd, t, terminal, w->g);
    for (int i = 0; i < no; i++)
        if (!isfinite(w->g[i])) {
            snprintf(w->msg, sizeof w->msg, "cavm at t = %.9g: objective %s not finite", t, m->obj[i].name);
            return MBS_ERR_NUMERIC;
        }
    if (w->any_skip) {
        /* what the skipped parameters' products need at this instant */
        E->t = t;
        memcpy(E->st, w->z, sizeof(double) * (size_t)n);
        memcpy(E->st + n, w->zd, sizeof(double) * (size_t)n);
        memcpy(E->st + 2 * n, w->zdd, sizeof(double) * (size_t)n);
        memcpy(E->R, f->T, sizeof(double) * (size_t)n * (size_t)nd);
        memcpy(E->Mb, w->Mb, sizeof(double) * (size_t)nd * (size_t)nd);
        memcpy(E->piv, w->piv, sizeof(lapack_int) * (size_t)nd);
        memset(w->tz, 0, sizeof(double) * (size_t)n);
        for (int i = 0; i < nd; i++) {
            sens_objectives_d(r, w->z, w->zd, w->zdd, w->tz, w->tz, f->T + (size_t)i * n, NULL, -1, t, terminal,
                              w->dg);
            for (int k = 0; k < no; k++) E->gzR[(size_t)k * nd + i] = w->dg[k];
        }
    }
    for (int c = 0; c < w->ncol; c++) {
        const double *dzi = NULL, *dzdi = NULL, *dx = NULL;
        if (c >= 2 * nd && w->skip[c - 2 * nd]) {
            memset(E->Fy + (size_t)c * nd, 0, sizeof(double) * (size_t)nd);
            for (int k = 0; k < no; k++) E->gy[(size_t)k * w->ncol + c] = 0;
            continue;
        }
        memset(w->e, 0, sizeof(double) * (size_t)(nd > 0 ? nd : 1));
        if (c < nd) {
            w->e[c] = 1;
            dzi = w->e;
        } else if (c < 2 * nd) {
            w->e[c - nd] = 1;
            dzdi = w->e;
        } else {
            mbs_deriv_param_dx(m, c - 2 * nd, w->dx);
            dx = w->dx;
        }
        mbs_form_matrixr_chain(f, t, w->z, w->zd, w->zdd, dzi, dzdi, NULL, dx, w->tz, w->tzd, w->tzdd, w->dF);
        double *da = E->Fy + (size_t)c * nd;
        for (int k = 0; k < nd; k++) da[k] = -w->dF[k];
        if (nd > 0) mbs_dense_lu_solve(nd, w->Mb, w->piv, da);
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int k = 0; k < nd; k++) s += f->T[(size_t)k * n + i] * da[k];
            w->tzdd[i] += s;
        }
        sens_objectives_d(r, w->z, w->zd, w->zdd, w->tz, w->tzd, w->tzdd, dx, c >= 2 * nd ? c - 2 * nd : -1, t,
                          terminal, w->dg);
        for (int k = 0; k < no; k++) E->gy[(size_t)k * w->ncol + c] = w->dg[k];
    }
    return MBS_OK;
}

/* dL/ds (s = tF - t, backwards) at the instant E for the state L:
 * per objective [l1 (nd); l2 (nd); I (np)]:
 *   l1' = A1^T l2 + g~_zi,  l2' = l1 + A2^T l2 + g~_zdi,  I' = g~_rho + a_rho^T l2 */
static void adjoint_rhs(const cl_ws *w, const cl_eval *E, const double *L, double *out)
{
    const int nd = w->nd, nc = w->ncol, blk = 2 * nd + w->np;
    for (int k = 0; k < w->no; k++) {
        const double *l1 = L + (size_t)k * blk, *l2 = l1 + nd;
        double *o = out + (size_t)k * blk;
        const double *gy = E->gy + (size_t)k * nc;
        for (int c = 0; c < nc; c++) {
            const double *col = E->Fy + (size_t)c * nd;
            double s = gy[c];
            for (int i = 0; i < nd; i++) s += col[i] * l2[i];
            if (c >= nd && c < 2 * nd) s += l1[c - nd];
            o[c] = s;
        }
    }
}

/* The skipped parameters' integrand at the instant E for the adjoint state L
 * (only its l2 parts are read; NULL: l2 = 0) into snapshot S. */
static void snap_take(cl_ws *w, const cl_eval *E, const double *L, cl_snap *S)
{
    sens_run *r = w->r;
    const int n = w->n, nd = w->nd, blk = 2 * nd + w->np;
    mbs_data_set_time(r->d, E->t);
    S->t = E->t;
    for (int k = 0; k < w->no; k++) {
        sens_pprod *pp = &w->pp[k];
        const double *l2 = L ? L + (size_t)k * blk + nd : w->l0, *gz = E->gzR + (size_t)k * nd;
        double *y = w->da;
        for (int i = 0; i < nd; i++) y[i] = -(l2[i] + gz[i]);
        if (nd > 0) mbs_dense_lu_solve(nd, E->Mb, E->piv, y);
        for (int i = 0; i < n; i++) {
            double v = 0;
            for (int l = 0; l < nd; l++) v += E->R[(size_t)l * n + i] * y[l];
            w->nu[i] = v;
        }
        sens_pprod_eval(r, pp, E->st, E->st + n, E->st + 2 * n, w->nu, 3);
        double *v = S->v + (size_t)k * (size_t)(pp->ngen + pp->nfn);
        memcpy(v, pp->prod, sizeof(double) * (size_t)pp->ngen);
        memcpy(v + pp->ngen, pp->S, sizeof(double) * (size_t)pp->nfn);
    }
}

/* the skipped parameters' integrals += wt times snapshot S */
static void snap_add(cl_ws *w, const cl_snap *S, double wt)
{
    for (int k = 0; k < w->no; k++) {
        sens_pprod *pp = &w->pp[k];
        const double *v = S->v + (size_t)k * (size_t)(pp->ngen + pp->nfn);
        memcpy(pp->prod, v, sizeof(double) * (size_t)pp->ngen);
        memcpy(pp->S, v + pp->ngen, sizeof(double) * (size_t)pp->nfn);
        sens_pprod_add(w->r, pp, S->t, wt, w->gacc + (size_t)k * w->np);
    }
}

/* quintic Hermite interpolation on node interval [a, a+1] at theta: y (zi), yd (zdi) */
static void interpolate(const cl_ws *w, int a, double theta, double *y, double *yd)
{
    const int nd = w->nd;
    const double h = w->tt[a + 1] - w->tt[a], s = theta;
    const double s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
    const double H0 = 1 - 10 * s3 + 15 * s4 - 6 * s5, H1 = s - 6 * s3 + 8 * s4 - 3 * s5;
    const double H2 = 0.5 * (s2 - 3 * s3 + 3 * s4 - s5), H3 = 0.5 * (s3 - 2 * s4 + s5);
    const double H4 = -4 * s3 + 7 * s4 - 3 * s5, H5 = 10 * s3 - 15 * s4 + 6 * s5;
    const double D0 = -30 * s2 + 60 * s3 - 30 * s4, D1 = 1 - 18 * s2 + 32 * s3 - 15 * s4;
    const double D2 = 0.5 * (2 * s - 9 * s2 + 12 * s3 - 5 * s4), D3 = 0.5 * (3 * s2 - 8 * s3 + 5 * s4);
    const double D4 = -12 * s2 + 28 * s3 - 15 * s4, D5 = -D0;
    const double *p = w->Y + (size_t)a * 3 * nd, *q = p + 3 * nd;
    for (int k = 0; k < nd; k++) {
        const double p0 = p[k], v0 = p[nd + k], a0 = p[2 * nd + k], p1 = q[k], v1 = q[nd + k], a1 = q[2 * nd + k];
        y[k] = H0 * p0 + h * H1 * v0 + h * h * H2 * a0 + h * h * H3 * a1 + h * H4 * v1 + H5 * p1;
        yd[k] = (D0 * p0 + D5 * p1) / h + D1 * v0 + D4 * v1 + h * (D2 * a0 + D3 * a1);
    }
}

/* record the integrator's state as node w->nn */
static int store_node(cl_ws *w, double t, const double *q, const double *qd, const double *qdd)
{
    if (w->nn >= w->cap) return -1;
    const int n = w->n, nd = w->nd, k = w->nn++;
    w->tt[k] = t;
    dof_values(w, q, qd, qdd, w->Y + (size_t)k * 3 * nd);
    memcpy(w->Zs + (size_t)k * 2 * n, q, sizeof(double) * (size_t)n);
    memcpy(w->Zs + (size_t)k * 2 * n + n, qd, sizeof(double) * (size_t)n);
    return 0;
}

/* y0' = [z^i0'; zd^i0'] (2 nd x np, column per parameter) at the initial state */
static int initial_sensitivities(cl_ws *w, double t, const double *q, const double *qd, const double *qdd,
                                 mbs_error *err)
{
    sens_run *r = w->r;
    const mbs_model *m = r->m;
    const int n = w->n, nd = w->nd, np = w->np;
    double *Z = calloc((size_t)n * (size_t)np + 1, sizeof(double)), *Zd = calloc((size_t)n * (size_t)np + 1, 8);
    int rc = MBS_OK;
    if (!Z || !Zd) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = sens_loops_kinematic_init(r, t, q, qd, qdd, Z, Zd, err))) goto done;
    mbs_data_set_time(w->df, t);
    if (mbs_form_matrixr_prepare(w->f, t, q, qd, qdd)) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm at t = %.9g: [Phi_q; B] singular", t);
        goto done;
    }
    for (int j = 0; j < np; j++) {
        const double *z0 = Z + (size_t)j * n, *zd0 = Zd + (size_t)j * n;
        double *col = w->y0p + (size_t)j * 2 * nd;
        mbs_deriv_param_dx(m, j, w->dx);
        mbs_form_tangent(m, w->df, t, q, qd, qdd, z0, zd0, NULL, w->dx, NULL, NULL, NULL, NULL, NULL);
        for (int k = 0; k < nd; k++) {
            const mbs_dof *g = &w->f->dof[k];
            if (g->point < 0) {
                col[k] = z0[g->coord];
                col[nd + k] = zd0[g->coord];
            } else {
                double dv[3];
                const mbs_point_info *pt = &m->point[g->point];
                mbs_con_point_component_d(m, m->x, &w->df->ws, w->dx, &w->df->dws, pt->body, pt->x, g->component,
                                          dv, NULL);
                col[k] = dv[0];
                col[nd + k] = dv[1];
            }
        }
    }
done:
    free(Z);
    free(Zd);
    return rc;
}

static void ws_free(cl_ws *w)
{
    mbs_form_free(w->f);
    mbs_data_free(w->df);
    double *arr[] = { w->tt, w->Y, w->Zs, w->z, w->zd, w->zdd0, w->zdd, w->F0, w->Mb, w->dF, w->da, w->e, w->tz,
                      w->tzd, w->tzdd, w->dx, w->g, w->dg, w->yi, w->ydi, w->zw, w->rk, w->L, w->Lt, w->K1, w->K2,
                      w->K3, w->K4, w->y0p, w->Fr, w->Jm };
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++) free(arr[k]);
    for (int k = 0; k < 3; k++) {
        free(w->E[k].Fy);
        free(w->E[k].gy);
        free(w->E[k].st);
        free(w->E[k].piv);
    }
    for (int k = 0; w->pp && k < w->no; k++) sens_pprod_free(&w->pp[k]);
    free(w->pp);
    free(w->skip);
    free(w->snap[0].v);
    free(w->gacc);
    free(w->nu);
    free(w->piv);
    free(w->jp);
}

/* "cavm: " and the message an evaluation left in w->msg */
static int cl_fail(cl_ws *w, int rc, mbs_error *err)
{
    return mbs_error_set(err, rc ? rc : MBS_ERR_NUMERIC, "cavm: %s", w->msg);
}

/* The Matrix R machinery on its own data, with the integrator's (matrixr)
 * or a fresh (ali3p) choice of independent coordinates at the initial q. */
static int cl_form_setup(cl_ws *w, mbs_integrator *it, const mbs_sim_options *so, mbs_error *err)
{
    const mbs_model *m = w->r->m;
    mbs_sim_options fo = *so;
    fo.loop = MBS_LOOP_MATRIXR;
    w->df = mbs_data_create(m, err);
    if (!w->df) return err && err->code ? err->code : MBS_ERR_NOMEM;
    mbs_data_set_ref(w->df, so->ref);
    w->f = mbs_form_create(m, w->df, &fo, err);
    if (!w->f) return err && err->code ? err->code : MBS_ERR_NOMEM;
    if (so->loop == MBS_LOOP_MATRIXR && it->form && it->form->nd >= 0) {
        w->f->nd = it->form->nd;
        memcpy(w->f->dof, it->form->dof, sizeof(mbs_dof) * (size_t)(w->f->nd > 0 ? w->f->nd : 0));
    } else {
        mbs_data_set_time(w->df, so->t0);
        int rc = mbs_form_matrixr_setup(w->f, mbs_integrator_q(it), w->msg, sizeof w->msg);
        if (rc) return mbs_error_set(err, rc, "cavm: %s", w->msg);
    }
    w->nd = w->f->nd;
    w->ncol = 2 * w->nd + w->np;
    return MBS_OK;
}

/* Every array of the run, once: the stored forward solution (one node per
 * step, at most MBS_SIM_MAX_STEPS: options checked), the evaluations, the
 * adjoint and its Adams-Moulton ring. */
static int cl_alloc(cl_ws *w, const mbs_sim_options *so, mbs_error *err)
{
    const int n = w->n, nd = w->nd, np = w->np, no = w->no;
    const size_t N = (size_t)n + 1, ND = (size_t)nd + 1, NC = (size_t)w->ncol + 1, blk = (size_t)(2 * nd + np);
    const size_t LS = (size_t)no * blk + 1;
    w->cap = (int)mbs_sim_steps(so) + 4;
    w->tt = calloc((size_t)w->cap, 8);
    w->Y = calloc((size_t)w->cap * 3 * ND, 8);
    w->Zs = calloc((size_t)w->cap * 2 * N, 8);
    if (!w->tt || !w->Y || !w->Zs)
        return mbs_error_set(err, MBS_ERR_NOMEM, "cavm: out of memory for the forward solution at %d steps (%.3g MB)",
                             w->cap, 8e-6 * (double)w->cap * (double)(1 + 3 * ND + 2 * N));
    w->z = calloc(N, 8); w->zd = calloc(N, 8); w->zdd0 = calloc(N, 8); w->zdd = calloc(N, 8);
    w->F0 = calloc(ND, 8); w->Mb = calloc(ND * ND, 8); w->dF = calloc(ND, 8); w->da = calloc(ND, 8);
    w->e = calloc(N + ND, 8); w->tz = calloc(N, 8); w->tzd = calloc(N, 8); w->tzdd = calloc(N, 8);
    w->dx = calloc((size_t)w->r->m->nx + 1, 8); w->g = calloc((size_t)no + 1, 8); w->dg = calloc((size_t)no + 1, 8);
    w->yi = calloc(ND, 8); w->ydi = calloc(ND, 8); w->zw = calloc(N, 8); w->rk = calloc(6 * ND, 8);
    w->L = calloc(LS, 8); w->Lt = calloc(LS, 8); w->K1 = calloc(LS, 8); w->K2 = calloc(LS, 8);
    w->K3 = calloc(LS, 8); w->K4 = calloc(LS, 8); w->y0p = calloc(2 * ND * ((size_t)np + 1), 8);
    w->piv = calloc(ND, sizeof *w->piv);
    w->Fr = calloc(AMK * LS, 8);
    w->Jm = calloc(4 * ND * ND, 8);
    w->jp = calloc(2 * ND, sizeof *w->jp);
    int ok = w->tt && w->Y && w->Zs && w->z && w->zd && w->zdd0 && w->zdd && w->F0 && w->Mb && w->dF && w->da &&
             w->e && w->tz && w->tzd && w->tzdd && w->dx && w->g && w->dg && w->yi && w->ydi && w->zw && w->rk &&
             w->L && w->Lt && w->K1 && w->K2 && w->K3 && w->K4 && w->y0p && w->piv && w->Fr && w->Jm && w->jp;
    for (int k = 0; k < 3 && ok; k++) {
        cl_eval *E = &w->E[k];
        E->Fy = calloc(ND * NC, 8);
        E->gy = calloc(((size_t)no + 1) * NC, 8);
        E->st = calloc(3 * N + N * ND + ND * ND + ((size_t)no + 1) * ND, 8);
        E->piv = calloc(ND, sizeof(lapack_int));
        ok = E->Fy && E->gy && E->st && E->piv;
        if (ok) {
            E->R = E->st + 3 * N;
            E->Mb = E->R + N * ND;
            E->gzR = E->Mb + ND * ND;
        }
    }
    w->skip = calloc((size_t)np + 1, sizeof(int));
    w->pp = calloc((size_t)no + 1, sizeof *w->pp);
    w->gacc = calloc((size_t)no * (size_t)np + 1, 8);
    w->nu = calloc(N + ND, 8);
    ok = ok && w->skip && w->pp && w->gacc && w->nu;
    if (!ok) return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    w->l0 = w->nu + N;
    return MBS_OK;
}

/* The element-only parameters, skipped by the adjoint and integrated as
 * products (none with a program's objective, which may read any), and
 * their snapshots. */
static int cl_skip_setup(cl_ws *w, mbs_error *err)
{
    const int np = w->np, no = w->no;
    int rc;
    for (int k = 0; k < no; k++) {
        if ((rc = sens_pprod_init(&w->pp[k], w->r->m, 0, err))) return rc;
        sens_pprod_elements_only(&w->pp[k]);
    }
    if (!w->r->o->objective)
        for (int j = 0; j < np; j++) {
            w->skip[j] = no > 0 && w->pp[0].flag[j] >= 1;
            w->any_skip |= w->skip[j];
        }
    const size_t per = no > 0 ? (size_t)no * (size_t)(w->pp[0].ngen + w->pp[0].nfn) + 1 : 1;
    w->snap[0].v = calloc((AMK + 4) * per, 8);
    if (!w->snap[0].v) return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    for (int k = 1; k < AMK + 4; k++) w->snap[k].v = w->snap[0].v + (size_t)k * per;
    return MBS_OK;
}

/* Forward: the formulation's steps, psi by the trapezoidal rule, the
 * trajectory stored node by node. */
static int cl_forward(cl_ws *w, mbs_integrator *it, const mbs_sim_options *so, mbs_sim_stats *stats,
                      mbs_error *err)
{
    sens_run *r = w->r;
    const int no = w->no;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    double t = so->t0;
    int rc;
    if ((rc = initial_sensitivities(w, t, q, qd, qdd, err))) return rc;
    for (int k = 0; k < no; k++) r->psi[k] = 0;
    sens_objectives(r, q, qd, qdd, t, 0, w->g);
    store_node(w, t, q, qd, qdd);
    while (t < so->tf - 1e-12 * fmax(1, fabs(so->tf))) {
        const double h = fmin(so->dt, so->tf - t);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * w->g[k];
        if ((rc = mbs_integrator_step(it, h, err))) return rc;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        sens_objectives(r, q, qd, qdd, t, 0, w->g);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * w->g[k];
        if (store_node(w, t, q, qd, qdd))
            return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: more steps than expected at t = %.9g", t);
    }
    sens_objectives(r, q, qd, qdd, t, 1, w->g);
    for (int k = 0; k < no; k++) r->psi[k] += w->g[k];
    if (stats) mbs_integrator_stats(it, stats);
    return MBS_OK;
}

/* The adjoint's trajectory: RK4 on y' = [zd^i; a(y)] on the same grid (the
 * trapezoidal trajectory's O(h^2) error would be the gradient's;
 * docs/sensitivity.md). */
static int cl_rk4_trajectory(cl_ws *w, mbs_error *err)
{
    const int n = w->n, nd = w->nd;
    const size_t S = 3 * (size_t)nd, nb = sizeof(double) * (size_t)n;
    double *k2v = w->rk, *k2a = k2v + nd, *k3v = k2a + nd, *k3a = k3v + nd, *k4v = k3a + nd, *k4a = k4v + nd;
    int rc;
    memcpy(w->z, w->Zs, nb);
    if ((rc = accelerations(w, w->tt[0], w->Y, w->Y + nd))) return cl_fail(w, rc, err);
    memcpy(w->Y + 2 * nd, w->F0, sizeof(double) * (size_t)nd);
    for (int a = 0; a + 1 < w->nn; a++) {
        const double ta = w->tt[a], h = w->tt[a + 1] - ta;
        double *Ya = w->Y + (size_t)a * S, *Yb = Ya + S, *za = w->Zs + (size_t)a * 2 * n, *zb = za + 2 * n;
        for (int k = 0; k < nd; k++) {
            w->yi[k] = Ya[k] + 0.5 * h * Ya[nd + k];
            w->ydi[k] = Ya[nd + k] + 0.5 * h * Ya[2 * nd + k];
        }
        for (int i = 0; i < n; i++) w->z[i] = za[i] + 0.5 * h * za[n + i];
        if ((rc = accelerations(w, ta + 0.5 * h, w->yi, w->ydi))) return cl_fail(w, rc, err);
        memcpy(k2v, w->ydi, sizeof(double) * (size_t)nd);
        memcpy(k2a, w->F0, sizeof(double) * (size_t)nd);
        for (int k = 0; k < nd; k++) {
            w->yi[k] = Ya[k] + 0.5 * h * k2v[k];
            w->ydi[k] = Ya[nd + k] + 0.5 * h * k2a[k];
        }
        if ((rc = accelerations(w, ta + 0.5 * h, w->yi, w->ydi))) return cl_fail(w, rc, err);
        memcpy(k3v, w->ydi, sizeof(double) * (size_t)nd);
        memcpy(k3a, w->F0, sizeof(double) * (size_t)nd);
        for (int k = 0; k < nd; k++) {
            w->yi[k] = Ya[k] + h * k3v[k];
            w->ydi[k] = Ya[nd + k] + h * k3a[k];
        }
        memcpy(w->z, zb, nb);
        if ((rc = accelerations(w, ta + h, w->yi, w->ydi))) return cl_fail(w, rc, err);
        memcpy(k4v, w->ydi, sizeof(double) * (size_t)nd);
        memcpy(k4a, w->F0, sizeof(double) * (size_t)nd);
        for (int k = 0; k < nd; k++) {
            Yb[k] = Ya[k] + h / 6 * (Ya[nd + k] + 2 * k2v[k] + 2 * k3v[k] + k4v[k]);
            Yb[nd + k] = Ya[nd + k] + h / 6 * (Ya[2 * nd + k] + 2 * k2a[k] + 2 * k3a[k] + k4a[k]);
        }
        memcpy(w->z, zb, nb);
        if ((rc = accelerations(w, ta + h, Yb, Yb + nd))) return cl_fail(w, rc, err);
        memcpy(Yb + 2 * nd, w->F0, sizeof(double) * (size_t)nd);
        memcpy(zb, w->z, nb);
        memcpy(zb + n, w->zd, nb);
    }
    return MBS_OK;
}

/* The adjoint at tF: lambda(tF) = G~_y, I = G~_rho; then F at the last node. */
static int cl_backward_start(cl_ws *w, mbs_error *err)
{
    const int n = w->n, nd = w->nd, no = w->no, last = w->nn - 1;
    const size_t blk = (size_t)(2 * nd + w->np), ls = (size_t)no * blk;
    const double *yl = w->Y + (size_t)last * 3 * nd;
    int rc;
    memcpy(w->z, w->Zs + (size_t)last * 2 * n, sizeof(double) * (size_t)n);
    if ((rc = evaluate(w, w->tt[last], yl, yl + nd, 1, &w->E[0]))) return cl_fail(w, rc, err);
    for (int k = 0; k < no; k++)
        for (size_t c = 0; c < blk; c++) w->L[(size_t)k * blk + c] = w->E[0].gy[(size_t)k * w->ncol + c];
    if (w->any_skip) {
        cl_snap *ST = &w->snap[AMK + 3];
        snap_take(w, &w->E[0], NULL, ST);   /* G~_rho: the terminal part's products, l2 = 0 */
        snap_add(w, ST, 1);
    }
    memcpy(w->z, w->Zs + (size_t)last * 2 * n, sizeof(double) * (size_t)n);
    if ((rc = evaluate(w, w->tt[last], yl, yl + nd, 0, &w->E[0]))) return cl_fail(w, rc, err);
    adjoint_rhs(w, &w->E[0], w->L, w->Fr + (size_t)(last % AMK) * ls);
    if (w->any_skip) snap_take(w, &w->E[0], w->L, &w->snap[last % AMK]);
    return MBS_OK;
}

/* One backward RK4 step from node a + 1 to node a (midpoint: interpolated
 * y, warm start z1 - h/2 zd1). */
static int cl_backward_rk4(cl_ws *w, int a, mbs_error *err)
{
    const int n = w->n, nd = w->nd;
    const size_t ls = (size_t)w->no * (size_t)(2 * nd + w->np);
    const double t0 = w->tt[a], h = w->tt[a + 1] - t0;
    const double *z1 = w->Zs + (size_t)(a + 1) * 2 * n, *za = w->Zs + (size_t)a * 2 * n;
    const double *ya = w->Y + (size_t)a * 3 * nd;
    const double *F1 = w->Fr + (size_t)((a + 1) % AMK) * ls;
    cl_snap *Sk2 = &w->snap[AMK], *Sk3 = Sk2 + 1, *Sk4 = Sk2 + 2;
    cl_eval *Em = &w->E[1], *E0 = &w->E[2];
    int rc;
    interpolate(w, a, 0.5, w->yi, w->ydi);
    for (int i = 0; i < n; i++) w->z[i] = z1[i] - 0.5 * h * z1[n + i];
    if ((rc = evaluate(w, t0 + 0.5 * h, w->yi, w->ydi, 0, Em))) return cl_fail(w, rc, err);
    memcpy(w->z, za, sizeof(double) * (size_t)n);
    if ((rc = evaluate(w, t0, ya, ya + nd, 0, E0))) return cl_fail(w, rc, err);
    for (size_t i = 0; i < ls; i++) w->Lt[i] = w->L[i] + 0.5 * h * F1[i];
    adjoint_rhs(w, Em, w->Lt, w->K2);
    if (w->any_skip) snap_take(w, Em, w->Lt, Sk2);
    for (size_t i = 0; i < ls; i++) w->Lt[i] = w->L[i] + 0.5 * h * w->K2[i];
    adjoint_rhs(w, Em, w->Lt, w->K3);
    if (w->any_skip) snap_take(w, Em, w->Lt, Sk3);
    for (size_t i = 0; i < ls; i++) w->Lt[i] = w->L[i] + h * w->K3[i];
    adjoint_rhs(w, E0, w->Lt, w->K4);
    if (w->any_skip) snap_take(w, E0, w->Lt, Sk4);
    for (size_t i = 0; i < ls; i++) w->L[i] += h / 6 * (F1[i] + 2 * w->K2[i] + 2 * w->K3[i] + w->K4[i]);
    if (w->any_skip) {
        snap_add(w, &w->snap[(a + 1) % AMK], h / 6);
        snap_add(w, Sk2, h / 3);
        snap_add(w, Sk3, h / 3);
        snap_add(w, Sk4, h / 6);
    }
    return MBS_OK;
}

/* One backward implicit Adams-Moulton step to node a:
 * L_a = L_a+1 + h (b0 F(L_a) + sum_k b_k F_a+k), F(L) = J L + g at node a. */
static int cl_backward_am(cl_ws *w, int a, mbs_error *err)
{
    const int n = w->n, nd = w->nd, np = w->np, no = w->no, d2 = 2 * nd;
    const size_t blk = (size_t)(2 * nd + np), ls = (size_t)no * blk;
    const double t0 = w->tt[a], h = w->tt[a + 1] - t0;
    const double *za = w->Zs + (size_t)a * 2 * n, *ya = w->Y + (size_t)a * 3 * nd;
    cl_eval *E0 = &w->E[2];
    int rc;
    memcpy(w->z, za, sizeof(double) * (size_t)n);
    if ((rc = evaluate(w, t0, ya, ya + nd, 0, E0))) return cl_fail(w, rc, err);
    const double c = AM[0] * h;
    for (int k = 1; k <= AMK; k++) {
        const double *Fk = w->Fr + (size_t)((a + k) % AMK) * ls, bk = AM[k] * h;
        for (size_t i = 0; i < ls; i++) w->L[i] += bk * Fk[i];
        if (w->any_skip) snap_add(w, &w->snap[(a + k) % AMK], bk);
    }
    memset(w->Jm, 0, sizeof(double) * (size_t)d2 * (size_t)d2);
    for (int i = 0; i < d2; i++) w->Jm[(size_t)i * d2 + i] = 1;
    for (int i = 0; i < nd; i++) {
        w->Jm[(size_t)i * d2 + nd + i] -= c;   /* l2 rows: -c l1 */
        for (int k = 0; k < nd; k++) {
            w->Jm[(size_t)(nd + k) * d2 + i] -= c * E0->Fy[(size_t)i * nd + k];
            w->Jm[(size_t)(nd + k) * d2 + nd + i] -= c * E0->Fy[(size_t)(nd + i) * nd + k];
        }
    }
    if (d2 > 0 && mbs_dense_lu(d2, w->Jm, w->jp) != 0)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: backward step matrix singular at t = %.9g", t0);
    for (int k = 0; k < no; k++) {
        double *Lk = w->L + (size_t)k * blk;
        const double *gy = E0->gy + (size_t)k * w->ncol;
        for (int i = 0; i < d2; i++) Lk[i] += c * gy[i];
        if (d2 > 0) mbs_dense_lu_solve(d2, w->Jm, w->jp, Lk);
        for (int j = 0; j < np; j++) {
            const double *col = E0->Fy + (size_t)(d2 + j) * nd;
            double sI = gy[d2 + j];
            for (int i = 0; i < nd; i++) sI += col[i] * Lk[nd + i];
            Lk[d2 + j] += c * sI;
        }
    }
    return MBS_OK;
}

/* Backward from tF to t0: RK4 on the steps without AMK equal steps before
 * them (the first ones backwards; a short last step), implicit
 * Adams-Moulton of order AMK + 1 after: the equation is linear in the
 * adjoint and its coefficients depend only on the forward state, so the
 * implicit step is a 2 nd x 2 nd solve and needs one evaluation per step
 * (the node), not two. */
static int cl_backward(cl_ws *w, mbs_error *err)
{
    const int last = w->nn - 1;
    const size_t ls = (size_t)w->no * (size_t)(2 * w->nd + w->np);
    int rc;
    if ((rc = cl_backward_start(w, err))) return rc;
    for (int a = last - 1; a >= 0; a--) {
        const double t0 = w->tt[a], h = w->tt[a + 1] - t0;
        int am = a + AMK <= last;
        for (int k = 2; am && k <= AMK; k++) am = fabs(w->tt[a + k] - w->tt[a + k - 1] - h) <= 1e-9 * h;
        if ((rc = am ? cl_backward_am(w, a, err) : cl_backward_rk4(w, a, err))) return rc;
        for (size_t i = 0; i < ls; i++)
            if (!isfinite(w->L[i]))
                return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: adjoint not finite at t = %.9g", t0);
        adjoint_rhs(w, &w->E[2], w->L, w->Fr + (size_t)(a % AMK) * ls);
        if (w->any_skip) {
            snap_take(w, &w->E[2], w->L, &w->snap[a % AMK]);
            if (am) snap_add(w, &w->snap[a % AMK], AM[0] * h);   /* the implicit node's own term */
        }
    }
    return MBS_OK;
}

/* The gradient: I + lambda(t0)^T y0', plus the skipped parameters'
 * integrals (per-knot values of the splines once). */
static void cl_gradient(cl_ws *w)
{
    sens_run *r = w->r;
    const int nd = w->nd, np = w->np, no = w->no;
    const size_t blk = (size_t)(2 * nd + np);
    for (int k = 0; k < no; k++) {
        const double *Lk = w->L + (size_t)k * blk;
        for (int j = 0; j < np; j++) {
            double s = Lk[2 * nd + j];
            const double *col = w->y0p + (size_t)j * 2 * nd;
            for (int c = 0; c < 2 * nd; c++) s += Lk[c] * col[c];
            r->grad[(size_t)k * np + j] = s;
        }
    }
    for (int k = 0; k < no && w->any_skip; k++) {
        for (int j = 0; j < np; j++) r->grad[(size_t)k * np + j] += w->gacc[(size_t)k * np + j];
        sens_pprod_finish(r, &w->pp[k], r->grad + (size_t)k * np);
    }
}

int sens_cavm_loops(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    cl_ws w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.n = r->nq;
    w.np = r->np;
    w.no = r->nobj;
    sens_fwd F;
    int rc = sens_fwd_open(&F, r, SENS_FWD_LOOP, err);
    if (!rc) rc = cl_form_setup(&w, F.it, &F.so, err);
    if (!rc) rc = cl_alloc(&w, &F.so, err);
    if (!rc) rc = cl_skip_setup(&w, err);
    if (!rc) rc = cl_forward(&w, F.it, &F.so, stats, err);
    if (!rc) rc = cl_rk4_trajectory(&w, err);
    if (!rc) rc = cl_backward(&w, err);
    if (!rc) {
        cl_gradient(&w);
        if (r->o->history) r->o->history(r->o->history_user, F.so.t0, w.no, w.np, r->psi, r->grad);
    }
    ws_free(&w);
    sens_fwd_close(&F, NULL);
    return rc;
}
