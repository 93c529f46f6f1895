/*
 * test_derivatives_tangent.c - the derivatives of inverse and forward
 * dynamics on models whose spherical and floating joints have tangent
 * velocities (docs/formulations.md "Derivatives in the tangent
 * convention"), against the complex step along the manifold.
 *
 * Models: random trees with every joint type (mbs_test_random_tree_p, every
 * parameter kind) made all tangent (mbs_model_with_velocities) or mixed
 * (each spherical and floating joint tangent or Euler rates at random,
 * through the builder), with user body and joint loads, and trees with
 * force elements (spring-dampers between body points or to the ground,
 * body loads in global or body axes) on top of the user loads; the three
 * reference points.
 *
 * Reference: column k of d/dq is Im f(q (+) i h e_k) / h, with (+) the
 * complex exponential maps of SO(3), SE(3) for tangent joints (the kernels
 * compiled with a complex scalar; joints/manifold.c is holomorphic in the
 * step, docs/tangent-space.md §4) and q + i h e_k for the others;
 * d/dv, d/dvd (= M), d/dtau and d/drho by the ordinary complex step.
 * Checked: dtau/dq, dtau/dv, M, dtau/drho, dvd/dq, dvd/dv, dvd/dtau,
 * dvd/drho for both forward-dynamics algorithms; the directional functions
 * against the Jacobian products; the all-columns kernel against the
 * generic tangent sweeps (one unit direction per column); the sparse
 * functions against the dense ones at the pattern positions;
 * mbs_check_derivatives (its own complex step along the manifold) passes
 * within its bounds.
 *
 * Tolerances: relative (normwise) errors within the round-off of the
 * recursions, MBS_ROUNDOFF(nb) (as test_derivatives.c), and for what
 * solves with M the forward error of the solves, mbs_test_roundoff_fd
 * (2 nv eps kappa(M') on top). The complex step itself has no truncation
 * error at h = 1e-30 (the second-order term is h^2 below the first).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/derivatives.h"
#include "mbsens/sparse.h"

#define NTREES 150
#define NELEM 50
static const double H = 1e-30;

enum { W_TQ, W_TV, W_M, W_TP, W_AQ, W_AV, W_AT, W_AP, W_DIR, W_SWEEP, W_ALG, W_SPARSE, W_MAPI, W_MAPF, W_N };
static const char *g_names[W_N] = { "dtau/dq", "dtau/dv", "M = dtau/dvd", "dtau/drho", "dvd/dq", "dvd/dv",
                                    "dvd/dtau", "dvd/drho", "directional", "kernel vs sweeps",
                                    "fr vs semi", "sparse vs dense", "ID vs Euler mapped",
                                    "FD vs Euler mapped" };
static double g_worst[W_N], g_col[2];
static double g_check;
static int g_tangent_joints, g_elements;

static void record(int which, const double *a, const double *ref, int n, double bound)
{
    double e = mbs_rel_err(a, ref, n) / bound;
    if (!(e <= g_worst[which])) g_worst[which] = e;
}

/* worst per-column relative error (scale max(1, |column|)), reported only */
static void record_cols(int which, const double *a, const double *ref, int nv)
{
    for (int k = 0; k < nv; k++) {
        double s = 1, e = 0;
        for (int r = 0; r < nv; r++) s = fmax(s, fabs(ref[r * nv + k]));
        for (int r = 0; r < nv; r++) e = fmax(e, fabs(a[r * nv + k] - ref[r * nv + k]));
        g_col[which] = fmax(g_col[which], e / s);
    }
}

/* cq = q (+) i h e_k: the complex step along the manifold in the tangent
 * direction e_k (k < nv) */
static void cs_direction(const mbs_model *m, const double *q, int k, double h, mreal *cq)
{
    for (int j = 0; j < m->nq; j++) cq[j] = q[j];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (k < jt->voff || k >= jt->voff + jt->nv) continue;
        const mbs_joint_ops *ops = mbs_joint_ops_of_cs(jt->type, jt->velocities);
        if (!ops->tangent) {
            cq[jt->qoff + k - jt->voff] += I * h;
            return;
        }
        mreal qj[MBS_JOINT_MAXQ], dq[MBS_JOINT_MAXQ], q1[MBS_JOINT_MAXQ];
        for (int a = 0; a < jt->nq; a++) qj[a] = q[jt->qoff + a];
        for (int a = 0; a < jt->nv; a++) dq[a] = 0;
        dq[k - jt->voff] = I * h;
        ops->integrate(qj, dq, q1);
        for (int a = 0; a < jt->nq; a++) cq[jt->qoff + a] = q1[a];
        return;
    }
}

typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *v, *vd, *tau, *out;
    const double *xload, *vload;
} cs_ctx;

/* ID (fd = 0) or fully recursive FD (fd = 1) in the complex build, with the
 * user loads and the force elements as the library applies them */
static void cs_eval(cs_ctx *c, int fd)
{
    const mbs_model *m = c->m;
    mbs_kin_forward_cs(m, c->x, &c->w, c->q, c->v, fd ? NULL : c->vd, fd ? 1 : 2);
    for (int k = 0; k < 15 * (m->nb + 1); k++) c->w.xfrc[k] = c->xload[k];
    for (int k = 0; k < m->nv; k++) c->w.qfrc[k] = c->vload[k];
    if (m->nforce > 0) mbs_forces_apply_cs(m, c->x, &c->w, c->q, c->v, 0);
    mbs_body_terms_cs(m, c->x, &c->w);
    if (fd) mbs_aba_cs(m, &c->w, c->q, c->v, c->tau, c->out);
    else mbs_rnea_cs(m, &c->w, c->out);
}

/* The complex-step references: column `dir` of [d/dq | d/dv | d/dvd or
 * d/dtau | d/drho] into J (rows nv, leading dimension ld). */
static void cs_eval_mapped(cs_ctx *c, const mbs_model *mT, int fd);

/* mT NULL: of the functions of c->m; else of mT's functions evaluated on
 * its Euler-rate copy c->m through the map (cs_eval_mapped). */
static void cs_reference(cs_ctx *c, const mbs_model *mT, int fd, const double *q, const double *v,
                         const double *vd, const double *tau, double *Jq, double *Jv, double *Ja, double *Jp)
{
    const mbs_model *m = mT ? mT : c->m;
    const int nv = m->nv, np = m->nparam;
    for (int dir = 0; dir < 3 * nv + np; dir++) {
        for (int k = 0; k < m->nx; k++) c->x[k] = m->x[k];
        for (int k = 0; k < nv; k++) { c->v[k] = v[k]; c->vd[k] = vd[k]; c->tau[k] = tau[k]; }
        if (dir < nv) {
            cs_direction(m, q, dir, H, c->q);
        } else {
            for (int k = 0; k < m->nq; k++) c->q[k] = q[k];
            if (dir < 2 * nv) c->v[dir - nv] += I * H;
            else if (dir < 3 * nv) (fd ? c->tau : c->vd)[dir - 2 * nv] += I * H;
            else {
                const mbs_param_info *pp = &m->param[dir - 3 * nv];
                for (int t = 0; t < pp->ntargets; t++) c->x[pp->target[t]] += I * H * pp->scale[t];
            }
        }
        if (mT) cs_eval_mapped(c, mT, fd);
        else cs_eval(c, fd);
        for (int r = 0; r < nv; r++) {
            const double d = cimag(c->out[r]) / H;
            if (dir < nv) Jq[r * nv + dir] = d;
            else if (dir < 2 * nv) Jv[r * nv + dir - nv] = d;
            else if (dir < 3 * nv) Ja[r * nv + dir - 2 * nv] = d;
            else Jp[r * np + dir - 3 * nv] = d;
        }
    }
}

/* ---- the Euler-rate functions mapped through the exact velocity map
 * (docs/formulations.md §1 "The map"), in the complex build: for each
 * tangent joint of mT, qd = T v, qdd = T vd + Tdot v with T = 1/2 G(p)^T
 * (spherical), diag(R, 1/2 G(p)^T) (floating), tau_v = T^T tau_q,
 * vd = T^+ (qdd - Tdot v), T^+ = 2 G(p) / (p.p), diag(R^T, ...). ---- */

/* G(p) (3 x 4 row-major) */
static void cs_G(const mreal *p, mreal *G)
{
    const mreal g[12] = { -p[1], p[0], p[3], -p[2], -p[2], -p[3], p[0], p[1], -p[3], p[2], -p[1], p[0] };
    for (int k = 0; k < 12; k++) G[k] = g[k];
}

/* The joint's blocks: the offset of the quaternion in q and v (0 for a
 * spherical joint, 3 for a floating one). */
static int tangent_block(const mbs_joint_info *jt)
{
    return jt->nq == 7 ? 3 : 0;
}

/* qd = T v, qdd = T vd + Tdot v (qdd NULL: not wanted) */
static void cs_rates(const mbs_model *mT, const mreal *q, const mreal *v, const mreal *vd, mreal *qd, mreal *qdd)
{
    for (int i = 1; i <= mT->nb; i++) {
        const mbs_joint_info *jt = &mT->joint[i];
        const mreal *qi = q + jt->qoff, *vi = v + jt->voff, *ai = vd ? vd + jt->voff : NULL;
        mreal *qdi = qd + jt->qoff, *qddi = qdd ? qdd + jt->qoff : NULL;
        if (jt->velocities != MBS_VELOCITIES_TANGENT) {
            for (int k = 0; k < jt->nv; k++) {
                qdi[k] = vi[k];
                if (qddi) qddi[k] = ai[k];
            }
            continue;
        }
        const int o = tangent_block(jt);
        const mreal *p = qi + o, *w = vi + o;
        mreal G[12], Gd[12], pd[4];
        cs_G(p, G);
        for (int k = 0; k < 4; k++) pd[k] = (G[k] * w[0] + G[4 + k] * w[1] + G[8 + k] * w[2]) / 2;
        cs_G(pd, Gd);
        for (int k = 0; k < 4; k++) {
            qdi[o + k] = pd[k];
            if (qddi)
                qddi[o + k] = (G[k] * ai[o] + G[4 + k] * ai[o + 1] + G[8 + k] * ai[o + 2]) / 2 +
                              (Gd[k] * w[0] + Gd[4 + k] * w[1] + Gd[8 + k] * w[2]) / 2;
        }
        if (o) {
            /* td = R nu, tdd = R (nud + w x nu) */
            mreal R[9], wn[3], x[3];
            ep_rotation(R, p);
            v3_cross(wn, w, vi);
            for (int k = 0; k < 3; k++) x[k] = (ai ? ai[k] : 0) + wn[k];
            m3_mv(qdi, R, vi);
            if (qddi) m3_mv(qddi, R, x);
        }
    }
}

/* y = T^T x (x nq, y nv) for which = 0; y = T^+T x (x nv, y nq) for which = 1 */
static void cs_map_forces(const mbs_model *mT, const mreal *q, const mreal *x, mreal *y, int which)
{
    for (int i = 1; i <= mT->nb; i++) {
        const mbs_joint_info *jt = &mT->joint[i];
        const mreal *xi = x + (which ? jt->voff : jt->qoff);
        mreal *yi = y + (which ? jt->qoff : jt->voff);
        if (jt->velocities != MBS_VELOCITIES_TANGENT) {
            for (int k = 0; k < jt->nv; k++) yi[k] = xi[k];
            continue;
        }
        const int o = tangent_block(jt);
        const mreal *p = q + jt->qoff + o;
        mreal G[12], R[9];
        cs_G(p, G);
        ep_rotation(R, p);
        if (which == 0) {
            for (int r = 0; r < 3; r++)
                yi[o + r] = (G[4 * r] * xi[o] + G[4 * r + 1] * xi[o + 1] + G[4 * r + 2] * xi[o + 2] +
                             G[4 * r + 3] * xi[o + 3]) / 2;
            if (o) m3_mtv(yi, R, xi);
        } else {
            const mreal s = 2 / (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
            for (int k = 0; k < 4; k++) yi[o + k] = s * (G[k] * xi[o] + G[4 + k] * xi[o + 1] + G[8 + k] * xi[o + 2]);
            if (o) m3_mv(yi, R, xi);
        }
    }
}

/* vd = T^+ (qdd - Tdot v) from the Euler-rate accelerations qdd */
static void cs_accelerations(const mbs_model *mT, const mreal *q, const mreal *v, const mreal *qdd, mreal *vd)
{
    for (int i = 1; i <= mT->nb; i++) {
        const mbs_joint_info *jt = &mT->joint[i];
        if (jt->velocities != MBS_VELOCITIES_TANGENT) {
            for (int k = 0; k < jt->nv; k++) vd[jt->voff + k] = qdd[jt->qoff + k];
            continue;
        }
        const int o = tangent_block(jt);
        const mreal *p = q + jt->qoff + o, *w = v + jt->voff + o, *a = qdd + jt->qoff;
        mreal G[12], R[9], pd[4], Gd[12], b[4];
        cs_G(p, G);
        for (int k = 0; k < 4; k++) pd[k] = (G[k] * w[0] + G[4 + k] * w[1] + G[8 + k] * w[2]) / 2;
        cs_G(pd, Gd);
        for (int k = 0; k < 4; k++) b[k] = a[o + k] - (Gd[k] * w[0] + Gd[4 + k] * w[1] + Gd[8 + k] * w[2]) / 2;
        const mreal s = 2 / (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
        mreal *vi = vd + jt->voff;
        for (int r = 0; r < 3; r++)
            vi[o + r] = s * (G[4 * r] * b[0] + G[4 * r + 1] * b[1] + G[4 * r + 2] * b[2] + G[4 * r + 3] * b[3]);
        if (o) {
            /* nud = R^T tdd - w x nu */
            mreal x[3], wn[3];
            ep_rotation(R, p);
            m3_mtv(x, R, a);
            v3_cross(wn, w, v + jt->voff);
            for (int k = 0; k < 3; k++) vi[k] = x[k] - wn[k];
        }
    }
}

/* The tangent model's ID (fd = 0) or FD (fd = 1) at c->q, c->v, c->vd /
 * c->tau, computed on the Euler-rate model c->m through the map, into
 * c->out (nv of mT). */
static void cs_eval_mapped(cs_ctx *c, const mbs_model *mT, int fd)
{
    const mbs_model *mE = c->m;
    const int nq = mE->nq;
    mreal *qd = calloc((size_t)nq, sizeof(mreal)), *qdd = calloc((size_t)nq, sizeof(mreal));
    mreal *ql = calloc((size_t)nq, sizeof(mreal)), *tq = calloc((size_t)nq, sizeof(mreal));
    mreal *vl = calloc((size_t)mT->nv, sizeof(mreal));
    for (int k = 0; k < mT->nv; k++) vl[k] = c->vload[k];
    cs_rates(mT, c->q, c->v, fd ? NULL : c->vd, qd, fd ? NULL : qdd);
    cs_map_forces(mT, c->q, vl, ql, 1);
    mbs_kin_forward_cs(mE, c->x, &c->w, c->q, qd, fd ? NULL : qdd, fd ? 1 : 2);
    for (int k = 0; k < 15 * (mE->nb + 1); k++) c->w.xfrc[k] = c->xload[k];
    for (int k = 0; k < nq; k++) c->w.qfrc[k] = ql[k];
    if (mE->nforce > 0) mbs_forces_apply_cs(mE, c->x, &c->w, c->q, qd, 0);
    mbs_body_terms_cs(mE, c->x, &c->w);
    if (fd) {
        cs_map_forces(mT, c->q, c->tau, tq, 1);
        mbs_aba_cs(mE, &c->w, c->q, qd, tq, qdd);
        cs_accelerations(mT, c->q, c->v, qdd, c->out);
    } else {
        mbs_rnea_cs(mE, &c->w, tq);
        cs_map_forces(mT, c->q, tq, c->out, 0);
    }
    free(qd); free(qdd); free(ql); free(tq); free(vl);
}

/* A state: q with unit quaternions, random v, vd, tau (nv); the rates of
 * Euler-rate joints tangent to |p| = 1 (p.pd = 0, p.pdd = -|pd|^2), as on a
 * trajectory. */
static void random_state(mbs_rng *r, const mbs_model *m, double *q, double *v, double *vd, double *tau)
{
    mbs_test_random_state(r, m, q, NULL, NULL);
    CHECK(mbs_normalize_state(m, q, NULL) == MBS_OK, "normalize");
    for (int k = 0; k < m->nv; k++) {
        v[k] = mbs_rng_uniform(r, -2, 2);
        vd[k] = mbs_rng_uniform(r, -3, 3);
        tau[k] = mbs_rng_uniform(r, -2, 2);
    }
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const double *p = q + jt->qoff + jt->euler;
        double *pd = v + jt->voff + jt->euler, *pdd = vd + jt->voff + jt->euler, s = 0, s2 = 0, pp = 0;
        for (int k = 0; k < 4; k++) s += p[k] * pd[k];
        for (int k = 0; k < 4; k++) pd[k] -= s * p[k];
        for (int k = 0; k < 4; k++) { s2 += p[k] * pdd[k]; pp += pd[k] * pd[k]; }
        for (int k = 0; k < 4; k++) pdd[k] += (-pp - s2) * p[k];
    }
}

/* y = A x (+ y if add): A rows n, cols c */
static void matvec(const double *A, int n, int c, const double *x, double *y, int add)
{
    for (int r = 0; r < n; r++) {
        double s = add ? y[r] : 0;
        for (int k = 0; k < c; k++) s += A[r * c + k] * x[k];
        y[r] = s;
    }
}

/* the dense matrix's entries at the positions of a pattern against the
 * sparse values, and zeros elsewhere (exact) */
static void compare_sparse(const mbs_model *m, mbs_sparsity kind, const double *dense, const double *val,
                           double bound, long *zero_violations)
{
    const int nv = m->nv, nnz = mbs_sparsity_nnz(m, kind);
    int *ptr = malloc(sizeof(int) * (size_t)(nv + 1)), *ind = malloc(sizeof(int) * (size_t)(nnz + 1));
    double *D = calloc((size_t)nv * nv + 1, 8);
    CHECK(mbs_sparsity_pattern(m, kind, ptr, ind, NULL) == MBS_OK, "pattern");
    for (int c = 0; c < nv; c++)
        for (int k = ptr[c]; k < ptr[c + 1]; k++) D[ind[k] * nv + c] = val[k];
    for (int k = 0; k < nv * nv; k++)
        if (D[k] == 0 && dense[k] != 0) {
            int in = 0, c = k % nv, r = k / nv;
            for (int j = ptr[c]; j < ptr[c + 1]; j++) in |= ind[j] == r;
            if (!in) (*zero_violations)++;
        }
    record(W_SPARSE, D, dense, nv * nv, bound);
    free(ptr); free(ind); free(D);
}

static void check_model(mbs_rng *rng, const mbs_model *m, int user_loads, long *zero_violations)
{
    const int nv = m->nv, np = m->nparam, nb = m->nb;
    for (int i = 1; i <= nb; i++) g_tangent_joints += m->joint[i].velocities == MBS_VELOCITIES_TANGENT;
    g_elements += m->nforce;
    const size_t n1 = (size_t)nv + 1, nn = n1 * n1, p1 = (size_t)np + 1;
    double *q = calloc((size_t)m->nq + 1, 8), *v = calloc(n1, 8), *vd = calloc(n1, 8), *tau = calloc(n1, 8);
    double *A = calloc(nn, 8), *B = calloc(nn, 8), *C = calloc(nn, 8), *P = calloc(n1 * p1, 8);
    double *Ar = calloc(nn, 8), *Br = calloc(nn, 8), *Cr = calloc(nn, 8), *Pr = calloc(n1 * p1, 8);
    double *A2 = calloc(nn, 8), *B2 = calloc(nn, 8), *C2 = calloc(nn, 8), *P2 = calloc(n1 * p1, 8);
    double *e = calloc(n1, 8), *col = calloc(n1, 8), *u1 = calloc(n1, 8), *u2 = calloc(n1, 8);
    double *dq = calloc(n1, 8), *dv = calloc(n1, 8), *da = calloc(n1, 8), *dr = calloc(p1, 8), *a = calloc(n1, 8);
    random_state(rng, m, q, v, vd, tau);
    mbs_data *d = mbs_data_create(m, NULL);
    double *xload = calloc(15 * (size_t)(nb + 1), 8), *vload = calloc(n1, 8);
    if (user_loads) {
        for (int i = 1; i <= nb; i++) {
            double pt[3], f[3], n[3], *L = xload + 15 * i;
            for (int k = 0; k < 3; k++) {
                pt[k] = mbs_rng_uniform(rng, -1, 1);
                f[k] = mbs_rng_uniform(rng, -1, 1);
                n[k] = mbs_rng_uniform(rng, -1, 1);
            }
            mbs_data_add_body_load(d, i, pt, f, n);
            for (int k = 0; k < 3; k++) { L[k] = f[k]; L[3 + k] = n[k]; }
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++) L[6 + 3 * r + k] = pt[r] * f[k];
        }
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nv; k++) jl[k] = vload[k] = mbs_rng_uniform(rng, -1, 1);
    }
    const double ro_id = MBS_ROUNDOFF(nb), ro_fd = mbs_test_roundoff_fd(m, d, q);
    cs_ctx c;
    c.m = m;
    CHECK(mbs_ws_init_cs(&c.w, m) == 0, "ws");
    c.x = calloc((size_t)m->nx, sizeof(mreal));
    c.q = calloc((size_t)m->nq + 1, sizeof(mreal));
    c.v = calloc(n1, sizeof(mreal)); c.vd = calloc(n1, sizeof(mreal));
    c.tau = calloc(n1, sizeof(mreal)); c.out = calloc(n1, sizeof(mreal));
    c.xload = xload; c.vload = vload;
    /* the Euler-rate copy, for the mapped references */
    mbs_error err = { 0, "" };
    mbs_model *mE = mbs_model_with_velocities(m, MBS_VELOCITIES_EULER_RATES, &err);
    CHECK(mE && mE->nq == m->nq && mE->nx == m->nx && mE->nparam == np, "Euler-rate copy: %s", err.msg);
    cs_ctx cE = c;
    if (mE) {
        cE.m = mE;
        CHECK(mbs_ws_init_cs(&cE.w, mE) == 0, "ws");
    }
    /* bound of the mapped FD: the Euler-rate side's kappa up to 4 times the
     * tangent one (T = G^T / 2 scales a quaternion block by 1/4; as
     * test_tangent_map.c) */
    const double ro_map = ro_id + 4 * (ro_fd - ro_id);
    for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
        mbs_data_set_ref(d, (mbs_ref_point)ref);
        c.w.ref = (mbs_ref_point)ref;
        cE.w.ref = (mbs_ref_point)ref;
        /* ---- inverse dynamics ---- */
        CHECK(mbs_inverse_dynamics_derivatives(m, d, q, v, vd, NULL, A, B) == MBS_OK, "ID: %s", mbs_data_error(d));
        CHECK(mbs_inverse_dynamics_param_derivatives(m, d, q, v, vd, P) == MBS_OK, "ID param: %s", mbs_data_error(d));
        CHECK(mbs_mass_matrix(m, d, q, C) == MBS_OK, "M");
        cs_reference(&c, NULL, 0, q, v, vd, tau, Ar, Br, Cr, Pr);
        record(W_TQ, A, Ar, nv * nv, ro_id);
        record(W_TV, B, Br, nv * nv, ro_id);
        record(W_M, C, Cr, nv * nv, ro_id);
        if (np) record(W_TP, P, Pr, nv * np, ro_id);
        record_cols(0, A, Ar, nv);
        record_cols(1, B, Br, nv);
        if (mE && ref == MBS_REF_COM) {
            cs_reference(&cE, m, 0, q, v, vd, tau, Ar, Br, Cr, Pr);
            record(W_MAPI, A, Ar, nv * nv, ro_id);
            record(W_MAPI, B, Br, nv * nv, ro_id);
            record(W_MAPI, C, Cr, nv * nv, ro_id);
            if (np) record(W_MAPI, P, Pr, nv * np, ro_id);
        }
        /* the all-columns kernel against the generic sweeps */
        for (int k = 0; k < nv; k++) {
            e[k] = 1;
            CHECK(mbs_inverse_dynamics_directional(m, d, q, v, vd, e, NULL, NULL, NULL, col) == MBS_OK, "dir");
            for (int r = 0; r < nv; r++) A2[r * nv + k] = col[r];
            CHECK(mbs_inverse_dynamics_directional(m, d, q, v, vd, NULL, e, NULL, NULL, col) == MBS_OK, "dir");
            for (int r = 0; r < nv; r++) B2[r * nv + k] = col[r];
            e[k] = 0;
        }
        record(W_SWEEP, A, A2, nv * nv, ro_id);
        record(W_SWEEP, B, B2, nv * nv, ro_id);
        /* directional = Jacobian products */
        for (int k = 0; k < nv; k++) {
            dq[k] = mbs_rng_uniform(rng, -1, 1);
            dv[k] = mbs_rng_uniform(rng, -1, 1);
            da[k] = mbs_rng_uniform(rng, -1, 1);
        }
        for (int k = 0; k < np; k++) dr[k] = mbs_rng_uniform(rng, -1, 1);
        CHECK(mbs_inverse_dynamics_directional(m, d, q, v, vd, dq, dv, da, dr, u2) == MBS_OK, "ID dir");
        matvec(A, nv, nv, dq, u1, 0);
        matvec(B, nv, nv, dv, u1, 1);
        matvec(C, nv, nv, da, u1, 1);
        matvec(P, nv, np, dr, u1, 1);
        record(W_DIR, u2, u1, nv, ro_id);
        /* sparse = dense at the pattern's positions */
        if (ref == MBS_REF_COM) {
            const int nz = mbs_sparsity_nnz(m, MBS_SPARSITY_ID);
            double *sq = calloc((size_t)nz + 1, 8), *sv = calloc((size_t)nz + 1, 8);
            CHECK(mbs_inverse_dynamics_derivatives_sparse(m, d, q, v, vd, NULL, sq, sv) == MBS_OK, "ID sparse: %s",
                  mbs_data_error(d));
            compare_sparse(m, MBS_SPARSITY_ID, A, sq, ro_id, zero_violations);
            compare_sparse(m, MBS_SPARSITY_ID, B, sv, ro_id, zero_violations);
            free(sq); free(sv);
        }

        /* ---- forward dynamics ---- */
        CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, v, tau, a, A, B, C) == MBS_OK, "FD: %s",
              mbs_data_error(d));
        CHECK(mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_RECURSIVE, q, v, tau, NULL, P) == MBS_OK,
              "FD param: %s", mbs_data_error(d));
        cs_reference(&c, NULL, 1, q, v, a, tau, Ar, Br, Cr, Pr);
        record(W_AQ, A, Ar, nv * nv, ro_fd);
        record(W_AV, B, Br, nv * nv, ro_fd);
        record(W_AT, C, Cr, nv * nv, ro_fd);
        if (np) record(W_AP, P, Pr, nv * np, ro_fd);
        if (mE && ref == MBS_REF_COM) {
            cs_reference(&cE, m, 1, q, v, a, tau, Ar, Br, Cr, Pr);
            record(W_MAPF, A, Ar, nv * nv, ro_map);
            record(W_MAPF, B, Br, nv * nv, ro_map);
            record(W_MAPF, C, Cr, nv * nv, ro_map);
            if (np) record(W_MAPF, P, Pr, nv * np, ro_map);
        }
        CHECK(mbs_forward_dynamics_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, v, tau, NULL, A2, B2, C2) == MBS_OK,
              "FD semi: %s", mbs_data_error(d));
        CHECK(mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, v, tau, NULL, P2) == MBS_OK,
              "FD semi param: %s", mbs_data_error(d));
        record(W_ALG, A2, A, nv * nv, ro_fd);
        record(W_ALG, B2, B, nv * nv, ro_fd);
        record(W_ALG, C2, C, nv * nv, ro_fd);
        if (np) record(W_ALG, P2, P, nv * np, ro_fd);
        for (int alg = MBS_FD_RECURSIVE; alg <= MBS_FD_SEMI_RECURSIVE; alg++) {
            CHECK(mbs_forward_dynamics_directional(m, d, (mbs_fd_algorithm)alg, q, v, tau, dq, dv, da, dr, NULL, u2) ==
                  MBS_OK, "FD dir: %s", mbs_data_error(d));
            matvec(A, nv, nv, dq, u1, 0);
            matvec(B, nv, nv, dv, u1, 1);
            matvec(C, nv, nv, da, u1, 1);
            matvec(P, nv, np, dr, u1, 1);
            record(W_DIR, u2, u1, nv, ro_fd);
        }
        if (ref == MBS_REF_COM) {
            const int nz = mbs_sparsity_nnz(m, MBS_SPARSITY_FD);
            double *sq = calloc((size_t)nz + 1, 8), *sv = calloc((size_t)nz + 1, 8), *st = calloc((size_t)nz + 1, 8);
            CHECK(mbs_forward_dynamics_derivatives_sparse(m, d, MBS_FD_RECURSIVE, q, v, tau, NULL, sq, sv, st) ==
                  MBS_OK, "FD sparse: %s", mbs_data_error(d));
            compare_sparse(m, MBS_SPARSITY_FD, A, sq, ro_fd, zero_violations);
            compare_sparse(m, MBS_SPARSITY_FD, B, sv, ro_fd, zero_violations);
            compare_sparse(m, MBS_SPARSITY_FD, C, st, ro_fd, zero_violations);
            free(sq); free(sv); free(st);
        }
    }
    if (mE) mbs_ws_free_cs(&cE.w);
    mbs_model_free(mE);
    mbs_ws_free_cs(&c.w);
    free(c.x); free(c.q); free(c.v); free(c.vd); free(c.tau); free(c.out);
    mbs_data_free(d);
    free(q); free(v); free(vd); free(tau); free(A); free(B); free(C); free(P); free(Ar); free(Br); free(Cr);
    free(Pr); free(A2); free(B2); free(C2); free(P2); free(e); free(col); free(u1); free(u2); free(dq); free(dv);
    free(da); free(dr); free(a); free(xload); free(vload);
}

/* the tree of mbs_test_random_tree_builder with 1-4 force elements */
static mbs_model *tree_with_elements(mbs_rng *r, int all_tangent)
{
    mbs_error err;
    const int nb = 1 + mbs_rng_int(r, 8);
    mbs_builder *bld = mbs_test_random_tree_builder(r, nb, all_tangent ? 2 : 1);
    CHECK(bld != NULL, "builder");
    if (!bld) return NULL;
    const int ne = 1 + mbs_rng_int(r, 4);
    for (int el = 0; el < ne; el++) {
        char name[32];
        snprintf(name, sizeof name, "fe%d", el);
        const int b1 = 1 + mbs_rng_int(r, nb), b2 = mbs_rng_int(r, nb + 1);
        double pt[3], f[3], n[3];
        for (int k = 0; k < 3; k++) {
            pt[k] = mbs_rng_uniform(r, -1, 1);
            f[k] = mbs_rng_uniform(r, -2, 2);
            n[k] = mbs_rng_uniform(r, -1, 1);
        }
        int h;
        if (el % 2 == 0 && b2 != b1) {
            const int p1 = mbs_builder_find_point(bld, b1, "p");
            const int p2 = b2 > 0 ? mbs_builder_find_point(bld, b2, "p") : mbs_builder_add_point(bld, 0, NULL, pt, name, &err);
            const double len = mbs_rng_uniform(r, 0.1, 1.5);
            h = mbs_builder_add_spring_damper(bld, name, p1, p2, mbs_rng_uniform(r, 1, 40), mbs_rng_uniform(r, 0, 3),
                                              &len, name, &err);
        } else {
            h = mbs_builder_add_body_load(bld, name, b1, mbs_rng_int(r, 2) ? -1 : mbs_builder_find_point(bld, b1, "p"),
                                          f, n, mbs_rng_int(r, 2), -1, name, &err);
        }
        CHECK(h >= 0, "element: %s", err.msg);
    }
    mbs_model *m = mbs_builder_finish(bld, &err);
    mbs_builder_free(bld);
    CHECK(m != NULL, "finish: %s", m ? "" : err.msg);
    return m;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2121);
    int types_seen[MBS_JOINT_TYPE_COUNT] = { 0 }, mixed = 0;
    long zero_violations = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *mE = mbs_test_random_tree_p(&rng, 1 + mbs_rng_int(&rng, 8), 0, 1);
        CHECK(mE != NULL, "tree");
        if (!mE) continue;
        mbs_error err = { 0, "" };
        mbs_model *mT = mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &err);
        CHECK(mT != NULL, "tangent copy: %s", err.msg);
        if (mT) {
            for (int i = 1; i <= mT->nb; i++) types_seen[mT->joint[i].type]++;
            check_model(&rng, mT, 1, &zero_violations);
            /* mbs_check_derivatives: its complex step along the manifold,
             * each block within its round-off bound */
            if (tree % 5 == 0) g_check = fmax(g_check, mbs_test_check_derivatives(mT, 2, (unsigned long)tree, "check"));
        }
        mbs_model_free(mT);
        mbs_model_free(mE);
    }
    for (int tree = 0; tree < NELEM; tree++) {
        mbs_model *m = tree_with_elements(&rng, tree % 2);
        if (!m) continue;
        int ntg = 0, neu = 0;
        for (int i = 1; i <= m->nb; i++) {
            ntg += m->joint[i].velocities == MBS_VELOCITIES_TANGENT;
            neu += m->joint[i].euler >= 0;
        }
        mixed += ntg > 0 && neu > 0;
        check_model(&rng, m, tree % 3 != 0, &zero_violations);
        if (tree % 5 == 0) g_check = fmax(g_check, mbs_test_check_derivatives(m, 2, (unsigned long)tree, "check"));
        mbs_model_free(m);
    }
    for (int k = 0; k < W_N; k++) printf("worst relative error %-18s %.3f of its round-off bound\n", g_names[k], g_worst[k]);
    printf("worst per-column relative error vs complex step: dtau/dq %.2e, dtau/dv %.2e\n", g_col[0], g_col[1]);
    printf("mbs_check_derivatives: worst block %.3f of its round-off bound\n", g_check);
    printf("tangent joints %d, force elements %d, mixed models %d\n", g_tangent_joints, g_elements, mixed);
    for (int k = 0; k < W_N; k++) CHECK(g_worst[k] <= 1, "%s: %g of its bound", g_names[k], g_worst[k]);
    CHECK(zero_violations == 0, "%ld non-zero dense entries outside the sparse patterns", zero_violations);
    for (int t = 1; t < MBS_JOINT_TYPE_COUNT; t++) CHECK(types_seen[t] > 20, "joint type %d covered %d", t, types_seen[t]);
    CHECK(g_tangent_joints > NTREES / 2 && g_elements > NELEM && mixed > 5, "coverage");
    return mbs_test_summary("derivatives_tangent");
}
