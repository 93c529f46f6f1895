#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include "model_compare.h"
#include "mbs_testing.h"
#include <jansson.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mbs_test_pass = 0, mbs_test_fail = 0;

int mbs_test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, mbs_test_pass, mbs_test_fail);
    if (mbs_test_pass == 0 && mbs_test_fail == 0) {
        printf("%s: no check was executed\n", name);
        return 1;
    }
    return mbs_test_fail ? 1 : 0;
}

void mbs_rng_seed(mbs_rng *r, uint64_t seed) { r->s = seed * 2685821657736338717ULL + 88172645463325252ULL; if (!r->s) r->s = 1; }

static uint64_t next(mbs_rng *r)
{
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

double mbs_rng_uniform(mbs_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next(r) >> 11) * (1.0 / 9007199254740992.0));
}

int mbs_rng_int(mbs_rng *r, int n) { return (int)(next(r) % (uint64_t)n); }

const char *mbs_test_path(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("MBS_SOURCE_DIR");
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}

double mbs_rel_err(const double *a, const double *b, int n)
{
    double scale = 1, err = 0;
    for (int k = 0; k < n; k++) if (fabs(b[k]) > scale) scale = fabs(b[k]);
    for (int k = 0; k < n; k++) { double e = fabs(a[k] - b[k]); if (e > err || isnan(e)) err = isnan(e) ? INFINITY : e; }
    return err / scale;
}

int mbs_test_urdf_dir(char *dir, size_t len)
{
    const char *env = getenv("MBS_URDF_DIR");
    if (env && *env)
        snprintf(dir, len, "%s", env);
    else
        snprintf(dir, len, "%s", mbs_test_path("../shared/data/example-robot-data"));
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

void mbs_test_complete_euler(const mbs_model *m, const double *q, double *M)
{
    const int nv = m->nv;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0 || jt->velocities != MBS_VELOCITIES_EULER_RATES) continue;
        const double *p = q + jt->qoff + jt->euler;
        const int e = jt->voff + jt->euler;   /* the rates of p */
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) M[(size_t)(e + r) * nv + e + c] += p[r] * p[c];
    }
}

double mbs_test_roundoff_fd(const mbs_model *m, mbs_data *d, const double *q)
{
    const int nv = mbs_model_nv(m);
    double *M = malloc(sizeof(double) * (size_t)nv * (size_t)nv + 1), c = INFINITY;
    if (M && mbs_mass_matrix(m, d, q, M) == MBS_OK) {
        mbs_test_complete_euler(m, q, M);
        c = mbs_test_cond_spd(M, nv);
    }
    free(M);
    return MBS_ROUNDOFF(mbs_model_nbodies(m)) + 2 * nv * MBS_EPS * c;
}

double mbs_test_check_derivatives(const mbs_model *m, int samples, unsigned long seed, const char *label)
{
    const int nq = mbs_model_nq(m);
    mbs_error err = { 0, "" };
    mbs_data *d = mbs_data_create(m, &err);
    double *q = malloc(sizeof(double) * (size_t)nq), *qd = malloc(sizeof(double) * (size_t)nq), worst = 0;
    CHECK(d && q && qd, "%s: check: %s", label, d ? "out of memory" : err.msg);
    mbs_rng rng;
    mbs_rng_seed(&rng, seed);
    for (int s = 0; d && q && qd && s < samples; s++) {
        for (int k = 0; k < nq; k++) {
            q[k] = mbs_rng_uniform(&rng, -1, 1);
            qd[k] = mbs_rng_uniform(&rng, -1, 1);
        }
        mbs_normalize_state(m, q, qd);
        mbs_check_report rep;
        int rc = mbs_check_derivatives(m, 1, seed + (unsigned long)s, MBS_REF_COM, q, qd, &rep, &err);
        CHECK(rc == MBS_OK, "%s: check: %s", label, err.msg);
        if (rc != MBS_OK) break;
        const double ro_id = MBS_ROUNDOFF(mbs_model_nbodies(m)), ro_fd = mbs_test_roundoff_fd(m, d, q);
        for (int b = 0; b < MBS_CHECK_NBLOCKS; b++) {
            /* inverse dynamics blocks: the recursions; the others solve with M */
            const double bound = b <= MBS_CHECK_DTAU_DRHO ? ro_id : ro_fd;
            CHECK(rep.worst[b] <= bound, "%s: %s: %g (round-off bound %g)", label, mbs_check_block_name(b),
                  rep.worst[b], bound);
            worst = fmax(worst, rep.worst[b] / bound);
        }
    }
    free(q);
    free(qd);
    mbs_data_free(d);
    return worst;
}

/* mbs_model_to_json, reloaded: the same model (mbs_test_same_model), the
 * same text when written again, and bit for bit the same ID, M and FD at
 * random states. Returns the worst relative difference of those. */
double mbs_test_json_round_trip(const mbs_model *m, const char *label, unsigned long seed)
{
    mbs_error err = { 0, "" };
    char *json = mbs_model_to_json(m, &err);
    CHECK(json != NULL, "%s: to_json: %s", label, err.msg);
    if (!json) return INFINITY;
    mbs_model *m2 = mbs_model_load_string(json, label, &err);
    CHECK(m2 != NULL, "%s: reloading the JSON: %s", label, err.msg);
    if (!m2) {
        free(json);
        return INFINITY;
    }
    char *json2 = mbs_model_to_json(m2, &err);
    CHECK(json2 && strcmp(json, json2) == 0, "%s: the reloaded model is written differently", label);
    free(json);
    free(json2);
    /* q, qd, qdd drawn nq long (the draws of a model with nv = nq); the
     * velocity-sized results compared nv long */
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m);
    if (mbs_test_same_model(m, m2, label) != 0) {
        mbs_model_free(m2);
        return INFINITY;
    }
    double worst = 0;
    if (mbs_model_nq(m2) == nq) {
        mbs_data *d1 = mbs_data_create(m, &err), *d2 = mbs_data_create(m2, &err);
        size_t n = (size_t)nq;
        double *q = malloc(n * sizeof *q), *qd = malloc(n * sizeof *qd), *qdd = malloc(n * sizeof *qdd);
        double *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
        mbs_rng rng;
        mbs_rng_seed(&rng, seed);
        for (int s = 0; s < 3; s++) {
            for (int k = 0; k < nq; k++) {
                q[k] = mbs_rng_uniform(&rng, -2, 2);
                qd[k] = mbs_rng_uniform(&rng, -2, 2);
                qdd[k] = mbs_rng_uniform(&rng, -2, 2);
            }
            mbs_normalize_state(m, q, qd);
            double e;
            mbs_inverse_dynamics(m, d1, q, qd, qdd, a);
            mbs_inverse_dynamics(m2, d2, q, qd, qdd, b);
            e = mbs_rel_err(b, a, nv);
            CHECK(memcmp(a, b, (size_t)nv * sizeof *a) == 0, "%s: ID differs by %g after the round trip", label, e);
            if (e > worst) worst = e;
            mbs_mass_matrix(m, d1, q, a);
            mbs_mass_matrix(m2, d2, q, b);
            e = mbs_rel_err(b, a, nv * nv);
            CHECK(memcmp(a, b, (size_t)nv * nv * sizeof *a) == 0, "%s: M differs by %g after the round trip", label,
                  e);
            if (e > worst) worst = e;
            int r1 = mbs_forward_dynamics(m, d1, MBS_FD_RECURSIVE, q, qd, qdd, a);
            int r2 = mbs_forward_dynamics(m2, d2, MBS_FD_RECURSIVE, q, qd, qdd, b);
            CHECK(r1 == MBS_OK && r2 == MBS_OK, "%s: FD failed", label);
            e = mbs_rel_err(b, a, nv);
            CHECK(memcmp(a, b, (size_t)nv * sizeof *a) == 0, "%s: FD differs by %g after the round trip", label, e);
            if (e > worst) worst = e;
        }
        free(q); free(qd); free(qdd); free(a); free(b);
        mbs_data_free(d1);
        mbs_data_free(d2);
    }
    mbs_model_free(m2);
    return worst;
}


static int traj_record(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                       const double *qdd)
{
    (void)m; (void)d;
    mbs_test_traj *r = user;
    if (r->n == r->cap) {
        const int cap = r->cap ? 2 * r->cap : 1024;
        const size_t rows = (size_t)cap * (size_t)r->nq;
        double *tt = realloc(r->t, sizeof(double) * (size_t)cap);
        if (tt) r->t = tt;
        double **v[3] = { &r->q, &r->qd, &r->qdd };
        int ok = tt != NULL;
        for (int k = 0; k < 3; k++) {
            double *p = realloc(*v[k], sizeof(double) * rows);
            if (p) *v[k] = p;
            else ok = 0;
        }
        if (!ok) return MBS_ERR_NOMEM;
        r->cap = cap;
    }
    const size_t o = (size_t)r->n * (size_t)r->nq, len = sizeof(double) * (size_t)r->nq;
    r->t[r->n] = t;
    memcpy(r->q + o, q, len);
    memcpy(r->qd + o, qd, len);
    memcpy(r->qdd + o, qdd, len);
    r->n++;
    return 0;
}

int mbs_test_traj_run(const mbs_model *m, const mbs_sim_options *o, const double *q0, const double *qd0,
                      mbs_test_traj *tr)
{
    mbs_error err = { 0, "" };
    memset(tr, 0, sizeof *tr);
    tr->nq = mbs_model_nq(m);
    mbs_data *d = mbs_data_create(m, &err);
    const int rc = d ? mbs_simulate(m, d, o, q0, qd0, traj_record, tr, NULL, &err) : MBS_ERR_NOMEM;
    CHECK(rc == MBS_OK, "%s: simulation: %s", mbs_model_name(m), err.msg);
    mbs_data_free(d);
    return rc;
}

void mbs_test_traj_free(mbs_test_traj *tr)
{
    free(tr->t);
    free(tr->q);
    free(tr->qd);
    free(tr->qdd);
    memset(tr, 0, sizeof *tr);
}

void mbs_test_traj_diff(const mbs_test_traj *a, const mbs_test_traj *b, double d[3])
{
    d[0] = d[1] = d[2] = 0;
    if (a->n != b->n || a->nq != b->nq) { d[0] = d[1] = d[2] = INFINITY; return; }
    const double *x[3] = { a->q, a->qd, a->qdd }, *y[3] = { b->q, b->qd, b->qdd };
    for (int c = 0; c < 3; c++)
        for (size_t k = 0; k < (size_t)a->n * (size_t)a->nq; k++) {
            const double e = fabs(x[c][k] - y[c][k]);
            if (!(e <= d[c])) d[c] = e;
        }
}

/* the largest per-step difference of a and b (as a velocity) over 4 steps
 * from every stride-th state of tr */
static double step_spread(const mbs_model *m, const mbs_sim_options *a, const mbs_sim_options *b,
                          const mbs_test_traj *tr, int stride)
{
    const int nq = tr->nq, window = 4;
    mbs_error err = { 0, "" };
    mbs_data *da = mbs_data_create(m, &err), *db = mbs_data_create(m, &err);
    mbs_integrator *ia = da ? mbs_integrator_create(m, da, a, &err) : NULL;
    mbs_integrator *ib = db ? mbs_integrator_create(m, db, b, &err) : NULL;
    CHECK(ia && ib, "%s: integrators: %s", mbs_model_name(m), err.msg);
    double e = ia && ib ? 0 : INFINITY;
    for (int k = 0; ia && ib && k + window < tr->n; k += stride) {
        const double *q = tr->q + (size_t)k * nq, *qd = tr->qd + (size_t)k * nq;
        int rc = mbs_integrator_reset(ia, tr->t[k], q, qd, &err);
        if (!rc) rc = mbs_integrator_reset(ib, tr->t[k], q, qd, &err);
        for (int j = 1; j <= window && !rc; j++) {
            const double h = tr->t[k + j] - tr->t[k + j - 1];
            rc = mbs_integrator_step(ia, h, &err);
            if (!rc) rc = mbs_integrator_step(ib, h, &err);
            const double *qa = mbs_integrator_q(ia), *qb = mbs_integrator_q(ib);
            const double *va = mbs_integrator_qd(ia), *vb = mbs_integrator_qd(ib);
            for (int i = 0; i < nq && !rc; i++) {
                const double ei = fmax(fabs(qa[i] - qb[i]) / h, fabs(va[i] - vb[i])) / j;
                if (!(ei <= e)) e = ei;
            }
        }
        CHECK(rc == MBS_OK, "%s: steps from t = %g: %s", mbs_model_name(m), tr->t[k], err.msg);
        if (rc) { e = INFINITY; break; }
    }
    mbs_integrator_free(ia);
    mbs_integrator_free(ib);
    mbs_data_free(da);
    mbs_data_free(db);
    return e;
}

/* the effect of the solver tolerance on a run of o: max |x(tol) - x(tol / 100)| (0 without a
 * tolerance: RK4, index-1 outside the trapezoidal rule) */
static int tolerance_effect(const mbs_model *m, const mbs_sim_options *o, const double *q0, const double *qd0,
                            double d[3])
{
    d[0] = d[1] = d[2] = 0;
    if (o->integrator != MBS_INTEGRATOR_TRAPEZOIDAL) return 0;
    mbs_sim_options o10 = *o;
    o10.tolerance = o->tolerance / 100;
    mbs_test_traj a, b;
    memset(&b, 0, sizeof b);
    int rc = mbs_test_traj_run(m, o, q0, qd0, &a);
    if (!rc) rc = mbs_test_traj_run(m, &o10, q0, qd0, &b);
    if (!rc) mbs_test_traj_diff(&a, &b, d);
    mbs_test_traj_free(&a);
    mbs_test_traj_free(&b);
    return rc ? -1 : 0;
}

int mbs_test_run_spread(const mbs_model *m, const mbs_sim_options *a, const mbs_sim_options *b, const double *q0,
                        const double *qd0, double bound[3])
{
    bound[0] = bound[1] = bound[2] = INFINITY;
    mbs_test_traj ra, rp;
    if (mbs_test_traj_run(m, a, q0, qd0, &ra) != MBS_OK || ra.n < 2) { mbs_test_traj_free(&ra); return -1; }
    const int nq = ra.nq;
    /* G: a velocity perturbation of the consistent initial state */
    double *v = malloc(sizeof(double) * (size_t)(nq + 1)), vmax = 1, qdmax = 0;
    for (int i = 0; i < nq; i++) vmax = fmax(vmax, fabs(ra.qd[i]));
    for (int i = 0; i < nq; i++) v[i] = ra.qd[i] + 1e-7 * vmax;
    int rc = mbs_test_traj_run(m, a, ra.q, v, &rp);
    free(v);
    if (rc != MBS_OK || rp.n != ra.n) { mbs_test_traj_free(&ra); mbs_test_traj_free(&rp); return -1; }
    double dv0 = 0, g[3], ta[3], tb[3];
    for (int i = 0; i < nq; i++) dv0 = fmax(dv0, fabs(rp.qd[i] - ra.qd[i]));
    CHECK(dv0 > 0, "%s: the velocity perturbation vanished", mbs_model_name(m));
    mbs_test_traj_diff(&ra, &rp, g);
    for (size_t k = 0; k < (size_t)ra.n * (size_t)nq; k++) qdmax = fmax(qdmax, fabs(ra.qd[k]));
    /* e: per-step differences from ~60 states of the run */
    const int stride = ra.n / 60 > 1 ? ra.n / 60 : 1;
    const double e = fmax(step_spread(m, a, b, &ra, stride), MBS_EPS * qdmax);
    const double steps = (double)(ra.n - 1);
    /* the solver tolerances: each run is off the exact discrete solution by about
     * |x(tol) - x(tol/100)|, taken with a margin of 1.2 */
    rc = tolerance_effect(m, a, ra.q, ra.qd, ta);
    if (!rc) rc = tolerance_effect(m, b, ra.q, ra.qd, tb);
    for (int c = 0; c < 3 && !rc; c++)
        bound[c] = dv0 > 0 ? 1.2 * (ta[c] + tb[c]) + steps * (g[c] / dv0) * e : INFINITY;
    mbs_test_traj_free(&ra);
    mbs_test_traj_free(&rp);
    return rc ? -1 : 0;
}

int mbs_test_order_error(const mbs_model *m, const mbs_sim_options *o, int p, const double *q0, const double *qd0,
                         double err[3])
{
    err[0] = err[1] = err[2] = INFINITY;
    mbs_test_traj r[3];
    memset(r, 0, sizeof r);
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        mbs_sim_options ok = *o;
        ok.dt = o->dt / (1 << k);
        rc = mbs_test_traj_run(m, &ok, q0, qd0, &r[k]);
    }
    /* the changes from h to h/2 and from h/2 to h/4, at the outputs of the run at h */
    double ch[2][3] = { { 0, 0, 0 }, { 0, 0, 0 } };
    for (int k = 0; k < 2 && !rc; k++) {
        const mbs_test_traj *a = &r[k], *b = &r[k + 1];
        CHECK(2 * (a->n - 1) == b->n - 1, "%s: %d and %d outputs at h and h/2", mbs_model_name(m), a->n, b->n);
        const double *x[3] = { a->q, a->qd, a->qdd }, *y[3] = { b->q, b->qd, b->qdd };
        for (int c = 0; c < 3; c++)
            for (int j = 0; j < r[0].n; j++)
                for (int i = 0; i < a->nq; i++) {
                    const size_t ia = (size_t)(j << k) * a->nq + i, ib = (size_t)(j << (k + 1)) * b->nq + i;
                    const double d = ia < (size_t)a->n * a->nq && ib < (size_t)b->n * b->nq ? fabs(x[c][ia] - y[c][ib])
                                                                                          : INFINITY;
                    if (!(d <= ch[k][c])) ch[k][c] = d;
                }
    }
    if (!rc) {
        /* the changes shrink by r, tending to 2^p: the error at h, the sum of all further changes, is
         * r' / (r' - 1) times the first for a constant ratio r' = min(r, 2^p); 1.25 for the terms of
         * the next order, which make the ratio vary */
        const double r = ch[1][0] > 0 ? ch[0][0] / ch[1][0] : INFINITY, rmin = p >= 4 ? 8 : 2;
        const double rr = fmin(r, p >= 4 ? 16 : 4), f = 1.25 * (r > rmin ? rr / (rr - 1) : rmin / (rmin - 1));
        for (int c = 0; c < 3; c++) err[c] = ch[0][c] * f;
        CHECK(r > rmin || ch[0][0] <= 1e3 * MBS_EPS, "%s: changes %g (h -> h/2), %g (h/2 -> h/4): not order %d",
              mbs_model_name(m), ch[0][0], ch[1][0], p);
    }
    for (int k = 0; k < 3; k++) mbs_test_traj_free(&r[k]);
    return rc ? -1 : 0;
}

/* the reference run for the Newton tolerance's effect on a gradient r computed with options o
 * (trapezoidal rule): the iteration stops at a smooth function of the parameters where its counts do
 * not change, and that stopping error biases the gradient. A run at a tighter tolerance shows it only
 * in the steps where it iterates more: at tolerance / 100 a step that converges fast (the last
 * correction far below the tolerance) takes the same iterations and the same state. So the reference
 * is the run at tolerance / 100, / 1e3, / 1e4 in turn, until it takes at least one iteration more per
 * step than r (iterations >= r's + steps; a step never iterates less at a tighter tolerance) or the
 * next one does not converge; / 10, or 10 times the tolerance, where not even / 100 converges. With
 * one iteration more in every step the reference's stopping error is the iteration's contraction c
 * times r's: |g - g*| <= |g - g'| / (1 - c), 1.2 |g - g'| for c <= 1/6. t gets the run (o's method),
 * *factor its tolerance over o's; returns 0 or -1 (CHECK failed) */
static int tolerance_reference(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *r,
                               mbs_sens_result *t, double *factor)
{
    const double tf[5] = { 1e-2, 1e-3, 1e-4, 1e-1, 10 };
    mbs_sens_options os = *o;
    mbs_sens_result u;
    mbs_error e = { 0, "" };
    int rc = -1;
    for (int k = 0; k < 5 && !(k == 3 && rc == 0); k++) {
        os.sim.tolerance = o->sim.tolerance * tf[k];
        if (mbs_sensitivity(m, &os, &u, &e) != MBS_OK) {
            if (k < 3) k = rc == 0 ? 4 : 2;   /* the last tighter run stands, else / 10 and 10x */
            continue;
        }
        if (rc == 0) mbs_sens_result_free(t);
        *t = u;
        *factor = tf[k];
        rc = 0;
        if (k >= 3 || t->stats.iterations >= r->stats.iterations + r->stats.steps) break;
    }
    CHECK(rc == MBS_OK, "%s: %s at another tolerance: %s", mbs_model_name(m), mbs_sens_method_name(o->method),
          e.msg);
    return rc ? -1 : 0;
}

int mbs_test_sens_tolerance_effect(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *r,
                                   double *err)
{
    if (o->sim.integrator != MBS_INTEGRATOR_TRAPEZOIDAL) return 0;
    const int n = r->nobj * r->nparam;
    mbs_sens_result t;
    double f;
    if (tolerance_reference(m, o, r, &t, &f)) {
        for (int k = 0; k < n; k++) err[k] = INFINITY;
        return -1;
    }
    for (int k = 0; k < n; k++) err[k] += 1.2 * fabs(r->grad[k] - t.grad[k]);
    mbs_sens_result_free(&t);
    return 0;
}

/* the round-off noise of a gradient computed with options o: nine runs whose parameters differ by
 * k 1e-12 relative (k = 0 .. 8) change each entry smoothly, linearly in k to far below round-off,
 * and otherwise only by how they round; range[i] = max - min over the nine runs of entry i less a
 * least-squares line in k. Returns 0 or -1 (a run failed: range INFINITY). */
static int grad_run_noise(const mbs_model *m, const mbs_sens_options *o, int n, double *range)
{
    enum { RUNS = 9 };
    const int np = mbs_model_nparams(m);
    double *vals = malloc(sizeof(double) * (size_t)(np + 1)), *g = malloc(sizeof(double) * (size_t)(RUNS * n + 1));
    int rc = vals && g ? 0 : -1;
    for (int k = 0; k < RUNS && !rc; k++) {
        for (int j = 0; j < np; j++) vals[j] = mbs_param_value(m, j) * (1 + k * 1e-12);
        mbs_error e = { 0, "" };
        mbs_model *mp = mbs_model_with_params(m, vals, &e);
        mbs_sens_result r;
        rc = mp ? mbs_sensitivity(mp, o, &r, &e) : -1;
        CHECK(rc == MBS_OK, "%s: a gradient at parameters 1 + %d e-12 times: %s", mbs_model_name(m), k, e.msg);
        if (!rc) {
            if (r.nobj * r.nparam == n) memcpy(g + (size_t)k * n, r.grad, sizeof(double) * (size_t)n);
            else rc = -1;
            mbs_sens_result_free(&r);
        }
        mbs_model_free(mp);
    }
    /* the line a + b (k - 4) through the nine values (k - 4 sums to 0, its squares to 60) */
    for (int i = 0; i < n; i++) {
        double a = 0, b = 0, lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < RUNS && !rc; k++) {
            a += g[(size_t)k * n + i] / RUNS;
            b += (k - 4) * g[(size_t)k * n + i] / 60;
        }
        for (int k = 0; k < RUNS && !rc; k++) {
            const double x = g[(size_t)k * n + i] - a - b * (k - 4);
            lo = fmin(lo, x);
            hi = fmax(hi, x);
        }
        range[i] = rc ? INFINITY : hi - lo;
    }
    free(vals);
    free(g);
    return rc ? -1 : 0;
}

/* the round-off noise of psi itself: runs whose parameters differ by k 1e-12 relative (k = 0 .. 8)
 * change psi smoothly by sum_j g_ij drho_j (g = fd->grad: its error times 1e-12 is far below the
 * noise) and otherwise only by how they round; range[i] = max - min over the nine runs of psi_i
 * less that smooth change. Returns 0 or -1 (a run failed). */
static int fd_run_noise(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *fd, double *range)
{
    const int np = fd->nparam, nobj = fd->nobj, runs = 9;
    double *vals = malloc(sizeof(double) * (size_t)(np + 1)), *lo = malloc(sizeof(double) * (size_t)(2 * nobj + 1));
    if (!vals || !lo) {
        free(vals);
        free(lo);
        return -1;
    }
    double *hi = lo + nobj;
    for (int i = 0; i < nobj; i++) {
        lo[i] = INFINITY;
        hi[i] = -INFINITY;
    }
    int rc = 0;
    for (int k = 0; k < runs && !rc; k++) {
        for (int j = 0; j < np; j++) vals[j] = mbs_param_value(m, j) * (1 + k * 1e-12);
        mbs_error e = { 0, "" };
        mbs_model *mp = mbs_model_with_params(m, vals, &e);
        mbs_sens_options os = *o;
        os.method = MBS_SENS_DDM;
        mbs_sens_result r;
        rc = mp ? mbs_sensitivity(mp, &os, &r, &e) : -1;
        CHECK(rc == MBS_OK, "%s: a run at parameters 1 + %d e-12 times: %s", mbs_model_name(m), k, e.msg);
        for (int i = 0; i < nobj && !rc; i++) {
            double x = r.psi[i];
            for (int j = 0; j < np; j++) x -= fd->grad[i * np + j] * (vals[j] - mbs_param_value(m, j));
            lo[i] = fmin(lo[i], x);
            hi[i] = fmax(hi[i], x);
        }
        if (!rc) mbs_sens_result_free(&r);
        mbs_model_free(mp);
    }
    for (int i = 0; i < nobj; i++) range[i] = hi[i] - lo[i];
    free(vals);
    free(lo);
    return rc ? -1 : 0;
}

int mbs_test_fd_error(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *fd, double *err)
{
    const int n = fd->nobj * fd->nparam;
    for (int k = 0; k < n; k++) err[k] = 0;
    int rc = 0;
    for (int s = 0; s < 2 && !rc; s++) {
        mbs_sens_options os = *o;
        os.method = MBS_SENS_FD;
        os.fd_step = s == 0 ? o->fd_step / 2 : 2 * o->fd_step;
        mbs_sens_result r;
        mbs_error e = { 0, "" };
        rc = mbs_sensitivity(m, &os, &r, &e);
        CHECK(rc == MBS_OK, "%s: fd with step %g: %s", mbs_model_name(m), os.fd_step, e.msg);
        if (rc) break;
        for (int k = 0; k < n; k++) err[k] = fmax(err[k], 2 * fabs(fd->grad[k] - r.grad[k]));
        mbs_sens_result_free(&r);
    }
    if (!rc) {
        mbs_sens_options os = *o;
        os.method = MBS_SENS_FD;
        rc = mbs_test_sens_tolerance_effect(m, &os, fd, err);
    }
    /* the round-off of psi, which no step size's difference need show (nearby runs round alike):
     * every step rounds psi and the state it integrates, at eps relative, over the difference
     * step 2 h max(1, |rho_j|), twice */
    const double steps = (double)(fd->stats.steps > 0 ? fd->stats.steps : 1);
    double *range = calloc((size_t)fd->nobj + 1, sizeof *range);
    if (!rc) rc = range ? fd_run_noise(m, o, fd, range) : -1;
    /* the noise: the difference's two runs are two more draws of it, (n+ - n-) / (2 h_j); with
     * |n+ - n-| <= 2 range (for normal noise the range of nine draws is about 3 sigma, so a
     * difference of sd sqrt(2) sigma stays inside 6 sigma, 4.2 sd, but for a fraction 2e-5): range / h_j */
    for (int i = 0; i < fd->nobj && !rc; i++)
        for (int j = 0; j < fd->nparam; j++) {
            const double hj = o->fd_step * fmax(1, fabs(mbs_param_value(m, j)));
            err[i * fd->nparam + j] += 2 * steps * MBS_EPS * fabs(fd->psi[i]) / hj + range[i] / hj;
        }
    free(range);
    if (rc)
        for (int k = 0; k < n; k++) err[k] = INFINITY;
    return rc ? -1 : 0;
}

double mbs_test_sens_roundoff(const mbs_model *m, const mbs_sens_result *r)
{
    const double steps = (double)(r->stats.steps > 0 ? r->stats.steps : 1);
    return steps * MBS_ROUNDOFF(mbs_model_nbodies(m));
}

double mbs_test_check_fd(const mbs_model *m, const mbs_sens_options *oe, const mbs_sens_result *exact,
                         const mbs_sens_options *o, const mbs_sens_result *fd, const char *label)
{
    const int n = fd->nobj * fd->nparam;
    double *err = calloc((size_t)n + 1, sizeof *err), worst = 0;
    mbs_test_fd_error(m, o, fd, err);
    mbs_test_sens_tolerance_effect(m, oe, exact, err);
    const double ro = mbs_test_sens_roundoff(m, exact);
    for (int i = 0; i < fd->nobj; i++) {
        double scale = 1;
        for (int j = 0; j < fd->nparam; j++) scale = fmax(scale, fabs(exact->grad[i * fd->nparam + j]));
        for (int j = 0; j < fd->nparam; j++) {
            const int k = i * fd->nparam + j;
            const double d = fabs(fd->grad[k] - exact->grad[k]), b = err[k] + ro * scale;
            worst = fmax(worst, d / b);
            CHECK(d <= b, "%s: fd vs exact, objective %d parameter %d: %.12g, %.12g (error estimate %.2e)", label, i, j,
                  fd->grad[k], exact->grad[k], b);
        }
    }
    free(err);
    return worst;
}

/* the gradients g[0..2] of options o at h, h/2, h/4 for mbs_test_sens_order_error: at the tolerance
 * of tolerance_reference (its run at h is g[0]; h/2 and h/4 at that tolerance, or / 100, / 10, the
 * tolerance itself where their iterations do not converge); *got runs to free. 0 or -1 */
static int order_runs(const mbs_model *m, const mbs_sens_options *o, const mbs_sens_result *r, mbs_sens_result *g,
                      int *got)
{
    const int trap = o->sim.integrator == MBS_INTEGRATOR_TRAPEZOIDAL;
    double f = 1;
    int rc = trap ? tolerance_reference(m, o, r, &g[0], &f) : 0;
    mbs_error e = { 0, "" };
    const double tf[4] = { f, 1e-2, 1e-1, 1 };
    for (int k = 0; k < 3 && !rc; k++) {
        mbs_sens_options ok = *o;
        ok.sim.dt = o->sim.dt / (1 << k);
        if (k > 0 || !trap) {
            rc = -1;
            for (int t = 0; t < (trap ? 4 : 1) && rc; t++) {
                if (t > 0 && tf[t] <= f) continue;
                ok.sim.tolerance = o->sim.tolerance * tf[t];
                rc = mbs_sensitivity(m, &ok, &g[k], &e);
            }
        }
        CHECK(rc == MBS_OK, "%s: gradient at step %g: %s", mbs_model_name(m), ok.sim.dt, e.msg);
        if (!rc) *got = k + 1;
    }
    return rc ? -1 : 0;
}

int mbs_test_sens_order_error(const mbs_model *m, const mbs_sens_options *o, int p, const mbs_sens_result *r,
                              double *err)
{
    const int n = r->nobj * r->nparam;
    mbs_sens_result g[3];
    int got = 0;
    int rc = order_runs(m, o, r, g, &got);
    double *noise = calloc((size_t)n + 1, sizeof *noise);
    if (!rc) rc = noise ? grad_run_noise(m, o, n, noise) : -1;
    double c0 = 0, c1 = 0, scale = 1;
    for (int k = 0; k < n && !rc; k++) {
        c0 = fmax(c0, fabs(g[0].grad[k] - g[1].grad[k]));
        c1 = fmax(c1, fabs(g[1].grad[k] - g[2].grad[k]));
        scale = fmax(scale, fabs(r->grad[k]));
    }
    const double ratio = c1 > 0 ? c0 / c1 : INFINITY, rmin = p >= 4 ? 8 : 2, top = p >= 4 ? 16 : 4;
    const double rr = fmin(ratio, top), f = 1.25 * (ratio > rmin ? rr / (rr - 1) : rmin / (rmin - 1));
    if (!rc)
        CHECK(ratio > rmin || c0 <= mbs_test_sens_roundoff(m, r) * scale, "%s: gradient changes %g, %g: not "
              "order %d", mbs_model_name(m), c0, c1, p);
    /* each of r, g(h), g(h/2) is off its smooth value by at most the noise range R (nine draws span
     * about 3 sigma; R is measured at r's tolerance, about the same at / 100: 1.1e-5 at both on the
     * noisiest row seen, random loop 135): the discretization error f |D(h) - D(h/2)| <= f (|g(h) - g(h/2)| + 2R), the
     * tolerance's effect 1.2 (|r - g(h)| + 2R), and r's own noise R */
    for (int k = 0; k < n; k++)
        err[k] = rc ? INFINITY
                    : f * (fabs(g[0].grad[k] - g[1].grad[k]) + 2 * noise[k]) +
                          1.2 * (fabs(r->grad[k] - g[0].grad[k]) + 2 * noise[k]) + noise[k];
    free(noise);
    for (int k = 0; k < got; k++) mbs_sens_result_free(&g[k]);
    return rc ? -1 : 0;
}

void mbs_test_eig_range(const double *M, int n, double *lmin, double *lmax)
{
    *lmin = *lmax = 0;
    if (n <= 0) return;
    double *A = malloc(sizeof(double) * (size_t)n * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
    if (A && w) {
        memcpy(A, M, sizeof(double) * (size_t)n * (size_t)n);
        if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', n, A, n, w) == 0) {
            *lmin = w[0];
            *lmax = w[n - 1];
        }
    }
    free(A);
    free(w);
}

double mbs_test_cond_spd(const double *M, int n)
{
    if (n <= 0) return 1;
    double lmin, lmax;
    mbs_test_eig_range(M, n, &lmin, &lmax);
    return lmin > 0 ? lmax / lmin : INFINITY;
}

int mbs_test_add_objectives(mbs_model *m, const char *json, const char *label)
{
    json_error_t je;
    json_t *arr = json_loads(json, 0, &je);
    CHECK(arr != NULL, "%s: objectives JSON: %s", label, je.text);
    if (!arr) return MBS_ERR_ARG;
    mbs_error err;
    memset(&err, 0, sizeof err);
    const int rc = mbs_json_load_objectives(arr, label, m, &err);
    json_decref(arr);
    CHECK(rc == MBS_OK, "%s: objectives: %s", label, err.msg);
    return rc;
}
