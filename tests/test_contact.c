/*
 * test_contact.c - contact_plane and tire force elements
 * (src/forces/force_contact_plane.c, force_tire.c, force_contact_common.h).
 *
 *  1. Tangents: random trees (every joint type) carrying random sphere,
 *     circle (both with and without Coulomb friction) and tire elements,
 *     in random states placed in every regime (out
 *     of contact, inside the C2 onset, full contact, the damping factor in its
 *     positive-part zone, tire slips linear, in the saturation corner and
 *     saturated): the element tangents (apply_d, along a random direction in
 *     q, qd and the whole model vector) equal complex step of apply to
 *     round-off (MBS_ROUNDOFF of the tree), as tests/test_forces.c does for
 *     the other elements; the public inverse-dynamics Jacobians through them
 *     too.
 *  2. Values: a ball on a slider (F_n = K delta^n (1 + chi deltadot) in ID),
 *     a ball sliding on a tilted plane (regularized Coulomb friction,
 *     -mu F_n v_t / sqrt(|v_t|^2 + v_s^2), at the contact point),
 *     a wheel rolling without slip (no friction force), in linear slip
 *     (F_x = mu_x F_n kappa / kappa_c, F_y = -mu_y F_n tan(alpha) / alpha_c)
 *     and saturated (mu F_n).
 *  3. Smoothness: the normal force and its derivative are continuous
 *     through the onset (delta = 0 and delta = eps): one-sided derivatives
 *     agree, and the analytical derivative equals central differences there.
 *  4. Loader: members, defaults, restitution -> hysteresis, errors, and the
 *     parameter targets.
 *  5. Trajectory sensitivities through contact (a ball dropped on the ground,
 *     a driven wheel rolling on tires): DDM = discrete adjoint, and both =
 *     central differences of whole simulations.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/forces.h"

#define NTREES 300
static const double H = 1e-20;

static double ddot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void rand_unit(mbs_rng *r, double *u)
{
    double n;
    do {
        for (int k = 0; k < 3; k++) u[k] = mbs_rng_uniform(r, -1, 1);
        n = sqrt(ddot3(u, u));
    } while (n < 0.2 || n > 1);
    for (int k = 0; k < 3; k++) u[k] /= n;
}

/* ------------------------------------------------------------------ random trees with contacts */

static mbs_model *random_contact_model(mbs_rng *r, int nb)
{
    mbs_error err;
    mbs_builder *b = mbs_builder_new("random_contact", "random tree");
    if (!b) return NULL;
    double g[3] = { 0, 0, -9.81 };
    mbs_builder_set_gravity(b, g);
    char name[64];
    for (int i = 0; i < nb; i++) {
        double com[3], I6[6] = { 0.1, 0.12, 0.09, 0.01, -0.005, 0.002 }, p[3];
        for (int k = 0; k < 3; k++) {
            com[k] = mbs_rng_uniform(r, -0.3, 0.3);
            p[k] = mbs_rng_uniform(r, -0.5, 0.5);
        }
        snprintf(name, sizeof name, "b%d", i + 1);
        if (mbs_builder_add_body(b, name, mbs_rng_uniform(r, 0.5, 3), com, I6, name, &err) != i + 1 ||
            mbs_builder_add_point(b, i + 1, "p", p, name, &err) < 0)
            goto fail;
    }
    for (int i = 0; i < nb; i++) {
        int type = mbs_rng_int(r, MBS_JOINT_TYPE_COUNT), parent = mbs_rng_int(r, i + 1);
        mbs_joint_side ps, cs;
        double pp[3], cp[3];
        for (int k = 0; k < 3; k++) { pp[k] = mbs_rng_uniform(r, -0.5, 0.5); cp[k] = mbs_rng_uniform(r, -0.5, 0.5); }
        snprintf(name, sizeof name, "j%d", i + 1);
        ps.point = mbs_builder_add_point(b, parent, NULL, pp, name, &err);
        cs.point = mbs_builder_add_point(b, i + 1, NULL, cp, name, &err);
        if (ps.point < 0 || cs.point < 0) goto fail;
        rand_unit(r, ps.axis); rand_unit(r, ps.ref); ps.has_ref = 1;
        rand_unit(r, cs.axis); rand_unit(r, cs.ref); cs.has_ref = 1;
        if (mbs_builder_add_joint(b, name, (mbs_joint_type)type, parent, i + 1, &ps, &cs, NULL, 0, NULL, 0, name,
                                  &err) != i)
            goto fail;
    }
    int ne = 1 + mbs_rng_int(r, 4);
    for (int e = 0; e < ne; e++) {
        mbs_builder_contact ct;
        memset(&ct, 0, sizeof ct);
        int kind = mbs_rng_int(r, 3);   /* sphere, circle, tire */
        mbs_force_type type = kind == 2 ? MBS_FORCE_TIRE : MBS_FORCE_CONTACT_PLANE;
        ct.shape = kind > 0;
        int body = 1 + mbs_rng_int(r, nb);
        double pc[3];
        for (int k = 0; k < 3; k++) pc[k] = mbs_rng_uniform(r, -0.4, 0.4);
        snprintf(name, sizeof name, "c%d", e);
        int pt = mbs_rng_int(r, 2) ? mbs_builder_find_point(b, body, "p") : mbs_builder_add_point(b, body, NULL, pc,
                                                                                                   name, &err);
        ct.stiffness = mbs_rng_uniform(r, 1e2, 1e5);
        int ek = mbs_rng_int(r, 3);
        ct.exponent = ek == 0 ? 1 : ek == 1 ? 1.5 : mbs_rng_uniform(r, 1, 2.5);
        ct.hysteresis = mbs_rng_int(r, 4) == 0 ? mbs_rng_uniform(r, 5, 50) : mbs_rng_uniform(r, 0, 2);
        ct.radius = mbs_rng_uniform(r, 0.1, 0.6);
        ct.smoothing = mbs_rng_uniform(r, 1e-3, 0.05);
        rand_unit(r, ct.plane_normal);
        rand_unit(r, ct.axis);
        ct.kappa_c = mbs_rng_uniform(r, 0.05, 0.5);
        ct.alpha_c = mbs_rng_uniform(r, 0.05, 0.5);
        ct.mu_x = mbs_rng_uniform(r, 0.3, 1.2);
        ct.mu_y = mbs_rng_uniform(r, 0.3, 1.2);
        ct.v0 = mbs_rng_uniform(r, 0.05, 1);
        ct.mu = mbs_rng_int(r, 4) == 0 ? 0 : mbs_rng_uniform(r, 0.1, 1.2);   /* contact_plane friction */
        ct.vs = mbs_rng_uniform(r, 0.01, 0.5);
        if (mbs_builder_add_contact(b, name, type, pt, &ct, name, &err) < 0) goto fail;
    }
    mbs_model *m = mbs_builder_finish(b, &err);
    if (!m) fprintf(stderr, "random contact model: %s\n", err.msg);
    mbs_builder_free(b);
    return m;
fail:
    fprintf(stderr, "random contact model: %s\n", err.msg);
    mbs_builder_free(b);
    return NULL;
}

/* Contact point P of element e from the kinematics in w (real values). */
static void contact_point(const mbs_model *m, const mbs_ws_cs *w, int e, double *P)
{
    const mbs_force_info *fe = &m->force[e];
    const double *x = m->x + fe->x, *n = x + CT_NRM, *cb = m->x + fe->x_point[0];
    const int i = fe->body[0];
    double A[9], o[3], c[3], ut[3];
    for (int k = 0; k < 9; k++) A[k] = creal(w->A[9 * i + k]);
    for (int k = 0; k < 3; k++) o[k] = creal(w->o[3 * i + k]);
    for (int r = 0; r < 3; r++) c[r] = o[r] + A[3 * r] * cb[0] + A[3 * r + 1] * cb[1] + A[3 * r + 2] * cb[2];
    if (fe->shape) {
        double a[3], u[3];
        for (int r = 0; r < 3; r++) a[r] = A[3 * r] * x[CT_AX] + A[3 * r + 1] * x[CT_AX + 1] + A[3 * r + 2] * x[CT_AX + 2];
        double na = ddot3(n, a);
        for (int k = 0; k < 3; k++) u[k] = n[k] - na * a[k];
        double ul = sqrt(ddot3(u, u) + CT_UEPS2);
        for (int k = 0; k < 3; k++) ut[k] = u[k] / ul;
    } else {
        for (int k = 0; k < 3; k++) ut[k] = n[k];
    }
    for (int k = 0; k < 3; k++) P[k] = c[k] - x[CT_R] * ut[k];
}

/* Inverse dynamics through the complex kernels, loads = elements only. */
static void id_cs(const mbs_model *m, const mreal *x, mbs_ws_cs *w, const mreal *q, const mreal *qd,
                  const mreal *qdd, mreal t, mreal *tau)
{
    mbs_kin_forward_cs(m, x, w, q, qd, qdd, 2);
    memset(w->xfrc, 0, sizeof(mreal) * 15 * (size_t)(m->nb + 1));
    memset(w->qfrc, 0, sizeof(mreal) * (size_t)m->nq);
    mbs_forces_apply_cs(m, x, w, q, qd, t);
    mbs_body_terms_cs(m, x, w);
    mbs_rnea_cs(m, w, tau);
}

static void test_tangents(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2024);
    double w_tan = 0, w_jac = 0;
    int regimes[5] = { 0 }, types[3] = { 0 }, active = 0, nel = 0, friction = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        int nb = 1 + mbs_rng_int(&rng, 6);
        mbs_model *m = random_contact_model(&rng, nb);
        CHECK(m != NULL, "random model %d", tree);
        if (!m) continue;
        const int nq = m->nq;
        size_t n1 = (size_t)nq + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8);
        mbs_test_random_state(&rng, m, q, qd, qdd);
        for (int k = 0; k < nq; k++) qd[k] *= 3;   /* faster motions: larger slips and rates */
        /* place each element's plane so that its penetration falls in a chosen regime */
        mbs_ws_cs w;
        CHECK(mbs_ws_init_cs(&w, m) == 0, "ws");
        {
            mreal *xq = calloc((size_t)m->nx + n1, sizeof(mreal)), *qq = xq + m->nx, *qqd = calloc(n1, sizeof(mreal));
            for (int k = 0; k < m->nx; k++) xq[k] = m->x[k];
            for (int k = 0; k < nq; k++) { qq[k] = q[k]; qqd[k] = qd[k]; }
            mbs_kin_forward_cs(m, xq, &w, qq, qqd, NULL, 1);
            free(xq);
            free(qqd);
        }
        for (int e = 0; e < m->nforce; e++) {
            mbs_force_info *fe = &m->force[e];
            double *x = m->x + fe->x, P[3];
            contact_point(m, &w, e, P);
            const double eps = x[CT_EPS];
            int rg = mbs_rng_int(&rng, 5);
            double target = rg == 0 ? -eps * mbs_rng_uniform(&rng, 0.1, 2)
                          : rg == 1 ? eps * mbs_rng_uniform(&rng, 0.02, 0.98)
                          : rg == 2 ? eps * mbs_rng_uniform(&rng, 1.02, 20)
                                    : mbs_rng_uniform(&rng, 0.001, 0.05);
            regimes[rg]++;
            types[fe->type == MBS_FORCE_TIRE ? 2 : fe->shape]++;
            active += target > 0;
            friction += target > 0 && fe->type == MBS_FORCE_CONTACT_PLANE && x[CT_MU] > 0;
            nel++;
            /* p0 = P + target n: delta = n.(p0 - P) (n unit) */
            for (int k = 0; k < 3; k++) x[CT_P0 + k] = P[k] + target * x[CT_NRM + k];
        }
        mbs_ws_free_cs(&w);

        /* tangent of the loads along a random direction, against complex step */
        mbs_ws_cs wc, wp, dwp;
        CHECK(mbs_ws_init_cs(&wc, m) == 0 && mbs_ws_init_cs(&wp, m) == 0 && mbs_ws_init_cs(&dwp, m) == 0, "ws");
        mreal *xc = calloc((size_t)m->nx, sizeof(mreal)), *xr = calloc((size_t)m->nx, sizeof(mreal)),
              *dxv = calloc((size_t)m->nx, sizeof(mreal)), *qc = calloc(n1, sizeof(mreal)),
              *qdc = calloc(n1, sizeof(mreal)), *qddc = calloc(n1, sizeof(mreal)), *dqv = calloc(n1, sizeof(mreal)),
              *dqdv = calloc(n1, sizeof(mreal)), *dqf = calloc(n1, sizeof(mreal)), *tc = calloc(n1, sizeof(mreal));
        for (int rep = 0; rep < 3; rep++) {
            for (int k = 0; k < m->nx; k++) {
                dxv[k] = rep == 0 ? 0 : mbs_rng_uniform(&rng, -1, 1);
                xr[k] = m->x[k];
                xc[k] = m->x[k] + I * H * dxv[k];
            }
            for (int k = 0; k < nq; k++) {
                dqv[k] = mbs_rng_uniform(&rng, -1, 1);
                dqdv[k] = mbs_rng_uniform(&rng, -1, 1);
                qc[k] = q[k] + I * H * dqv[k];
                qdc[k] = qd[k] + I * H * dqdv[k];
            }
            mbs_kin_forward_cs(m, xc, &wc, qc, qdc, NULL, 1);
            memset(wc.xfrc, 0, sizeof(mreal) * 15 * (size_t)(m->nb + 1));
            memset(wc.qfrc, 0, sizeof(mreal) * (size_t)nq);
            mbs_forces_apply_cs(m, xc, &wc, qc, qdc, 0);
            for (int k = 0; k < 9 * (m->nb + 1); k++) { wp.A[k] = creal(wc.A[k]); dwp.A[k] = cimag(wc.A[k]) / H; }
            for (int k = 0; k < 3 * (m->nb + 1); k++) {
                wp.o[k] = creal(wc.o[k]); dwp.o[k] = cimag(wc.o[k]) / H;
                wp.r[k] = creal(wc.r[k]); dwp.r[k] = cimag(wc.r[k]) / H;
            }
            for (int k = 0; k < 6 * (m->nb + 1); k++) { wp.V[k] = creal(wc.V[k]); dwp.V[k] = cimag(wc.V[k]) / H; }
            for (int k = 0; k < 9; k++) dwp.A[k] = 7;   /* the ground's tangents must not be read */
            memset(dwp.xfrc, 0, sizeof(mreal) * 15 * (size_t)(m->nb + 1));
            for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; dqf[k] = 0; }
            mbs_forces_apply_d_cs(m, xr, &wp, rep == 0 ? NULL : dxv, &dwp, qc, qdc, dqv, dqdv, dqf, 0);
            double scale = 1e-300, err = 0;
            for (int k = 15; k < 15 * (m->nb + 1); k++) scale = fmax(scale, fabs(cimag(wc.xfrc[k]) / H));
            for (int k = 15; k < 15 * (m->nb + 1); k++)
                err = fmax(err, fabs(creal(dwp.xfrc[k]) - cimag(wc.xfrc[k]) / H));
            for (int k = 0; k < nq; k++) err = fmax(err, fabs(creal(dqf[k])));   /* no generalized forces */
            /* the primal of the double path equals the complex real part */
            double pe = 0;
            for (int k = 15; k < 15 * (m->nb + 1); k++) pe = fmax(pe, fabs(creal(wc.xfrc[k])));
            if (pe > 0) w_tan = fmax(w_tan, err / fmax(scale, 1e-12 * pe));
        }
        /* the public ID Jacobians (through apply_d) against complex step of the kernels */
        if (tree % 3 == 0) {
            mbs_data *d = mbs_data_create(m, NULL);
            double *J = calloc(n1 * n1, 8), *Jd = calloc(n1 * n1, 8), scale = 1, err = 0;
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, J, Jd) == MBS_OK, "%s",
                  mbs_data_error(d));
            for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];
            for (int c = 0; c < nq; c++)
                for (int v = 0; v < 2; v++) {
                    for (int k = 0; k < nq; k++) {
                        qc[k] = q[k] + (v == 0 && k == c ? I * H : 0);
                        qdc[k] = qd[k] + (v == 1 && k == c ? I * H : 0);
                        qddc[k] = qdd[k];
                    }
                    id_cs(m, xc, &wc, qc, qdc, qddc, 0, tc);
                    for (int r = 0; r < nq; r++) {
                        double ref = cimag(tc[r]) / H, got = (v ? Jd : J)[r * nq + c];
                        scale = fmax(scale, fabs(ref));
                        err = fmax(err, fabs(got - ref));
                    }
                }
            w_jac = fmax(w_jac, err / scale);
            free(J);
            free(Jd);
            mbs_data_free(d);
        }
        mbs_ws_free_cs(&wc);
        mbs_ws_free_cs(&wp);
        mbs_ws_free_cs(&dwp);
        free(xc); free(xr); free(dxv); free(qc); free(qdc); free(qddc); free(dqv); free(dqdv); free(dqf); free(tc);
        free(q); free(qd); free(qdd);
        mbs_model_free(m);
    }
    printf("random trees: %d elements (%d sphere, %d circle, %d tire), %d in contact; regimes %d out, %d onset, "
           "%d above onset, %d deep; %d with friction in contact\n", nel, types[0], types[1], types[2], active,
           regimes[0], regimes[1], regimes[2], regimes[3] + regimes[4], friction);
    printf("worst relative errors: load tangents %.2e, public ID Jacobians %.2e\n", w_tan, w_jac);
    CHECK(types[0] > 50 && types[1] > 50 && types[2] > 50, "every kind exercised");
    CHECK(regimes[1] > 50, "onset exercised");
    CHECK(friction > 100, "contact_plane friction exercised: %d", friction);
    /* identities: round-off of trees of at most 6 bodies */
    CHECK(w_tan < MBS_ROUNDOFF(6), "load tangents: %g", w_tan);
    CHECK(w_jac < MBS_ROUNDOFF(6), "public ID Jacobians: %g", w_jac);
}

/* ------------------------------------------------------------------ 2. values */

static const char *ball_json =
    "{ \"name\": \"ball\", \"gravity\": [0, 0, -9.81],"
    "  \"bodies\": [ { \"name\": \"ball\", \"mass\": 2.0, \"com\": [0, 0, 0], \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0],"
    "                 \"points\": { \"c\": [0, 0, 0] } } ],"
    "  \"joints\": [ { \"name\": \"z\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"ball\","
    "                 \"axis\": [0, 0, 1], \"q0\": [0.3] } ],"
    "  \"forces\": [ { \"name\": \"floor\", \"type\": \"contact_plane\", \"body\": \"ball\", \"point\": \"c\","
    "                 \"shape\": \"sphere\", \"radius\": 0.1, \"stiffness\": 1e5, \"exponent\": 1.5,"
    "                 \"restitution\": 0.5, \"impact_velocity\": 1.0, \"smoothing\": 1e-4 } ],"
    "  \"simulation\": { \"dt\": 0.001, \"tf\": 0.6, \"formulation\": \"semi\" },"
    "  \"parameters\": [ { \"name\": \"K\", \"value\": 1e5, \"lower\": 1e3, \"upper\": 1e7, \"sets\": [\"floor.stiffness\"] },"
    "                  { \"name\": \"chi\", \"value\": 0.5625, \"lower\": 0, \"upper\": 5, \"sets\": [\"floor.hysteresis\"] },"
    "                  { \"name\": \"R\", \"value\": 0.1, \"lower\": 0.05, \"upper\": 0.2, \"sets\": [\"floor.radius\"] } ],"
    "  \"objectives\": [ { \"name\": \"height\", \"integral\": [ { \"coordinate\": \"z\", \"reference\": 0.2 } ] },"
    "                  { \"name\": \"speed\", \"integral\": [ { \"coordinate\": \"z\", \"quantity\": \"velocity\" } ] } ] }";

/* A wheel (radius 0.3, axis = body y) on a floating joint, with a tire to
 * the ground plane z = 0 and a spin torque. */
static const char *wheel_json =
    "{ \"name\": \"wheel\", \"gravity\": [0, 0, -9.81],"
    "  \"bodies\": [ { \"name\": \"w\", \"mass\": 10.0, \"com\": [0, 0, 0], \"inertia\": [0.25, 0.45, 0.25, 0, 0, 0],"
    "                 \"points\": { \"hub\": [0, 0, 0] } } ],"
    "  \"joints\": [ { \"name\": \"f\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"w\","
    "                 \"q0\": [0, 0, 0.29, 1, 0, 0, 0], \"qd0\": [3, 0, 0, 0, 0, 5, 0] } ],"
    "  \"functions\": [ { \"name\": \"drive\", \"type\": \"spline\", \"times\": [0, 0.25, 0.5], \"values\": [2, 4, 1] } ],"
    "  \"forces\": [ { \"name\": \"tire\", \"type\": \"tire\", \"body\": \"w\", \"point\": \"hub\", \"axis\": [0, 1, 0],"
    "                 \"radius\": 0.3, \"stiffness\": 20000, \"hysteresis\": 0.5, \"kappa_c\": 0.15, \"alpha_c\": 0.15,"
    "                 \"mu_x\": 1.0, \"mu_y\": 0.9, \"speed_regularization\": 0.2 },"
    "               { \"name\": \"motor\", \"type\": \"body_load\", \"body\": \"w\", \"torque\": [0, 1, 0],"
    "                 \"axes\": \"body\", \"function\": \"drive\" } ],"
    "  \"simulation\": { \"dt\": 0.001, \"tf\": 0.5, \"formulation\": \"semi\" },"
    "  \"parameters\": [ { \"name\": \"mu_x\", \"value\": 1.0, \"lower\": 0.1, \"upper\": 2, \"sets\": [\"tire.mu_x\"] },"
    "                  { \"name\": \"kc\", \"value\": 0.15, \"lower\": 0.01, \"upper\": 1, \"sets\": [\"tire.kappa_c\"] },"
    "                  { \"name\": \"K\", \"value\": 20000, \"lower\": 1000, \"upper\": 1e6, \"sets\": [\"tire.stiffness\"] },"
    "                  { \"name\": \"u1\", \"value\": 4, \"lower\": -20, \"upper\": 20, \"sets\": [\"drive.values[1]\"] } ],"
    "  \"objectives\": [ { \"name\": \"speed\", \"integral\": [ { \"point\": \"w.hub\", \"quantity\": \"velocity\","
    "                    \"component\": \"x\", \"reference\": 3.2 } ] },"
    "                  { \"name\": \"bounce\", \"integral\": [ { \"coordinate\": \"f.z\", \"reference\": 0.29 } ] } ] }";

/* Force (global) and torque of element 0 on its body (kernels on real values). */
static void element_loads(const mbs_model *m, const double *q, const double *qd, double *f, double *tq)
{
    mbs_ws_cs w;
    mbs_ws_init_cs(&w, m);
    const size_t n1 = (size_t)m->nq + 1;
    mreal *x = calloc((size_t)m->nx, sizeof(mreal)), *qc = calloc(n1, sizeof(mreal)), *qdc = calloc(n1, sizeof(mreal));
    for (int k = 0; k < m->nx; k++) x[k] = m->x[k];
    for (int k = 0; k < m->nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; }
    mbs_kin_forward_cs(m, x, &w, qc, qdc, NULL, 1);
    memset(w.xfrc, 0, sizeof(mreal) * 15 * (size_t)(m->nb + 1));
    const mbs_force_info *fe = &m->force[0];
    mbs_force_ops_of_cs(fe->type)->apply(m, fe, x, &w, qc, qdc, 0);
    const int i = fe->body[0];
    for (int k = 0; k < 3; k++) {
        f[k] = creal(w.xfrc[15 * i + k]);
        tq[k] = creal(w.xfrc[15 * i + 3 + k]);
    }
    free(x); free(qc); free(qdc);
    mbs_ws_free_cs(&w);
}

/* A ball (radius 0.1) on a floating joint against the plane through the
 * origin with normal n = (0, sin 0.3, cos 0.3), with friction: at a
 * penetration delta and a velocity and spin, the loads are the closed form
 * F_n n - mu F_n v_t / sqrt(|v_t|^2 + v_s^2) at P = c - R n, v_t the
 * tangential velocity of the ball's point at P. */
static void test_sliding(void)
{
    static const char *json =
        "{ \"name\": \"slide\", \"bodies\": [ { \"name\": \"b\", \"mass\": 1, \"inertia\": [0.004, 0.004, 0.004, 0, 0, 0] } ],"
        "  \"joints\": [ { \"name\": \"f\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"b\" } ],"
        "  \"forces\": [ { \"name\": \"hull\", \"type\": \"contact_plane\", \"body\": \"b\", \"shape\": \"sphere\","
        "                 \"radius\": 0.1, \"stiffness\": 1e6, \"exponent\": 1.5, \"hysteresis\": 0.2,"
        "                 \"plane_normal\": [0, 0.29552020666133955, 0.955336489125606], \"smoothing\": 1e-6,"
        "                 \"friction\": 0.4, \"slip_speed\": 0.05 } ] }";
    mbs_error err;
    mbs_model *m = mbs_model_load_string(json, "slide", &err);
    CHECK(m != NULL, "slide: %s", err.msg);
    if (!m) return;
    const double s3 = sin(0.3), c3 = cos(0.3), n[3] = { 0, s3, c3 }, R = 0.1, K = 1e6, chi = 0.2, mu = 0.4, vs = 0.05;
    const double delta = 2e-3;
    /* centre at (R - delta) n + 0.3 e_x; cases: (v, w) */
    const double cases[3][6] = { { 0.02, 0, 0, 0, 0, 0 }, { 0.5, -0.1, 0.05, 1, 2, -3 }, { 0, 0, 0.01, 0, 0, 0 } };
    for (int c = 0; c < 3; c++) {
        double q[7] = { 0.3, (R - delta) * s3, (R - delta) * c3, 1, 0, 0, 0 }, qd[7] = { 0 }, f[3], tq[3];
        const double *v = cases[c], *w = cases[c] + 3;
        for (int k = 0; k < 3; k++) qd[k] = v[k];
        for (int k = 0; k < 3; k++) qd[4 + k] = 0.5 * w[k];   /* pd = 1/2 (0, w) at identity (body = global axes) */
        element_loads(m, q, qd, f, tq);
        /* P - c = -R n; v_P = v + w x (-R n) */
        double vP[3] = { v[0] - R * (w[1] * n[2] - w[2] * n[1]), v[1] - R * (w[2] * n[0] - w[0] * n[2]),
                         v[2] - R * (w[0] * n[1] - w[1] * n[0]) };
        const double vn = ddot3(vP, n), rate = -vn;
        const double Fn = K * pow(delta, 1.5) * (1 + chi * rate);
        double vt[3], fe[3];
        for (int k = 0; k < 3; k++) vt[k] = vP[k] - vn * n[k];
        const double sl = sqrt(ddot3(vt, vt) + vs * vs);
        for (int k = 0; k < 3; k++) fe[k] = Fn * n[k] - mu * Fn * vt[k] / sl;
        /* torque about the centre: (-R n) x f */
        const double te[3] = { -R * (n[1] * fe[2] - n[2] * fe[1]), -R * (n[2] * fe[0] - n[0] * fe[2]),
                               -R * (n[0] * fe[1] - n[1] * fe[0]) };
        double e = 0;
        for (int k = 0; k < 3; k++) e = fmax(e, fmax(fabs(f[k] - fe[k]), fabs(tq[k] - te[k]) / R));
        printf("sliding case %d: F = [%.6f %.6f %.6f], |F_t|/F_n = %.4f, deviation %.1e\n", c, f[0], f[1], f[2],
               mu * sqrt(ddot3(vt, vt)) / sl, e);
        /* a handful of operations on numbers of size F_n: round-off of a one-body model */
        CHECK(e < MBS_ROUNDOFF(1) * Fn, "sliding case %d: deviation %g", c, e);
    }
    mbs_model_free(m);
}

static void test_values(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(ball_json, "ball", &err);
    CHECK(m != NULL, "ball: %s", err.msg);
    if (m) {
        const int e = mbs_force_find(m, "floor");
        const double chi = m->x[m->force[e].x + CT_CHI];
        CHECK_CLOSE(chi, 3 * (1 - 0.25) / 4.0, 8 * MBS_EPS, "hysteresis from restitution (a few roundings)");
        mbs_data *d = mbs_data_create(m, NULL);
        double f[3], tq[3];
        for (int c = 0; c < 3; c++) {
            const double z = c == 0 ? 0.15 : 0.09, zd = c == 2 ? -0.4 : 0, qdd = 0;
            double tau;
            mbs_inverse_dynamics(m, d, &z, &zd, &qdd, &tau);
            const double delta = 0.1 - z;
            const double Fn = delta > 0 ? 1e5 * pow(delta, 1.5) * (1 + chi * (-zd)) : 0;
            /* a one-body model: round-off relative to the largest term, 2 g or F_n */
            CHECK_CLOSE(tau, 2 * 9.81 - Fn, MBS_ROUNDOFF(1) * fmax(1, (2 * 9.81 + Fn) / fmax(1, fabs(2 * 9.81 - Fn))),
                        "ball: ID at z = %g, zd = %g", z, zd);
            element_loads(m, &z, &zd, f, tq);
            CHECK(fabs(f[0]) + fabs(f[1]) + fabs(tq[0]) + fabs(tq[1]) + fabs(tq[2]) < MBS_ROUNDOFF(1) * (1 + Fn),
                  "ball: force along the normal through the centre");
        }
        mbs_data_free(d);
        mbs_model_free(m);
    }
    test_sliding();
    m = mbs_model_load_string(wheel_json, "wheel", &err);
    CHECK(m != NULL, "wheel: %s", err.msg);
    if (!m) return;
    const double R = 0.3, K = 20000, kc = 0.15, ac = 0.15, mux = 1.0, muy = 0.9, v0 = 0.2, delta = 0.01;
    const double Fn = K * delta;   /* at rest vertically: chi deltadot = 0 */
    double q[7] = { 0, 0, R - delta, 1, 0, 0, 0 }, qd[7], f[3], tq[3];
    /* rolling without slip: V = Omega R (spin about +y rolls along +x) */
    const double V = 4;
    double Om = V / R;
    /* qd of Euler parameters for w = (0, Om, 0) at p = identity: pd = 1/2 (0, w) */
    double cases[4][3] = { { V, 0, Om }, { V, 0, Om * 1.05 }, { V, 0, Om * 1.6 }, { V, 0.12, Om } };
    for (int c = 0; c < 4; c++) {
        memset(qd, 0, sizeof qd);
        qd[0] = cases[c][0];
        qd[1] = cases[c][1];
        qd[5] = 0.5 * cases[c][2];
        element_loads(m, q, qd, f, tq);
        const double Vb = sqrt(V * V + v0 * v0);
        const double kap = (cases[c][2] * R - V) / Vb, ta = cases[c][1] / Vb;
        double Fx = c == 2 ? mux * Fn : mux * Fn * kap / kc, Fy = -muy * Fn * ta / ac;
        printf("wheel case %d: kappa %.4f tan(alpha) %.4f: F = [%.6f %.6f %.6f], expected [%.6f %.6f %.6f]\n", c,
               kap, ta, f[0], f[1], f[2], Fx, Fy, Fn);
        /* closed forms (sat is the identity below 0.9 and 1 above 1.1: these slips are outside its
         * smoothed corners), up to the regularization of the rim direction, u / sqrt(u.u + reg) with
         * reg = 1e-12 (force_contact_common.h), which pulls the contact point in by R reg / 2: the
         * penetration by that, the contact point's velocity by |w| R reg / 2, the slips by that over
         * V; taken twice; plus round-off of the element's operations on F_n */
        const double reg = 1e-12, dd = R * reg, dv = fabs(cases[c][2]) * R * reg, ro = MBS_ROUNDOFF(1) * Fn;
        const double bn = K * dd + ro, bx = mux * (K * dd + Fn * dv / (kc * Vb)) + ro;
        const double by = muy * (K * dd + Fn * dv / (ac * Vb)) + ro, bt = R * (bx + by) + dd * (Fn + Fx + Fy) + ro;
        printf("  deviations %.1e %.1e %.1e (bounds %.1e %.1e %.1e)\n", fabs(f[0] - Fx), fabs(f[1] - Fy),
               fabs(f[2] - Fn), bx, by, bn);
        CHECK(fabs(f[2] - Fn) < bn, "normal force %g", f[2]);
        CHECK(fabs(f[0] - Fx) < bx, "F_x %g, expected %g", f[0], Fx);
        CHECK(fabs(f[1] - Fy) < by, "F_y %g, expected %g", f[1], Fy);
        /* the force acts at the contact point (0, 0, -R) from the centre */
        CHECK(fabs(tq[0] - R * f[1]) < bt && fabs(tq[1] + R * f[0]) < bt && fabs(tq[2]) < bt,
              "torque of the contact force about the centre");
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 3. smoothness */

/* F_z of the ball's element and its derivative along dz (ball on its slider). */
static void ball_force(const mbs_model *m, mbs_ws_cs *w, mbs_ws_cs *dw, const mreal *x, double z, double zd,
                       double *F, double *dF)
{
    const mbs_force_info *fe = &m->force[0];
    const mbs_force_ops_cs *ops = mbs_force_ops_of_cs(fe->type);
    mreal q = z, qd = zd, dq = 1, dqd = 0;
    mbs_kin_forward_cs(m, x, w, &q, &qd, NULL, 1);
    mbs_kin_forward_d_cs(m, x, w, NULL, dw, &q, &qd, NULL, &dq, &dqd, NULL, 1, 1, m->nb + 1);
    memset(w->xfrc, 0, sizeof(mreal) * 30);
    memset(dw->xfrc, 0, sizeof(mreal) * 30);
    ops->apply(m, fe, x, w, &q, &qd, 0);
    ops->apply_d(m, fe, x, w, NULL, dw, &q, &qd, &dq, &dqd, NULL, 0);
    *F = creal(w->xfrc[15 + 2]);
    if (dF) *dF = creal(dw->xfrc[15 + 2]);
}

static void test_smoothness(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(ball_json, "ball", &err);
    CHECK(m != NULL, "ball: %s", err.msg);
    if (!m) return;
    const double eps = 1e-4, R = 0.1, K = 1e5;
    mbs_ws_cs w, dw;
    mbs_ws_init_cs(&w, m);
    mbs_ws_init_cs(&dw, m);
    mreal *x = calloc((size_t)m->nx, sizeof(mreal));
    for (int k = 0; k < m->nx; k++) x[k] = m->x[k];
    double worst_fd = 0, worst_jump = 0, worst_f = 0, worst_bound = INFINITY, dmax = 0, d2max = 0, fmaxv = 0;
    for (int vel = 0; vel < 2; vel++) {
        const double zd = vel ? -0.3 : 0;
        /* analytical dF/dz against central differences across the onset; the differences' own error:
         * truncation c h^2 from steps h and 2h (|fd(h) - fd(2h)| / 3) and round-off, the rounding of
         * F and of its argument z over h (eps (|F| + |z| |dF/dz|) / h), 2 of each */
        double dprev = 0;
        for (int k = -20; k <= 40; k++) {
            const double delta = k * eps / 20 + 1e-7, h = 1e-9;
            double Fp, Fm, F0, dF, Fp2, Fm2;
            ball_force(m, &w, &dw, x, R - delta + h, zd, &Fp, NULL);
            ball_force(m, &w, &dw, x, R - delta - h, zd, &Fm, NULL);
            ball_force(m, &w, &dw, x, R - delta + 2 * h, zd, &Fp2, NULL);
            ball_force(m, &w, &dw, x, R - delta - 2 * h, zd, &Fm2, NULL);
            ball_force(m, &w, &dw, x, R - delta, zd, &F0, &dF);
            const double fd = (Fp - Fm) / (2 * h), fd2 = (Fp2 - Fm2) / (4 * h);
            const double b = 2 * fabs(fd - fd2) / 3 + 2 * MBS_EPS * (fmax(fabs(Fp), fabs(Fm)) + R * fabs(dF)) / h;
            worst_fd = fmax(worst_fd, fabs(fd - dF) / (K * sqrt(eps)));
            worst_bound = fmin(worst_bound, (b - fabs(fd - dF)) / (K * sqrt(eps)));
            dmax = fmax(dmax, fabs(dF));
            fmaxv = fmax(fmaxv, fabs(F0));
            if (k > -20) d2max = fmax(d2max, fabs(dF - dprev) / (eps / 20));
            dprev = dF;
        }
    }
    for (int vel = 0; vel < 2; vel++) {
        const double zd = vel ? -0.3 : 0;
        /* one-sided values and derivatives at delta = 0 and delta = eps */
        for (int at = 0; at < 2; at++) {
            const double d0 = at ? eps : 0;
            double F[2], dF[2];
            for (int side = 0; side < 2; side++) ball_force(m, &w, &dw, x, R - d0 + (side ? -1e-13 : 1e-13), zd,
                                                            &F[side], &dF[side]);
            worst_jump = fmax(worst_jump, fabs(dF[0] - dF[1]));
            worst_f = fmax(worst_f, fabs(F[0] - F[1]));
        }
    }
    printf("onset: largest jump of F %.2e N and of dF/dz %.2e N/m at delta = 0 or eps; analytical dF/dz vs "
           "central differences %.2e (relative to K sqrt(eps) = %.3g N/m; every one within its error estimate "
           "by %.2e)\n", worst_f, worst_jump, worst_fd, K * sqrt(eps), worst_bound);
    /* across delta +- 1e-13 a continuous F moves by 2e-13 max |dF/dz|, a continuous dF/dz by 2e-13
     * max |d2F/dz2| (from the dF/dz samples eps/20 apart, taken twice); plus their round-off */
    CHECK(worst_f < 2e-13 * dmax + MBS_ROUNDOFF(1) * fmaxv, "no jump of the force at the onset: %g", worst_f);
    CHECK(worst_jump < 2 * 2e-13 * d2max + MBS_ROUNDOFF(1) * dmax, "no jump of the force derivative at the onset: %g",
          worst_jump);
    CHECK(worst_bound >= 0, "dF/dz = central differences through the onset: %g", worst_fd);
    free(x);
    mbs_ws_free_cs(&w);
    mbs_ws_free_cs(&dw);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 4. loader */

static mbs_model *ball_with(const char *force, mbs_error *err)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{ \"name\": \"b\", \"bodies\": [ { \"name\": \"ball\", \"mass\": 1, \"com\": [0,0,0],"
             " \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } ],"
             " \"joints\": [ { \"name\": \"z\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"ball\","
             " \"axis\": [0,0,1], \"q0\": [0.3] } ], \"forces\": [ %s ] }", force);
    return mbs_model_load_string(buf, "b.json", err);
}

static void test_loader(void)
{
    mbs_error err;
    struct { const char *force, *msg; } bad[] = {
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"circle\", \"radius\": 0.1,"
          " \"stiffness\": 10 }", "forces[0]: missing required member \"axis\"" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"axis\": [0,1,0],"
          " \"radius\": 0.1, \"stiffness\": 10 }", "forces[0].axis: a sphere has no axis" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"radius\": 0.1, \"stiffness\": 10 }",
          "missing required member \"shape\"" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": -0.1,"
          " \"stiffness\": 10 }", "radius must be > 0" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"exponent\": 0.5 }", "exponent must be >= 1" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"restitution\": 0.5 }", "go together" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"hysteresis\": -1 }", "damping must be >= 0" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ground\", \"point\": [0,0,0], \"shape\": \"sphere\","
          " \"radius\": 0.1, \"stiffness\": 10 }", "moving body" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"plane_normal\": [0,0,0] }", "non-zero" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"friction\": -0.1 }", "forces[0]: contact_plane c: friction must be >= 0" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"friction\": 0.3, \"slip_speed\": 0 }", "forces[0]: contact_plane c: slip_speed must be > 0" },
        { "{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\", \"radius\": 0.1,"
          " \"stiffness\": 10, \"friction\": \"high\" }", "forces[0].friction" },
        { "{ \"name\": \"t\", \"type\": \"tire\", \"body\": \"ball\", \"axis\": [0,1,0], \"radius\": 0.3,"
          " \"stiffness\": 10, \"kappa_c\": 0.1, \"alpha_c\": 0.1, \"mu_x\": 1, \"mu_y\": 1, \"friction\": 1 }",
          "unknown member \"friction\"" },
        { "{ \"name\": \"t\", \"type\": \"tire\", \"body\": \"ball\", \"axis\": [0,1,0], \"radius\": 0.3,"
          " \"stiffness\": 10, \"kappa_c\": 0.1, \"alpha_c\": 0.1, \"mu_x\": 1 }", "missing required member \"mu_y\"" },
        { "{ \"name\": \"t\", \"type\": \"tire\", \"body\": \"ball\", \"axis\": [0,1,0], \"radius\": 0.3,"
          " \"stiffness\": 10, \"kappa_c\": 0, \"alpha_c\": 0.1, \"mu_x\": 1, \"mu_y\": 1 }", "kappa_c must be > 0" },
        { "{ \"name\": \"t\", \"type\": \"tire\", \"body\": \"ball\", \"shape\": \"circle\", \"axis\": [0,1,0],"
          " \"radius\": 0.3, \"stiffness\": 10, \"kappa_c\": 0.1, \"alpha_c\": 0.1, \"mu_x\": 1, \"mu_y\": 1 }",
          "shape" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memset(&err, 0, sizeof err);
        mbs_model *m = ball_with(bad[k].force, &err);
        CHECK(m == NULL && strstr(err.msg, bad[k].msg), "bad input %zu: got \"%s\", expected \"%s\"", k, err.msg,
              bad[k].msg);
        mbs_model_free(m);
    }
    /* defaults and normalization */
    mbs_model *m = ball_with("{ \"name\": \"t\", \"type\": \"tire\", \"body\": \"ball\", \"axis\": [0,2,0],"
                             " \"plane_normal\": [0,0,3], \"radius\": 0.3, \"stiffness\": 10, \"kappa_c\": 0.1,"
                             " \"alpha_c\": 0.2, \"mu_x\": 1, \"mu_y\": 0.8 }", &err);
    CHECK(m != NULL, "tire: %s", err.msg);
    if (m) {
        const double *e = m->x + m->force[0].x;
        CHECK(m->force[0].type == MBS_FORCE_TIRE && m->force[0].nx == TR_NX && m->force[0].shape == 1, "tire");
        CHECK(e[CT_N] == 1 && e[CT_CHI] == 0 && e[CT_EPS] == 1e-4 && e[TR_V0] == 0.1, "defaults");
        CHECK(e[CT_NRM + 2] == 1 && e[CT_AX + 1] == 1, "normal and axis normalized");
        CHECK(!strcmp(mbs_force_type_name(MBS_FORCE_TIRE), "tire") &&
              mbs_force_type_from_name("contact_plane") == MBS_FORCE_CONTACT_PLANE, "type names");
        mbs_model_free(m);
    }
    /* parameter targets */
    m = mbs_model_load_string(wheel_json, "wheel", &err);
    CHECK(m != NULL, "wheel: %s", err.msg);
    if (m) {
        double v[4] = { 0.7, 0.2, 30000, 4 };
        mbs_model *m2 = mbs_model_with_params(m, v, &err);
        CHECK(m2 != NULL, "with params: %s", err.msg);
        if (m2) {
            const double *e = m2->x + m2->force[0].x;
            CHECK(e[TR_MUX] == 0.7 && e[TR_KC] == 0.2 && e[CT_K] == 30000, "targets mu_x, kappa_c, stiffness");
            mbs_model_free(m2);
        }
        v[1] = 0;
        m2 = mbs_model_with_params(m, v, &err);
        CHECK(m2 == NULL, "kappa_c = 0 rejected with the parameters in place");
        mbs_model_free(m2);
        mbs_model_free(m);
    }
    m = ball_with("{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\","
                  " \"radius\": 0.1, \"stiffness\": 10 }", &err);
    CHECK(m && m->force[0].nx == CT_NX && m->x[m->force[0].x + CT_MU] == 0 && m->x[m->force[0].x + CT_VS] == 0.01,
          "contact_plane friction defaults: none, slip speed 0.01");
    {   /* friction and slip speed as parameter targets */
        char buf[2048];
        snprintf(buf, sizeof buf,
                 "{ \"name\": \"b\", \"bodies\": [ { \"name\": \"ball\", \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } ],"
                 " \"joints\": [ { \"name\": \"z\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"ball\","
                 " \"axis\": [0,0,1] } ], \"forces\": [ { \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\","
                 " \"shape\": \"sphere\", \"radius\": 0.1, \"stiffness\": 10, \"friction\": 0.2 } ],"
                 " \"parameters\": [ { \"name\": \"mu\", \"value\": 0.3, \"sets\": [\"c.friction\"] },"
                 " { \"name\": \"vs\", \"value\": 0.02, \"sets\": [\"c.slip_speed\"] } ] }");
        mbs_model *mp = mbs_model_load_string(buf, "b.json", &err);
        CHECK(mp && mp->x[mp->force[0].x + CT_MU] == 0.3 && mp->x[mp->force[0].x + CT_VS] == 0.02,
              "friction targets: %s", mp ? "" : err.msg);
        if (mp) {
            double v[2] = { -0.1, 0.02 };
            mbs_model *m2 = mbs_model_with_params(mp, v, &err);
            CHECK(m2 == NULL && strstr(err.msg, "friction must be >= 0"), "negative friction parameter: %s",
                  err.msg);
            mbs_model_free(m2);
        }
        mbs_model_free(mp);
    }
    if (m) {
        /* an unknown member of the type */
        mbs_model_free(m);
        m = ball_with("{ \"name\": \"c\", \"type\": \"contact_plane\", \"body\": \"ball\", \"shape\": \"sphere\","
                      " \"radius\": 0.1, \"stiffness\": 10, \"mu_x\": 1 }", &err);
        CHECK(m == NULL && strstr(err.msg, "mu_x"), "mu_x is not a member of contact_plane: %s", err.msg);
        mbs_model_free(m);
    }
}

/* ------------------------------------------------------------------ 5. sensitivities */

static void compare_methods(const char *json, const char *name)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(json, name, &err);
    CHECK(m != NULL, "%s: %s", name, err.msg);
    if (!m) return;
    mbs_sens_result r[3];
    const mbs_sens_method meth[3] = { MBS_SENS_DDM, MBS_SENS_DAVM, MBS_SENS_FD };
    int ok = 1;
    for (int k = 0; k < 3; k++) {
        mbs_sens_options o = mbs_sens_options_default(m);
        o.method = meth[k];
        o.fd_step = 1e-6;
        int rc = mbs_sensitivity(m, &o, &r[k], &err);
        CHECK(rc == MBS_OK, "%s %s: %s", name, mbs_sens_method_name(meth[k]), err.msg);
        ok = ok && rc == MBS_OK;
    }
    if (ok) {
        const int n = r[0].nobj * r[0].nparam;
        double e_adj = 0, e_fd = 0, scale = 0;
        for (int k = 0; k < n; k++) {
            /* per relative change of each parameter */
            const double s = fabs(mbs_param_value(m, k % r[0].nparam));
            scale = fmax(scale, fabs(r[0].grad[k]) * s);
            e_adj = fmax(e_adj, fabs(r[1].grad[k] - r[0].grad[k]) * s);
            e_fd = fmax(e_fd, fabs(r[2].grad[k] - r[0].grad[k]) * s);
        }
        printf("%s: psi %.8e %.8e; |ddm - davm| %.2e, |ddm - fd| %.2e (of %.2e, gradients x |rho|)\n", name,
               r[0].psi[0], r[0].psi[1], e_adj, e_fd, scale);
        for (int j = 0; j < r[0].nparam; j++)
            printf("  d%s/d%-5s ddm % .10e  fd % .10e\n", mbs_objective_name(m, 0), mbs_param_name(m, j), r[0].grad[j],
                   r[2].grad[j]);
        CHECK(scale > 0, "non-zero gradient");
        /* DDM and the discrete adjoint: the exact derivative of the same discrete run, forwards and
         * backwards, each step's linear algebra rounded (MBS_ROUNDOFF of the model) over the steps */
        const double steps = (double)r[0].stats.steps, rs = steps * MBS_ROUNDOFF(mbs_model_nbodies(m));
        CHECK(e_adj <= rs * scale, "%s: ddm = davm: %g > %g", name, e_adj, rs * scale);
        /* FD: its own error, estimated from steps h/2 and 2h (mbs_test_fd_error) */
        mbs_sens_options of = mbs_sens_options_default(m), oe = of;
        of.method = MBS_SENS_FD;
        of.fd_step = 1e-6;
        mbs_test_check_fd(m, &oe, &r[0], &of, &r[2], name);
        /* the two runs are the same forward simulation */
        CHECK(r[0].psi[0] == r[1].psi[0], "same psi");
    }
    for (int k = 0; k < 3; k++) mbs_sens_result_free(&r[k]);
    mbs_model_free(m);
}

static void test_sensitivities(void)
{
    /* ball dropped from 0.3 m (0.2 m above contact), bounces */
    compare_methods(ball_json, "ball");
    /* wheel released slipping (spin 10 rad/s, speed 3 m/s), driven by a spline torque */
    compare_methods(wheel_json, "wheel");
}

int main(void)
{
    test_tangents();
    test_values();
    test_smoothness();
    test_loader();
    test_sensitivities();
    return mbs_test_summary("test_contact");
}
