/*
 * test_forces.c - force elements and time functions.
 *
 *  1. Random trees (every joint type) with random spring-dampers, joint
 *     springs, joint forces and body loads driven by random time functions,
 *     for the three reference points:
 *       - power balance: dT/dt (complex step along the motion) =
 *         qd.tau + gravity power + element power, where the element power is
 *         computed independently of the kernels: -dV/dt - c ldot^2 for
 *         springs (dV/dt and ldot by complex step), value f(t) qd_k for joint
 *         forces, f.v_P + n.w for body loads;
 *       - conservative generalized forces: Q_e . dq = -dV_e/de along random
 *         directions (complex step), element by element;
 *       - the double path (mbs_inverse_dynamics, mbs_data_prepare_loads)
 *         equals the complex kernels, and tau does not depend on the
 *         reference point.
 *  2. Time functions: splines (natural and clamped) against a dense
 *     reference solve, interpolation, C1/C2 continuity, linear end
 *     extension, d/dknot weights and df/dt against complex step; step and
 *     sine values and derivatives.
 *  3. Design parameters on a stiffness, a free length, a knot value and an
 *     amplitude change the dynamics as expected (linearly, by the right
 *     amount).
 *  4. Loader: a complete model, default free length, the run-time zero
 *     length, and bad inputs (each message names the JSON path).
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

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define NTREES 200
/* the four classic element types; the contact elements (contact_plane,
 * tire) are tested in tests/test_contact.c */
#define NCLASSIC (MBS_FORCE_BODY_LOAD + 1)
static const double H = 1e-20;

static double ddot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* single quotes -> double quotes (static buffer) */
static const char *qj(const char *s)
{
    static char buf[16384];
    size_t n = strlen(s);
    if (n >= sizeof buf) n = sizeof buf - 1;
    for (size_t k = 0; k < n; k++) buf[k] = s[k] == '\'' ? '"' : s[k];
    buf[n] = '\0';
    return buf;
}

/* ------------------------------------------------------------------ random trees */

static void rand_unit(mbs_rng *r, double *u)
{
    double n;
    do {
        for (int k = 0; k < 3; k++) u[k] = mbs_rng_uniform(r, -1, 1);
        n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    } while (n < 0.2 || n > 1);
    for (int k = 0; k < 3; k++) u[k] /= n;
}

/* A random tree of nb bodies, every joint type, as tests/random_model.c
 * (body handles 1..nb "b1".. with point "p", joint handles 0..nb-1), left
 * unfinished so that force elements can be added. */
static mbs_builder *random_tree_builder(mbs_rng *r, int nb)
{
    mbs_error err;
    mbs_builder *b = mbs_builder_new("random", "random tree");
    if (!b) return NULL;
    double g[3] = { mbs_rng_uniform(r, -3, 3), mbs_rng_uniform(r, -3, 3), -9.81 };
    mbs_builder_set_gravity(b, g);
    char name[64];
    for (int i = 0; i < nb; i++) {
        double com[3], I6[6], pm[3], u[3], v[3], w[3];
        for (int k = 0; k < 3; k++) com[k] = mbs_rng_uniform(r, -0.5, 0.5);
        pm[0] = mbs_rng_uniform(r, 0.5, 1.5);
        pm[1] = mbs_rng_uniform(r, 0.5, 1.5);
        pm[2] = mbs_rng_uniform(r, fabs(pm[0] - pm[1]) + 0.05, pm[0] + pm[1] - 0.05);
        /* principal axes u, v, w = u x v */
        rand_unit(r, u);
        rand_unit(r, v);
        double s = ddot3(u, v);
        for (int k = 0; k < 3; k++) v[k] -= s * u[k];
        s = sqrt(ddot3(v, v));
        for (int k = 0; k < 3; k++) v[k] /= s;
        w[0] = u[1] * v[2] - u[2] * v[1];
        w[1] = u[2] * v[0] - u[0] * v[2];
        w[2] = u[0] * v[1] - u[1] * v[0];
        double mass = mbs_rng_uniform(r, 0.5, 2.0), J[9];
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++)
                J[3 * a + c] = 0.1 * mass * (pm[0] * u[a] * u[c] + pm[1] * v[a] * v[c] + pm[2] * w[a] * w[c]);
        I6[0] = J[0]; I6[1] = J[4]; I6[2] = J[8]; I6[3] = J[1]; I6[4] = J[2]; I6[5] = J[5];
        snprintf(name, sizeof name, "b%d", i + 1);
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = mbs_rng_uniform(r, -0.6, 0.6);
        if (mbs_builder_add_body(b, name, mass, com, I6, name, &err) != i + 1 ||
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
    return b;
fail:
    fprintf(stderr, "random tree: %s\n", err.msg);
    mbs_builder_free(b);
    return NULL;
}

/* ------------------------------------------------------------------ random forces */

static int random_function(mbs_builder *b, mbs_rng *r, int k)
{
    mbs_error err;
    char name[32];
    snprintf(name, sizeof name, "f%d", k);
    int type = mbs_rng_int(r, MBS_FUNC_TYPE_COUNT), h;
    double num[8], t[8];
    switch (type) {
    case MBS_FUNC_CONSTANT:
        num[0] = mbs_rng_uniform(r, -2, 2);
        h = mbs_builder_add_function(b, name, MBS_FUNC_CONSTANT, 0, num, 1, NULL, name, &err);
        break;
    case MBS_FUNC_STEP:
        num[0] = mbs_rng_uniform(r, -0.5, 1);
        num[1] = mbs_rng_uniform(r, -2, 2);
        num[2] = num[0] + mbs_rng_uniform(r, 0.2, 1.5);
        num[3] = mbs_rng_uniform(r, -2, 2);
        h = mbs_builder_add_function(b, name, MBS_FUNC_STEP, mbs_rng_int(r, 2), num, 4, NULL, name, &err);
        break;
    case MBS_FUNC_SINE:
        num[0] = mbs_rng_uniform(r, -2, 2);
        num[1] = mbs_rng_uniform(r, 0.1, 2);
        num[2] = mbs_rng_uniform(r, -3, 3);
        num[3] = mbs_rng_uniform(r, -1, 1);
        h = mbs_builder_add_function(b, name, MBS_FUNC_SINE, 0, num, 4, NULL, name, &err);
        break;
    default: {
        int n = 2 + mbs_rng_int(r, 6);
        t[0] = mbs_rng_uniform(r, -0.5, 0.5);
        for (int j = 0; j < n; j++) {
            if (j) t[j] = t[j - 1] + mbs_rng_uniform(r, 0.1, 0.8);
            num[j] = mbs_rng_uniform(r, -2, 2);
        }
        h = mbs_builder_add_function(b, name, MBS_FUNC_SPLINE, mbs_rng_int(r, 2), num, n, t, name, &err);
        break;
    }
    }
    if (h < 0) fprintf(stderr, "random function: %s\n", err.msg);
    return h;
}

/* A non-Euler coordinate of joint handle j, or -1. */
static int random_coord(mbs_builder *b, mbs_rng *r, int j)
{
    mbs_joint_type type = (mbs_joint_type)mbs_builder_joint_type(b, j);
    int nq = mbs_joint_type_nq(type), eu = mbs_joint_type_euler(type);
    int cand[7], nc = 0;
    for (int k = 0; k < nq; k++)
        if (eu < 0 || k < eu || k >= eu + 4) cand[nc++] = k;
    return nc ? cand[mbs_rng_int(r, nc)] : -1;
}

/* A random tree with 2-8 random force elements and 1-4 functions. */
static mbs_model *random_tree_with_forces(mbs_rng *r, int nb)
{
    mbs_error err;
    mbs_builder *b = random_tree_builder(r, nb);
    if (!b) return NULL;
    int nf = 1 + mbs_rng_int(r, 4), ok = 1;
    for (int k = 0; k < nf && ok; k++) ok = random_function(b, r, k) >= 0;
    int ne = 2 + mbs_rng_int(r, 7);
    for (int e = 0; e < ne && ok; e++) {
        char name[32];
        snprintf(name, sizeof name, "e%d", e);
        int type = e < NCLASSIC ? e : mbs_rng_int(r, NCLASSIC);
        int h = 0;
        if (type == MBS_FORCE_SPRING_DAMPER) {
            int b1 = 1 + mbs_rng_int(r, nb), b2 = mbs_rng_int(r, nb + 1);
            if (b2 == b1) b2 = 0;
            double p[3];
            for (int k = 0; k < 3; k++) p[k] = mbs_rng_uniform(r, -1, 1);
            int p1 = mbs_builder_find_point(b, b1, "p");
            int p2 = b2 > 0 && mbs_rng_int(r, 2) ? mbs_builder_find_point(b, b2, "p")
                                                 : mbs_builder_add_point(b, b2, NULL, p, name, &err);
            double len = mbs_rng_uniform(r, 0, 1.5);
            h = mbs_builder_add_spring_damper(b, name, p1, p2, mbs_rng_uniform(r, -5, 50), mbs_rng_uniform(r, 0, 3),
                                              mbs_rng_int(r, 2) ? &len : NULL, name, &err);
        } else if (type == MBS_FORCE_JOINT_SPRING || type == MBS_FORCE_JOINT_FORCE) {
            int j = mbs_rng_int(r, nb), c = random_coord(b, r, j);
            if (c < 0) continue;   /* fixed or spherical joint */
            if (type == MBS_FORCE_JOINT_SPRING)
                h = mbs_builder_add_joint_spring(b, name, j, c, mbs_rng_uniform(r, -5, 50), mbs_rng_uniform(r, 0, 3),
                                                 mbs_rng_uniform(r, -1, 1), name, &err);
            else
                h = mbs_builder_add_joint_force(b, name, j, c, mbs_rng_uniform(r, -3, 3), mbs_rng_int(r, nf + 1) - 1,
                                                name, &err);
        } else {
            int bd = 1 + mbs_rng_int(r, nb);
            double f[3], n[3];
            for (int k = 0; k < 3; k++) { f[k] = mbs_rng_uniform(r, -3, 3); n[k] = mbs_rng_uniform(r, -1, 1); }
            int pt = mbs_rng_int(r, 3);
            pt = pt == 0 ? -1 : pt == 1 ? mbs_builder_find_point(b, bd, "p") : mbs_builder_add_point(b, bd, NULL, f, name, &err);
            h = mbs_builder_add_body_load(b, name, bd, pt, f, mbs_rng_int(r, 3) ? n : NULL, mbs_rng_int(r, 2),
                                          mbs_rng_int(r, nf + 1) - 1, name, &err);
        }
        if (h < 0) {
            fprintf(stderr, "random force: %s\n", err.msg);
            ok = 0;
        }
    }
    mbs_model *m = ok ? mbs_builder_finish(b, &err) : NULL;
    if (ok && !m) fprintf(stderr, "random tree with forces: %s\n", err.msg);
    mbs_builder_free(b);
    return m;
}

/* ------------------------------------------------------------------ complex-step helpers */

static mreal kinetic_energy_cs(const mbs_model *m, const mreal *x, const mbs_ws_cs *w)
{
    mreal T = 0;
    for (int i = 1; i <= m->nb; i++) {
        mreal s[3], t[3], v[3], Jw[3];
        const mreal *om = w->V + 6 * i + 3;
        v3_sub(s, w->rG + 3 * i, w->r + 3 * i);
        v3_cross(t, om, s);
        v3_add(v, w->V + 6 * i, t);
        m3_mv(Jw, w->J + 9 * i, om);
        T += 0.5 * (x[m->body[i].x_mass] * v3_dot(v, v) + v3_dot(om, Jw));
    }
    return T;
}

/* Inverse dynamics through the complex kernels, loads = force elements only. */
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

/* Energy of element e alone at positions q (complex). */
static mreal element_energy_cs(const mbs_model *m, const mreal *x, mbs_ws_cs *w, const mreal *q, int e)
{
    mbs_kin_forward_cs(m, x, w, q, NULL, NULL, 0);
    const mbs_force_ops_cs *ops = mbs_force_ops_of_cs(m->force[e].type);
    return ops->energy ? ops->energy(m, &m->force[e], x, w, q) : 0;
}

/* Length of spring e from the positions in w (complex, no regularization). */
static mreal spring_length_cs(const mbs_model *m, const mreal *x, const mbs_ws_cs *w, int e)
{
    const mbs_force_info *fe = &m->force[e];
    mreal r[2][3], d[3];
    for (int s = 0; s < 2; s++) {
        m3_mv(r[s], w->A + 9 * fe->body[s], x + fe->x_point[s]);
        v3_add(r[s], r[s], w->o + 3 * fe->body[s]);
    }
    v3_sub(d, r[1], r[0]);
    return csqrt(v3_dot(d, d));
}

/* Random direction in q, tangent to every Euler-parameter quadruple. */
static void tangent_direction(mbs_rng *r, const mbs_model *m, const double *q, double *dq)
{
    for (int k = 0; k < m->nq; k++) dq[k] = mbs_rng_uniform(r, -1, 1);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const double *p = q + jt->qoff + jt->euler;
        double *u = dq + jt->qoff + jt->euler, s = 0;
        for (int k = 0; k < 4; k++) s += p[k] * u[k];
        for (int k = 0; k < 4; k++) u[k] -= s * p[k];
    }
}

/* ------------------------------------------------------------------ 1. random trees */

static void test_random_trees(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 77);
    double w_pow = 0, w_grad = 0, w_ref = 0, w_path = 0, w_cons = 0, w_tan = 0, w_jac = 0;
    int counts[NCLASSIC] = { 0 }, ngrad = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        int nb = 1 + mbs_rng_int(&rng, 10);
        mbs_model *m = random_tree_with_forces(&rng, nb);
        CHECK(m != NULL, "random tree %d", tree);
        if (!m) continue;
        for (int e = 0; e < m->nforce; e++) counts[m->force[e].type]++;
        const int nq = m->nq;
        size_t n1 = (size_t)nq + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8), *tau = calloc(n1, 8),
               *tau0 = calloc(n1, 8), *dq = calloc(n1, 8);
        mreal *qc = calloc(n1, sizeof(mreal)), *qdc = calloc(n1, sizeof(mreal)), *qddc = calloc(n1, sizeof(mreal)),
              *tc = calloc(n1, sizeof(mreal)), *tc0 = calloc(n1, sizeof(mreal)),
              *xc = calloc((size_t)m->nx, sizeof(mreal)), *xe = calloc((size_t)m->nx, sizeof(mreal));
        mbs_test_random_state(&rng, m, q, qd, qdd);
        const double t = mbs_rng_uniform(&rng, -0.5, 3);
        mbs_data *d = mbs_data_create(m, NULL);
        mbs_data_set_time(d, t);
        mbs_ws_cs wc;
        CHECK(mbs_ws_init_cs(&wc, m) == 0, "ws");
        for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];

        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, tau) == MBS_OK, "ID: %s", mbs_data_error(d));
            if (ref == MBS_REF_COM) memcpy(tau0, tau, sizeof(double) * (size_t)nq);
            else w_ref = fmax(w_ref, mbs_rel_err(tau, tau0, nq));
        }
        mbs_data_set_ref(d, MBS_REF_COM);
        CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, tau) == MBS_OK, "ID");

        /* the complex kernels give the same tau */
        wc.ref = MBS_REF_COM;
        for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; qddc[k] = qdd[k]; }
        id_cs(m, xc, &wc, qc, qdc, qddc, t, tc);
        {
            double *tr = calloc(n1, 8);
            for (int k = 0; k < nq; k++) tr[k] = creal(tc[k]);
            w_path = fmax(w_path, mbs_rel_err(tr, tau, nq));
            free(tr);
        }

        /* ---- power balance ---- */
        double P = 0, g[3];
        mbs_model_gravity(m, g);
        CHECK(mbs_kinematics(m, d, q, qd, qdd) == MBS_OK, "kinematics");
        for (int k = 0; k < nq; k++) P += qd[k] * tau[k];
        for (int i = 1; i <= m->nb; i++) {
            double vG[3];
            mbs_body_velocity(d, i, vG, NULL);
            P += mbs_body_mass(m, i) * ddot3(g, vG);
        }
        for (int e = 0; e < m->nforce; e++) {
            const mbs_force_info *fe = &m->force[e];
            const double *x = m->x;
            switch (fe->type) {
            case MBS_FORCE_SPRING_DAMPER:
            case MBS_FORCE_JOINT_SPRING: {
                for (int k = 0; k < nq; k++) qc[k] = q[k] + I * H * qd[k];
                double dV = cimag(element_energy_cs(m, xc, &wc, qc, e)) / H;
                double rate = fe->type == MBS_FORCE_JOINT_SPRING ? qd[fe->coord]
                                                                  : cimag(spring_length_cs(m, xc, &wc, e)) / H;
                P += -dV - x[fe->x_damping] * rate * rate;
                break;
            }
            case MBS_FORCE_JOINT_FORCE: {
                double s = fe->func >= 0 ? mbs_function_eval(m, fe->func, t, NULL) : 1;
                P += x[fe->x_value] * s * qd[fe->coord];
                break;
            }
            default: {
                double s = fe->func >= 0 ? mbs_function_eval(m, fe->func, t, NULL) : 1;
                double f[3], n[3], A[9], vP[3], w[3];
                mbs_body_pose(d, fe->body[0], A, NULL);
                for (int k = 0; k < 3; k++) { f[k] = s * x[fe->x_value + k]; n[k] = s * x[fe->x_torque + k]; }
                if (fe->body_axes) {
                    double f2[3], n2[3];
                    for (int r = 0; r < 3; r++) {
                        f2[r] = ddot3(A + 3 * r, f);
                        n2[r] = ddot3(A + 3 * r, n);
                    }
                    memcpy(f, f2, sizeof f);
                    memcpy(n, n2, sizeof n);
                }
                mbs_body_point(d, fe->body[0], x + fe->x_point[0], NULL, vP, NULL);
                mbs_body_velocity(d, fe->body[0], NULL, w);
                P += ddot3(f, vP) + ddot3(n, w);
                break;
            }
            }
        }
        for (int k = 0; k < nq; k++) { qc[k] = q[k] + I * H * qd[k]; qdc[k] = qd[k] + I * H * qdd[k]; }
        mbs_kin_forward_cs(m, xc, &wc, qc, qdc, NULL, 1);
        double dT = cimag(kinetic_energy_cs(m, xc, &wc)) / H;
        w_pow = fmax(w_pow, fabs(dT - P) / (1 + fabs(P)));

        /* ---- conservative generalized forces, element by element ---- */
        for (int e = 0; e < m->nforce; e++) {
            const mbs_force_info *fe = &m->force[e];
            if (fe->type != MBS_FORCE_SPRING_DAMPER && fe->type != MBS_FORCE_JOINT_SPRING) continue;
            /* x with every element off, and with only e on */
            for (int k = 0; k < m->nx; k++) xe[k] = m->x[k];
            for (int o = 0; o < m->nforce; o++)
                for (int k = 0; k < m->force[o].nx; k++) xe[m->force[o].x + k] = 0;
            for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = 0; qddc[k] = 0; }
            id_cs(m, xe, &wc, qc, qdc, qddc, t, tc0);
            for (int k = 0; k < fe->nx; k++) xe[fe->x + k] = m->x[fe->x + k];
            id_cs(m, xe, &wc, qc, qdc, qddc, t, tc);
            for (int rep = 0; rep < 2; rep++) {
                tangent_direction(&rng, m, q, dq);
                double Qdq = 0, scale = 0;
                for (int k = 0; k < nq; k++) {
                    double Qk = creal(tc0[k] - tc[k]);
                    Qdq += Qk * dq[k];
                    scale += fabs(Qk * dq[k]);
                }
                for (int k = 0; k < nq; k++) qc[k] = q[k] + I * H * dq[k];
                double dV = cimag(element_energy_cs(m, xe, &wc, qc, e)) / H;
                w_grad = fmax(w_grad, fabs(Qdq + dV) / (1 + scale));
                for (int k = 0; k < nq; k++) qc[k] = q[k];
                ngrad++;
            }
        }

        /* ---- conservative system: total energy rate = actuation power ---- */
        {
            /* without damping, joint forces and body loads:
             * d/dt (T + V_grav + V_springs) = qd.tau */
            for (int k = 0; k < m->nx; k++) xe[k] = m->x[k];
            for (int o = 0; o < m->nforce; o++) {
                const mbs_force_info *fo = &m->force[o];
                if (fo->x_damping >= 0) xe[fo->x_damping] = 0;
                if (fo->type == MBS_FORCE_JOINT_FORCE || fo->type == MBS_FORCE_BODY_LOAD)
                    for (int k = 0; k < fo->nx; k++) xe[fo->x + k] = 0;
            }
            for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; qddc[k] = qdd[k]; }
            id_cs(m, xe, &wc, qc, qdc, qddc, t, tc);
            double Pa = 0;
            for (int k = 0; k < nq; k++) Pa += qd[k] * creal(tc[k]);
            for (int k = 0; k < nq; k++) { qc[k] = q[k] + I * H * qd[k]; qdc[k] = qd[k] + I * H * qdd[k]; }
            mbs_kin_forward_cs(m, xe, &wc, qc, qdc, NULL, 1);
            mreal E = kinetic_energy_cs(m, xe, &wc) + mbs_forces_energy_cs(m, xe, &wc, qc);
            for (int i = 1; i <= m->nb; i++) E -= xe[m->body[i].x_mass] * v3_dot(xe + m->x_gravity, wc.rG + 3 * i);
            w_cons = fmax(w_cons, fabs(cimag(E) / H - Pa) / (1 + fabs(Pa)));
        }

        /* ---- tangent of the element loads (mbs_forces_apply_d) against
         * complex step, along a random direction in q, qd and the whole
         * model vector ---- */
        {
            mbs_ws_cs wp, dwp;
            CHECK(mbs_ws_init_cs(&wp, m) == 0 && mbs_ws_init_cs(&dwp, m) == 0, "ws");
            mreal *dxv = calloc((size_t)m->nx, sizeof(mreal)), *xr = calloc((size_t)m->nx, sizeof(mreal));
            mreal *dqv = calloc(n1, sizeof(mreal)), *dqdv = calloc(n1, sizeof(mreal)), *dqf = calloc(n1, sizeof(mreal));
            for (int k = 0; k < m->nx; k++) {
                dxv[k] = mbs_rng_uniform(&rng, -1, 1);
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
            mbs_forces_apply_cs(m, xc, &wc, qc, qdc, t);
            /* primal and kinematic tangents from the same complex run */
            for (int k = 0; k < 9 * (m->nb + 1); k++) { wp.A[k] = creal(wc.A[k]); dwp.A[k] = cimag(wc.A[k]) / H; }
            for (int k = 0; k < 3 * (m->nb + 1); k++) {
                wp.o[k] = creal(wc.o[k]); dwp.o[k] = cimag(wc.o[k]) / H;
                wp.r[k] = creal(wc.r[k]); dwp.r[k] = cimag(wc.r[k]) / H;
            }
            for (int k = 0; k < 6 * (m->nb + 1); k++) { wp.V[k] = creal(wc.V[k]); dwp.V[k] = cimag(wc.V[k]) / H; }
            for (int k = 0; k < 9; k++) dwp.A[k] = 7;   /* the ground's tangents must not be read */
            memset(dwp.xfrc, 0, sizeof(mreal) * 15 * (size_t)(m->nb + 1));
            for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; }
            mbs_forces_apply_d_cs(m, xr, &wp, dxv, &dwp, qc, qdc, dqv, dqdv, dqf, t);
            double scale = 1, err = 0;
            for (int k = 15; k < 15 * (m->nb + 1); k++) scale = fmax(scale, fabs(cimag(wc.xfrc[k]) / H));
            for (int k = 0; k < nq; k++) scale = fmax(scale, fabs(cimag(wc.qfrc[k]) / H));
            for (int k = 15; k < 15 * (m->nb + 1); k++) err = fmax(err, fabs(creal(dwp.xfrc[k]) - cimag(wc.xfrc[k]) / H));
            for (int k = 0; k < nq; k++) err = fmax(err, fabs(creal(dqf[k]) - cimag(wc.qfrc[k]) / H));
            w_tan = fmax(w_tan, err / scale);
            for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];
            mbs_ws_free_cs(&wp);
            mbs_ws_free_cs(&dwp);
            free(dxv); free(xr); free(dqv); free(dqdv); free(dqf);
        }

        /* ---- the public ID derivatives (src/dynamics/id_derivatives.c, through
         * mbs_forces_apply_d) against complex step of the kernels ---- */
        if (tree % 4 == 0) {
            double *J = calloc(n1 * n1, 8), *Jd = calloc(n1 * n1, 8), scale = 1, err = 0;
            CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, J, Jd) == MBS_OK, "%s",
                  mbs_data_error(d));
            for (int c = 0; c < nq; c++)
                for (int v = 0; v < 2; v++) {
                    for (int k = 0; k < nq; k++) {
                        qc[k] = q[k] + (v == 0 && k == c ? I * H : 0);
                        qdc[k] = qd[k] + (v == 1 && k == c ? I * H : 0);
                        qddc[k] = qdd[k];
                    }
                    id_cs(m, xc, &wc, qc, qdc, qddc, t, tc);
                    for (int r = 0; r < nq; r++) {
                        double ref = cimag(tc[r]) / H, got = (v ? Jd : J)[r * nq + c];
                        scale = fmax(scale, fabs(ref));
                        err = fmax(err, fabs(got - ref));
                    }
                }
            w_jac = fmax(w_jac, err / scale);
            free(J);
            free(Jd);
        }

        /* the public energy equals the kernel energy */
        CHECK(mbs_kinematics(m, d, q, NULL, NULL) == MBS_OK, "kinematics");
        for (int k = 0; k < nq; k++) qc[k] = q[k];
        mbs_kin_forward_cs(m, xc, &wc, qc, NULL, NULL, 0);
        CHECK_CLOSE(mbs_elastic_energy(m, d, q), creal(mbs_forces_energy_cs(m, xc, &wc, qc)), MBS_ROUNDOFF(nb),
                    "energy");
        CHECK(mbs_forces_degenerate(m, d) == -1, "no spring is degenerate");

        mbs_ws_free_cs(&wc);
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(qdd); free(tau); free(tau0); free(dq);
        free(qc); free(qdc); free(qddc); free(tc); free(tc0); free(xc); free(xe);
    }
    printf("random trees: %d spring_damper, %d joint_spring, %d joint_force, %d body_load elements, "
           "%d gradient checks\n", counts[0], counts[1], counts[2], counts[3], ngrad);
    printf("worst relative errors: power balance %.2e, conservative energy rate %.2e, Q = -dV/dq %.2e, "
           "reference points %.2e, double vs complex kernels %.2e, load tangents %.2e, public ID Jacobians %.2e\n",
           w_pow, w_cons, w_grad, w_ref, w_path, w_tan, w_jac);
    for (int k = 0; k < NCLASSIC; k++) CHECK(counts[k] > 50, "element type %d exercised", k);
    /* each an identity that holds exactly: round-off of trees of at most 10 bodies (the complex-step
     * derivatives have no cancellation error) */
    const double ro = MBS_ROUNDOFF(10);
    CHECK(w_pow < ro, "power balance: %g", w_pow);
    CHECK(w_cons < ro, "conservative energy rate: %g", w_cons);
    CHECK(w_grad < ro, "Q = -dV/dq: %g", w_grad);
    CHECK(w_ref < ro, "reference independence: %g", w_ref);
    CHECK(w_path < ro, "double vs complex: %g", w_path);
    CHECK(w_tan < ro, "load tangents: %g", w_tan);
    CHECK(w_jac < ro, "public ID Jacobians: %g", w_jac);
}

/* ------------------------------------------------------------------ 2. time functions */

/* Dense reference for the spline second derivatives (Gaussian elimination
 * with partial pivoting on the full system). */
static void spline_reference(int n, const double *t, const double *y, int clamped, double *M)
{
    double *A = calloc((size_t)n * (n + 1), sizeof *A);
    int w = n + 1;
    for (int k = 0; k < n; k++) {
        double *row = A + (size_t)k * w;
        if (k > 0 && k < n - 1) {
            double h0 = t[k] - t[k - 1], h1 = t[k + 1] - t[k];
            row[k - 1] = h0;
            row[k] = 2 * (h0 + h1);
            row[k + 1] = h1;
            row[n] = 6 * ((y[k + 1] - y[k]) / h1 - (y[k] - y[k - 1]) / h0);
        } else if (!clamped) {
            row[k] = 1;
        } else if (k == 0) {
            double h = t[1] - t[0];
            row[0] = 2 * h;
            row[1] = h;
            row[n] = 6 * (y[1] - y[0]) / h;
        } else {
            double h = t[n - 1] - t[n - 2];
            row[n - 2] = h;
            row[n - 1] = 2 * h;
            row[n] = -6 * (y[n - 1] - y[n - 2]) / h;
        }
    }
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[(size_t)r * w + c]) > fabs(A[(size_t)p * w + c])) p = r;
        for (int k = 0; k <= n; k++) {
            double s = A[(size_t)c * w + k];
            A[(size_t)c * w + k] = A[(size_t)p * w + k];
            A[(size_t)p * w + k] = s;
        }
        for (int r = c + 1; r < n; r++) {
            double f = A[(size_t)r * w + c] / A[(size_t)c * w + c];
            for (int k = c; k <= n; k++) A[(size_t)r * w + k] -= f * A[(size_t)c * w + k];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = A[(size_t)r * w + n];
        for (int k = r + 1; k < n; k++) s -= A[(size_t)r * w + k] * M[k];
        M[r] = s / A[(size_t)r * w + r];
    }
    free(A);
}

static double spline_reference_eval(int n, const double *t, const double *y, const double *M, double tt)
{
    if (tt < t[0] || tt > t[n - 1]) {
        int e = tt < t[0] ? 0 : n - 1;
        double h = e ? t[n - 1] - t[n - 2] : t[1] - t[0];
        double slope = e ? (y[n - 1] - y[n - 2]) / h + h * (M[n - 2] + 2 * M[n - 1]) / 6
                         : (y[1] - y[0]) / h - h * (2 * M[0] + M[1]) / 6;
        return y[e] + slope * (tt - t[e]);
    }
    int i = 0;
    while (i < n - 2 && tt > t[i + 1]) i++;
    double h = t[i + 1] - t[i], A = (t[i + 1] - tt) / h, B = 1 - A;
    return A * y[i] + B * y[i + 1] + ((A * A * A - A) * M[i] + (B * B * B - B) * M[i + 1]) * h * h / 6;
}

/* A one-body model carrying the given functions JSON. */
static mbs_model *model_with(const char *functions, const char *forces, const char *params)
{
    char json[8192];
    snprintf(json, sizeof json,
             "{ 'gravity': [0, -9.81, 0],"
             "  'bodies': [ { 'name': 'a', 'mass': 2, 'com': [0.5, 0, 0], 'inertia': [0.01, 0.2, 0.2, 0, 0, 0],"
             "               'points': { 'tip': [1, 0, 0] } } ],"
             "  'joints': [ { 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a',"
             "                'q0': [0.3] } ],"
             "  'functions': [ %s ], 'forces': [ %s ], 'parameters': [ %s ] }",
             functions, forces, params);
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_string(qj(json), "fn.json", &err);
    CHECK(m != NULL, "model_with: %s", err.msg);
    return m;
}

/* f, f', f'' of function f at tk, extrapolated from the interval between
 * a and b (tk is one of them) by the cubic, quadratic and linear Lagrange
 * polynomials through four interior points: exact for a piecewise cubic. */
static void one_sided(const mbs_func_info *f, const mreal *xc, double a, double b, double tk, double out[3])
{
    static const double fr[4] = { 0.2, 0.4, 0.6, 0.8 };
    double s[4], v[3][4];
    for (int j = 0; j < 4; j++) {
        s[j] = a + fr[j] * (b - a);
        mreal d1;
        v[0][j] = creal(mbs_func_eval_cs(f, xc, s[j], NULL));
        mbs_func_eval_cs(f, xc, s[j] + I * H, &d1);
        v[1][j] = creal(d1);
        v[2][j] = cimag(d1) / H;
    }
    for (int d = 0; d < 3; d++) {
        int np = 4 - d;   /* cubic: 4 points, quadratic: 3, linear: 2 */
        out[d] = 0;
        for (int j = 0; j < np; j++) {
            double w = 1;
            for (int l = 0; l < np; l++)
                if (l != j) w *= (tk - s[l]) / (s[j] - s[l]);
            out[d] += w * v[d][j];
        }
    }
}

static void test_splines(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 5);
    double w_ref = 0, w_knot = 0, w_c1 = 0, w_c2 = 0, w_dt = 0, w_dy = 0, w_lin = 0, w_ext = 0, w_end = 0;
    for (int trial = 0; trial < 200; trial++) {
        int n = 2 + mbs_rng_int(&rng, 12), clamped = trial % 2;
        double t[16], y[16], M[16];
        t[0] = mbs_rng_uniform(&rng, -1, 1);
        for (int k = 0; k < n; k++) {
            if (k) t[k] = t[k - 1] + mbs_rng_uniform(&rng, 0.01, 1);
            y[k] = mbs_rng_uniform(&rng, -3, 3);
        }
        mbs_builder *b = mbs_builder_new("s", "spline");
        mbs_error err;
        double I6[6] = { 1, 1, 1, 0, 0, 0 };
        int a = mbs_builder_add_body(b, "a", 1, NULL, I6, "a", &err);
        mbs_joint_side s0 = { .point = -1, .axis = { 0, 0, 1 } };
        mbs_builder_add_joint(b, "j", MBS_JOINT_REVOLUTE, 0, a, &s0, &s0, NULL, 0, NULL, 0, "j", &err);
        CHECK(mbs_builder_add_function(b, "s", MBS_FUNC_SPLINE, clamped, y, n, t, "s", &err) == 0, "%s", err.msg);
        mbs_model *m = mbs_builder_finish(b, &err);
        mbs_builder_free(b);
        CHECK(m != NULL, "%s", err.msg);
        if (!m) continue;
        const mbs_func_info *f = &m->func[0];
        spline_reference(n, t, y, clamped, M);
        mreal *xc = calloc((size_t)m->nx, sizeof *xc), wts[16];
        for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];
        /* knots and a dense sample, including outside */
        for (int k = 0; k < n; k++) w_knot = fmax(w_knot, fabs(mbs_function_eval(m, 0, t[k], NULL) - y[k]));
        for (int s = 0; s < 60; s++) {
            double tt = mbs_rng_uniform(&rng, t[0] - 1, t[n - 1] + 1);
            double dfdt, v = mbs_function_eval(m, 0, tt, &dfdt);
            w_ref = fmax(w_ref, fabs(v - spline_reference_eval(n, t, y, M, tt)) / (1 + fabs(v)));
            /* df/dt against complex step in t */
            mreal vc = mbs_func_eval_cs(f, xc, tt + I * H, NULL);
            w_dt = fmax(w_dt, fabs(cimag(vc) / H - dfdt) / (1 + fabs(dfdt)));
            /* weights: f = sum w_k y_k, and w_k = complex-step d f / d y_k */
            mbs_func_dx_cs(f, xc, tt, wts);
            double sum = 0;
            for (int k = 0; k < n; k++) sum += creal(wts[k]) * y[k];
            w_lin = fmax(w_lin, fabs(sum - v) / (1 + fabs(v)));
            for (int k = 0; k < n; k++) {
                xc[f->x + k] += I * H;
                double dk = cimag(mbs_func_eval_cs(f, xc, tt, NULL)) / H;
                xc[f->x + k] = y[k];
                w_dy = fmax(w_dy, fabs(dk - creal(wts[k])));
            }
        }
        /* C0, C1 and C2 at interior knots: one-sided limits of f, f', f''
         * (complex step of f') extrapolated from inside each interval */
        double s2 = 0;   /* scale of f'' */
        for (int k = 0; k < n; k++) s2 = fmax(s2, fabs(M[k]));
        for (int k = 1; k < n - 1; k++) {
            double L[3], R[3];
            one_sided(f, xc, t[k - 1], t[k], t[k], L);
            one_sided(f, xc, t[k + 1], t[k], t[k], R);
            w_c1 = fmax(w_c1, fabs(L[0] - R[0]) / (1 + fabs(y[k])) + fabs(L[1] - R[1]) / (1 + fabs(L[1])));
            w_c2 = fmax(w_c2, fabs(L[2] - R[2]) / (1 + s2));
        }
        /* ends: natural f'' = 0, clamped f' = 0; the linear extension
         * continues f and f' */
        for (int e = 0; e < 2; e++) {
            double te = e ? t[n - 1] : t[0], sgn = e ? -1 : 1, E[3];
            one_sided(f, xc, e ? t[n - 2] : t[1], te, te, E);
            w_end = fmax(w_end, clamped ? fabs(E[1]) / (1 + s2 * (t[n - 1] - t[0])) : fabs(E[2]) / (1 + s2));
            double fo, fi;
            double vo = mbs_function_eval(m, 0, te - sgn * 0.5, &fo), vi = mbs_function_eval(m, 0, te, &fi);
            w_ext = fmax(w_ext, fabs(vo - (vi - sgn * 0.5 * fi)) + fabs(fo - fi));
        }
        free(xc);
        mbs_model_free(m);
    }
    printf("splines: worst error vs dense reference %.2e, at knots %.2e, df/dt %.2e, d/dknot %.2e, "
           "linearity %.2e, C0+C1 %.2e, C2 %.2e, end conditions %.2e, end extension %.2e\n",
           w_ref, w_knot, w_dt, w_dy, w_lin, w_c1, w_c2, w_end, w_ext);
    /* round-off: the spline's tridiagonal system (at most 14 knots) is diagonally dominant with
     * condition number at most 3 h_max / h_min = 300 (spacings 0.01 .. 1): n kappa eps = 9e-13
     * for the values, their weights and df/dt (relative to 1 + |f|); the one-sided limits
     * extrapolate from 4 interior points, which amplifies their round-off by the sum of the
     * Lagrange weights' magnitudes, 15 */
    const double rs = 14 * 300 * MBS_EPS;
    CHECK(w_ref < rs, "spline vs dense reference: %g", w_ref);
    CHECK(w_knot < rs, "interpolation: %g", w_knot);
    CHECK(w_dt < rs, "df/dt: %g", w_dt);
    CHECK(w_dy < rs, "d/dknot: %g", w_dy);
    CHECK(w_lin < rs, "linear in the knot values: %g", w_lin);
    CHECK(w_c1 < 15 * rs, "C0, C1: %g", w_c1);
    CHECK(w_c2 < 15 * rs, "C2: %g", w_c2);
    CHECK(w_end < 15 * rs, "end conditions: %g", w_end);
    CHECK(w_ext < rs, "linear end extension: %g", w_ext);
}

static void test_step_sine(void)
{
    mbs_model *m = model_with("{ 'name': 'c', 'type': 'constant', 'value': 2.5 },"
                              "{ 'name': 's3', 'type': 'step', 't0': 1, 'v0': -1, 't1': 3, 'v1': 2 },"
                              "{ 'name': 's5', 'type': 'step', 't0': 1, 'v0': -1, 't1': 3, 'v1': 2, 'shape': 'quintic' },"
                              "{ 'name': 'sn', 'type': 'sine', 'amplitude': 2, 'frequency': 0.5, 'phase': 0.3, "
                              "  'offset': 1 }",
                              "", "");
    if (!m) return;
    CHECK(mbs_model_nfunctions(m) == 4, "4 functions");
    int c = mbs_function_find(m, "c"), s3 = mbs_function_find(m, "s3"), s5 = mbs_function_find(m, "s5"),
        sn = mbs_function_find(m, "sn");
    CHECK(c == 0 && s3 == 1 && s5 == 2 && sn == 3, "find");
    CHECK(mbs_function_find(m, "nope") == -1, "find unknown");
    CHECK(mbs_function_type_of(m, sn) == MBS_FUNC_SINE && !strcmp(mbs_function_name(m, s5), "s5"), "type, name");
    CHECK(isnan(mbs_function_eval(m, 9, 0, NULL)), "out of range");
    double d;
    /* closed forms: a few roundings (8 eps relative) */
    const double rf = 8 * MBS_EPS;
    CHECK_CLOSE(mbs_function_eval(m, c, 7, &d), 2.5, rf, "constant");
    CHECK(d == 0, "constant rate");
    for (int k = 1; k <= 2; k++) {
        CHECK_CLOSE(mbs_function_eval(m, k, 0, &d), -1, rf, "before");
        CHECK(d == 0, "before: rate");
        CHECK_CLOSE(mbs_function_eval(m, k, 1, &d), -1, rf, "at t0");
        CHECK_CLOSE(d, 0, rf, "at t0: rate (C1)");
        CHECK_CLOSE(mbs_function_eval(m, k, 2, &d), 0.5, rf, "midpoint");
        CHECK_CLOSE(d, k == 1 ? 1.5 * 3 / 2 : 3 * 30.0 / 16 / 2, rf, "midpoint rate");
        CHECK_CLOSE(mbs_function_eval(m, k, 3, &d), 2, rf, "at t1");
        CHECK_CLOSE(mbs_function_eval(m, k, 5, &d), 2, rf, "after");
    }
    /* cubic: 0.25 of the way = -1 + 3 (0.0625 * 2.5) */
    CHECK_CLOSE(mbs_function_eval(m, s3, 1.5, NULL), -1 + 3 * 0.0625 * 2.5, rf, "cubic at 1/4");
    CHECK_CLOSE(mbs_function_eval(m, s5, 1.5, NULL), -1 + 3 * (0.015625 * (10 - 3.75 + 0.375)), rf,
                "quintic at 1/4");
    /* the sine's argument w t + phase (up to 19) rounded: its error times the amplitude 2 */
    for (double tt = -1; tt < 6; tt += 0.37)
        CHECK_CLOSE(mbs_function_eval(m, sn, tt, &d), 1 + 2 * sin(M_PI * tt + 0.3),
                    2 * (M_PI * fabs(tt) + 1.3) * rf, "sine");
    mbs_function_eval(m, sn, 0.4, &d);
    CHECK_CLOSE(d, 2 * M_PI * cos(M_PI * 0.4 + 0.3), 2 * M_PI * 2 * rf, "sine rate");
    /* d/dt and d/dx by complex step; quintic: f'' continuous at the ends */
    mreal *xc = calloc((size_t)m->nx, sizeof *xc), dx[4];
    for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];
    double w_dt = 0, w_dx = 0, w_c2 = 0;
    for (int k = 0; k < 4; k++) {
        const mbs_func_info *f = &m->func[k];
        for (double tt = -0.3; tt < 4; tt += 0.113) {
            mreal dfdt;
            mreal v = mbs_func_eval_cs(f, xc, tt + I * H, NULL);
            mbs_func_eval_cs(f, xc, tt, &dfdt);
            w_dt = fmax(w_dt, fabs(cimag(v) / H - creal(dfdt)));
            mbs_func_dx_cs(f, xc, tt, dx);
            for (int j = 0; j < f->nx; j++) {
                mreal save = xc[f->x + j];
                xc[f->x + j] += I * H;
                w_dx = fmax(w_dx, fabs(cimag(mbs_func_eval_cs(f, xc, tt, NULL)) / H - creal(dx[j])));
                xc[f->x + j] = save;
            }
        }
    }
    for (double te = 1; te <= 3; te += 2) {
        mreal d1;
        mbs_func_eval_cs(&m->func[s5], xc, te + (te == 1 ? 1e-7 : -1e-7) + I * H, &d1);
        w_c2 = fmax(w_c2, fabs(cimag(d1) / H));
    }
    printf("step, sine: worst df/dt %.2e, df/dx %.2e, quintic f'' at the ends %.2e\n", w_dt, w_dx, w_c2);
    /* analytical against complex-step derivatives: round-off of a few tens of operations on values
     * of order 2 pi amplitude (64 eps 2 pi 2); f'' 1e-7 inside the ends: f''' (1e-7), f''' at most
     * 60 (v1 - v0) / (t1 - t0)^3 = 22.5, taken twice */
    CHECK(w_dt < 64 * MBS_EPS * 4 * M_PI, "df/dt: %g", w_dt);
    CHECK(w_dx < 64 * MBS_EPS * 4 * M_PI, "df/dx: %g", w_dx);
    CHECK(w_c2 < 2 * 22.5 * 1e-7, "quintic C2: %g", w_c2);
    free(xc);
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 3. parameters */

/* tau at a fixed state for parameter values vals (model copy). */
static void tau_at(const mbs_model *m, const double *vals, double t, double *tau)
{
    mbs_error err;
    mbs_model *c = mbs_model_with_params(m, vals, &err);
    CHECK(c != NULL, "with params: %s", err.msg);
    if (!c) return;
    mbs_data *d = mbs_data_create(c, NULL);
    mbs_data_set_time(d, t);
    double q[1] = { 0.7 }, qd[1] = { -0.4 }, qdd[1] = { 0.2 };
    CHECK(mbs_inverse_dynamics(c, d, q, qd, qdd, tau) == MBS_OK, "ID");
    mbs_data_free(d);
    mbs_model_free(c);
}

static void test_parameters(void)
{
    mbs_model *m = model_with(
        "{ 'name': 'sp', 'type': 'spline', 'times': [0, 1, 2, 3], 'values': [0, 1, 0.5, 2] },"
        "{ 'name': 'sn', 'type': 'sine', 'amplitude': 2, 'frequency': 0.5 }",
        "{ 'name': 's1', 'type': 'spring_damper', 'body1': 'ground', 'point1': [0, 1, 0], 'point2': 'a.tip',"
        "  'stiffness': 30, 'damping': 0.5, 'length': 0.8 },"
        "{ 'name': 'm1', 'type': 'joint_force', 'joint': 'j1', 'value': 3, 'function': 'sp' },"
        "{ 'name': 'm2', 'type': 'joint_force', 'joint': 'j1', 'function': 'sn' }",
        "{ 'name': 'k', 'value': 30, 'sets': ['s1.stiffness'] },"
        "{ 'name': 'L', 'value': 0.8, 'lower': 0, 'sets': ['s1.length'] },"
        "{ 'name': 'y2', 'value': 0.5, 'sets': ['sp.values[2]'] },"
        "{ 'name': 'A', 'value': 2, 'sets': ['sn.amplitude'] }");
    if (!m) return;
    CHECK(mbs_model_nforces(m) == 3 && mbs_model_nparams(m) == 4, "sizes");
    const double t = 1.7, base[4] = { 30, 0.8, 0.5, 2 };
    double tau0, tau1, tau2;
    tau_at(m, base, t, &tau0);
    /* spring: stiffness and free length enter linearly */
    double slope_k = 0, slope_l = 0;
    for (int p = 0; p < 4; p++) {
        double v[4];
        memcpy(v, base, sizeof v);
        v[p] = base[p] + 0.25;
        tau_at(m, v, t, &tau1);
        v[p] = base[p] + 0.5;
        tau_at(m, v, t, &tau2);
        CHECK(fabs(tau1 - tau0) > 1e-3, "parameter %d changes tau (%g -> %g)", p, tau0, tau1);
        /* differences of taus, each off by the round-off of a one-body model (MBS_ROUNDOFF(1)
         * relative to |tau|) */
        CHECK_CLOSE(tau2 - tau1, tau1 - tau0, 3 * MBS_ROUNDOFF(1) * fmax(fabs(tau0), fabs(tau2)),
                    "parameter %d: tau linear in it", p);
        if (p == 0) slope_k = (tau1 - tau0) / 0.25;
        if (p == 1) slope_l = (tau1 - tau0) / 0.25;
    }
    /* knot value: Q = 3 f(t), tau = ... - Q, so d tau / d y2 = -3 w_2(t) */
    {
        mreal xc[64] = { 0 }, wts[4];
        for (int k = 0; k < m->nx && k < 64; k++) xc[k] = m->x[k];
        mbs_func_dx_cs(&m->func[0], xc, t, wts);
        double v[4];
        memcpy(v, base, sizeof v);
        v[2] = base[2] + 0.25;
        tau_at(m, v, t, &tau1);
        CHECK_CLOSE((tau1 - tau0) / 0.25, -3 * creal(wts[2]), 2 * MBS_ROUNDOFF(1) * fmax(fabs(tau0), 1) / 0.25,
                    "knot value");
        v[2] = base[2];
        v[3] = 0;
        tau_at(m, v, t, &tau1);
        CHECK_CLOSE(tau1 - tau0, 2 * sin(M_PI * t), 2 * MBS_ROUNDOFF(1) * fmax(fabs(tau0), 1), "amplitude");
    }
    /* spring: the slopes against the geometry: tau contains
     * -Q = (k (l - l0) + c ldot) dl/dq, so dtau/dk = (l - l0) dl/dq and
     * dtau/dl0 = -k dl/dq */
    {
        mbs_data *d = mbs_data_create(m, NULL);
        double q[1] = { 0.7 }, qd[1] = { -0.4 };
        mbs_kinematics(m, d, q, qd, NULL);
        double r[3], v[3];
        mbs_point_kinematics(m, d, mbs_point_find(m, "a.tip"), r, v, NULL);
        double dd[3] = { r[0] - 0, r[1] - 1, r[2] }, l = sqrt(ddot3(dd, dd));
        double dldq = ddot3(dd, v) / l / qd[0];
        /* the slopes are tau differences over 0.25 (as above); length and energy: a few roundings */
        const double rt = 2 * MBS_ROUNDOFF(1) * fmax(fabs(tau0), 1) / 0.25;
        CHECK_CLOSE(slope_k, (l - 0.8) * dldq, rt, "dtau/dk = (l - l0) dl/dq");
        CHECK_CLOSE(slope_l, -30 * dldq, rt, "dtau/dl0 = -k dl/dq");
        CHECK_CLOSE(mbs_force_length(m, d, 0), l, 64 * MBS_EPS, "length");
        CHECK(isnan(mbs_force_length(m, d, 1)), "length of a joint force");
        CHECK_CLOSE(mbs_elastic_energy(m, d, q), 0.5 * 30 * (l - 0.8) * (l - 0.8), 64 * MBS_EPS * 30, "energy");
        mbs_data_free(d);
    }
    /* the public parameter derivatives of ID agree with the slopes above
     * (tau is linear in each of these parameters) */
    {
        mbs_data *d = mbs_data_create(m, NULL);
        mbs_data_set_time(d, t);
        double q[1] = { 0.7 }, qd[1] = { -0.4 }, qdd[1] = { 0.2 }, dtau[4];
        CHECK(mbs_inverse_dynamics_param_derivatives(m, d, q, qd, qdd, dtau) == MBS_OK, "%s", mbs_data_error(d));
        const double rt = 2 * MBS_ROUNDOFF(1) * fmax(fabs(tau0), 1) / 0.25;
        CHECK_CLOSE(dtau[0], slope_k, rt, "dtau/dk");
        CHECK_CLOSE(dtau[1], slope_l, rt, "dtau/dl0");
        mreal xc[64] = { 0 }, wts[4];
        for (int k = 0; k < m->nx && k < 64; k++) xc[k] = m->x[k];
        mbs_func_dx_cs(&m->func[0], xc, t, wts);
        CHECK_CLOSE(dtau[2], -3 * creal(wts[2]), MBS_ROUNDOFF(1), "dtau/dy2");
        CHECK_CLOSE(dtau[3], -sin(M_PI * t), MBS_ROUNDOFF(1), "dtau/dA");
        mbs_data_free(d);
    }
    /* a parameter may not make a damping negative or a step backwards */
    mbs_error err = { 0, "" };
    mbs_model *bad = mbs_model_load_string(
        qj("{ 'bodies': [ { 'name': 'a', 'mass': 1, 'points': { 'tip': [1, 0, 0] } } ],"
           "  'joints': [ { 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a' } ],"
           "  'functions': [ { 'name': 'st', 'type': 'step', 't0': 0, 'v0': 0, 't1': 1, 'v1': 1 } ],"
           "  'forces': [ { 'name': 's1', 'type': 'spring_damper', 'body1': 'ground', 'point1': [0, 1, 0],"
           "                'point2': 'a.tip', 'damping': 1 } ],"
           "  'parameters': [ { 'name': 'c', 'value': 1, 'sets': ['s1.damping'] },"
           "                  { 'name': 'T', 'value': 1, 'sets': ['st.t1'] } ] }"),
        "p.json", &err);
    CHECK(bad != NULL, "%s", err.msg);
    if (bad) {
        double v[2] = { -1, 1 };
        mbs_model *c = mbs_model_with_params(bad, v, &err);
        CHECK(c == NULL && strstr(err.msg, "forces[0]") && strstr(err.msg, "damping must be >= 0"), "%s", err.msg);
        mbs_model_free(c);
        v[0] = 1;
        v[1] = -0.5;
        c = mbs_model_with_params(bad, v, &err);
        CHECK(c == NULL && strstr(err.msg, "functions[0]") && strstr(err.msg, "t1 (-0.5) must be greater"), "%s",
              err.msg);
        mbs_model_free(c);
        /* default free length = distance at q0 = sqrt(2) */
        CHECK_CLOSE(bad->x[bad->force[0].x_free], sqrt(2), 8 * MBS_EPS, "default free length (a few roundings)");
        mbs_model_free(bad);
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ 4. loader */

static const char *BASE_BODIES =
    "'bodies': [ { 'name': 'a', 'mass': 1, 'inertia': [0.1, 0.1, 0.1, 0, 0, 0], 'points': { 'tip': [1, 0, 0] } },"
    "            { 'name': 'b', 'mass': 1, 'inertia': [0.1, 0.1, 0.1, 0, 0, 0], 'points': { 'p': [0, 1, 0] } },"
    "            { 'name': 'c', 'mass': 1, 'inertia': [0.1, 0.1, 0.1, 0, 0, 0] } ],"
    "'joints': [ { 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a' },"
    "            { 'name': 'j2', 'type': 'cardan', 'parent': 'a', 'child': 'b', 'parent_point': 'tip' },"
    "            { 'name': 'j3', 'type': 'floating', 'parent': 'ground', 'child': 'c' } ]";

static void expect_error(int line, const char *functions, const char *forces, const char *params,
                         const char *n1, const char *n2)
{
    char json[8192];
    snprintf(json, sizeof json, "{ %s, 'functions': [ %s ], 'forces': [ %s ], 'parameters': [ %s ] }", BASE_BODIES,
             functions, forces, params);
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_string(qj(json), "bad.json", &err);
    if (getenv("MBS_TEST_VERBOSE")) printf("line %d: %s\n", line, err.msg);
    CHECK(m == NULL, "line %d: accepted", line);
    mbs_model_free(m);
    CHECK(err.code == MBS_ERR_MODEL, "line %d: status %d: %s", line, err.code, err.msg);
    CHECK(strncmp(err.msg, "bad.json: ", 10) == 0, "line %d: %s", line, err.msg);
    CHECK(strstr(err.msg, n1) != NULL, "line %d: message lacks \"%s\": %s", line, n1, err.msg);
    CHECK(!n2 || strstr(err.msg, n2) != NULL, "line %d: message lacks \"%s\": %s", line, n2, err.msg);
}
#define BAD(fn, fo, pa, n1, n2) expect_error(__LINE__, fn, fo, pa, n1, n2)

static void test_loader(void)
{
    /* a complete model */
    char json[8192];
    snprintf(json, sizeof json,
             "{ %s, 'functions': [ { 'name': 'ramp', 'type': 'step', 't0': 0, 'v0': 0, 't1': 1, 'v1': 1 },"
             "                     { 'name': 'u', 'type': 'spline', 'times': [0, 1, 2], 'values': [0, 1, 0],"
             "                       'ends': 'clamped' } ],"
             "  'forces': [ { 'name': 's1', 'type': 'spring_damper', 'point1': 'a.tip', 'point2': 'b.p',"
             "                'stiffness': -10, 'damping': 1 },"
             "              { 'name': 's2', 'type': 'spring_damper', 'body1': 'c', 'body2': 'ground',"
             "                'point2': [0, 0, 2], 'stiffness': 100, 'length': 1.5 },"
             "              { 'name': 'k1', 'type': 'joint_spring', 'joint': 'j1', 'stiffness': 5, 'position': 0.1 },"
             "              { 'name': 'k2', 'type': 'joint_spring', 'joint': 'j2', 'coordinate': 'theta2',"
             "                'stiffness': 5, 'damping': 0.2 },"
             "              { 'name': 'k3', 'type': 'joint_spring', 'joint': 'j3', 'coordinate': 'j3.z',"
             "                'stiffness': 5 },"
             "              { 'name': 'm1', 'type': 'joint_force', 'joint': 'j2', 'coordinate': 0,"
             "                'value': 2, 'function': 'u' },"
             "              { 'name': 'm2', 'type': 'joint_force', 'joint': 'j1', 'value': -1 },"
             "              { 'name': 'w', 'type': 'body_load', 'body': 'b', 'point': 'p', 'force': [0, 0, 1],"
             "                'torque': [1, 0, 0], 'axes': 'body', 'function': 'ramp' },"
             "              { 'name': 'w2', 'type': 'body_load', 'body': 'c', 'force': [1, 0, 0] } ],"
             "  'parameters': [ { 'name': 'k', 'value': 100, 'sets': ['s2.stiffness', 'k1.stiffness'] },"
             "                  { 'name': 'y1', 'value': 1, 'sets': ['u.values[1]'] },"
             "                  { 'name': 'F', 'value': 1, 'sets': ['w.force[2]', 'ramp.v1'] } ] }",
             BASE_BODIES);
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_string(qj(json), "full.json", &err);
    CHECK(m != NULL, "full model: %s", err.msg);
    if (m) {
        CHECK(mbs_model_nforces(m) == 9 && mbs_model_nfunctions(m) == 2, "counts");
        static const char *names[] = { "s1", "s2", "k1", "k2", "k3", "m1", "m2", "w", "w2" };
        static const int types[] = { 0, 0, 1, 1, 1, 2, 2, 3, 3 };
        for (int k = 0; k < 9; k++) {
            CHECK(!strcmp(mbs_force_name(m, k), names[k]) && mbs_force_find(m, names[k]) == k, "name %d", k);
            CHECK((int)mbs_force_type_of(m, k) == types[k], "type %d", k);
        }
        CHECK(!strcmp(mbs_force_type_name(MBS_FORCE_BODY_LOAD), "body_load"), "type name");
        CHECK(mbs_force_type_from_name("joint_spring") == MBS_FORCE_JOINT_SPRING, "type from name");
        CHECK(m->force[3].coord == mbs_joint_coord_offset(m, 2) + 1, "cardan theta2");
        CHECK(m->force[4].coord == mbs_joint_coord_offset(m, 3) + 2, "floating z");
        CHECK(m->force[8].x_point[0] == m->body[3].x_com, "body load at the CoM");
        CHECK(m->force[7].body_axes == 1 && m->force[7].func == 0, "axes, function");
        /* the copy keeps everything */
        double vals[3] = { 50, 0.5, 2 };
        mbs_model *c = mbs_model_with_params(m, vals, &err);
        CHECK(c != NULL, "%s", err.msg);
        if (c) {
            CHECK(c->x[c->force[1].x_stiffness] == 50 && c->x[c->force[2].x_stiffness] == 50, "k");
            CHECK(c->x[c->func[1].x + 1] == 0.5 && c->x[c->force[7].x_value + 2] == 2, "knot, force");
            CHECK_CLOSE(mbs_function_eval(c, 1, 1, NULL), 0.5, 8 * MBS_EPS, "knot in the copy");
            CHECK(c->func[1].t != m->func[1].t && c->func[1].t[2] == 2, "deep copy");
            mbs_model_free(c);
        }
        /* springs at their default free length exert nothing at q0 */
        CHECK_CLOSE(m->x[m->force[0].x_free], m->force[0].l_init, 8 * MBS_EPS, "default length");
        /* the summary lists the functions and elements */
        FILE *f = tmpfile();
        if (f) {
            char buf[8192] = "";
            mbs_model_print(m, f);
            rewind(f);
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fclose(f);
            CHECK(strstr(buf, "\nfunctions\n") && strstr(buf, "3 knots on [0, 2] (clamped)"), "print: %s", buf);
            CHECK(strstr(buf, "a.tip -- b.p: k -10, c 1") && strstr(buf, "j2.theta2: k 5, c 0.2, q0 0"), "print");
            CHECK(strstr(buf, "c (centre of mass): force [1, 0, 0]") && strstr(buf, "(body axes) x ramp(t)"),
                  "print: %s", buf);
        }
        mbs_model_free(m);
    }

    /* the run-time zero length: a spring whose points meet at q = pi */
    m = model_with("", "{ 'name': 's', 'type': 'spring_damper', 'body1': 'ground', 'point1': [-1, 0, 0],"
                       "  'point2': 'a.tip', 'stiffness': 10, 'damping': 2, 'length': 0.5 }", "");
    if (m) {
        mbs_data *d = mbs_data_create(m, NULL);
        double q[1] = { M_PI }, qd[1] = { 1 }, qdd[1] = { 0 }, tau[1];
        CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, tau) == MBS_OK, "ID");
        CHECK(isfinite(tau[0]), "finite at zero length: %g", tau[0]);
        CHECK(mbs_forces_degenerate(m, d) == 0, "degenerate reported");
        /* points 1 m from the axis meet: the length is the rounding of cos(pi), sin(pi): 1.2e-16 */
        CHECK(mbs_force_length(m, d, 0) < 8 * MBS_EPS, "length %g", mbs_force_length(m, d, 0));
        double qdd2[1];
        CHECK(mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, NULL, qdd2) == MBS_OK, "FD");
        CHECK(isfinite(qdd2[0]), "FD finite");
        q[0] = 0.3;
        CHECK(mbs_kinematics(m, d, q, NULL, NULL) == MBS_OK && mbs_forces_degenerate(m, d) == -1, "not degenerate");
        mbs_data_free(d);
        mbs_model_free(m);
    }

    /* ---- bad inputs ---- */
    const char *sd = "{ 'name': 's', 'type': 'spring_damper', 'point1': 'a.tip', 'point2': 'b.p' }";
    BAD("{ 'name': 'f', 'type': 'cosine', 'value': 1 }", "", "", "functions[0].type", "unknown function type");
    BAD("{ 'name': 'f', 'type': 'constant', 'value': 1, 'amp': 2 }", "", "", "functions[0]", "unknown member \"amp\"");
    BAD("{ 'name': 'f', 'type': 'sine', 'amplitude': 1 }", "", "", "functions[0]", "\"frequency\"");
    BAD("{ 'name': 'f', 'type': 'step', 't0': 1, 'v0': 0, 't1': 1, 'v1': 1 }", "", "", "functions[0].t1",
        "must be greater than t0");
    BAD("{ 'name': 'f', 'type': 'step', 't0': 0, 'v0': 0, 't1': 1, 'v1': 1, 'shape': 'cosine' }", "", "",
        "functions[0].shape", "unknown value \"cosine\"");
    BAD("{ 'name': 'f', 'type': 'spline', 'times': [0, 2, 1], 'values': [0, 1, 2] }", "", "", "functions[0].times",
        "strictly increasing");
    BAD("{ 'name': 'f', 'type': 'spline', 'times': [0, 1, 2], 'values': [0, 1] }", "", "", "functions[0].values",
        "expected 3 values");
    BAD("{ 'name': 'f', 'type': 'spline', 'times': [0], 'values': [0] }", "", "", "functions[0].times",
        "at least 2");
    BAD("{ 'name': 'f', 'type': 'spline', 'times': [0, 1], 'values': [0, 1], 'ends': 'free' }", "", "",
        "functions[0].ends", "\"natural\", \"clamped\"");
    BAD("{ 'name': 'f', 'type': 'constant', 'value': 1 }, { 'name': 'f', 'type': 'constant', 'value': 2 }", "", "",
        "functions[1]", "duplicate function name \"f\"");
    BAD("", "{ 'name': 's', 'type': 'spring', 'point1': 'a.tip', 'point2': 'b.p' }", "", "forces[0].type",
        "unknown force type");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'point1': 'a.nope', 'point2': 'b.p' }", "", "forces[0].point1",
        "unknown point \"a.nope\"");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'body1': 'a', 'point1': 'nope', 'point2': 'b.p' }", "",
        "forces[0].point1", "unknown point \"nope\"");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'body1': 'zz', 'point2': 'b.p' }", "", "forces[0].body1",
        "unknown body \"zz\"");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'point2': 'b.p' }", "", "forces[0]", "\"body1\"");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'point1': 'a.tip', 'point2': 'b.p', 'damping': -1 }", "",
        "forces[0].damping", "must be >= 0");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'point1': 'a.tip', 'point2': 'b.p', 'length': -1 }", "",
        "forces[0].length", "must be >= 0");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'point1': 'a.tip', 'body2': 'ground', 'point2': [1, 0, 0] }", "",
        "forces[0]", "coincide in the initial configuration");
    BAD("", "{ 'name': 's', 'type': 'spring_damper', 'point1': 'a.tip', 'point2': 'b.p', 'colour': 1 }", "",
        "forces[0]", "unknown member \"colour\"");
    BAD("", "{ 'name': 'k', 'type': 'joint_spring', 'joint': 'j9' }", "", "forces[0].joint", "unknown joint \"j9\"");
    BAD("", "{ 'name': 'k', 'type': 'joint_spring', 'joint': 'j2' }", "", "forces[0]",
        "give \"coordinate\" (theta1, theta2)");
    BAD("", "{ 'name': 'k', 'type': 'joint_spring', 'joint': 'j2', 'coordinate': 'phi' }", "",
        "forces[0].coordinate", "no coordinate \"phi\"");
    BAD("", "{ 'name': 'k', 'type': 'joint_spring', 'joint': 'j2', 'coordinate': 2 }", "",
        "forces[0].coordinate", "out of range 0..1");
    BAD("", "{ 'name': 'k', 'type': 'joint_spring', 'joint': 'j3', 'coordinate': 'e1' }", "",
        "forces[0].coordinate", "Euler parameter");
    BAD("", "{ 'name': 'k', 'type': 'joint_spring', 'joint': 'j1', 'damping': -0.1 }", "", "forces[0].damping",
        "must be >= 0");
    BAD("", "{ 'name': 'm', 'type': 'joint_force', 'joint': 'j1' }", "", "forces[0]", "\"value\"");
    BAD("", "{ 'name': 'm', 'type': 'joint_force', 'joint': 'j1', 'function': 'g' }", "", "forces[0].function",
        "unknown function \"g\"");
    BAD("", "{ 'name': 'w', 'type': 'body_load', 'body': 'a' }", "", "forces[0]", "needs \"force\" or \"torque\"");
    BAD("", "{ 'name': 'w', 'type': 'body_load', 'body': 'ground', 'force': [1, 0, 0] }", "", "forces[0].body",
        "moving body");
    BAD("", "{ 'name': 'w', 'type': 'body_load', 'body': 'a', 'force': [1, 0], 'axes': 'body' }", "",
        "forces[0].force", "3 numbers");
    BAD("", "{ 'name': 'w', 'type': 'body_load', 'body': 'a', 'force': [1, 0, 0], 'axes': 'local' }", "",
        "forces[0].axes", "\"global\", \"body\"");
    BAD("", "{ 'name': 'w', 'type': 'body_load', 'body': 'a', 'point': 'p', 'force': [1, 0, 0] }", "",
        "forces[0].point", "body a has no point");
    {
        char two[512];
        snprintf(two, sizeof two, "%s, %s", sd, sd);
        BAD("", two, "", "forces[1]", "duplicate force name \"s\"");
    }
    BAD("", sd, "{ 'name': 'k', 'value': 1, 'sets': ['s.stifness'] }", "parameters[0].sets[0]",
        "spring_damper s has no member \"stifness\"");
    BAD("{ 'name': 'f', 'type': 'spline', 'times': [0, 1, 2], 'values': [0, 1, 2] }", "",
        "{ 'name': 'k', 'value': 1, 'sets': ['f.values[3]'] }", "parameters[0].sets[0]", "[0] .. [2]");
    BAD("", sd, "{ 'name': 'c', 'value': -1, 'sets': ['s.damping'] }", "forces[0]", "damping must be >= 0");
    BAD("", sd, "{ 'name': 'c', 'value': 1, 'sets': ['s.damping', 's.damping'] }", "parameters[0].sets[1]",
        "s.damping is already set");
}

int main(void)
{
    test_random_trees();
    test_splines();
    test_step_sine();
    test_parameters();
    test_loader();
    return mbs_test_summary("forces");
}
