/*
 * check.c - mbs_check_derivatives: analytical derivatives against the
 * complex-step derivatives of the complex build of the kernels, each block
 * within a tolerance derived at every sample from the round-off of the
 * recursions and the condition number of the matrix the forward dynamics
 * solves with (docs/formulations.md, "Checking the derivatives").
 *
 * This file is compiled with mreal = double complex (it uses the *_cs
 * kernels directly) and reaches the double pipeline through the public API.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "kernels/kernels.h"
#include "forces/force.h"
#include "base/error.h"
#include "kernels/results.h"
#include "joints/joint.h"

static const double H = 1e-30;

static const char *const block_names[MBS_CHECK_NBLOCKS] = {
    "dtau/dq", "dtau/dqd", "dtau/drho", "dqdd/dq", "dqdd/dqd", "dqdd/dtau", "dqdd/drho",
    "fr vs semi"
};

const char *mbs_check_block_name(int block)
{
    return block >= 0 && block < MBS_CHECK_NBLOCKS ? block_names[block] : "?";
}

static double rel_err(const double *a, const double *b, int n)
{
    double scale = 1, e = 0;
    for (int k = 0; k < n; k++) if (fabs(b[k]) > scale) scale = fabs(b[k]);
    for (int k = 0; k < n; k++) {
        double d = fabs(a[k] - b[k]);
        if (!(d <= e)) e = isnan(d) ? INFINITY : d;
    }
    return e / scale;
}

/* xorshift64* */
static double uniform(uint64_t *s, double lo, double hi)
{
    *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
    uint64_t v = *s * 2685821657736338717ULL;
    return lo + (hi - lo) * ((double)(v >> 11) * (1.0 / 9007199254740992.0));
}

/* Round-off of the recursions, the tolerance of the blocks that do not
 * solve with M: each entry is a sum over at most nb bodies of terms through
 * about 50 roundings, each at most 20 times the result, and the two ways
 * compared differ by at most twice that: 1000 nb eps. */
static double roundoff_recursions(const mbs_model *m)
{
    return 1000.0 * (m->nb > 1 ? m->nb : 1) * DBL_EPSILON;
}

/* The 2-norm condition number of M' at q, the matrix both forward-dynamics
 * algorithms solve with: M completed by p p^T on the rates of each Euler
 * quadruple (M alone is singular along p), from its extreme eigenvalues
 * (LAPACK dsyev). INFINITY when M' is not positive definite, NAN when M
 * fails (the message in d). Mc: nv^2, w: nv scratch. */
static double completed_cond(const mbs_model *m, mbs_data *d, const double *q, double *Mc, double *w)
{
    const int nv = m->nv;
    if (nv == 0) return 1;
    if (mbs_mass_matrix(m, d, q, Mc) != MBS_OK) return NAN;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0 || jt->velocities != MBS_VELOCITIES_EULER_RATES) continue;
        const double *p = q + jt->qoff + jt->euler;
        const int e = jt->voff + jt->euler;   /* the rates of p: laid out as p in the joint's q */
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) Mc[(size_t)(e + r) * nv + e + c] += p[r] * p[c];
    }
    if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'L', nv, Mc, nv, w) != 0 || !(w[0] > 0)) return INFINITY;
    return w[nv - 1] / w[0];
}

/* Block b's error e at a sample whose tolerance is tol into the report:
 * the worst error, the largest tolerance and the largest ratio e / tol. */
static void record(mbs_check_report *rep, int b, double e, double tol)
{
    if (!(e <= rep->worst[b])) rep->worst[b] = isnan(e) ? INFINITY : e;
    if (tol > rep->tol[b]) rep->tol[b] = tol;
    const double r = isnan(e) ? INFINITY : e / tol;
    if (r > rep->ratio[b]) rep->ratio[b] = r;
}

typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *qd, *qdd, *tau, *out;
    int *vq;   /* the coordinate that velocity k moves, or -1 - its joint
                * for a joint with tangent velocities (cs_pipe_init) */
} cs_pipe;

/* loads as mbs_data_prepare_loads applies them: no user loads, the force
 * elements at time t */
static void cs_prepare(cs_pipe *c, mreal t)
{
    for (int k = 0; k < 15 * (c->m->nb + 1); k++) c->w.xfrc[k] = 0;
    for (int k = 0; k < c->m->nv; k++) c->w.qfrc[k] = 0;
    mbs_forces_apply_cs(c->m, c->x, &c->w, c->q, c->qd, t);
}

static void cs_id(cs_pipe *c)
{
    mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, c->qdd, 2);
    cs_prepare(c, 0);
    mbs_body_terms_cs(c->m, c->x, &c->w);
    mbs_rnea_cs(c->m, &c->w, c->out);
}

static int cs_fd(cs_pipe *c)
{
    mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, NULL, 1);
    cs_prepare(c, 0);
    mbs_body_terms_cs(c->m, c->x, &c->w);
    return mbs_aba_cs(c->m, &c->w, c->q, c->qd, c->tau, c->out);
}

/* q (+) i H e_k for the tangent velocity k of joint i: the complex
 * exponential map of the joint (holomorphic in the step; docs/
 * formulations.md "Derivatives in the tangent convention") */
static void cs_tangent_step(cs_pipe *c, const double *q, int i, int k)
{
    const mbs_joint_info *jt = &c->m->joint[i];
    const mbs_joint_ops *ops = mbs_joint_ops_of_cs(jt->type, jt->velocities);
    mreal qj[MBS_JOINT_MAXQ], dq[MBS_JOINT_MAXQ];
    for (int a = 0; a < jt->nq; a++) qj[a] = q[jt->qoff + a];
    for (int a = 0; a < jt->nv; a++) dq[a] = 0;
    dq[k - jt->voff] = I * H;
    ops->integrate(qj, dq, c->q + jt->qoff);
}

/* Perturb direction dir: 0..nv-1 q (along velocity dir: coordinate
 * c->vq[dir], or the tangent step of its joint), nv..2nv-1 qd, then tau
 * (if with_tau), then parameters. */
static void cs_set(cs_pipe *c, const double *q, const double *qd, const double *qdd,
                   const double *tau, int dir, int with_tau)
{
    const mbs_model *m = c->m;
    const int nv = m->nv;
    for (int k = 0; k < m->nx; k++) c->x[k] = m->x[k];
    for (int k = 0; k < m->nq; k++) c->q[k] = q[k];
    for (int k = 0; k < nv; k++) {
        c->qd[k] = qd[k];
        c->qdd[k] = qdd ? qdd[k] : 0; c->tau[k] = tau ? tau[k] : 0;
    }
    if (dir < nv) {
        if (c->vq[dir] >= 0) c->q[c->vq[dir]] += I * H;
        else cs_tangent_step(c, q, -1 - c->vq[dir], dir);
        return;
    }
    dir -= nv;
    if (dir < nv) { c->qd[dir] += I * H; return; }
    dir -= nv;
    if (with_tau) {
        if (dir < nv) { c->tau[dir] += I * H; return; }
        dir -= nv;
    }
    const mbs_param_info *p = &m->param[dir];
    for (int t = 0; t < p->ntargets; t++) c->x[p->target[t]] += I * H * p->scale[t];
}

/* The complex pipeline's arrays and workspace for m (reference point ref);
 * -1 when memory runs out (the caller frees what it holds). Velocity k of
 * joint i moves coordinate qoff + (k - voff) when it is a rate of the
 * joint's coordinates, and the joint along its exponential map when the
 * joint's velocities are tangent (vq = -1 - i). */
static int cs_pipe_init(cs_pipe *c, const mbs_model *m, mbs_ref_point ref)
{
    const size_t n1 = (size_t)m->nv + 1;
    memset(c, 0, sizeof *c);
    c->m = m;
    c->x = calloc((size_t)m->nx + 1, sizeof(mreal));
    c->q = calloc((size_t)m->nq + 1, sizeof(mreal)); c->qd = calloc(n1, sizeof(mreal));
    c->qdd = calloc(n1, sizeof(mreal)); c->tau = calloc(n1, sizeof(mreal)); c->out = calloc(n1, sizeof(mreal));
    c->vq = calloc(n1, sizeof(int));
    if (!c->x || !c->q || !c->qd || !c->qdd || !c->tau || !c->out || !c->vq || mbs_ws_init_cs(&c->w, m) != 0)
        return -1;
    for (int i = 1; i <= m->nb; i++)
        for (int k = 0; k < m->joint[i].nv; k++)
            c->vq[m->joint[i].voff + k] = m->joint[i].velocities == MBS_VELOCITIES_TANGENT ? -1 - i
                                                                                          : m->joint[i].qoff + k;
    c->w.ref = ref;
    return 0;
}

/* One sample: q (nq) and qd (nv) given (q_in; qd_in NULL: zero) or random in [-1, 1]
 * then normalized, qdd and tau random; tau orthogonal to the Euler
 * parameters, as physical torques are, on the joints whose velocities are
 * their rates (the quadruple's rates at voff + euler, as p at qoff +
 * euler; tangent velocities have no component along p). */
static void sample_state(const mbs_model *m, uint64_t *s, const double *q_in, const double *qd_in, double *q,
                         double *qd, double *qdd, double *tau)
{
    const int n = m->nq > m->nv ? m->nq : m->nv;
    for (int k = 0; k < n; k++) {   /* q (nq), then qd, qdd, tau (nv) of each index in turn */
        if (k < m->nq) q[k] = q_in ? q_in[k] : uniform(s, -1, 1);
        if (k >= m->nv) continue;
        qd[k] = q_in ? (qd_in ? qd_in[k] : 0) : uniform(s, -1, 1);
        qdd[k] = uniform(s, -1, 1);
        tau[k] = uniform(s, -1, 1);
    }
    mbs_normalize_state(m, q, qd);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0 || jt->velocities != MBS_VELOCITIES_EULER_RATES) continue;
        double *p = q + jt->qoff + jt->euler, *f = tau + jt->voff + jt->euler, pf = 0;
        for (int k = 0; k < 4; k++) pf += p[k] * f[k];
        for (int k = 0; k < 4; k++) f[k] -= pf * p[k];
    }
}

/* The arrays of a check: the sample state, the analytical blocks (A, B, C,
 * P; the semi-recursive ones A2, B2) and their complex-step references (R,
 * C, A2, B2, P2 reused), M' and its eigenvalues (Mc, ev) */
typedef struct {
    double *q, *qd, *qdd, *tau, *A, *B, *C, *R, *A2, *B2, *P, *P2, *Mc, *ev;
} check_bufs;

static double *check_bufs_alloc(check_bufs *b, const mbs_model *m)
{
    const size_t n1 = (size_t)m->nv + 1, p1 = (size_t)m->nparam + 1, q1 = (size_t)m->nq + 1;
    double *buf = calloc(q1 + 6 * n1 + 7 * n1 * n1 + 2 * n1 * p1, sizeof(double));
    if (!buf) return NULL;
    b->q = buf; b->qd = b->q + q1; b->qdd = b->qd + n1; b->tau = b->qdd + n1; b->ev = b->tau + n1;
    b->A = b->ev + n1; b->B = b->A + n1 * n1; b->C = b->B + n1 * n1; b->R = b->C + n1 * n1;
    b->A2 = b->R + n1 * n1; b->B2 = b->A2 + n1 * n1; b->Mc = b->B2 + n1 * n1;
    b->P = b->Mc + n1 * n1; b->P2 = b->P + n1 * p1;
    return buf;
}

/* The inverse-dynamics blocks at the sample in b against the complex step
 * of c, each within the round-off of the recursions ro */
static int check_id_sample(const mbs_model *m, mbs_data *d, cs_pipe *c, check_bufs *b, double ro,
                           mbs_check_report *rep, mbs_error *err)
{
    const int nv = m->nv, np = m->nparam;
    int rc;
    if ((rc = mbs_inverse_dynamics_derivatives(m, d, b->q, b->qd, b->qdd, NULL, b->A, b->B)) ||
        (np && (rc = mbs_inverse_dynamics_param_derivatives(m, d, b->q, b->qd, b->qdd, b->P))))
        return mbs_error_set(err, rc, "check: %s", mbs_data_error(d));
    for (int dir = 0; dir < 2 * nv + np; dir++) {
        cs_set(c, b->q, b->qd, b->qdd, NULL, dir, 0);
        cs_id(c);
        for (int r = 0; r < nv; r++) {
            double v = cimag(c->out[r]) / H;
            if (dir < nv) b->R[r * nv + dir] = v;
            else if (dir < 2 * nv) b->C[r * nv + dir - nv] = v;
            else b->P2[r * np + dir - 2 * nv] = v;
        }
    }
    if ((rc = mbs_error_results(err, m, "check: complex step",
                                MBS_RESULTS({ "dtau/dq", b->R, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                            { "dtau/dqd", b->C, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                            { "dtau/drho", np ? b->P2 : NULL, nv, np, MBS_IX_VEL, MBS_IX_PARAM }))))
        return rc;
    record(rep, MBS_CHECK_DTAU_DQ, rel_err(b->A, b->R, nv * nv), ro);
    record(rep, MBS_CHECK_DTAU_DQD, rel_err(b->B, b->C, nv * nv), ro);
    if (np) record(rep, MBS_CHECK_DTAU_DRHO, rel_err(b->P, b->P2, nv * np), ro);
    return MBS_OK;
}

/* The forward-dynamics blocks (both algorithms) at the sample in b against
 * the complex step of c, each within tol */
static int check_fd_sample(const mbs_model *m, mbs_data *d, cs_pipe *c, check_bufs *b, double tol, int sample,
                           mbs_check_report *rep, mbs_error *err)
{
    const int nv = m->nv, np = m->nparam;
    int rc;
    if ((rc = mbs_forward_dynamics_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, b->q, b->qd, b->tau, NULL, b->A2, b->B2,
                                               NULL)) ||
        (rc = mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, b->q, b->qd, b->tau, NULL, b->A, b->B, b->C)) ||
        (np && (rc = mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_RECURSIVE, b->q, b->qd, b->tau, NULL, b->P))))
        return mbs_error_set(err, rc, "check: %s", mbs_data_error(d));
    record(rep, MBS_CHECK_FR_VS_SEMI, fmax(rel_err(b->A, b->A2, nv * nv), rel_err(b->B, b->B2, nv * nv)), tol);
    for (int dir = 0; dir < 3 * nv + np; dir++) {
        cs_set(c, b->q, b->qd, NULL, b->tau, dir, 1);
        if (cs_fd(c) != 0)
            return mbs_error_set(err, MBS_ERR_NUMERIC, "check: forward dynamics failed at sample %d", sample);
        for (int r = 0; r < nv; r++) {
            double v = cimag(c->out[r]) / H;
            if (dir < nv) b->A2[r * nv + dir] = v;
            else if (dir < 2 * nv) b->B2[r * nv + dir - nv] = v;
            else if (dir < 3 * nv) b->R[r * nv + dir - 2 * nv] = v;
            else b->P2[r * np + dir - 3 * nv] = v;
        }
    }
    if ((rc = mbs_error_results(err, m, "check: complex step",
                                MBS_RESULTS({ "dqdd/dq", b->A2, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                            { "dqdd/dqd", b->B2, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                            { "dqdd/dtau", b->R, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                            { "dqdd/drho", np ? b->P2 : NULL, nv, np, MBS_IX_VEL, MBS_IX_PARAM }))))
        return rc;
    record(rep, MBS_CHECK_DQDD_DQ, rel_err(b->A, b->A2, nv * nv), tol);
    record(rep, MBS_CHECK_DQDD_DQD, rel_err(b->B, b->B2, nv * nv), tol);
    record(rep, MBS_CHECK_DQDD_DTAU, rel_err(b->C, b->R, nv * nv), tol);
    if (np) record(rep, MBS_CHECK_DQDD_DRHO, rel_err(b->P, b->P2, nv * np), tol);
    return MBS_OK;
}

/* Whether the complex step may run on cm for the analytical derivatives of
 * m: the same layout of coordinates, velocities, parameters and model
 * vector (the values in the model vector may differ) */
static int same_layout(const mbs_model *m, const mbs_model *cm)
{
    if (m->nb != cm->nb || m->nq != cm->nq || m->nv != cm->nv || m->nparam != cm->nparam || m->nx != cm->nx)
        return 0;
    for (int i = 1; i <= m->nb; i++)
        if (m->joint[i].type != cm->joint[i].type || m->joint[i].parent != cm->joint[i].parent ||
            m->joint[i].velocities != cm->joint[i].velocities)
            return 0;
    return 1;
}

int mbs_check_derivatives_against(const mbs_model *m, const mbs_model *cm, int samples, unsigned long seed,
                                  mbs_ref_point ref, const double *q_in, const double *qd_in,
                                  mbs_check_report *rep, mbs_error *err)
{
    if (!m || !cm || !rep) return mbs_error_set(err, MBS_ERR_ARG, "check: NULL argument");
    if (!same_layout(m, cm)) return mbs_error_set(err, MBS_ERR_ARG, "check: the reference model's layout differs");
    if (q_in) samples = 1;
    if (samples < 1) return mbs_error_set(err, MBS_ERR_ARG, "check: samples must be >= 1 (got %d)", samples);
    memset(rep, 0, sizeof *rep);
    int rc = MBS_OK;
    mbs_data *d = mbs_data_create(m, err);
    if (!d) return err ? err->code : MBS_ERR_NOMEM;
    mbs_data_set_ref(d, ref);
    cs_pipe c;
    check_bufs b = { 0 };
    double *buf = check_bufs_alloc(&b, m);
    if (cs_pipe_init(&c, cm, ref) != 0 || !buf) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "check: out of memory");
        goto done;
    }
    uint64_t s = seed * 2685821657736338717ULL + 1442695040888963407ULL;
    const double ro = roundoff_recursions(m);
    for (int sample = 0; sample < samples; sample++) {
        sample_state(m, &s, q_in, qd_in, b.q, b.qd, b.qdd, b.tau);
        const double kappa = completed_cond(m, d, b.q, b.Mc, b.ev);
        if (!(kappa < INFINITY)) {
            if (isnan(kappa))
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "check: %s", mbs_data_error(d));
            else
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "check: the mass matrix (completed for the Euler "
                                   "parameters) is not positive definite at sample %d", sample);
            goto done;
        }
        if (kappa > rep->cond) rep->cond = kappa;
        /* a backward-stable solve with M' on both sides of the comparison: 2 nv eps kappa */
        const double tol_fd = ro + 2.0 * m->nv * DBL_EPSILON * kappa;
        if ((rc = check_id_sample(m, d, &c, &b, ro, rep, err)) ||
            (rc = check_fd_sample(m, d, &c, &b, tol_fd, sample, rep, err)))
            goto done;
        rep->samples++;
    }
    rc = mbs_error_results(err, m, "check", MBS_RESULTS({ "worst relative error", rep->worst, MBS_CHECK_NBLOCKS, 1,
                                                          MBS_IX_NONE, 0 }));
done:
    mbs_ws_free_cs(&c.w);
    free(c.x); free(c.q); free(c.qd); free(c.qdd); free(c.tau); free(c.out); free(c.vq);
    free(buf);
    mbs_data_free(d);
    return rc;
}

int mbs_check_derivatives(const mbs_model *m, int samples, unsigned long seed,
                          mbs_ref_point ref, const double *q_in, const double *qd_in,
                          mbs_check_report *rep, mbs_error *err)
{
    return mbs_check_derivatives_against(m, m, samples, seed, ref, q_in, qd_in, rep, err);
}
