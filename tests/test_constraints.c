/*
 * test_constraints.c - loop-closure and driving constraints.
 *
 * On random closed-loop models (random trees, cut joints of every type
 * between random bodies, placed so that the loops close at a random
 * configuration, plus a coordinate and a distance driver):
 *   - Phi = 0 at the construction configuration;
 *   - Phi_q against complex-step derivatives of Phi (the kernels compiled
 *     with a complex scalar), column by column and along tangent directions
 *     of the Euler parameters;
 *   - dPhi/dt = Phi_q qd + Phi_t against the complex-step derivative of Phi
 *     along the motion, b = -Phi_t against the derivative in t;
 *   - c against the complex-step derivative of dPhi/dt along the motion:
 *     d2Phi/dt2 = Phi_q qdd - c;
 *   - the same results for the three reference points.
 * Topology: the cut priority (spherical first, then more coordinates, ties:
 * the later joint), user cuts, loop bodies, row names, the slider-crank
 * counts of thesis Table 7.8; and loader errors with their JSON paths.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "mbs_testing.h"

#define NMODELS 150
static const double H = 1e-30;
/* identities: round-off of the random models (2 .. 8 bodies) */
static const double TOL = MBS_ROUNDOFF(8);

/* Phi and dPhi/dt in complex arithmetic at (q + iH dq, qd + iH dqd, t + iH dt). */
typedef struct {
    const mbs_model *m;
    mbs_ws_cs w;
    mreal *x, *q, *qd, *phi, *phid;
} cs_ctx;

static void cs_eval(cs_ctx *c, const double *q, const double *dq, const double *qd, const double *dqd, double t,
                    double dt)
{
    const int nq = c->m->nq;
    for (int k = 0; k < nq; k++) {
        c->q[k] = q[k] + I * H * (dq ? dq[k] : 0);
        c->qd[k] = (qd ? qd[k] : 0) + I * H * (dqd ? dqd[k] : 0);
    }
    mbs_kin_forward_cs(c->m, c->x, &c->w, c->q, c->qd, NULL, 1);
    mbs_con_kernel_cs(c->m, c->x, &c->w, c->q, c->qd, NULL, t + I * H * dt, c->phi, NULL, c->phid, NULL, NULL,
                      NULL);
}

static double worst[8];
static const char *wname[8] = { "Phi(qc)", "Phi_q cols", "Phi_q tangent", "Phid", "b", "c", "ref", "phid=Jqd-Phit" };
static void rec(int k, double e) { if (e > worst[k] || isnan(e)) worst[k] = isnan(e) ? INFINITY : e; }

static void random_models(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2024);
    int seen[MBS_JOINT_TYPE_COUNT] = { 0 }, ndrv = 0;
    for (int it = 0; it < NMODELS; it++) {
        int nb = 2 + mbs_rng_int(&rng, 7), ncut = 1 + mbs_rng_int(&rng, 3), types[3];
        for (int k = 0; k < ncut; k++) types[k] = (it * 3 + k) % MBS_JOINT_TYPE_COUNT;
        double *qc = NULL;
        mbs_model *m = mbs_test_random_loops(&rng, nb, ncut, types, it % 2, &qc);
        CHECK(m != NULL, "random loop model %d", it);
        if (!m) continue;
        for (int k = 0; k < ncut; k++) seen[types[k]]++;
        ndrv += m->con.ndriver;
        const int nq = m->nq, n = mbs_model_nconstraints(m);
        CHECK(n == m->con.nloop_rows + m->con.ndriver + m->n_euler, "row count");
        CHECK(mbs_model_ncuts(m) == ncut, "cuts %d != %d", mbs_model_ncuts(m), ncut);
        size_t n1 = (size_t)n + 1, q1 = (size_t)nq + 1;
        double *phi = calloc(n1, 8), *J = calloc(n1 * q1, 8), *phid = calloc(n1, 8), *b = calloc(n1, 8);
        double *c = calloc(n1, 8), *ref = calloc(n1 * (q1 + 4), 8), *tmp = calloc(n1, 8);
        double *q = calloc(q1, 8), *qd = calloc(q1, 8), *qdd = calloc(q1, 8), *e = calloc(q1, 8);
        mbs_data *d = mbs_data_create(m, NULL);

        /* closed at the construction configuration (t = 0: drivers too) */
        CHECK(mbs_constraints(m, d, qc, 0, phi) == MBS_OK, "%s", mbs_data_error(d));
        for (int r = 0; r < n; r++) rec(0, fabs(phi[r]));

        cs_ctx cx;
        cx.m = m;
        CHECK(mbs_ws_init_cs(&cx.w, m) == 0, "ws");
        cx.x = calloc((size_t)m->nx, sizeof(mreal));
        for (int k = 0; k < m->nx; k++) cx.x[k] = m->x[k];
        cx.q = calloc(q1, sizeof(mreal));
        cx.qd = calloc(q1, sizeof(mreal));
        cx.phi = calloc(n1, sizeof(mreal));
        cx.phid = calloc(n1, sizeof(mreal));

        for (int trial = 0; trial < 2; trial++) {
            mbs_test_random_state(&rng, m, q, qd, qdd);
            if (trial == 0) {
                /* at the closed configuration, with qd, qdd made tangent to |p| = 1 there */
                memcpy(q, qc, (size_t)nq * 8);
                for (int i = 1; i <= m->nb; i++) {
                    const mbs_joint_info *ji = &m->joint[i];
                    if (ji->euler < 0) continue;
                    double *p = q + ji->qoff + ji->euler, *pd = qd + ji->qoff + ji->euler;
                    double *pdd = qdd + ji->qoff + ji->euler, s1 = 0, s2 = 0, s3 = 0;
                    for (int k = 0; k < 4; k++) s1 += p[k] * pd[k];
                    for (int k = 0; k < 4; k++) pd[k] -= s1 * p[k];
                    for (int k = 0; k < 4; k++) { s2 += p[k] * pdd[k]; s3 += pd[k] * pd[k]; }
                    for (int k = 0; k < 4; k++) pdd[k] -= (s2 + s3) * p[k];
                }
            }
            double t = mbs_rng_uniform(&rng, 0, 1);
            for (int rp = MBS_REF_COM; rp <= MBS_REF_JOINT; rp++) {
                mbs_data_set_ref(d, (mbs_ref_point)rp);
                cx.w.ref = (mbs_ref_point)rp;
                CHECK(mbs_constraint_eval(m, d, q, qd, t, phi, J, phid, b, c) == MBS_OK, "%s", mbs_data_error(d));
                if (rp == MBS_REF_COM) {
                    memcpy(ref, phi, (size_t)n * 8);
                    memcpy(ref + n, phid, (size_t)n * 8);
                    memcpy(ref + 2 * n, c, (size_t)n * 8);
                    memcpy(ref + 3 * n, b, (size_t)n * 8);
                    memcpy(ref + 4 * n, J, (size_t)n * nq * 8);
                } else {
                    rec(6, mbs_rel_err(phi, ref, n));
                    rec(6, mbs_rel_err(phid, ref + n, n));
                    rec(6, mbs_rel_err(c, ref + 2 * n, n));
                    rec(6, mbs_rel_err(b, ref + 3 * n, n));
                    rec(6, mbs_rel_err(J, ref + 4 * n, n * nq));
                }
                /* columns of non-Euler coordinates: unit directions */
                for (int k = 0; k < nq; k++) {
                    int eul = 0;
                    for (int i = 1; i <= m->nb; i++) {
                        const mbs_joint_info *ji = &m->joint[i];
                        if (ji->euler >= 0 && k >= ji->qoff + ji->euler && k < ji->qoff + ji->euler + 4) eul = 1;
                    }
                    if (eul) continue;
                    memset(e, 0, (size_t)nq * 8);
                    e[k] = 1;
                    cs_eval(&cx, q, e, NULL, NULL, t, 0);
                    for (int r = 0; r < n; r++) { tmp[r] = cimag(cx.phi[r]) / H; phi[r] = J[(size_t)r * nq + k]; }
                    rec(1, mbs_rel_err(phi, tmp, n));
                }
                /* along the motion (tangent to |p| = 1): Phi_q qd + Phi_t */
                cs_eval(&cx, q, qd, qd, qdd, t, 1);
                double *Jqd = calloc(n1, 8), *cs = calloc(n1, 8);
                for (int r = 0; r < n; r++) {
                    cs[r] = cimag(cx.phi[r]) / H;
                    for (int k = 0; k < nq; k++) Jqd[r] += J[(size_t)r * nq + k] * qd[k];
                }
                rec(3, mbs_rel_err(phid, cs, n));
                for (int r = 0; r < n; r++) tmp[r] = Jqd[r] - b[r];
                rec(7, mbs_rel_err(phid, tmp, n));
                for (int r = 0; r < n; r++) tmp[r] = Jqd[r];
                for (int r = 0; r < n; r++) cs[r] = cs[r] + b[r];   /* Phi_q qd by complex step */
                rec(2, mbs_rel_err(tmp, cs, n));
                /* d2Phi/dt2 = d/dt (dPhi/dt) = Phi_q qdd - c */
                for (int r = 0; r < n; r++) {
                    cs[r] = cimag(cx.phid[r]) / H;
                    tmp[r] = -c[r];
                    for (int k = 0; k < nq; k++) tmp[r] += J[(size_t)r * nq + k] * qdd[k];
                }
                rec(5, mbs_rel_err(tmp, cs, n));
                /* b = -Phi_t */
                cs_eval(&cx, q, NULL, NULL, NULL, t, 1);
                for (int r = 0; r < n; r++) { cs[r] = -cimag(cx.phi[r]) / H; }
                rec(4, mbs_rel_err(b, cs, n));
                free(Jqd);
                free(cs);
            }
        }
        mbs_ws_free_cs(&cx.w);
        free(cx.x); free(cx.q); free(cx.qd); free(cx.phi); free(cx.phid);
        mbs_data_free(d);
        free(phi); free(J); free(phid); free(b); free(c); free(ref); free(tmp);
        free(q); free(qd); free(qdd); free(e); free(qc);
        mbs_model_free(m);
    }
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++)
        CHECK(seen[t] >= 10, "cut type %s seen %d times", mbs_joint_type_name((mbs_joint_type)t), seen[t]);
    CHECK(ndrv >= NMODELS / 2, "drivers %d", ndrv);
    for (int k = 0; k < 8; k++) {
        printf("  worst relative error %-14s %.3g\n", wname[k], worst[k]);
        CHECK(worst[k] <= TOL, "%s: %g", wname[k], worst[k]);
    }
}

/* ---------------------------------------------------------------- topology */

static mbs_model *load(const char *json, mbs_error *err)
{
    /* single quotes for readability */
    char *s = malloc(strlen(json) + 1);
    for (size_t k = 0; (s[k] = json[k] == '\'' ? '"' : json[k]); k++) {}
    mbs_model *m = mbs_model_load_string(s, "t.json", err);
    free(s);
    return m;
}

#define BODY(n) "{ 'name': '" n "', 'mass': 1, 'inertia': [1, 1, 1, 0, 0, 0] }"
#define J(n, type, parent, child, extra) \
    "{ 'name': '" n "', 'type': '" type "', 'parent': '" parent "', 'child': '" child "'" extra " }"

static void topology(void)
{
    mbs_error err;
    /* four-bar, all revolute: the later joint of the loop is cut */
    mbs_model *m = load("{ 'bodies': [" BODY("a") "," BODY("b") "," BODY("c") "], 'joints': ["
                        J("j1", "revolute", "ground", "a", "") "," J("j2", "revolute", "a", "b", "") ","
                        J("j3", "revolute", "b", "c", "") "," J("j4", "revolute", "ground", "c", "") "] }", &err);
    CHECK(m != NULL, "four-bar: %s", err.msg);
    if (m) {
        CHECK(mbs_model_ncuts(m) == 1 && strcmp(mbs_cut_name(m, 0), "j4") == 0, "cut %s", mbs_cut_name(m, 0));
        CHECK(mbs_model_nq(m) == 3 && mbs_model_nconstraints(m) == 6, "sizes %d %d", mbs_model_nq(m),
              mbs_model_nconstraints(m));
        const int *lb;
        int nl = mbs_cut_loop(m, 0, &lb);
        char buf[256] = "";
        for (int i = 0; i < nl; i++) {
            strcat(buf, mbs_body_name(m, lb[i]));
            strcat(buf, " ");
        }
        CHECK(strcmp(buf, "ground a b c ") == 0, "loop: %s", buf);
        CHECK(strcmp(mbs_constraint_name(m, 0), "loop j4: point x") == 0, "%s", mbs_constraint_name(m, 0));
        CHECK(strcmp(mbs_constraint_name(m, 5), "loop j4: axis z") == 0, "%s", mbs_constraint_name(m, 5));
        CHECK(mbs_cut_user(m, 0) == 0 && mbs_cut_type(m, 0) == MBS_JOINT_REVOLUTE, "cut info");
        mbs_model_free(m);
    }
    /* the user's cut wins; a spherical joint is cut before a cardan, a cardan before a revolute */
    m = load("{ 'bodies': [" BODY("a") "," BODY("b") "," BODY("c") "], 'joints': ["
             J("j1", "revolute", "ground", "a", "") "," J("j2", "spherical", "a", "b", "") ","
             J("j3", "revolute", "b", "c", ", 'cut': true") "," J("j4", "revolute", "ground", "c", "") "] }", &err);
    CHECK(m && mbs_model_ncuts(m) == 1 && strcmp(mbs_cut_name(m, 0), "j3") == 0 && mbs_cut_user(m, 0) == 1,
          "user cut: %s", m ? mbs_cut_name(m, 0) : err.msg);
    CHECK(m && mbs_model_nconstraints(m) == 6 + 1 && mbs_model_neuler_constraints(m) == 1, "euler row");
    CHECK(m && strcmp(mbs_constraint_name(m, 6), "euler j2") == 0, "%s", m ? mbs_constraint_name(m, 6) : "");
    mbs_model_free(m);
    m = load("{ 'bodies': [" BODY("a") "," BODY("b") "," BODY("c") "], 'joints': ["
             J("j1", "revolute", "ground", "a", "") "," J("j2", "revolute", "a", "b", "") ","
             J("j3", "spherical", "b", "c", "") "," J("j4", "cardan", "ground", "c", "") "] }", &err);
    CHECK(m && strcmp(mbs_cut_name(m, 0), "j3") == 0, "spherical first: %s", m ? mbs_cut_name(m, 0) : err.msg);
    CHECK(m && mbs_model_nq(m) == 4 && mbs_model_nconstraints(m) == 3, "spherical cut sizes");
    mbs_model_free(m);
    m = load("{ 'bodies': [" BODY("a") "," BODY("b") "," BODY("c") "], 'joints': ["
             J("j1", "revolute", "ground", "a", "") "," J("j2", "revolute", "a", "b", "") ","
             J("j3", "cardan", "ground", "c", "") "," J("j4", "revolute", "b", "c", "") "] }", &err);
    CHECK(m && strcmp(mbs_cut_name(m, 0), "j3") == 0, "more coordinates first: %s",
          m ? mbs_cut_name(m, 0) : err.msg);
    CHECK(m && mbs_model_nq(m) == 3 && mbs_model_nconstraints(m) == 4, "cardan cut sizes");
    mbs_model_free(m);
    /* a joint whose child would lose its only connection is never cut, whatever its priority:
     * b is reached only through the spherical j2, so the loop is closed at c */
    m = load("{ 'bodies': [" BODY("a") "," BODY("b") "," BODY("c") "], 'joints': ["
             J("j1", "revolute", "ground", "a", "") "," J("j2", "spherical", "a", "b", "") ","
             J("j3", "revolute", "b", "c", "") "," J("j4", "cardan", "ground", "c", "") "] }", &err);
    CHECK(m && strcmp(mbs_cut_name(m, 0), "j4") == 0, "connectivity first: %s", m ? mbs_cut_name(m, 0) : err.msg);
    mbs_model_free(m);
    /* two independent loops sharing a body */
    m = load("{ 'bodies': [" BODY("a") "," BODY("b") "," BODY("c") "], 'joints': ["
             J("j1", "revolute", "ground", "a", "") "," J("j2", "revolute", "a", "b", "") ","
             J("j3", "revolute", "ground", "b", "") "," J("j4", "spherical", "b", "c", "") ","
             J("j5", "prismatic", "a", "c", "") "] }", &err);
    CHECK(m && mbs_model_ncuts(m) == 2, "two loops: %s", m ? "" : err.msg);
    CHECK(m && strcmp(mbs_cut_name(m, 0), "j3") == 0 && strcmp(mbs_cut_name(m, 1), "j4") == 0, "cuts %s %s",
          m ? mbs_cut_name(m, 0) : "", m ? mbs_cut_name(m, 1) : "");
    CHECK(m && mbs_model_nconstraints(m) == 6 + 3 && mbs_cut_row(m, 1) == 6, "rows");
    mbs_model_free(m);
}

/* Thesis Table 7.8: the spatial slider-crank opened at each of its joints
 * (crank: revolute jA to the ground, rod: spherical jB to the crank and
 * cardan jC to the slider, slider: prismatic jD to the ground). A joint can
 * be cut only if its child stays connected, so the variants write the
 * chain in the direction that keeps the tree. */
static void table_7_8(void)
{
#define SC_BODIES "{ 'bodies': [" BODY("crank") "," BODY("rod") "," BODY("slider") "], 'joints': ["
    static const struct { const char *json, *cut; int nq, ncon; } rows[] = {
        { SC_BODIES J("jA", "revolute", "ground", "crank", "") "," J("jD", "prismatic", "ground", "slider", "") ","
          J("jC", "cardan", "slider", "rod", "") "," J("jB", "spherical", "crank", "rod", "") "] }", "jB", 4, 3 },
        { SC_BODIES J("jD", "prismatic", "ground", "slider", "") "," J("jC", "cardan", "slider", "rod", "") ","
          J("jB", "spherical", "rod", "crank", "") "," J("jA", "revolute", "ground", "crank", ", 'cut': true") "] }",
          "jA", 7, 7 },
        { SC_BODIES J("jA", "revolute", "ground", "crank", "") "," J("jB", "spherical", "crank", "rod", "") ","
          J("jD", "prismatic", "ground", "slider", "") "," J("jC", "cardan", "slider", "rod", ", 'cut': true") "] }",
          "jC", 6, 5 },
        { SC_BODIES J("jA", "revolute", "ground", "crank", "") "," J("jB", "spherical", "crank", "rod", "") ","
          J("jC", "cardan", "rod", "slider", "") "," J("jD", "prismatic", "ground", "slider", ", 'cut': true") "] }",
          "jD", 7, 10 } };
#undef SC_BODIES
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        mbs_error err;
        mbs_model *m = load(rows[r].json, &err);
        CHECK(m != NULL, "%s", err.msg);
        if (!m) continue;
        CHECK(mbs_model_ncuts(m) == 1 && strcmp(mbs_cut_name(m, 0), rows[r].cut) == 0, "cut %s, expected %s",
              mbs_cut_name(m, 0), rows[r].cut);
        CHECK(mbs_model_nq(m) == rows[r].nq && mbs_model_nconstraints(m) == rows[r].ncon,
              "cut %s: %d coordinates, %d constraints (thesis: %d, %d)", rows[r].cut, mbs_model_nq(m),
              mbs_model_nconstraints(m), rows[r].nq, rows[r].ncon);
        mbs_model_free(m);
    }
    /* the shipped model */
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/slider_crank.json"), &err);
    CHECK(m && mbs_model_nq(m) == 4 && mbs_model_nconstraints(m) == 3 && strcmp(mbs_cut_name(m, 0), "jB") == 0,
          "slider_crank.json: %s", m ? "" : err.msg);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- loader errors */

static void expect(int line, const char *json, int code, const char *const *needles)
{
    mbs_error err = { 0, "" };
    mbs_model *m = load(json, &err);
    int ok = m == NULL && err.code == code;
    for (const char *const *n = needles; ok && *n; n++) ok = strstr(err.msg, *n) != NULL;
    CHECK(ok, "line %d: code %d, message: %s", line, err.code, err.msg);
    mbs_model_free(m);
}
#define EXPECT(json, code, ...) expect(__LINE__, json, code, (const char *const[]){ __VA_ARGS__, NULL })

#define LOOP(extra) "{ 'bodies': [" BODY("a") "," BODY("b") "], 'joints': [" J("j1", "revolute", "ground", "a", "") \
    "," J("j2", "spherical", "a", "b", "") "," J("j3", "revolute", "ground", "b", extra)

static void loader_errors(void)
{
    EXPECT(LOOP(", 'cut': 1") "] }", MBS_ERR_MODEL, "joints[2].cut", "expected true or false");
    EXPECT(LOOP(", 'cut': true") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'jx', "
           "'value': 0 } ] }", MBS_ERR_MODEL, "constraints[0].joint", "unknown joint \"jx\"");
    EXPECT(LOOP(", 'cut': true") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'j3', "
           "'value': 0 } ] }", MBS_ERR_MODEL, "constraints[0]", "constraint d drives joint j3, which is cut");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'j2', "
           "'coordinate': 'e1', 'value': 0 } ] }", MBS_ERR_MODEL, "constraints[0].coordinate", "Euler parameter");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'angle', 'joint': 'j1', 'value': 0 } ] }",
           MBS_ERR_MODEL, "constraints[0].type", "unknown constraint type \"angle\"");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'j1' } ] }",
           MBS_ERR_MODEL, "constraints[0]", "missing required member \"value\"");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'j1', 'value': 0, "
           "'speed': 1 } ] }", MBS_ERR_MODEL, "constraints[0]", "unknown member \"speed\"");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'j1', 'function': 'nf' } ] }",
           MBS_ERR_MODEL, "constraints[0].function", "unknown function \"nf\"");
    {   /* a spline law is accepted (its f'' comes from src/constraints/driver_spline.c) */
        mbs_error e = { 0, "" };
        mbs_model *ms = load(LOOP("") "], 'functions': [ { 'name': 'sp', 'type': 'spline', 'times': [0, 1, 2], "
                             "'values': [0, 1, 0] } ], 'constraints': [ { 'name': 'd', 'type': 'coordinate', "
                             "'joint': 'j1', 'function': 'sp' } ] }", &e);
        CHECK(ms != NULL, "spline driver: %s", e.msg);
        mbs_model_free(ms);
    }
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'distance', 'point1': 'a.nope', 'body2': 'b', "
           "'value': 1 } ] }", MBS_ERR_MODEL, "constraints[0].point1", "unknown point \"a.nope\"");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'distance', 'body1': 'a', 'body2': 'a', "
           "'value': 1 } ] }", MBS_ERR_MODEL, "constraints[0]", "both points are on body a");
    EXPECT(LOOP("") "], 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'j1', 'value': 0 }, "
           "{ 'name': 'd', 'type': 'coordinate', 'joint': 'j1', 'value': 1 } ] }",
           MBS_ERR_MODEL, "constraints[1]", "duplicate constraint name \"d\"");
    EXPECT(LOOP("") "], 'assembly': { 'fixed': ['j9'] } }", MBS_ERR_MODEL, "assembly.fixed[0]",
           "unknown joint or coordinate \"j9\"");
    EXPECT(LOOP("") "], 'assembly': { 'fixed': ['j2.theta'] } }", MBS_ERR_MODEL, "assembly.fixed[0]",
           "unknown joint or coordinate \"j2.theta\"");
    EXPECT(LOOP(", 'cut': true") "], 'assembly': { 'fixed': ['j3'] } }", MBS_ERR_MODEL, "assembly.fixed[0]",
           "joint j3 is cut");
    EXPECT(LOOP("") "], 'assembly': { 'tolerance': -1 } }", MBS_ERR_MODEL, "tolerance must be finite and > 0");
    EXPECT(LOOP("") "], 'assembly': { 'max_iterations': 2.5 } }", MBS_ERR_MODEL, "assembly.max_iterations");
    EXPECT(LOOP("") "], 'assembly': { 'fixd': [] } }", MBS_ERR_MODEL, "assembly", "unknown member \"fixd\"");
    EXPECT(LOOP(", 'cut': true") "], 'forces': [ { 'name': 'k', 'type': 'joint_spring', 'joint': 'j3', 'stiffness': 1 } ] }",
           MBS_ERR_MODEL, "forces[0]", "force k acts on joint j3, which is cut");
}

int main(void)
{
    random_models();
    topology();
    table_7_8();
    loader_errors();
    return mbs_test_summary("test_constraints");
}
