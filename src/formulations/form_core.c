/*
 * form_core.c - the core shared by the closed-loop formulations
 * (form_impl.h): names, the mbs_form object, the consistent initial state,
 * the evaluation of the residual and the constraints and their tangents,
 * the penalty factorization, constraint violations.
 *
 * Evaluation (docs/formulations.md, "Closed-loop formulations"): one
 * kinematics pass at (q, qd, qdd) serves the O(n) Newton-Euler residual
 * r = M qdd - Q and every constraint quantity (Phi, Phi_q, dPhi/dt,
 * d2Phi/dt2 = Phi_q qdd - c). Tangents of both (force elements included:
 * spring lengths, stiffness, ... are parameters) come from one tangent
 * sweep of the kinematics, mbs_kin_forward_d, then the tangents of the loads,
 * body terms and Newton-Euler recursion and mbs_con_kernel_d.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form_impl.h"
#include "base/algebra.h"
#include "model/model_impl.h"
#include "../constraints/constraint.h"
#include "../forces/force.h"
#include "mbsens/constraints.h"
#include "constraints/kinematic_problems.h"
#include "../base/error.h"
#include "base/dense.h"
#include "kernels/results.h"
#include "model/state.h"

/* ---------------------------------------------------------------- names */

static const char *const loop_names[] = { "none", "matrixr", "ali3p", "penalty", "index1" };

const char *mbs_loop_formulation_name(mbs_loop_formulation f)
{
    return (int)f >= 0 && (int)f < 5 ? loop_names[f] : "?";
}

int mbs_loop_formulation_from_name(const char *name)
{
    for (int k = 0; name && k < 5; k++)
        if (!strcmp(name, loop_names[k])) return k;
    return -1;
}

const char *mbs_projection_name(mbs_projection p)
{
    return p == MBS_PROJ_ITERATIVE ? "iterative" : "penalty";
}

int mbs_projection_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "penalty")) return MBS_PROJ_PENALTY;
    if (!strcmp(name, "iterative")) return MBS_PROJ_ITERATIVE;
    return -1;
}

int mbs_form_penalty_factor(int n, int nc, const double *M, const double *Phi, double al, double *K, lapack_int *piv)
{
    const size_t ld = (size_t)(n + nc);
    for (int j = 0; j < n; j++) {
        memcpy(K + (size_t)j * ld, M + (size_t)j * n, sizeof(double) * (size_t)n);
        for (int r = 0; r < nc; r++) K[(size_t)j * ld + n + r] = Phi[(size_t)r * n + j];
    }
    for (int r = 0; r < nc; r++) {
        double *col = K + (size_t)(n + r) * ld;
        memcpy(col, Phi + (size_t)r * n, sizeof(double) * (size_t)n);
        for (int i = 0; i < nc; i++) col[n + i] = i == r ? -1 / al : 0;
    }
    return mbs_dense_lu(n + nc, K, piv);
}

void mbs_form_affine(mbs_form *f, double h)
{
    const double c1 = MBS_FORM_GAMMA / (MBS_FORM_BETA * h), d1 = 1 / (MBS_FORM_BETA * h * h);
    for (int k = 0; k < f->n; k++) {
        f->z[k] = f->zp[k] + f->D[k];
        f->zd[k] = f->zdp[k] + c1 * f->D[k];
        f->zdd[k] = f->zddn[k] + d1 * f->D[k];
    }
}

void mbs_form_step_done(mbs_form *f, double t1, double h, int iters)
{
    f->step.t = t1;
    f->step.h = h;
    f->step.iterations = iters;
}

/* ---------------------------------------------------------------- evaluation */

void mbs_form_primal(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                     const double *qdd, double *r, double *phi, double *Phi, double *phid, double *phidd)
{
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    mbs_rnea(m, &d->ws, r ? r : d->dbuf);
    if (phi || Phi || phid || phidd)
        mbs_con_kernel(m, m->x, &d->ws, q, qd, qdd, t, phi, Phi, phid, NULL, NULL, phidd);
}

void mbs_form_primal_acc(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                         double *r)
{
    mbs_kin_accelerations(m, &d->ws, qdd);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    mbs_rnea(m, &d->ws, r);
}

void mbs_form_constraints(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                          const double *qdd, double *phi, double *Phi, double *phid, double *phidd)
{
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    mbs_con_kernel(m, m->x, &d->ws, q, qd, qdd, t, phi, Phi, phid, NULL, NULL, phidd);
}

void mbs_form_tangent(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                      const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                      const double *dx, double *dr, double *dphi, double *dPhi, double *dphid, double *dphidd)
{
    mbs_form_tangent_from(m, d, t, q, qd, qdd, dq, dqd, dqdd, dx, 0, dr, dphi, dPhi, dphid, dphidd);
}

void mbs_form_tangent_from(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                           const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                           const double *dx, int from, double *dr, double *dphi, double *dPhi, double *dphid,
                           double *dphidd)
{
    const int nb = m->nb;
    mbs_kin_forward_d_from(m, m->x, &d->ws, dx, &d->dws, q, qd, qdd, dq, dqd, dqdd, 2, from, 1, nb + 1);
    if (dr) {
        /* user loads are constant; force elements add their tangents */
        memset(d->dws.xfrc, 0, sizeof(double) * 15 * (size_t)(nb + 1));
        memset(d->dws.qfrc, 0, sizeof(double) * (size_t)m->nv);
        mbs_forces_apply_d(m, m->x, &d->ws, dx, &d->dws, q, qd, dq, dqd, d->dws.qfrc, d->time);
        mbs_body_terms_d(m, m->x, &d->ws, dx, &d->dws, 1, nb + 1);
        mbs_rnea_d(m, &d->ws, &d->dws, d->dws.qfrc, dr, 1, nb + 1);
    }
    if (dphi || dPhi || dphid || dphidd)
        mbs_con_kernel_d(m, m->x, &d->ws, dx, &d->dws, q, qd, qdd, dq, dqd, dqdd, t, dphi, dPhi, dphid, dphidd);
}

/* 1 if p[0..n-1] are all zero (+0 or -0) */
static inline int all_zero(const double *p, int n)
{
    uint64_t acc = 0;
    for (int k = 0; k < n; k++) {
        uint64_t u;
        memcpy(&u, p + k, sizeof u);
        acc |= u;
    }
    return (acc << 1) == 0;
}

/* The residual's tangent along a direction that moves no kinematic quantity
 * (mbs_form_param_dynamic): every kinematic tangent is zero, so only the
 * bodies whose mass, inertia or loads the direction moves (or every body,
 * for gravity) have body-term tangents, and the Newton-Euler tangent
 * reduces to dF_i = dM^v_i Vd_i - dQ^v_i, accumulated base-ward as the
 * wrenches, dtau_i = b_i^T dF_i - dQ^q_i. The same arithmetic as the general
 * path (body_terms_derivatives.c, inverse_dynamics_derivatives.c) with its
 * products by zero tangents left out. */
void mbs_form_tangent_dynamic(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                              const double *dx, double *dr)
{
    const mbs_ws *w = &d->ws;
    mbs_ws *dw = &d->dws;
    const int nb = m->nb;
    const size_t nb1 = (size_t)nb + 1;
    /* the element loads' tangents read the kinematic tangents A, o, V, r: zero */
    memset(dw->A, 0, sizeof(double) * 9 * nb1);
    memset(dw->o, 0, sizeof(double) * 3 * nb1);
    memset(dw->V, 0, sizeof(double) * 6 * nb1);
    memset(dw->r, 0, sizeof(double) * 3 * nb1);
    memset(dw->xfrc, 0, sizeof(double) * 15 * nb1);
    memset(dw->qfrc, 0, sizeof(double) * (size_t)m->nv);
    mbs_forces_apply_d(m, m->x, w, dx, dw, q, qd, NULL, NULL, dw->qfrc, d->time);
    const int dgrav = !all_zero(dx + m->x_gravity, 3);
    for (int i = 1; i <= nb; i++) {
        const double *dI = dx + m->body[i].x_inertia;
        double *dF = dw->F + 6 * i;
        const int dI0 = all_zero(dI, 6);
        if (!dgrav && dx[m->body[i].x_mass] == 0 && dI0 && all_zero(dw->xfrc + 15 * i, 15)) {
            s6_zero(dF);
            continue;
        }
        /* the body terms' tangent of this body alone, its kinematic tangents
         * zero but for an inertia entry's dJ = A dJbar A^T */
        double *dJ = dw->J + 9 * i;
        if (dI0) {
            for (int k = 0; k < 9; k++) dJ[k] = 0;
        } else {
            const double *A = w->A + 9 * i;
            double dJb[9], AJ[9];
            m3_sym(dJb, dI);
            m3_mul(AJ, A, dJb);
            m3_mul_bt(dJ, AJ, A);
        }
        v3_zero(dw->rG + 3 * i);
        mbs_body_terms_d(m, m->x, w, dx, dw, i, i + 1);
        m6_body_inertia_mv(dF, dw->Mv + 36 * i, w->Vd + 6 * i);
        for (int c = 0; c < 6; c++) dF[c] -= dw->Qv[6 * i + c];
    }
    for (int k = 0; k < m->nv; k++) dr[k] = -dw->qfrc[k];
    for (int i = nb; i >= 1; i--) {
        const mbs_joint_info *jt = &m->joint[i];
        const double *dF = dw->F + 6 * i, *bi = w->b + MBS_BSTRIDE * i;
        for (int k = 0; k < jt->nv; k++) dr[jt->voff + k] += s6_dot(bi + 6 * k, dF);
        if (jt->parent > 0) s6_wrench_shift_add(dw->F + 6 * jt->parent, w->a + 3 * i, dF);
    }
}

int mbs_form_param_dynamic(const mbs_model *m, int j)
{
    const mbs_param_info *p = &m->param[j];
    for (int t = 0; t < p->ntargets; t++) {
        const int x = p->target[t];
        int ok = x >= m->x_gravity && x < m->x_gravity + 3;
        for (int i = 1; i <= m->nb && !ok; i++)
            ok = x == m->body[i].x_mass || (x >= m->body[i].x_inertia && x < m->body[i].x_inertia + 6);
        for (int k = 0; k < m->nforce && !ok; k++) ok = x >= m->force[k].x && x < m->force[k].x + m->force[k].nx;
        for (int k = 0; k < m->nfunc && !ok; k++) {
            ok = x >= m->func[k].x && x < m->func[k].x + m->func[k].nx;
            for (int r = 0; r < m->con.ndriver && ok; r++) ok = m->con.driver[r].func != k;   /* moves constraints */
        }
        if (!ok) return 0;
    }
    return 1;
}

void mbs_form_constraint_tangent(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                                 const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                                 const double *dx, double *dphi, double *dPhi_q, double *dphid, double *dphidd)
{
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    mbs_form_tangent(m, d, t, q, qd, qdd, dq, dqd, dqdd, dx, NULL, dphi, dPhi_q, dphid, dphidd);
}

void mbs_form_trap_tangent(const mbs_model *m, mbs_data *d, double t, const double *z, const double *zd,
                           const double *zdd, double h, double *S, double *e)
{
    const int n = m->nv;
    const double kh = MBS_FORM_BETA * h * h, ch = MBS_FORM_GAMMA * h;
    double *dq = e, *dqd = e + n, *dqdd = e + 2 * n;
    memset(e, 0, sizeof(double) * 3 * (size_t)n);
    for (int k = 0; k < n; k++) {
        dq[k] = kh;
        dqd[k] = ch;
        dqdd[k] = 1;
        mbs_form_tangent(m, d, t, z, zd, zdd, dq, dqd, dqdd, NULL, S + (size_t)k * n, NULL, NULL, NULL, NULL);
        dq[k] = dqd[k] = dqdd[k] = 0;
    }
}

/* The violations of mbs_constraint_violation with the level-2 kinematics of
 * (q, qd, qdd) already in d (nc > 0). */
static int violation_of_kinematics(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                                   const double *qdd, double viol[3])
{
    const int nc = mbs_model_nconstraints(m);
    mbs_con_ws *cw = d->con;
    double *phi = cw->phi, *v = cw->vec;
    mbs_con_kernel(m, m->x, &d->ws, q, qd, qdd, t, phi, NULL, NULL, NULL, NULL, NULL);
    viol[0] = mbs_dense_norm(phi, nc);
    if (qd) {
        mbs_con_kernel(m, m->x, &d->ws, q, qd, qdd, t, NULL, NULL, v, NULL, NULL, NULL);
        viol[1] = mbs_dense_norm(v, nc);
        if (qdd) {
            mbs_con_kernel(m, m->x, &d->ws, q, qd, qdd, t, NULL, NULL, NULL, NULL, NULL, v);
            viol[2] = mbs_dense_norm(v, nc);
        }
    }
    return mbs_data_results(d, "constraint violation", MBS_RESULTS({ "viol", viol, 3, 1, MBS_IX_NONE, 0 }));
}

int mbs_constraint_violation(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                             const double *qdd, double viol[3])
{
    if (m && d && mbs_tangent_unsupported(m, "mbs_constraint_violation", d->err)) return MBS_ERR_UNSUPPORTED;
    if (!m || !d || !q || !viol) return MBS_ERR_ARG;
    viol[0] = viol[1] = viol[2] = 0;
    if (mbs_model_nconstraints(m) == 0) return MBS_OK;
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    return violation_of_kinematics(m, d, t, q, qd, qdd, viol);
}

/* ---------------------------------------------------------------- object */

typedef struct {
    double *base;
    size_t used, size;
} arena;

static double *take(arena *a, size_t n)
{
    double *p = a->base + a->used;
    a->used += n ? n : 1;
    return p;
}

/* The doubles of the arena of a formulation of n coordinates, nc
 * constraints, nr of them not Euler, nd independent coordinates at most. */
static size_t arena_size(size_t n, size_t nc, size_t nr, size_t nd)
{
    size_t total = 0;
    total += n + 5 * nc + nc * n + n * n;          /* r, phi.., Phi, M */
    total += 2 * n * n + 5 * n + 2 * nc;           /* S, P, v1..v4, e, w1, w2 */
    total += 2 * n;                                /* e is 3n */
    total += 10 * n + nc;                          /* trapezoidal, lam */
    total += n * nr + nr * nr + 2 * nr + 2 * n;    /* index1 */
    total += nd * n + n * n + n * nd + nd * nd + 14 * nd;   /* matrixr */
    total += nc * n + nd * n + n + nc + nd;        /* matrixr chain */
    total += n * n;                                /* CK */
    total += 2 * n + 3 * nc;                       /* step record */
    total += (n + nc) * (n + nc + 1);              /* K: (n + nc)^2 and a column */
    return total;
}

/* The arrays of f carved from the arena a (sizes n, nc, nr, nd: the counts
 * plus one, as in arena_size). */
static void arena_carve(mbs_form *f, arena *a, size_t n, size_t nc, size_t nr, size_t nd)
{
    f->r = take(a, n);
    f->phi = take(a, nc);
    f->phid = take(a, nc);
    f->phidd = take(a, nc);
    f->b = take(a, nc);
    f->c = take(a, nc);
    f->Phi = take(a, nc * n);
    f->M = take(a, n * n);
    f->S = take(a, n * n);
    f->P = take(a, n * n);
    f->v1 = take(a, n);
    f->v2 = take(a, n);
    f->v3 = take(a, n);
    f->v4 = take(a, n);
    f->e = take(a, 3 * n);
    f->w1 = take(a, nc);
    f->w2 = take(a, nc);
    double **vec[] = { &f->zn, &f->zdn, &f->zddn, &f->zp, &f->zdp, &f->D, &f->z, &f->zd, &f->zdd, &f->dz };
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++) *vec[k] = take(a, n);
    f->lam = take(a, nc);
    f->Y = take(a, n * nr);
    f->A = take(a, nr * nr);
    f->gam = take(a, nr);
    f->sv = take(a, nr);
    f->tid = take(a, n);
    f->qdd0 = take(a, n);
    f->Bm = take(a, nd * n);
    f->N = take(a, n * n);
    f->T = take(a, n * nd);
    f->J = take(a, nd * nd);
    double **dv[] = { &f->fi, &f->fdi, &f->fddi, &f->zi, &f->zdi, &f->zddi, &f->zin, &f->zdin, &f->zddin,
                      &f->zip, &f->zdip, &f->Di, &f->dDi, &f->yd };
    for (size_t k = 0; k < sizeof dv / sizeof dv[0]; k++) *dv[k] = take(a, nd);
    f->CK = take(a, n * n);
    f->dPhi = take(a, nc * n);
    f->dB = take(a, nd * n);
    f->ty = take(a, n);
    f->tP = take(a, nc);
    f->tB = take(a, nd);
    f->step.zd_star = take(a, n);
    f->step.zdd_star = take(a, n);
    f->step.lambda = take(a, nc);
    f->step.sigma = take(a, nc);
    f->step.kappa = take(a, nc);
    f->K = take(a, (n + nc) * (n + nc + 1));
    f->step.zi = f->zi;
    f->step.zdi = f->zdi;
    f->step.zddi = f->zddi;
}

/* index1: whether every constraint row is a coordinate driver of a
 * distinct velocity that is not an Euler parameter, with the fully
 * recursive forward dynamics (then the drivers are prescribed motions of
 * the articulated-body pass, f->prescribed); -1 when memory runs out. */
static int index1_prescribed_setup(mbs_form *f)
{
    const mbs_model *m = f->m;
    if (f->o.formulation != MBS_FD_RECURSIVE || m->con.nloop_rows > 0 || f->nr != m->con.ndriver) return 0;
    f->presc = calloc((size_t)m->nv + 1, 1);
    f->drv_v = calloc((size_t)m->con.ndriver, sizeof *f->drv_v);
    f->frc = calloc((size_t)m->nv + 1, sizeof *f->frc);
    if (!f->presc || !f->drv_v || !f->frc) return -1;
    for (int k = 0; k < m->con.ndriver; k++) {
        const mbs_driver_info *dr = &m->con.driver[k];
        if (dr->type != MBS_DRIVER_COORDINATE) return 0;
        int j = 1;
        while (j <= m->nb && !(dr->coord >= m->joint[j].qoff && dr->coord < m->joint[j].qoff + m->joint[j].nq)) j++;
        if (j > m->nb) return 0;
        const mbs_joint_info *jt = &m->joint[j];
        const int e = dr->coord - jt->qoff;
        if (jt->euler >= 0 && e >= jt->euler && e < jt->euler + 4) return 0;
        const int v = jt->voff + e;
        if (f->presc[v]) return 0;
        f->presc[v] = 1;
        f->drv_v[k] = v;
    }
    f->prescribed = 1;
    return 0;
}

/* index1: LAPACK least-squares work for the nr x nr multiplier system and
 * the prescribed-motion path; -1 when memory runs out. */
static int index1_setup(mbs_form *f)
{
    double wq = 0, aa = 0, bb = 0, ss = 0;
    lapack_int iwq = 0, rank = 0;
    LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, f->nr, f->nr, 1, &aa, f->nr, &bb, f->nr, &ss, 1e-12, &rank, &wq, -1,
                        &iwq);
    f->lwork = (int)wq + 64;
    f->lswork = calloc((size_t)f->lwork, sizeof(double));
    f->iwork = calloc((size_t)iwq + 64, sizeof *f->iwork);
    if (!f->lswork || !f->iwork) return -1;
    return index1_prescribed_setup(f);
}

/* Matrix R: the independent coordinates of o (validated at the initial
 * state), or automatic ones. */
static int matrixr_setup(mbs_form *f, const mbs_model *m, const mbs_sim_options *o, mbs_error *err)
{
    if (o->ndofs > 0 && o->dofs) {
        if (o->ndofs > f->n)
            return mbs_error_set(err, MBS_ERR_ARG, "matrixr: %d independent coordinates for %d coordinates",
                                 o->ndofs, f->n);
        for (int k = 0; k < o->ndofs; k++) {
            const mbs_dof *g = &o->dofs[k];
            if (g->point < 0 ? (g->coord < 0 || g->coord >= f->n)
                             : (g->point >= m->npoint || g->component < 0 || g->component > 2))
                return mbs_error_set(err, MBS_ERR_ARG, "matrixr: independent coordinate %d is invalid "
                                     "(point %d, coordinate %d, component %d)", k, g->point, g->coord,
                                     g->component);
            f->dof[k] = *g;
        }
        f->nd = o->ndofs;
    } else {
        f->nd = -1;   /* automatic */
    }
    return MBS_OK;
}

mbs_form *mbs_form_create(const mbs_model *m, mbs_data *d, const mbs_sim_options *o, mbs_error *err)
{
    mbs_form *f = calloc(1, sizeof *f);
    if (!f) {
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    f->m = m;
    f->d = d;
    f->o = *o;
    f->o.dofs = NULL;
    f->n = m->nq;
    f->nc = mbs_model_nconstraints(m);
    f->nr = f->nc - m->n_euler;
    const size_t n = (size_t)f->n + 1, nc = (size_t)f->nc + 1, nr = (size_t)f->nr + 1;
    /* Matrix R: at most n independent coordinates */
    const size_t nd = n;
    const size_t total = arena_size(n, nc, nr, nd);
    arena a = { calloc(total, sizeof(double)), 0, total };
    f->ipiv = calloc(n + nc, sizeof *f->ipiv);
    f->ipivd = calloc(nd, sizeof *f->ipivd);
    f->dof = calloc(nd, sizeof *f->dof);
    if (!a.base || !f->ipiv || !f->ipivd || !f->dof) {
        free(a.base);
        mbs_form_free(f);
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    arena_carve(f, &a, n, nc, nr, nd);
    if (a.used > a.size) abort();   /* arena_size is wrong */
    if (o->loop == MBS_LOOP_INDEX1 && f->nr > 0 && index1_setup(f) != 0) {
        mbs_form_free(f);
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (o->loop == MBS_LOOP_MATRIXR && matrixr_setup(f, m, o, err) != MBS_OK) {
        mbs_form_free(f);
        return NULL;
    }
    return f;
}

void mbs_form_free(mbs_form *f)
{
    if (!f) return;
    free(f->r);   /* the arena */
    free(f->ipiv);
    free(f->ipivd);
    free(f->dof);
    free(f->lswork);
    free(f->iwork);
    free(f->presc);
    free(f->drv_v);
    free(f->frc);
    free(f);
}

const mbs_stepper *mbs_form_stepper(mbs_loop_formulation loop)
{
    switch (loop) {
    case MBS_LOOP_ALI3P: return &mbs_stepper_ali3p;
    case MBS_LOOP_MATRIXR: return &mbs_stepper_matrixr;
    case MBS_LOOP_PENALTY: return &mbs_stepper_penalty;
    default: return NULL;
    }
}

int mbs_form_keeps_euler(const mbs_form *f)
{
    return f && f->o.loop != MBS_LOOP_INDEX1;
}

int mbs_form_initial_state(mbs_form *f, double t, double *q, double *qd, char msg[MBS_ERROR_MSG_LEN])
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    if (m->con.ncut + m->con.ndriver == 0) return MBS_OK;   /* an open tree: nothing to close */
    mbs_data_set_time(d, t);
    mbs_assembly_report rep;
    int rc = mbs_assemble(m, d, q, t, NULL, &rep);
    if (rc) return mbs_fail(msg, rc, "%s", mbs_data_error(d));
    rc = mbs_solve_velocity(m, d, q, qd, t, NULL);
    if (rc) return mbs_fail(msg, rc, "velocity problem: %s", mbs_data_error(d));
    return MBS_OK;
}

int mbs_form_fd(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char msg[MBS_ERROR_MSG_LEN])
{
    const size_t len = MBS_ERROR_MSG_LEN;
    int rc;
    switch (f->o.loop) {
    case MBS_LOOP_ALI3P:
    case MBS_LOOP_PENALTY:
        rc = mbs_form_penalty_accel(f, t, q, qd, qdd, f->lam, msg, len);
        if (!rc) memcpy(f->step.lambda, f->lam, sizeof(double) * (size_t)f->nc);
        break;
    case MBS_LOOP_MATRIXR:
        rc = mbs_form_matrixr_accel(f, t, q, qd, qdd, msg, len);
        break;
    case MBS_LOOP_INDEX1:
        rc = mbs_form_index1_accel(f, t, q, qd, qdd, msg, len);
        break;
    default:
        rc = mbs_fail(msg, MBS_ERR_ARG, "unknown loop formulation %d", (int)f->o.loop);
    }
    f->have_tangent = 0;   /* a new state */
    f->viol_ready = 0;
    if (!rc) {
        /* the reset's record: no step, nothing projected */
        memcpy(f->step.zd_star, qd, sizeof(double) * (size_t)f->n);
        memcpy(f->step.zdd_star, qdd, sizeof(double) * (size_t)f->n);
    }
    return rc;
}

int mbs_form_need_tangent(const mbs_form *f, int k, double h)
{
    if (f->o.tangent_keep) return !f->have_tangent || fabs(f->tangent_h - h) > 1e-9 * h;
    return k == 1 || f->o.tangent_update == MBS_TANGENT_ITERATION;
}

void mbs_form_newton_tangent(mbs_form *f, mbs_sim_stats *st, int k, double t, const double *z, const double *zd,
                             const double *zdd, double h, double *S)
{
    const mbs_model *m = f->m;
    const int n = f->n;
    const size_t nn = (size_t)n * (size_t)n;
    if (k == 1 || !f->o.tangent_keep) mbs_crba(m, &f->d->ws, f->M);   /* symmetric: either layout */
    if (mbs_form_need_tangent(f, k, h)) {
        mbs_form_trap_tangent(m, f->d, t, z, zd, zdd, h, f->CK, f->e);
        for (size_t i = 0; i < nn; i++) f->CK[i] -= f->M[i];
        f->have_tangent = 1;
        f->tangent_h = h;
        st->tangent_evals++;
    }
    for (size_t i = 0; i < nn; i++) S[i] = f->M[i] + f->CK[i];
}

void mbs_form_tangent_done(mbs_form *f, int iters)
{
    if (iters > 3) f->have_tangent = 0;
}

void mbs_form_observe(mbs_form *f, double t, const double *q, const double *qd, const double *qdd,
                      mbs_sim_stats *st)
{
    double v[3];
    if (f->viol_ready) {
        f->viol_ready = 0;
        for (int k = 0; k < 3; k++) v[k] = f->viol[k];
    } else {
        /* the owner has just left the kinematics of (q, qd, qdd) in d */
        v[0] = v[1] = v[2] = 0;
        if (mbs_model_nconstraints(f->m) > 0 && violation_of_kinematics(f->m, f->d, t, q, qd, qdd, v) != MBS_OK) return;
    }
    for (int k = 0; k < 3; k++)
        if (!(v[k] <= st->violation[k])) st->violation[k] = v[k];
}
