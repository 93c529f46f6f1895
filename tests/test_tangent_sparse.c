/*
 * test_tangent_sparse.c - the residual and constraint tangents of the
 * closed-loop formulations (mbs_form_tangent: the kinematic tangent sweep,
 * force elements, body terms, Newton-Euler, constraint kernel) along SPARSE
 * directions, as the sensitivity analyses use them, against complex-step
 * derivatives of the same kernels compiled with a complex scalar.
 *
 * The tangent kernels skip what such directions leave exactly zero: bodies
 * before the first joint or model number the direction moves, products by a
 * zero rotation tangent, zero direction blocks, zero constraint blocks. Here
 * every unit direction of q, qd and qdd, every unit direction of the model
 * vector x (joint frames, points, CoM, inertia, mass, gravity, element and
 * law numbers), and mixtures of one of each, on random closed-loop models
 * (every cut type, every joint type, drivers), random trees of every joint
 * type, and the shipped closed-loop models with force elements, for the
 * three reference points: dr, dPhi, dPhi_q (every entry), d(dPhi/dt) and
 * d(d2Phi/dt2) must match Im f(x + iH dx, q + iH dq, ...)/H to 1e-12
 * (mbs_rel_err: relative to the largest reference entry, absolute below 1).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "kernels/kernels.h"
#include "constraints/constraint.h"
#include "forces/force.h"
#include "model/model_impl.h"
#include "formulations/form_tangent.h"   /* the double tangents, scalar-free interface */

static const double H = 1e-30;
/* identities: round-off of the random models (loops and trees of up to 7 bodies, the shipped
 * closed loops: fewer) */
static const double TOL = MBS_ROUNDOFF(7);

enum { O_R, O_PHI, O_PHIQ, O_PHID, O_PHIDD, NOUT };
static double worst[NOUT];
static const char *oname[NOUT] = { "dr", "dPhi", "dPhi_q", "dPhid", "dPhidd" };
static long ndirs;

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    mbs_ws_cs wc;
    int n, nq, nx;
    double t, *q, *qd, *qdd, *dq, *dqd, *dqdd, *dx;
    mreal *xc, *qc, *qdc, *qddc, *tau, *phi, *J, *phid, *phidd;
    double *a[NOUT], *ref[NOUT];
} ctx;

static void ctx_init(ctx *c, const mbs_model *m)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    c->nq = m->nq;
    c->nx = m->nx;
    c->n = m->con.nloop_rows + m->con.ndriver + m->n_euler;
    const size_t q1 = (size_t)c->nq + 1, n1 = (size_t)c->n + 1, x1 = (size_t)c->nx + 1;
    c->d = mbs_data_create(m, NULL);
    CHECK(c->d && mbs_ws_init_cs(&c->wc, m) == 0, "data");
    c->q = calloc(q1, 8); c->qd = calloc(q1, 8); c->qdd = calloc(q1, 8);
    c->dq = calloc(q1, 8); c->dqd = calloc(q1, 8); c->dqdd = calloc(q1, 8); c->dx = calloc(x1, 8);
    c->xc = calloc(x1, sizeof(mreal)); c->qc = calloc(q1, sizeof(mreal)); c->qdc = calloc(q1, sizeof(mreal));
    c->qddc = calloc(q1, sizeof(mreal)); c->tau = calloc(q1, sizeof(mreal));
    c->phi = calloc(n1, sizeof(mreal)); c->J = calloc(n1 * q1, sizeof(mreal));
    c->phid = calloc(n1, sizeof(mreal)); c->phidd = calloc(n1, sizeof(mreal));
    const size_t sz[NOUT] = { q1, n1, n1 * q1, n1, n1 };
    for (int k = 0; k < NOUT; k++) { c->a[k] = calloc(sz[k], 8); c->ref[k] = calloc(sz[k], 8); }
}

static void ctx_free(ctx *c)
{
    mbs_data_free(c->d);
    mbs_ws_free_cs(&c->wc);
    free(c->q); free(c->qd); free(c->qdd); free(c->dq); free(c->dqd); free(c->dqdd); free(c->dx);
    free(c->xc); free(c->qc); free(c->qdc); free(c->qddc); free(c->tau);
    free(c->phi); free(c->J); free(c->phid); free(c->phidd);
    for (int k = 0; k < NOUT; k++) { free(c->a[k]); free(c->ref[k]); }
}

/* the tangents along the direction in c (NULL for the zero parts, as the
 * callers pass them) against complex step */
static void check_direction(ctx *c, const char *what)
{
    const mbs_model *m = c->m;
    const int nq = c->nq, n = c->n, nx = c->nx;
    int zq = 1, zqd = 1, zqdd = 1, zx = 1;
    for (int k = 0; k < nq; k++) {
        zq &= c->dq[k] == 0;
        zqd &= c->dqd[k] == 0;
        zqdd &= c->dqdd[k] == 0;
    }
    for (int k = 0; k < nx; k++) zx &= c->dx[k] == 0;
    /* the double tangents: the primal first (the residual's loads and the
     * constraint kernel's primal at this state), then the sweep */
    mbs_form_primal(m, c->d, c->t, c->q, c->qd, c->qdd, c->a[O_R], NULL, NULL, NULL, NULL);
    mbs_form_tangent(m, c->d, c->t, c->q, c->qd, c->qdd, zq ? NULL : c->dq, zqd ? NULL : c->dqd,
                     zqdd ? NULL : c->dqdd, zx ? NULL : c->dx, c->a[O_R], n ? c->a[O_PHI] : NULL,
                     n ? c->a[O_PHIQ] : NULL, n ? c->a[O_PHID] : NULL, n ? c->a[O_PHIDD] : NULL);
    /* complex step */
    mbs_ws_cs *w = &c->wc;
    for (int k = 0; k < nx; k++) c->xc[k] = m->x[k] + I * H * c->dx[k];
    for (int k = 0; k < nq; k++) {
        c->qc[k] = c->q[k] + I * H * c->dq[k];
        c->qdc[k] = c->qd[k] + I * H * c->dqd[k];
        c->qddc[k] = c->qdd[k] + I * H * c->dqdd[k];
    }
    mbs_kin_forward_cs(m, c->xc, w, c->qc, c->qdc, c->qddc, 2);
    for (int k = 0; k < 15 * (m->nb + 1); k++) w->xfrc[k] = 0;   /* no user loads on these models */
    for (int k = 0; k < nq; k++) w->qfrc[k] = 0;
    mbs_forces_apply_cs(m, c->xc, w, c->qc, c->qdc, c->t);
    mbs_body_terms_cs(m, c->xc, w);
    mbs_rnea_cs(m, w, c->tau);
    for (int k = 0; k < nq; k++) c->ref[O_R][k] = cimag(c->tau[k]) / H;
    if (n) {
        mbs_con_kernel_cs(m, c->xc, w, c->qc, c->qdc, c->qddc, c->t, c->phi, c->J, c->phid, NULL, NULL, c->phidd);
        for (int r = 0; r < n; r++) {
            c->ref[O_PHI][r] = cimag(c->phi[r]) / H;
            c->ref[O_PHID][r] = cimag(c->phid[r]) / H;
            c->ref[O_PHIDD][r] = cimag(c->phidd[r]) / H;
            for (int k = 0; k < nq; k++) c->ref[O_PHIQ][(size_t)r * nq + k] = cimag(c->J[(size_t)r * nq + k]) / H;
        }
    }
    const int len[NOUT] = { nq, n, n * nq, n, n };
    for (int k = 0; k < NOUT; k++) {
        if (!len[k]) continue;
        const double e = mbs_rel_err(c->a[k], c->ref[k], len[k]);
        CHECK(e <= TOL, "%s: %s: %g", what, oname[k], e);
        if (e > worst[k] || isnan(e)) worst[k] = isnan(e) ? INFINITY : e;
    }
    ndirs++;
}

/* every unit direction of q, qd, qdd and x (a random subset of x if large),
 * and nmix mixtures of one of each, at a random state */
static void check_model(mbs_rng *rng, const mbs_model *m, const double *qstart, int rp, int nmix, const char *name)
{
    ctx c;
    ctx_init(&c, m);
    const int nq = c.nq, nx = c.nx;
    char what[160];
    mbs_test_random_state(rng, m, c.q, c.qd, c.qdd);
    if (qstart) memcpy(c.q, qstart, sizeof(double) * (size_t)nq);
    c.t = mbs_rng_uniform(rng, 0, 1);
    mbs_data_set_time(c.d, c.t);
    mbs_data_set_ref(c.d, (mbs_ref_point)rp);
    c.wc.ref = (mbs_ref_point)rp;
    for (int which = 0; which < 3; which++) {
        double *v = which == 0 ? c.dq : which == 1 ? c.dqd : c.dqdd;
        for (int k = 0; k < nq; k++) {
            v[k] = 1;
            snprintf(what, sizeof what, "%s ref %d: unit %s[%d]", name, rp, which == 0 ? "dq" : which == 1 ? "dqd" : "dqdd", k);
            check_direction(&c, what);
            v[k] = 0;
        }
    }
    const int step = nx > 240 ? nx / 120 : 1;
    for (int k = mbs_rng_int(rng, step); k < nx; k += step) {
        c.dx[k] = 1;
        snprintf(what, sizeof what, "%s ref %d: unit dx[%d]", name, rp, k);
        check_direction(&c, what);
        c.dx[k] = 0;
    }
    for (int s = 0; s < nmix && nq > 0; s++) {
        const int a = mbs_rng_int(rng, nq), b = mbs_rng_int(rng, nq), e = mbs_rng_int(rng, nq), x = mbs_rng_int(rng, nx);
        c.dq[a] = mbs_rng_uniform(rng, -1, 1);
        c.dqd[b] = mbs_rng_uniform(rng, -1, 1);
        c.dqdd[e] = mbs_rng_uniform(rng, -1, 1);
        if (s % 2) c.dx[x] = mbs_rng_uniform(rng, -1, 1);
        snprintf(what, sizeof what, "%s ref %d: mixed dq[%d] dqd[%d] dqdd[%d] dx[%d]", name, rp, a, b, e, s % 2 ? x : -1);
        check_direction(&c, what);
        c.dq[a] = c.dqd[b] = c.dqdd[e] = c.dx[x] = 0;
    }
    ctx_free(&c);
}

/* the model set: the random loops' closed configuration on every third model,
 * all three reference points (10 mixtures) on the shipped ones */
static void each_model(void *user, mbs_rng *rng, const mbs_model *m, const double *qc, int it, const char *name)
{
    (void)user;
    if (it < 0)
        for (int rp = MBS_REF_COM; rp <= MBS_REF_JOINT; rp++) check_model(rng, m, NULL, rp, 10, name);
    else
        check_model(rng, m, qc && it % 3 == 0 ? qc : NULL, it % 3, 6, name);
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 112606);
    /* random closed loops (every cut type, drivers on every other model), random trees of
     * every joint type with parameters of every kind, the shipped closed-loop models */
    mbs_test_for_tangent_models(&rng, 36, 24, each_model, NULL);
    printf("  %ld sparse directions\n", ndirs);
    for (int k = 0; k < NOUT; k++) printf("  worst relative error %-7s %.3g\n", oname[k], worst[k]);
    return mbs_test_summary("test_tangent_sparse");
}
