#include "random_loops.h"
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mbs_testing.h"
#include "random_model.h"

static void unit(mbs_rng *r, double *u)
{
    double n;
    do {
        for (int k = 0; k < 3; k++) u[k] = mbs_rng_uniform(r, -1, 1);
        n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    } while (n < 0.2 || n > 1);
    for (int k = 0; k < 3; k++) u[k] /= n;
}

/* Random orthonormal triad: columns e1, e2, e3 of R (row-major). */
static void triad(mbs_rng *r, double R[9])
{
    double a[3], b[3], c[3];
    unit(r, a);
    do {
        unit(r, b);
        double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        for (int k = 0; k < 3; k++) b[k] -= d * a[k];
    } while (sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]) < 0.3);
    double n = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    for (int k = 0; k < 3; k++) b[k] /= n;
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
    for (int k = 0; k < 3; k++) { R[3 * k] = a[k]; R[3 * k + 1] = b[k]; R[3 * k + 2] = c[k]; }
}

/* The tree, drawn from r: bodies b1..bn, joints j1..jn. */
static int add_tree(mbs_builder *b, mbs_rng *r, int nb, const mbs_model *m0, const double *q0, mbs_error *err)
{
    double g[3] = { mbs_rng_uniform(r, -3, 3), mbs_rng_uniform(r, -3, 3), -9.81 };
    mbs_builder_set_gravity(b, g);
    char name[32], pname[32];
    int h[64];
    for (int i = 0; i < nb; i++) {
        double com[3], I6[6] = { 0.4, 0.45, 0.5, 0.01, -0.02, 0.03 }, p[3];
        for (int k = 0; k < 3; k++) com[k] = mbs_rng_uniform(r, -0.5, 0.5);
        const double sc = mbs_rng_uniform(r, 0.5, 2);
        for (int k = 0; k < 6; k++) I6[k] *= sc;
        snprintf(name, sizeof name, "b%d", i + 1);
        h[i] = mbs_builder_add_body(b, name, mbs_rng_uniform(r, 0.5, 2), com, I6, name, err);
        if (h[i] < 0) return -1;
        for (int k = 0; k < 3; k++) p[k] = mbs_rng_uniform(r, -0.6, 0.6);
        if (mbs_builder_add_point(b, h[i], "p", p, name, err) < 0) return -1;
    }
    for (int i = 0; i < nb; i++) {
        int type = mbs_rng_int(r, MBS_JOINT_TYPE_COUNT);
        int parent = mbs_rng_int(r, i + 1);
        int pb = parent == 0 ? 0 : h[parent - 1];
        mbs_joint_side ps, cs;
        double pp[3], cp[3];
        for (int k = 0; k < 3; k++) { pp[k] = mbs_rng_uniform(r, -0.5, 0.5); cp[k] = mbs_rng_uniform(r, -0.5, 0.5); }
        snprintf(name, sizeof name, "j%d", i + 1);
        snprintf(pname, sizeof pname, "pj%d", i + 1);
        ps.point = mbs_builder_add_point(b, pb, NULL, pp, name, err);
        cs.point = mbs_builder_add_point(b, h[i], NULL, cp, name, err);
        if (ps.point < 0 || cs.point < 0) return -1;
        unit(r, ps.axis); unit(r, ps.ref); ps.has_ref = 1;
        unit(r, cs.axis); unit(r, cs.ref); cs.has_ref = 1;
        /* q0: joint i + 1 of the tree m0 (bodies in the order drawn: every parent precedes its child) */
        char bname[32];
        snprintf(bname, sizeof bname, "b%d", i + 1);
        const int i0 = q0 ? mbs_body_find(m0, bname) : 0;
        const double *jq0 = q0 && m0->joint[i0].nq ? q0 + m0->joint[i0].qoff : NULL;
        const int njq0 = jq0 ? m0->joint[i0].nq : 0;
        if (mbs_builder_add_joint(b, name, (mbs_joint_type)type, pb, h[i], &ps, &cs, jq0, njq0, NULL, 0, name, err) < 0)
            return -1;
    }
    return 0;
}

/* a non-Euler coordinate of a random joint of the tree m0: its joint (body index in m0), index within the joint
 * and model coordinate; -1 when 20 draws found none (trees of fixed joints) */
static int random_coord(mbs_rng *r, const mbs_model *m0, int nb, int *joint, int *c)
{
    for (int tries = 0; tries < 20; tries++) {
        int i = 1 + mbs_rng_int(r, nb);
        const mbs_joint_info *ji = &m0->joint[i];
        if (ji->nq == 0) continue;
        int k = mbs_rng_int(r, ji->nq);
        if (ji->euler >= 0 && k >= ji->euler && k < ji->euler + 4) continue;
        *joint = i;
        *c = k;
        return ji->qoff + k;
    }
    return -1;
}

/* force elements, a spline and parameters of every kind (see random_loops.h) */
static int add_elements(mbs_builder *b, mbs_rng *r, int nb, const mbs_model *m0, mbs_data *d, const double *q,
                        double horizon, mbs_error *err)
{
    char n1[40], n2[40], t[64];
    int ji, jc;
#define PARAM(VALUE)                                                                                 \
    do {                                                                                             \
        int p_ = mbs_builder_add_param(b, t, VALUE, -INFINITY, INFINITY, t, err);                    \
        if (p_ < 0 || mbs_builder_add_param_target(b, p_, t, 1, 0, t, err) < 0) return -1;           \
    } while (0)
    /* a torque or force on a joint coordinate (joint_force) driven by a cubic spline of 5 knots
     * over the horizon */
    double tk[5], vk[5];
    for (int k = 0; k < 5; k++) { tk[k] = horizon * k / 4; vk[k] = mbs_rng_uniform(r, -2, 2); }
    if (mbs_builder_add_function(b, "u", MBS_FUNC_SPLINE, 0, vk, 5, tk, "u", err) < 0) return -1;
    double tq = mbs_rng_uniform(r, 0.5, 2);
    int has_tq = random_coord(r, m0, nb, &ji, &jc) >= 0;
    if (has_tq) {
        if (mbs_builder_add_joint_force(b, "tq", mbs_builder_find_joint(b, m0->joint[ji].name), jc, tq,
                                        mbs_builder_find_function(b, "u"), "tq", err) < 0)
            return -1;
    }
    /* a joint spring-damper */
    int qk = random_coord(r, m0, nb, &ji, &jc);
    const double kj = mbs_rng_uniform(r, 5, 30), cj = mbs_rng_uniform(r, 0.1, 1);
    const double sj = qk >= 0 ? q[qk] + mbs_rng_uniform(r, -0.3, 0.3) : 0;
    if (qk >= 0) {
        if (mbs_builder_add_joint_spring(b, "js", mbs_builder_find_joint(b, m0->joint[ji].name), jc, kj, cj, sj, "js", err) < 0)
            return -1;
    }
    /* a spring-damper between the points p of two bodies (or a ground point) */
    int b1 = 1 + mbs_rng_int(r, nb), b2;
    do b2 = mbs_rng_int(r, nb + 1); while (b2 == b1);
    snprintf(n1, sizeof n1, "b%d", b1);
    int p1 = mbs_builder_find_point(b, mbs_builder_find_body(b, n1), "p"), p2;
    double r1[3], r2[3] = { -0.2, 0.4, 0.3 };
    snprintf(n1, sizeof n1, "b%d.p", b1);
    mbs_point_kinematics(m0, d, mbs_point_find(m0, n1), r1, NULL, NULL);
    if (b2) {
        snprintf(n2, sizeof n2, "b%d", b2);
        p2 = mbs_builder_find_point(b, mbs_builder_find_body(b, n2), "p");
        snprintf(n2, sizeof n2, "b%d.p", b2);
        mbs_point_kinematics(m0, d, mbs_point_find(m0, n2), r2, NULL, NULL);
    } else {
        p2 = mbs_builder_add_point(b, 0, "sd", r2, "sd", err);
    }
    double L = sqrt((r2[0] - r1[0]) * (r2[0] - r1[0]) + (r2[1] - r1[1]) * (r2[1] - r1[1]) +
                    (r2[2] - r1[2]) * (r2[2] - r1[2]));
    L *= mbs_rng_uniform(r, 0.7, 1.3);
    const double ks = mbs_rng_uniform(r, 20, 100), cs = mbs_rng_uniform(r, 0.5, 3);
    if (p1 < 0 || p2 < 0 || mbs_builder_add_spring_damper(b, "sd", p1, p2, ks, cs, &L, "sd", err) < 0) return -1;
    /* a constant force on a body's centre of mass */
    double F[3];
    for (int k = 0; k < 3; k++) F[k] = mbs_rng_uniform(r, -3, 3);
    const int bl = 1 + mbs_rng_int(r, nb);
    snprintf(n1, sizeof n1, "b%d", bl);
    if (mbs_builder_add_body_load(b, "ld", mbs_builder_find_body(b, n1), -1, F, NULL, 0, -1, "ld", err) < 0)
        return -1;

    /* the parameters, each at the value the model has (named as their target) */
    const mbs_body_info *bi = &m0->body[1 + mbs_rng_int(r, nb)];
    snprintf(t, sizeof t, "%s.mass", bi->name);
    PARAM(m0->x[bi->x_mass]);
    bi = &m0->body[1 + mbs_rng_int(r, nb)];
    int k = mbs_rng_int(r, 3);
    static const char *const inames[3] = { "xx", "yy", "zz" };
    snprintf(t, sizeof t, "%s.inertia.%s", bi->name, inames[k]);
    PARAM(m0->x[bi->x_inertia + k]);
    bi = &m0->body[1 + mbs_rng_int(r, nb)];
    k = mbs_rng_int(r, 3);
    snprintf(t, sizeof t, "%s.com[%d]", bi->name, k);
    PARAM(m0->x[bi->x_com + k]);
    const int pb = 1 + mbs_rng_int(r, nb);
    k = mbs_rng_int(r, 3);
    snprintf(n1, sizeof n1, "b%d.p", pb);
    snprintf(t, sizeof t, "b%d.p[%d]", pb, k);
    PARAM(m0->x[m0->point[mbs_point_find(m0, n1)].x + k]);
    snprintf(t, sizeof t, "sd.stiffness");
    PARAM(ks);
    snprintf(t, sizeof t, "sd.damping");
    PARAM(cs);
    snprintf(t, sizeof t, "sd.length");
    PARAM(L);
    if (qk >= 0) {
        snprintf(t, sizeof t, "js.stiffness");
        PARAM(kj);
        snprintf(t, sizeof t, "js.position");
        PARAM(sj);
    }
    if (has_tq) {
        snprintf(t, sizeof t, "tq.value");
        PARAM(tq);
        for (k = 0; k < 5; k++) {
            snprintf(t, sizeof t, "u.values[%d]", k);
            PARAM(vk[k]);
        }
    }
    k = mbs_rng_int(r, 3);
    snprintf(t, sizeof t, "ld.force[%d]", k);
    PARAM(F[k]);
    return 0;
#undef PARAM
}

/* numerical rank of the row-major rows x n matrix A (singular values above 1e-9 of the largest) */
static int mat_rank(int rows, int n, const double *A)
{
    double *B = malloc(sizeof(double) * (size_t)rows * (size_t)n + 1), *sv = calloc((size_t)rows + n + 1, 8);
    double *sup = calloc((size_t)rows + n + 1, 8);
    int rank = -1;
    if (B && sv && sup) {
        memcpy(B, A, sizeof(double) * (size_t)rows * (size_t)n);
        if (LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'N', 'N', rows, n, B, n, sv, NULL, 1, NULL, 1, sup) == 0) {
            rank = 0;
            const int k = rows < n ? rows : n;
            for (int i = 0; i < k; i++)
                if (sv[i] > 1e-9 * sv[0]) rank++;
        }
    }
    free(B);
    free(sv);
    free(sup);
    return rank;
}

/* Add to b, as assembly.fixed, non-Euler coordinates of m that complete the rows of Phi_q at the
 * joints' q0 to full column rank (greedy, in coordinate order). Their number, or -1. */
static int choose_fixed(const mbs_model *m, mbs_builder *b, mbs_error *err)
{
    const int nq = m->nq, nc = mbs_model_nconstraints(m);
    double *q = calloc((size_t)nq + 1, 8), *A = calloc(((size_t)nc + nq) * (size_t)nq + 1, 8);
    mbs_data *d = mbs_data_create(m, NULL);
    int nfix = -1;
    if (!q || !A || !d) goto done;
    for (int i = 1; i <= m->nb; i++)
        for (int c = 0; c < m->joint[i].nq; c++) q[m->joint[i].qoff + c] = m->joint[i].q0[c];
    if (mbs_constraint_jacobian(m, d, q, 0, A) != MBS_OK) goto done;
    int rows = nc, rank = mat_rank(rows, nq, A);
    nfix = 0;
    for (int i = 1; i <= m->nb && rank < nq; i++) {
        const mbs_joint_info *ji = &m->joint[i];
        for (int c = 0; c < ji->nq && rank < nq; c++) {
            if (ji->euler >= 0 && c >= ji->euler && c < ji->euler + 4) continue;
            double *row = A + (size_t)rows * nq;
            memset(row, 0, sizeof(double) * (size_t)nq);
            row[ji->qoff + c] = 1;
            const int r2 = mat_rank(rows + 1, nq, A);
            if (r2 > rank) {
                rows++;
                rank = r2;
                if (mbs_builder_add_assembly_fixed(b, mbs_builder_find_joint(b, ji->name), c, "fixed", err) < 0) {
                    nfix = -1;
                    goto done;
                }
                nfix++;
            }
        }
    }
done:
    free(q);
    free(A);
    mbs_data_free(d);
    return nfix;
}

mbs_model *mbs_test_random_loops(mbs_rng *r, int nb, int ncut, const int *cut_types, int drivers, double **qc)
{
    mbs_test_loops_options o = { drivers, 0, 0, 0, 0 };
    return mbs_test_random_loops_ex(r, nb, ncut, cut_types, &o, qc);
}

mbs_model *mbs_test_random_loops_ex(mbs_rng *r, int nb, int ncut, const int *cut_types,
                                    const mbs_test_loops_options *opt, double **qc)
{
    const int drivers = opt->drivers;
    mbs_error err;
    mbs_rng r0 = *r;
    *qc = NULL;
    /* 1. the tree alone, and a random configuration of it */
    mbs_builder *b = mbs_builder_new("tree", "random loops");
    if (!b || add_tree(b, &r0, nb, NULL, NULL, &err) != 0) {
        fprintf(stderr, "random loops: %s\n", err.msg);
        mbs_builder_free(b);
        return NULL;
    }
    mbs_model *m0 = mbs_builder_finish(b, &err);
    mbs_builder_free(b);
    if (!m0) { fprintf(stderr, "random loops: %s\n", err.msg); return NULL; }
    double *q = calloc((size_t)m0->nq + 1, sizeof *q);
    mbs_test_random_state(&r0, m0, q, NULL, NULL);
    mbs_data *d = mbs_data_create(m0, NULL);
    mbs_kinematics(m0, d, q, NULL, NULL);

    /* 2. the same tree (same draws) and the cut joints */
    mbs_rng r1 = *r;
    b = mbs_builder_new("random_loops", "random loops");
    if (!b || add_tree(b, &r1, nb, m0, opt->q0 ? q : NULL, &err) != 0) goto fail;
    *r = r0;   /* continue after both trees and the state */
    for (int k = 0; k < ncut; k++) {
        int bp = mbs_rng_int(r, nb + 1), bc;
        do bc = 1 + mbs_rng_int(r, nb); while (bc == bp);
        double P[3], R[9];
        for (int i = 0; i < 3; i++) P[i] = mbs_rng_uniform(r, -1, 1);
        triad(r, R);
        char name[32], bn[32];
        snprintf(name, sizeof name, "cut%d_%s", k + 1, mbs_joint_type_name((mbs_joint_type)cut_types[k]));
        mbs_joint_side side[2];
        const int body[2] = { bp, bc };
        for (int s = 0; s < 2; s++) {
            int mb = 0, hb = 0;
            if (body[s] > 0) {
                snprintf(bn, sizeof bn, "b%d", body[s]);
                mb = mbs_body_find(m0, bn);
                hb = mbs_builder_find_body(b, bn);
            }
            double A[9], o[3], loc[3], X[9];
            mbs_body_pose(d, mb, A, o);
            for (int i = 0; i < 3; i++) {
                loc[i] = 0;
                for (int j = 0; j < 3; j++) loc[i] += A[3 * j + i] * (P[j] - o[j]);
            }
            for (int i = 0; i < 3; i++)
                for (int c = 0; c < 3; c++) {
                    X[3 * i + c] = 0;
                    for (int j = 0; j < 3; j++) X[3 * i + c] += A[3 * j + i] * R[3 * j + c];
                }
            side[s].point = mbs_builder_add_point(b, hb, NULL, loc, name, &err);
            if (side[s].point < 0) goto fail;
            for (int i = 0; i < 3; i++) { side[s].axis[i] = X[3 * i]; side[s].ref[i] = X[3 * i + 1]; }
            side[s].has_ref = 1;
        }
        snprintf(bn, sizeof bn, "b%d", bp);
        int hp = bp == 0 ? 0 : mbs_builder_find_body(b, bn);
        snprintf(bn, sizeof bn, "b%d", bc);
        int hc = mbs_builder_find_body(b, bn);
        int j = mbs_builder_add_joint(b, name, (mbs_joint_type)cut_types[k], hp, hc, &side[0], &side[1], NULL, 0, NULL,
                                      0, name, &err);
        if (j < 0 || mbs_builder_set_joint_cut(b, j, name, &err) != MBS_OK) goto fail;
    }
    if (drivers) {
        /* coordinate driver: f = c + A sin(2 pi fr t + ph), f(0) = q_k */
        int k = -1;
        for (int tries = 0; tries < 20 && k < 0; tries++) {
            int i = 1 + mbs_rng_int(r, nb);
            const mbs_joint_info *ji = &m0->joint[i];
            for (int c = 0; c < ji->nq && k < 0; c++)
                if (ji->euler < 0 || c < ji->euler || c >= ji->euler + 4) k = c + 1000 * i;
        }
        if (k >= 0) {
            const mbs_joint_info *ji = &m0->joint[k / 1000];
            const int c = k % 1000;
            double A = mbs_rng_uniform(r, 0.1, 0.5), fr = mbs_rng_uniform(r, 0.2, 2), ph = mbs_rng_uniform(r, -3, 3);
            double num[4] = { A, fr, ph, q[ji->qoff + c] - A * sin(ph) };
            /* a third of them (ph < -1): the spline through that sine at knots
             * around [0, 1], natural or clamped (ends far out, so that a run
             * sees no jump of f'' at the last knot) */
            static const double tk[6] = { -0.3, 0, 0.35, 0.6, 0.8, 3 };
            double vk[6];
            for (int l = 0; l < 6; l++) vk[l] = num[3] + A * sin(6.283185307179586 * fr * tk[l] + ph);
            int f = ph < -1 ? mbs_builder_add_function(b, "drive", MBS_FUNC_SPLINE, fr > 1.1, vk, 6, tk, "drive", &err)
                            : mbs_builder_add_function(b, "drive", MBS_FUNC_SINE, 0, num, 4, NULL, "drive", &err);
            if (f < 0) goto fail;
            if (mbs_builder_add_coordinate_driver(b, "dq", mbs_builder_find_joint(b, ji->name), c, f, 0, 0, "dq",
                                                  &err) < 0)
                goto fail;
        }
        /* distance driver between points p of two bodies */
        int b1 = 1 + mbs_rng_int(r, nb), b2;
        do b2 = mbs_rng_int(r, nb + 1); while (b2 == b1);
        char n1[32], n2[32];
        snprintf(n1, sizeof n1, "b%d", b1);
        snprintf(n2, sizeof n2, "b%d", b2);
        int h1 = mbs_builder_find_body(b, n1), h2 = b2 ? mbs_builder_find_body(b, n2) : 0;
        int p1 = mbs_builder_find_point(b, h1, "p"), p2;
        double r1[3], r2[3];
        snprintf(n1, sizeof n1, "b%d.p", b1);
        mbs_point_kinematics(m0, d, mbs_point_find(m0, n1), r1, NULL, NULL);
        if (b2) {
            p2 = mbs_builder_find_point(b, h2, "p");
            snprintf(n2, sizeof n2, "b%d.p", b2);
            mbs_point_kinematics(m0, d, mbs_point_find(m0, n2), r2, NULL, NULL);
        } else {
            double g0[3] = { 0.3, -0.2, 0.1 };
            p2 = mbs_builder_add_point(b, 0, NULL, g0, "dd", &err);
            memcpy(r2, g0, sizeof g0);
        }
        double L = sqrt((r2[0] - r1[0]) * (r2[0] - r1[0]) + (r2[1] - r1[1]) * (r2[1] - r1[1]) +
                        (r2[2] - r1[2]) * (r2[2] - r1[2]));
        if (p1 < 0 || p2 < 0 ||
            mbs_builder_add_distance_driver(b, "dd", p1, p2, -1, L, mbs_rng_uniform(r, -0.2, 0.2), "dd", &err) < 0)
            goto fail;
    }
    if (opt->elements && add_elements(b, r, nb, m0, d, q, opt->horizon, &err) != 0) goto fail;
    mbs_model *m = mbs_builder_finish(b, &err);
    if (!m) goto fail;
    if (opt->fixed && opt->q0) {   /* hold independent coordinates in the assembly; build again */
        int nfix = choose_fixed(m, b, &err);
        mbs_model_free(m);
        m = nfix < 0 ? NULL : mbs_builder_finish(b, &err);
        if (!m) goto fail;
    }
    mbs_builder_free(b);
    mbs_data_free(d);
    mbs_model_free(m0);
    *qc = q;
    return m;
fail:
    fprintf(stderr, "random loops: %s\n", err.msg);
    mbs_builder_free(b);
    mbs_data_free(d);
    mbs_model_free(m0);
    free(q);
    return NULL;
}

void mbs_test_for_tangent_models(mbs_rng *r, int nloops, int ntrees, mbs_test_model_fn fn, void *user)
{
    char name[64];
    for (int it = 0; it < nloops; it++) {
        int nb = 2 + mbs_rng_int(r, 6), ncut = 1 + mbs_rng_int(r, 2), types[2];
        for (int k = 0; k < ncut; k++) types[k] = (it * 2 + k + 1) % MBS_JOINT_TYPE_COUNT;
        double *qc = NULL;
        mbs_model *m = mbs_test_random_loops(r, nb, ncut, types, it % 2, &qc);
        CHECK(m != NULL, "random loop model %d", it);
        if (!m) continue;
        snprintf(name, sizeof name, "loops %d", it);
        fn(user, r, m, qc, it, name);
        free(qc);
        mbs_model_free(m);
    }
    for (int it = 0; it < ntrees; it++) {
        mbs_model *m = mbs_test_random_tree_p(r, 1 + it % 7, 0, 1);
        CHECK(m != NULL, "random tree %d", it);
        if (!m) continue;
        snprintf(name, sizeof name, "tree %d", it);
        fn(user, r, m, NULL, it, name);
        mbs_model_free(m);
    }
    static const char *files[] = { "models/fivebar.json", "models/slider_crank.json", "models/quarter_car.json",
                                   "models/fourbar_redundant.json" };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        mbs_error err;
        mbs_model *m = mbs_model_load(mbs_test_path(files[f]), &err);
        CHECK(m != NULL, "%s: %s", files[f], err.msg);
        if (!m) continue;
        fn(user, r, m, NULL, -1, files[f]);
        mbs_model_free(m);
    }
}
