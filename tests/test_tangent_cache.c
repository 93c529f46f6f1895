/*
 * test_tangent_cache.c - the per-state quantities the tangent kernels share
 * between directions (the cut joints' entities and G blocks in the
 * workspace's cache, constraint_kernel_d.c; the spring-damper geometry) must
 * never be used at another state.
 *
 * One mbs_data goes through a sequence of primal states (random q, qd, qdd
 * and time; a state differing from the previous one only in qdd, reached by
 * the acceleration pass alone; one differing only in qd; one differing only
 * in time; the first state again), with tangents along several directions
 * at each (so every cache entry is filled at the previous state). At every
 * state, the tangents (dr, dphi, dPhi_q, dphid, dphidd) along unit and mixed
 * directions must equal BIT FOR BIT those of a fresh mbs_data that saw only
 * that state. Random closed loops of every cut type (with drivers on every
 * other model), random trees with force elements and parameters, and the
 * shipped closed-loop models with spring-dampers, three reference points.
 * The complex workspace's constraint tangent is checked the same way
 * (mbs_con_kernel_d_cs after kinematics at another state).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "kernels/kernels.h"
#include "constraints/constraint.h"
#include "model/model_impl.h"
#include "formulations/form_tangent.h"   /* the double tangents, scalar-free interface */

/* form_impl.h (double kernel types, not visible here): the acceleration
 * pass over the kinematics in d, loads, body terms, residual */
void mbs_form_primal_acc(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                         double *r);

enum { NOUT = 5 };
static long ncompared;

typedef struct {
    double t, *q, *qd, *qdd;
} state;

static void state_alloc(state *s, int nq)
{
    s->t = 0;
    s->q = calloc((size_t)nq + 1, 8);
    s->qd = calloc((size_t)nq + 1, 8);
    s->qdd = calloc((size_t)nq + 1, 8);
}

static void state_free(state *s) { free(s->q); free(s->qd); free(s->qdd); }

static void state_copy(state *dst, const state *src, int nq)
{
    dst->t = src->t;
    memcpy(dst->q, src->q, 8 * (size_t)nq);
    memcpy(dst->qd, src->qd, 8 * (size_t)nq);
    memcpy(dst->qdd, src->qdd, 8 * (size_t)nq);
}

/* the outputs of one tangent (a[k], sizes len[k]) */
typedef struct {
    int n, nq;
    double *a[NOUT];
    size_t len[NOUT];
} outs;

static void outs_alloc(outs *o, const mbs_model *m)
{
    o->nq = m->nq;
    o->n = m->con.nloop_rows + m->con.ndriver + m->n_euler;
    const size_t q1 = (size_t)o->nq, n1 = (size_t)o->n;
    const size_t len[NOUT] = { q1, n1, n1 * q1, n1, n1 };
    for (int k = 0; k < NOUT; k++) {
        o->len[k] = len[k];
        o->a[k] = calloc(len[k] + 1, 8);
    }
}

static void outs_free(outs *o)
{
    for (int k = 0; k < NOUT; k++) free(o->a[k]);
}

/* primal then tangent at s along (dq, dqd, dqdd, dx) into o; acc_only: the
 * primal by the acceleration pass over the kinematics already in d (the
 * previous state had the same q, qd) */
static void tangent_at(const mbs_model *m, mbs_data *d, const state *s, int acc_only, const double *dq,
                       const double *dqd, const double *dqdd, const double *dx, outs *o)
{
    const int n = o->n;
    mbs_data_set_time(d, s->t);
    if (acc_only) mbs_form_primal_acc(m, d, s->q, s->qd, s->qdd, o->a[0]);
    else mbs_form_primal(m, d, s->t, s->q, s->qd, s->qdd, o->a[0], NULL, NULL, NULL, NULL);
    mbs_form_tangent(m, d, s->t, s->q, s->qd, s->qdd, dq, dqd, dqdd, dx, o->a[0], n ? o->a[1] : NULL,
                     n ? o->a[2] : NULL, n ? o->a[3] : NULL, n ? o->a[4] : NULL);
}

/* the tangents at s along a few directions in the reused data d against a
 * fresh data, bit for bit */
static void check_state(mbs_rng *rng, const mbs_model *m, mbs_data *d, const state *s, int acc_only, int rp,
                        const char *what)
{
    const int nq = m->nq, nx = m->nx;
    double *dq = calloc((size_t)nq + 1, 8), *dqd = calloc((size_t)nq + 1, 8), *dqdd = calloc((size_t)nq + 1, 8);
    double *dx = calloc((size_t)nx + 1, 8);
    outs a, b;
    outs_alloc(&a, m);
    outs_alloc(&b, m);
    for (int dir = 0; dir < 6; dir++) {
        memset(dq, 0, 8 * (size_t)nq);
        memset(dqd, 0, 8 * (size_t)nq);
        memset(dqdd, 0, 8 * (size_t)nq);
        memset(dx, 0, 8 * (size_t)nx);
        const int kind = dir % 3;
        if (nq > 0 && kind == 0) dq[mbs_rng_int(rng, nq)] = 1;
        if (nx > 0 && kind == 1) dx[mbs_rng_int(rng, nx)] = 1;
        if (kind == 2) {
            for (int k = 0; k < nq; k++) {
                dq[k] = mbs_rng_uniform(rng, -1, 1);
                dqd[k] = mbs_rng_uniform(rng, -1, 1);
                dqdd[k] = mbs_rng_uniform(rng, -1, 1);
            }
            if (nx > 0) dx[mbs_rng_int(rng, nx)] = mbs_rng_uniform(rng, -1, 1);
        }
        const double *pdx = kind == 0 ? NULL : dx;
        tangent_at(m, d, s, acc_only && dir == 0, dq, dqd, dqdd, pdx, &a);
        /* a fresh data that never saw another state */
        mbs_data *f = mbs_data_create(m, NULL);
        CHECK(f != NULL, "%s: data", what);
        if (!f) break;
        mbs_data_set_ref(f, (mbs_ref_point)rp);
        tangent_at(m, f, s, 0, dq, dqd, dqdd, pdx, &b);
        mbs_data_free(f);
        static const char *name[NOUT] = { "dr", "dphi", "dPhi_q", "dphid", "dphidd" };
        for (int k = 0; k < NOUT; k++) {
            if (!a.len[k]) continue;
            const int same = !memcmp(a.a[k], b.a[k], 8 * a.len[k]);
            CHECK(same, "%s: direction %d: %s differs from a fresh data's", what, dir, name[k]);
            ncompared++;
        }
    }
    outs_free(&a);
    outs_free(&b);
    free(dq); free(dqd); free(dqdd); free(dx);
}

/* the complex constraint tangent in one workspace after kinematics at
 * another state, against a fresh workspace */
static void check_complex(mbs_rng *rng, const mbs_model *m, const state *s1, const state *s2, const char *what)
{
    const int nq = m->nq, nx = m->nx, n = m->con.nloop_rows + m->con.ndriver + m->n_euler;
    if (!m->con.ncut) return;
    mbs_ws_cs w, w2, dw;
    CHECK(mbs_ws_init_cs(&w, m) == 0 && mbs_ws_init_cs(&w2, m) == 0 && mbs_ws_init_cs(&dw, m) == 0, "ws");
    const size_t q1 = (size_t)nq + 1, n1 = (size_t)n + 1;
    mreal *xc = calloc((size_t)nx + 1, sizeof(mreal)), *dxc = calloc((size_t)nx + 1, sizeof(mreal));
    mreal *v[3], *dv = calloc(q1, sizeof(mreal));
    for (int k = 0; k < 3; k++) v[k] = calloc(3 * q1, sizeof(mreal));
    mreal *out[2][4];
    for (int r = 0; r < 2; r++) {
        out[r][0] = calloc(n1, sizeof(mreal));
        out[r][1] = calloc(n1 * q1, sizeof(mreal));
        out[r][2] = calloc(n1, sizeof(mreal));
        out[r][3] = calloc(n1, sizeof(mreal));
    }
    for (int k = 0; k < nx; k++) xc[k] = m->x[k];
    if (nx > 0) dxc[mbs_rng_int(rng, nx)] = 1;
    for (int k = 0; k < nq; k++) dv[k] = mbs_rng_uniform(rng, -1, 1);
    const state *st[2] = { s1, s2 };
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < nq; k++) {
            v[0][r * nq + k] = st[r]->q[k];
            v[1][r * nq + k] = st[r]->qd[k];
            v[2][r * nq + k] = st[r]->qdd[k];
        }
    /* w: state 1 (cache filled), then state 2; w2: state 2 only */
    for (int pass = 0; pass < 3; pass++) {
        mbs_ws_cs *ws = pass < 2 ? &w : &w2;
        const int r = pass == 0 ? 0 : 1;
        const mreal *q = v[0] + r * nq, *qd = v[1] + r * nq, *qdd = v[2] + r * nq;
        mbs_kin_forward_cs(m, xc, ws, q, qd, qdd, 2);
        mbs_kin_forward_d_cs(m, xc, ws, dxc, &dw, q, qd, qdd, dv, dv, dv, 2, 1, m->nb + 1);
        const int slot = pass == 2 ? 1 : 0;
        mbs_con_kernel_d_cs(m, xc, ws, dxc, &dw, q, qd, qdd, dv, dv, dv, st[r]->t, out[slot][0], out[slot][1],
                            out[slot][2], out[slot][3]);
    }
    const size_t len[4] = { (size_t)n, (size_t)n * nq, (size_t)n, (size_t)n };
    for (int k = 0; k < 4; k++) {
        CHECK(!memcmp(out[0][k], out[1][k], sizeof(mreal) * len[k]), "%s: complex constraint tangent %d differs",
              what, k);
        ncompared++;
    }
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 4; k++) free(out[r][k]);
    for (int k = 0; k < 3; k++) free(v[k]);
    free(dv); free(xc); free(dxc);
    mbs_ws_free_cs(&w);
    mbs_ws_free_cs(&w2);
    mbs_ws_free_cs(&dw);
}

static void check_model(mbs_rng *rng, const mbs_model *m, const double *qstart, int rp, const char *name)
{
    const int nq = m->nq;
    char what[200];
    mbs_data *d = mbs_data_create(m, NULL);
    CHECK(d != NULL, "%s: data", name);
    if (!d) return;
    mbs_data_set_ref(d, (mbs_ref_point)rp);
    state s1, s2, s;
    state_alloc(&s1, nq);
    state_alloc(&s2, nq);
    state_alloc(&s, nq);
    mbs_test_random_state(rng, m, s1.q, s1.qd, s1.qdd);
    if (qstart) memcpy(s1.q, qstart, 8 * (size_t)nq);
    s1.t = mbs_rng_uniform(rng, 0, 1);
    mbs_test_random_state(rng, m, s2.q, s2.qd, s2.qdd);
    s2.t = mbs_rng_uniform(rng, 0, 1);

    snprintf(what, sizeof what, "%s ref %d: state 1", name, rp);
    check_state(rng, m, d, &s1, 0, rp, what);
    snprintf(what, sizeof what, "%s ref %d: state 2 after 1", name, rp);
    check_state(rng, m, d, &s2, 0, rp, what);
    /* only qdd changes (the acceleration pass alone) */
    state_copy(&s, &s2, nq);
    for (int k = 0; k < nq; k++) s.qdd[k] += mbs_rng_uniform(rng, -1, 1);
    snprintf(what, sizeof what, "%s ref %d: new qdd by the acceleration pass", name, rp);
    check_state(rng, m, d, &s, 1, rp, what);
    /* only qd changes */
    for (int k = 0; k < nq; k++) s.qd[k] += mbs_rng_uniform(rng, -1, 1);
    snprintf(what, sizeof what, "%s ref %d: new qd", name, rp);
    check_state(rng, m, d, &s, 0, rp, what);
    /* only the time changes */
    s.t += 0.25;
    snprintf(what, sizeof what, "%s ref %d: new t", name, rp);
    check_state(rng, m, d, &s, 0, rp, what);
    /* back to state 1 */
    snprintf(what, sizeof what, "%s ref %d: state 1 again", name, rp);
    check_state(rng, m, d, &s1, 0, rp, what);
    snprintf(what, sizeof what, "%s ref %d: complex workspace", name, rp);
    check_complex(rng, m, &s1, &s2, what);
    state_free(&s1);
    state_free(&s2);
    state_free(&s);
    mbs_data_free(d);
}

/* the model set: the random loops' closed configuration on every other model,
 * all three reference points on the shipped ones */
static void each_model(void *user, mbs_rng *rng, const mbs_model *m, const double *qc, int it, const char *name)
{
    (void)user;
    if (it < 0)
        for (int rp = MBS_REF_COM; rp <= MBS_REF_JOINT; rp++) check_model(rng, m, NULL, rp, name);
    else
        check_model(rng, m, qc && it % 2 ? qc : NULL, it % 3, name);
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2611264);
    mbs_test_for_tangent_models(&rng, 24, 12, each_model, NULL);
    printf("  %ld outputs compared bit for bit\n", ncompared);
    return mbs_test_summary("test_tangent_cache");
}
