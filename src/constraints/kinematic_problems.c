/*
 * kinematic_problems.c - constraint evaluation (mbsens/constraints.h) and
 * the kinematic problems of closed-loop models (thesis §3.1).
 *
 * The coordinates the user holds fixed (the degrees of freedom, rows B of
 * the thesis: a 0/1 selector) are eliminated: they keep their given values
 * exactly, and the constraint equations are solved for the other ("free")
 * coordinates in the least-squares sense with the minimum-norm solution
 * (LAPACK dgelsd, SVD with relative threshold RCOND). With F the free
 * columns of Phi_q and X the fixed ones:
 *
 *   assembly      F dz_F = -Phi,  z_F += dz_F, renormalize the Euler
 *                 parameters, until |dz|_2 < tol
 *   velocity      F zd_F = b - X zd_X
 *   acceleration  F zdd_F = c - X zdd_X
 *
 * This is the thesis's normal-equation form (Phi^T Phi + B^T B) dz = -Phi^T
 * Phi when that matrix is regular, and stays defined when it is not:
 * redundant constraints (the revolute cut, the redundant four-bar) and an
 * incomplete choice of fixed coordinates (the minimum-norm correction then
 * moves the free coordinates least).
 */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/constraints.h"
#include "mbsens/kinematics.h"
#include "constraints/kinematic_problems.h"
#include "model/constraint_model.h"
#include "constraints/constraint.h"
#include "kernels/results.h"
#include "model/state.h"

#define RCOND 1e-11

static lapack_int gelsd_query(lapack_int M, lapack_int N, lapack_int *liwork)
{
    double wq = 0, a = 0, b = 0, s = 0;
    lapack_int iwq = 0, rank = 0;
    lapack_int lda = M > 1 ? M : 1, ldb = (M > N ? M : N) > 1 ? (M > N ? M : N) : 1;
    if (LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, M, N, 1, &a, lda, &b, ldb, &s, RCOND, &rank, &wq, -1, &iwq) != 0)
        return -1;
    *liwork = iwq;
    return (lapack_int)wq;
}

int mbs_con_ws_create(mbs_data *d, const mbs_model *m)
{
    /* the cut caches of the primal and tangent workspaces */
    if (mbs_con_cache_attach(&d->ws, m) != 0 || mbs_con_cache_attach(&d->dws, m) != 0) return -1;
    mbs_con_ws *c = calloc(1, sizeof *c);
    if (!c) return -1;
    d->con = c;
    const int n = mbs_con_nrows(m), nv = m->nv;
    c->ncon = n;
    c->nv = nv;
    c->mmax = n > nv ? n : nv;
    size_t n1 = (size_t)n + 1, v1 = (size_t)nv + 1, m1 = (size_t)c->mmax + 1;
    c->phi = calloc(n1, sizeof *c->phi);
    c->vec = calloc(n1, sizeof *c->vec);
    c->Phi = calloc(n1 * v1, sizeof *c->Phi);
    c->A = calloc(m1 * v1, sizeof *c->A);
    c->rhs = calloc(m1 + v1, sizeof *c->rhs);
    c->sv = calloc(v1, sizeof *c->sv);
    c->q = calloc((size_t)m->nq + 1, sizeof *c->q);
    c->held = calloc(v1, sizeof *c->held);
    c->fixed = calloc(v1, sizeof *c->fixed);
    if (!c->phi || !c->vec || !c->Phi || !c->A || !c->rhs || !c->sv || !c->q || !c->held || !c->fixed) return -1;
    if (nv > 0 && n > 0) {
        /* work for the problem sizes used: M = rows <= ncon, N = free
         * columns <= nv. The requirement grows with both; query along
         * the two edges and keep twice the largest. */
        lapack_int lw = 1, liw = 1;
        for (int e = 0; e < 2; e++)
            for (int k = 1; k <= (e ? nv : n); k++) {
                lapack_int li = 0, l = e ? gelsd_query(n, k, &li) : gelsd_query(k, nv, &li);
                if (l < 0) return -1;
                if (l > lw) lw = l;
                if (li > liw) liw = li;
            }
        c->lwork = 2 * (int)lw + 64;
        c->liwork = 2 * (int)liw + 64;
        c->work = calloc((size_t)c->lwork, sizeof *c->work);
        c->iwork = calloc((size_t)c->liwork, sizeof *c->iwork);
        if (!c->work || !c->iwork) return -1;
    }
    return 0;
}

void mbs_con_ws_free(mbs_data *d)
{
    mbs_con_ws *c = d->con;
    if (!c) return;
    free(c->phi);
    free(c->vec);
    free(c->Phi);
    free(c->A);
    free(c->rhs);
    free(c->sv);
    free(c->q);
    free(c->held);
    free(c->fixed);
    free(c->work);
    free(c->iwork);
    free(c);
    d->con = NULL;
}

void mbs_con_ws_scribble(mbs_data *d, uint64_t *s)
{
    mbs_con_cache_scribble(&d->ws, d->model, s);
    mbs_con_cache_scribble(&d->dws, d->model, s);
    mbs_con_ws *c = d->con;
    const size_t n1 = (size_t)c->ncon + 1, v1 = (size_t)c->nv + 1, m1 = (size_t)c->mmax + 1, z = sizeof(double);
    mbs_scribble_bytes(c->phi, z * n1, s);
    mbs_scribble_bytes(c->vec, z * n1, s);
    mbs_scribble_bytes(c->Phi, z * n1 * v1, s);
    mbs_scribble_bytes(c->A, z * m1 * v1, s);
    mbs_scribble_bytes(c->rhs, z * (m1 + v1), s);
    mbs_scribble_bytes(c->sv, z * v1, s);
    mbs_scribble_bytes(c->q, z * ((size_t)d->model->nq + 1), s);
    mbs_scribble_bytes(c->held, z * v1, s);
    if (c->work) mbs_scribble_bytes(c->work, z * (size_t)c->lwork, s);
    if (c->iwork) mbs_scribble_bytes(c->iwork, sizeof(int) * (size_t)c->liwork, s);
    mbs_scribble_bytes(c->fixed, sizeof(int) * v1, s);
    for (size_t k = 0; k < v1; k++) c->fixed[k] = c->nv > 0 ? (int)((unsigned)c->fixed[k] % (unsigned)c->nv) : 0;
}

/* ---------------------------------------------------------------- evaluation */

int mbs_constraint_eval(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double t,
                        double *phi, double *Phi_q, double *phid, double *b, double *c)
{
    if (m && d && mbs_tangent_unsupported(m, "constraint evaluation", d->err)) return MBS_ERR_UNSUPPORTED;
    if (!m || !d || !q) return MBS_ERR_ARG;
    if ((phid || c) && !qd)
        return mbs_data_fail(d, MBS_ERR_ARG, "mbs_constraint_eval: dPhi/dt and c need the velocities qd");
    if (!isfinite(t)) return mbs_data_fail(d, MBS_ERR_NUMERIC, "mbs_constraint_eval: time is not finite");
    int rc = mbs_data_check_state(d, q, (phid || c) ? qd : NULL, NULL);
    if (rc != MBS_OK) return rc;
    const int level = c ? 2 : phid ? 1 : 0;
    mbs_kin_forward(m, m->x, &d->ws, q, qd, NULL, level);
    mbs_con_kernel(m, m->x, &d->ws, q, qd, NULL, t, phi, Phi_q, phid, b, c, NULL);
    const int n = mbs_con_nrows(m);
    return mbs_data_results(d, "constraints",
                            MBS_RESULTS({ "phi", phi, n, 1, MBS_IX_CON, 0 },
                                        { "Phi_q", Phi_q, n, m->nv, MBS_IX_CON, MBS_IX_COORD },
                                        { "dphi/dt", phid, n, 1, MBS_IX_CON, 0 },
                                        { "b", b, n, 1, MBS_IX_CON, 0 }, { "c", c, n, 1, MBS_IX_CON, 0 }));
}

int mbs_constraints(const mbs_model *m, mbs_data *d, const double *q, double t, double *phi)
{
    return mbs_constraint_eval(m, d, q, NULL, t, phi, NULL, NULL, NULL, NULL);
}

int mbs_constraint_jacobian(const mbs_model *m, mbs_data *d, const double *q, double t, double *Phi_q)
{
    return mbs_constraint_eval(m, d, q, NULL, t, NULL, Phi_q, NULL, NULL, NULL);
}

int mbs_constraint_velocity(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double t,
                            double *phid)
{
    return mbs_constraint_eval(m, d, q, qd, t, NULL, NULL, phid, NULL, NULL);
}

int mbs_constraint_velocity_rhs(const mbs_model *m, mbs_data *d, const double *q, double t, double *b)
{
    return mbs_constraint_eval(m, d, q, NULL, t, NULL, NULL, NULL, b, NULL);
}

int mbs_constraint_acceleration_rhs(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                    double t, double *c)
{
    return mbs_constraint_eval(m, d, q, qd, t, NULL, NULL, NULL, NULL, c);
}

/* ---------------------------------------------------------------- problems */

void mbs_kin_options_default(mbs_kin_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->nfixed = -1;
    o->euler_rows = 1;
}

typedef struct {
    int nfixed;
    double tol, residual_tol;
    int max_iter, euler_rows;
} kin_setup;

/* Options resolved against the model; the fixed list into ws->fixed. */
static int setup(const mbs_model *m, mbs_data *d, const mbs_kin_options *opt, kin_setup *s)
{
    mbs_kin_options o;
    if (opt) o = *opt;
    else mbs_kin_options_default(&o);
    mbs_con_ws *c = d->con;
    const int *fx = o.nfixed < 0 ? m->con.fixed : o.fixed;
    int nf = o.nfixed < 0 ? m->con.nfixed : o.nfixed;
    if (nf > 0 && !fx) return mbs_data_fail(d, MBS_ERR_ARG, "nfixed = %d but the fixed list is NULL", nf);
    int n = 0;
    for (int i = 0; i < nf; i++) {
        if (fx[i] < 0 || fx[i] >= m->nv)
            return mbs_data_fail(d, MBS_ERR_ARG, "fixed coordinate %d out of range 0..%d", fx[i], m->nv - 1);
        int dup = 0;
        for (int k = 0; k < n && !dup; k++) dup = c->fixed[k] == fx[i];
        if (!dup) c->fixed[n++] = fx[i];
    }
    s->nfixed = n;
    s->tol = o.tol > 0 ? o.tol : m->con.tol;
    s->max_iter = o.max_iter > 0 ? o.max_iter : m->con.max_iter;
    s->residual_tol = o.residual_tol > 0 ? o.residual_tol : 1e-8;
    s->euler_rows = o.euler_rows;
    return MBS_OK;
}

/* Columns not held fixed into c->fixed[nf ..] (the free list follows the
 * fixed one); returns their count. */
static int free_columns(mbs_con_ws *c, int nf)
{
    int nfree = 0;
    for (int j = 0; j < c->nv; j++) {
        int f = 0;
        for (int i = 0; i < nf && !f; i++) f = c->fixed[i] == j;
        if (!f) c->fixed[nf + nfree++] = j;
    }
    return nfree;
}

/* Solve F x = c->rhs[0..nr) (F: the free columns of the first nr rows of
 * c->Phi) in the minimum-norm least-squares sense; x into c->rhs[0..nfree). */
static int solve_free(mbs_con_ws *c, int nr, const int *freec, int nfree)
{
    const int nv = c->nv;
    if (nfree == 0) return 0;
    if (nr == 0) {
        for (int k = 0; k < nfree; k++) c->rhs[k] = 0;
        return 0;
    }
    const int lda = nr, ldb = nr > nfree ? nr : nfree;
    for (int j = 0; j < nfree; j++) {
        double *col = c->A + (size_t)j * lda;
        for (int r = 0; r < nr; r++) col[r] = c->Phi[(size_t)r * nv + freec[j]];
    }
    for (int r = nr; r < ldb; r++) c->rhs[r] = 0;
    lapack_int rank = 0;
    lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, nr, nfree, 1, c->A, lda, c->rhs, ldb, c->sv, RCOND, &rank,
                                          c->work, c->lwork, c->iwork);
    return info == 0 ? 0 : -1;
}

int mbs_constraint_rank(const mbs_model *m, mbs_data *d, const double *q, double t, int *rank)
{
    if (m && d && mbs_tangent_unsupported(m, "mbs_constraint_rank", d->err)) return MBS_ERR_UNSUPPORTED;
    if (!m || !d || !q || !rank) return MBS_ERR_ARG;
    if (!isfinite(t)) return mbs_data_fail(d, MBS_ERR_NUMERIC, "mbs_constraint_rank: time is not finite");
    int rc = mbs_data_check_state(d, q, NULL, NULL);
    if (rc != MBS_OK) return rc;
    mbs_con_ws *c = d->con;
    const int n = mbs_con_nrows(m), nv = m->nv;
    *rank = 0;
    if (n == 0 || nv == 0) return MBS_OK;
    mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
    mbs_con_kernel(m, m->x, &d->ws, q, NULL, NULL, t, NULL, c->Phi, NULL, NULL, NULL, NULL);
    for (int j = 0; j < nv; j++) {
        c->fixed[j] = j;
        double *col = c->A + (size_t)j * n;
        for (int r = 0; r < n; r++) col[r] = c->Phi[(size_t)r * nv + j];
    }
    const int ldb = n > nv ? n : nv;
    for (int r = 0; r < ldb; r++) c->rhs[r] = 0;
    lapack_int rk = 0;
    lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, n, nv, 1, c->A, n, c->rhs, ldb, c->sv, RCOND, &rk,
                                          c->work, c->lwork, c->iwork);
    if (info != 0) return mbs_data_fail(d, MBS_ERR_NUMERIC, "mbs_constraint_rank: the SVD failed");
    *rank = (int)rk;
    return MBS_OK;
}

/* Rows of the problem: every row, or all but the Euler rows. */
static int problem_rows(const mbs_model *m, const kin_setup *s)
{
    return mbs_con_nrows(m) - (s->euler_rows ? 0 : m->n_euler);
}

/* "loop j4 (bodies a -> b -> ground)" or "driver d1" or "euler j2" for row r. */
static void describe_row(const mbs_model *m, int r, char *buf, size_t n)
{
    for (int k = 0; k < m->con.ncut; k++) {
        const mbs_cut_info *ci = &m->con.cut[k];
        if (r < ci->row || r >= ci->row + ci->nrows) continue;
        size_t len = (size_t)snprintf(buf, n, "loop closed by %s joint %s (bodies ", mbs_joint_type_name(ci->type),
                                      ci->name);
        for (int i = 0; i < ci->nloop && len < n; i++)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? " -> " : "", m->body[ci->loop[i]].name);
        if (len < n) snprintf(buf + len, n - len, "), equation \"%s\"", m->con.row_name[r]);
        return;
    }
    snprintf(buf, n, "equation \"%s\"", m->con.row_name ? m->con.row_name[r] : "?");
}

int mbs_assemble(const mbs_model *m, mbs_data *d, double *q, double t, const mbs_kin_options *opt,
                 mbs_assembly_report *rep)
{
    if (m && d && mbs_tangent_unsupported(m, "assembly", d->err)) return MBS_ERR_UNSUPPORTED;
    if (!m || !d || !q) return MBS_ERR_ARG;
    mbs_con_ws *c = d->con;
    kin_setup s;
    int rc = setup(m, d, opt, &s);
    if (rc) return rc;
    const int nq = m->nq, nr = problem_rows(m, &s), nf = s.nfixed;
    for (int k = 0; k < nq; k++)
        if (!isfinite(q[k])) return mbs_data_fail(d, MBS_ERR_NUMERIC, "mbs_assemble: q[%d] is not finite", k);
    const int nfree = free_columns(c, nf);
    const int *freec = c->fixed + nf;
    if (mbs_normalize_state(m, q, NULL) != MBS_OK)
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "mbs_assemble: Euler parameters of zero norm");
    int it = 0, converged = 0;
    double step = 0;
    while (it < s.max_iter) {
        it++;
        mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
        mbs_con_kernel(m, m->x, &d->ws, q, NULL, NULL, t, c->phi, c->Phi, NULL, NULL, NULL, NULL);
        for (int r = 0; r < nr; r++) c->rhs[r] = -c->phi[r];
        if (solve_free(c, nr, freec, nfree) != 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "mbs_assemble: the least-squares solve failed");
        step = 0;
        for (int k = 0; k < nfree; k++) {
            q[freec[k]] += c->rhs[k];
            step += c->rhs[k] * c->rhs[k];
        }
        step = sqrt(step);
        if (!isfinite(step)) break;
        if (mbs_normalize_state(m, q, NULL) != MBS_OK) break;
        if (step < s.tol) {
            converged = 1;
            break;
        }
    }
    /* residual at the final q */
    double res = 0;
    int worst = -1;
    if (isfinite(step)) {
        mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
        mbs_con_kernel(m, m->x, &d->ws, q, NULL, NULL, t, c->phi, NULL, NULL, NULL, NULL, NULL);
        for (int r = 0; r < nr; r++)
            if (fabs(c->phi[r]) > res || isnan(c->phi[r])) {
                res = isnan(c->phi[r]) ? INFINITY : fabs(c->phi[r]);
                worst = r;
            }
    } else {
        res = INFINITY;
    }
    if (rep) {
        rep->iterations = it;
        rep->step = step;
        rep->residual = res;
        rep->worst_row = worst;
    }
    if (converged && res <= s.residual_tol)
        return mbs_data_results(d, "assembly", MBS_RESULTS({ "q", q, nq, 1, MBS_IX_COORD, 0 }));
    char where[700] = "";
    if (worst >= 0) describe_row(m, worst, where, sizeof where);
    if (!converged)
        return mbs_data_fail(d, MBS_ERR_NUMERIC,
                             "assembly did not converge in %d iterations (last |dq| = %.3g, tolerance %.3g): "
                             "largest residual %.6g in %s", it, step, s.tol, res, worst >= 0 ? where : "?");
    return mbs_data_fail(d, MBS_ERR_NUMERIC,
                         "assembly converged to a configuration that does not close the loops (impossible "
                         "geometry or fixed coordinates?): largest residual %.6g in %s", res,
                         worst >= 0 ? where : "?");
}

/* Velocity (level 1) or acceleration (level 2) problem. */
static int linear_problem(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double *x, double t,
                          const mbs_kin_options *opt, int level)
{
    if (!m || !d || !q || !x || (level == 2 && !qd)) return MBS_ERR_ARG;
    mbs_con_ws *c = d->con;
    kin_setup s;
    int rc = setup(m, d, opt, &s);
    if (rc) return rc;
    if (!isfinite(t)) return mbs_data_fail(d, MBS_ERR_NUMERIC, "time is not finite");
    rc = mbs_data_check_state(d, q, level == 2 ? qd : NULL, NULL);
    if (rc) return rc;
    const int nv = m->nv, nr = problem_rows(m, &s), nf = s.nfixed;
    const int nfree = free_columns(c, nf);
    const int *freec = c->fixed + nf;
    for (int i = 0; i < nf; i++) {
        c->held[i] = x[c->fixed[i]];
        if (!isfinite(c->held[i]))
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "the given value of fixed coordinate %s is not finite",
                                 m->coord_name[c->fixed[i]]);
    }
    if (level == 1) {
        mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
        mbs_con_kernel(m, m->x, &d->ws, q, NULL, NULL, t, NULL, c->Phi, NULL, c->vec, NULL, NULL);
    } else {
        mbs_kin_forward(m, m->x, &d->ws, q, qd, NULL, 2);
        mbs_con_kernel(m, m->x, &d->ws, q, qd, NULL, t, NULL, c->Phi, NULL, NULL, c->vec, NULL);
    }
    for (int r = 0; r < nr; r++) {
        double v = c->vec[r];
        for (int i = 0; i < nf; i++) v -= c->Phi[(size_t)r * nv + c->fixed[i]] * c->held[i];
        c->rhs[r] = v;
    }
    if (solve_free(c, nr, freec, nfree) != 0)
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "the least-squares solve failed");
    for (int k = 0; k < nfree; k++) x[freec[k]] = c->rhs[k];
    return mbs_data_results(d, level == 1 ? "velocity problem" : "acceleration problem",
                            MBS_RESULTS({ level == 1 ? "qd" : "qdd", x, nv, 1, MBS_IX_COORD, 0 }));
}

int mbs_solve_velocity(const mbs_model *m, mbs_data *d, const double *q, double *qd, double t,
                       const mbs_kin_options *opt)
{
    if (m && d && mbs_tangent_unsupported(m, "velocity problem", d->err)) return MBS_ERR_UNSUPPORTED;
    return linear_problem(m, d, q, NULL, qd, t, opt, 1);
}

int mbs_solve_acceleration(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double *qdd,
                           double t, const mbs_kin_options *opt)
{
    if (m && d && mbs_tangent_unsupported(m, "acceleration problem", d->err)) return MBS_ERR_UNSUPPORTED;
    return linear_problem(m, d, q, qd, qdd, t, opt, 2);
}
