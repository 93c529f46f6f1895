/*
 * check.c - mbs_check_derivatives: analytical derivatives against the
 * complex-step derivatives of the complex build of the kernels.
 *
 * This file is compiled with mreal = double complex (it uses the *_cs
 * kernels directly) and reaches the double pipeline through the public API.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "kernels/kernels.h"
#include "forces/force.h"
#include "base/error.h"
#include "kernels/results.h"
#include "model/state.h"

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

typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *qd, *qdd, *tau, *out;
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

/* Perturb direction dir: 0..nv-1 q, nv..2nv-1 qd, then tau (if with_tau),
 * then parameters. */
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
    if (dir < nv) { c->q[dir] += I * H; return; }
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
 * -1 when memory runs out (the caller frees what it holds). */
static int cs_pipe_init(cs_pipe *c, const mbs_model *m, mbs_ref_point ref)
{
    const size_t n1 = (size_t)m->nv + 1;
    memset(c, 0, sizeof *c);
    c->m = m;
    c->x = calloc((size_t)m->nx + 1, sizeof(mreal));
    c->q = calloc((size_t)m->nq + 1, sizeof(mreal)); c->qd = calloc(n1, sizeof(mreal));
    c->qdd = calloc(n1, sizeof(mreal)); c->tau = calloc(n1, sizeof(mreal)); c->out = calloc(n1, sizeof(mreal));
    if (!c->x || !c->q || !c->qd || !c->qdd || !c->tau || !c->out || mbs_ws_init_cs(&c->w, m) != 0) return -1;
    c->w.ref = ref;
    return 0;
}

/* One sample: q (nq) and qd (nv) given (q_in; qd_in NULL: zero) or random in [-1, 1]
 * then normalized, qdd and tau random; tau orthogonal to the Euler
 * parameters, as physical torques are. */
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
        if (jt->euler < 0) continue;
        double *p = q + jt->qoff + jt->euler, *f = tau + jt->voff + jt->euler, pf = 0;
        for (int k = 0; k < 4; k++) pf += p[k] * f[k];
        for (int k = 0; k < 4; k++) f[k] -= pf * p[k];
    }
}

int mbs_check_derivatives(const mbs_model *m, int samples, unsigned long seed,
                          mbs_ref_point ref, const double *q_in, const double *qd_in,
                          mbs_check_report *rep, mbs_error *err)
{
    if (m && mbs_tangent_unsupported_err(m, "check (derivative checks)", err)) return MBS_ERR_UNSUPPORTED;
    if (!m || !rep) return mbs_error_set(err, MBS_ERR_ARG, "check: NULL argument");
    if (q_in) samples = 1;
    if (samples < 1) return mbs_error_set(err, MBS_ERR_ARG, "check: samples must be >= 1 (got %d)", samples);
    memset(rep, 0, sizeof *rep);
    const int nv = m->nv, np = m->nparam;
    const size_t n1 = (size_t)nv + 1, p1 = (size_t)np + 1, q1 = (size_t)m->nq + 1;
    int rc = MBS_OK;
    mbs_data *d = mbs_data_create(m, err);
    if (!d) return err ? err->code : MBS_ERR_NOMEM;
    mbs_data_set_ref(d, ref);
    cs_pipe c;
    double *buf = calloc(q1 + 5 * n1 + 6 * n1 * n1 + 2 * n1 * p1, sizeof(double));
    if (cs_pipe_init(&c, m, ref) != 0 || !buf) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "check: out of memory");
        goto done;
    }
    double *q = buf, *qd = q + q1, *qdd = qd + n1, *tau = qdd + n1;
    double *A = tau + 2 * n1, *B = A + n1 * n1, *C = B + n1 * n1, *R = C + n1 * n1;
    double *A2 = R + n1 * n1, *B2 = A2 + n1 * n1, *P = B2 + n1 * n1, *P2 = P + n1 * p1;
    uint64_t s = seed * 2685821657736338717ULL + 1442695040888963407ULL;
    for (int sample = 0; sample < samples; sample++) {
        sample_state(m, &s, q_in, qd_in, q, qd, qdd, tau);
        /* ---- inverse dynamics ---- */
        if ((rc = mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B)) ||
            (np && (rc = mbs_inverse_dynamics_param_derivatives(m, d, q, qd, qdd, P)))) {
            mbs_error_set(err, rc, "check: %s", mbs_data_error(d));
            goto done;
        }
        for (int dir = 0; dir < 2 * nv + np; dir++) {
            cs_set(&c, q, qd, qdd, NULL, dir, 0);
            cs_id(&c);
            for (int r = 0; r < nv; r++) {
                double v = cimag(c.out[r]) / H;
                if (dir < nv) R[r * nv + dir] = v;
                else if (dir < 2 * nv) C[r * nv + dir - nv] = v;
                else P2[r * np + dir - 2 * nv] = v;
            }
        }
        if ((rc = mbs_error_results(err, m, "check: complex step",
                                    MBS_RESULTS({ "dtau/dq", R, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                                { "dtau/dqd", C, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                                { "dtau/drho", np ? P2 : NULL, nv, np, MBS_IX_VEL, MBS_IX_PARAM }))))
            goto done;
        double e;
        e = rel_err(A, R, nv * nv); if (e > rep->worst[MBS_CHECK_DTAU_DQ]) rep->worst[MBS_CHECK_DTAU_DQ] = e;
        e = rel_err(B, C, nv * nv); if (e > rep->worst[MBS_CHECK_DTAU_DQD]) rep->worst[MBS_CHECK_DTAU_DQD] = e;
        if (np) { e = rel_err(P, P2, nv * np); if (e > rep->worst[MBS_CHECK_DTAU_DRHO]) rep->worst[MBS_CHECK_DTAU_DRHO] = e; }
        /* ---- forward dynamics (both algorithms) ---- */
        if ((rc = mbs_forward_dynamics_derivatives(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, NULL, A2, B2, NULL)) ||
            (rc = mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, NULL, A, B, C)) ||
            (np && (rc = mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, NULL, P)))) {
            mbs_error_set(err, rc, "check: %s", mbs_data_error(d));
            goto done;
        }
        e = fmax(rel_err(A, A2, nv * nv), rel_err(B, B2, nv * nv));
        if (e > rep->worst[MBS_CHECK_FR_VS_SEMI]) rep->worst[MBS_CHECK_FR_VS_SEMI] = e;
        for (int dir = 0; dir < 3 * nv + np; dir++) {
            cs_set(&c, q, qd, NULL, tau, dir, 1);
            if (cs_fd(&c) != 0) {
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "check: forward dynamics failed at sample %d", sample);
                goto done;
            }
            for (int r = 0; r < nv; r++) {
                double v = cimag(c.out[r]) / H;
                if (dir < nv) A2[r * nv + dir] = v;
                else if (dir < 2 * nv) B2[r * nv + dir - nv] = v;
                else if (dir < 3 * nv) R[r * nv + dir - 2 * nv] = v;
                else P2[r * np + dir - 3 * nv] = v;
            }
        }
        if ((rc = mbs_error_results(err, m, "check: complex step",
                                    MBS_RESULTS({ "dqdd/dq", A2, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                                { "dqdd/dqd", B2, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                                { "dqdd/dtau", R, nv, nv, MBS_IX_VEL, MBS_IX_VEL },
                                                { "dqdd/drho", np ? P2 : NULL, nv, np, MBS_IX_VEL, MBS_IX_PARAM }))))
            goto done;
        e = rel_err(A, A2, nv * nv); if (e > rep->worst[MBS_CHECK_DQDD_DQ]) rep->worst[MBS_CHECK_DQDD_DQ] = e;
        e = rel_err(B, B2, nv * nv); if (e > rep->worst[MBS_CHECK_DQDD_DQD]) rep->worst[MBS_CHECK_DQDD_DQD] = e;
        e = rel_err(C, R, nv * nv); if (e > rep->worst[MBS_CHECK_DQDD_DTAU]) rep->worst[MBS_CHECK_DQDD_DTAU] = e;
        if (np) { e = rel_err(P, P2, nv * np); if (e > rep->worst[MBS_CHECK_DQDD_DRHO]) rep->worst[MBS_CHECK_DQDD_DRHO] = e; }
        rep->samples++;
    }
    rc = mbs_error_results(err, m, "check", MBS_RESULTS({ "worst relative error", rep->worst, MBS_CHECK_NBLOCKS, 1,
                                                          MBS_IX_NONE, 0 }));
done:
    mbs_ws_free_cs(&c.w);
    free(c.x); free(c.q); free(c.qd); free(c.qdd); free(c.tau); free(c.out);
    free(buf);
    mbs_data_free(d);
    return rc;
}
