#include "random_model.h"
#include <math.h>
#include <stdio.h>
#include "mbs_testing.h"

static void rand_unit(mbs_rng *r, double *u)
{
    double n;
    do {
        for (int k = 0; k < 3; k++) u[k] = mbs_rng_uniform(r, -1, 1);
        n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    } while (n < 0.2 || n > 1);
    for (int k = 0; k < 3; k++) u[k] /= n;
}

/* Random rotation from a random unit quaternion. */
static void rand_rot(mbs_rng *r, double *R)
{
    double p[4], n = 0;
    for (int k = 0; k < 4; k++) { p[k] = mbs_rng_uniform(r, -1, 1); n += p[k] * p[k]; }
    n = sqrt(n);
    for (int k = 0; k < 4; k++) p[k] /= n;
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    R[0] = 2 * (e0 * e0 + e1 * e1) - 1; R[1] = 2 * (e1 * e2 - e0 * e3); R[2] = 2 * (e1 * e3 + e0 * e2);
    R[3] = 2 * (e1 * e2 + e0 * e3); R[4] = 2 * (e0 * e0 + e2 * e2) - 1; R[5] = 2 * (e2 * e3 - e0 * e1);
    R[6] = 2 * (e1 * e3 - e0 * e2); R[7] = 2 * (e2 * e3 + e0 * e1); R[8] = 2 * (e0 * e0 + e3 * e3) - 1;
}

static int add_drivers(mbs_rng *r, mbs_builder *b, int nb, const int *jh, const int *jtype, int ndriver,
                       mbs_error *err);

/* The random tree of mbs_test_random_tree_p with ndriver coordinate drivers. */
static mbs_model *random_tree(mbs_rng *r, int nb, unsigned types, int with_params, int ndriver)
{
    mbs_error err;
    mbs_builder *b = mbs_builder_new("random", "random tree");
    if (!b) return NULL;
    double g[3] = { mbs_rng_uniform(r, -3, 3), mbs_rng_uniform(r, -3, 3), -9.81 };
    mbs_builder_set_gravity(b, g);
    if (!types) types = (1u << MBS_JOINT_TYPE_COUNT) - 1;
    int handle[64], jpar[64], jh[64], jtype[64];
    double jp[64][3], jc[64][3], bmass[64], bcom[64][3], bI[64][6], bp[64][3];
    char name[64];
    for (int i = 0; i < nb; i++) {
        double com[3], I6[6], R[9], pm[3];
        for (int k = 0; k < 3; k++) com[k] = mbs_rng_uniform(r, -0.5, 0.5);
        /* principal moments satisfying the triangle inequality */
        pm[0] = mbs_rng_uniform(r, 0.5, 1.5);
        pm[1] = mbs_rng_uniform(r, 0.5, 1.5);
        pm[2] = mbs_rng_uniform(r, fabs(pm[0] - pm[1]) + 0.05, pm[0] + pm[1] - 0.05);
        rand_rot(r, R);
        double J[9];
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) {
                J[3 * a + c] = 0;
                for (int k = 0; k < 3; k++) J[3 * a + c] += R[3 * a + k] * pm[k] * R[3 * c + k];
            }
        double mass = mbs_rng_uniform(r, 0.5, 2.0);
        I6[0] = J[0] * 0.1 * mass; I6[1] = J[4] * 0.1 * mass; I6[2] = J[8] * 0.1 * mass;
        I6[3] = J[1] * 0.1 * mass; I6[4] = J[2] * 0.1 * mass; I6[5] = J[5] * 0.1 * mass;
        snprintf(name, sizeof name, "b%d", i + 1);
        handle[i] = mbs_builder_add_body(b, name, mass, com, I6, name, &err);
        bmass[i] = mass;
        for (int k = 0; k < 3; k++) bcom[i][k] = com[k];
        for (int k = 0; k < 6; k++) bI[i][k] = I6[k];
        if (handle[i] < 0) goto fail;
        double p[3], u[3];
        for (int k = 0; k < 3; k++) p[k] = mbs_rng_uniform(r, -0.6, 0.6);
        rand_unit(r, u);
        if (mbs_builder_add_point(b, handle[i], "p", p, name, &err) < 0) goto fail;
        for (int k = 0; k < 3; k++) bp[i][k] = p[k];
        if (mbs_builder_add_vector(b, handle[i], "u", u, name, &err) < 0) goto fail;
    }
    for (int i = 0; i < nb; i++) {
        int type;
        do type = mbs_rng_int(r, MBS_JOINT_TYPE_COUNT); while (!(types & (1u << type)));
        int parent = mbs_rng_int(r, i + 1); /* 0 = ground, else body index */
        int pb = parent == 0 ? 0 : handle[parent - 1];
        mbs_joint_side ps, cs;
        double pp[3], cp[3];
        for (int k = 0; k < 3; k++) { pp[k] = mbs_rng_uniform(r, -0.5, 0.5); cp[k] = mbs_rng_uniform(r, -0.5, 0.5); }
        snprintf(name, sizeof name, "j%d", i + 1);
        char pname[32];
        snprintf(pname, sizeof pname, "pj%d", i + 1);
        ps.point = mbs_builder_add_point(b, pb, pb == 0 ? NULL : pname, pp, name, &err);
        cs.point = mbs_builder_add_point(b, handle[i], "cj", cp, name, &err);
        jp[i][0] = pp[0]; jp[i][1] = pp[1]; jp[i][2] = pp[2];
        jpar[i] = parent;
        jc[i][0] = cp[0]; jc[i][1] = cp[1]; jc[i][2] = cp[2];
        if (ps.point < 0 || cs.point < 0) goto fail;
        rand_unit(r, ps.axis); rand_unit(r, ps.ref); ps.has_ref = 1;
        rand_unit(r, cs.axis); rand_unit(r, cs.ref); cs.has_ref = 1;
        jtype[i] = type;
        jh[i] = mbs_builder_add_joint(b, name, (mbs_joint_type)type, pb, handle[i], &ps, &cs, NULL, 0, NULL, 0,
                                      name, &err);
        if (jh[i] < 0) goto fail;
    }
    /* design parameters of every kind: mass, CoM coordinate, inertia entry,
     * gravity, and a "length" that moves a named point and the joint point
     * placed on it (two targets, the second with scale -0.5 and an offset) */
    if (with_params) {
        static const char *const ent[6] = { "xx", "yy", "zz", "xy", "xz", "yz" };
        char pn[64], tg[96];
        int h;
        h = mbs_builder_add_param(b, "g_y", g[1], -10, 10, "param", &err);
        if (h < 0 || mbs_builder_add_param_target(b, h, "gravity[1]", 1, 0, "param", &err) < 0) goto fail;
        for (int i = 0; i < nb; i++) {
            int k = mbs_rng_int(r, 3), e = mbs_rng_int(r, 6);
            snprintf(pn, sizeof pn, "m%d", i + 1);
            snprintf(tg, sizeof tg, "b%d.mass", i + 1);
            h = mbs_builder_add_param(b, pn, bmass[i], 0.1, 10, "param", &err);
            if (h < 0 || mbs_builder_add_param_target(b, h, tg, 1, 0, "param", &err) < 0) goto fail;
            snprintf(pn, sizeof pn, "c%d", i + 1);
            snprintf(tg, sizeof tg, "b%d.com[%d]", i + 1, k);
            h = mbs_builder_add_param(b, pn, bcom[i][k], -1, 1, "param", &err);
            if (h < 0 || mbs_builder_add_param_target(b, h, tg, 1, 0, "param", &err) < 0) goto fail;
            snprintf(pn, sizeof pn, "I%d", i + 1);
            snprintf(tg, sizeof tg, "b%d.inertia.%s", i + 1, ent[e]);
            h = mbs_builder_add_param(b, pn, bI[i][e], -10, 10, "param", &err);
            if (h < 0 || mbs_builder_add_param_target(b, h, tg, 1, 0, "param", &err) < 0) goto fail;
            snprintf(pn, sizeof pn, "L%d", i + 1);
            snprintf(tg, sizeof tg, "b%d.cj[%d]", i + 1, k);
            h = mbs_builder_add_param(b, pn, jc[i][k], -2, 2, "param", &err);
            if (h < 0 || mbs_builder_add_param_target(b, h, tg, 1, 0, "param", &err) < 0) goto fail;
            snprintf(tg, sizeof tg, "b%d.p[%d]", i + 1, k);
            if (mbs_builder_add_param_target(b, h, tg, -0.5, bp[i][k] + 0.5 * jc[i][k], "param", &err) < 0) goto fail;
            if (jpar[i] > 0) {
                snprintf(pn, sizeof pn, "P%d", i + 1);
                snprintf(tg, sizeof tg, "b%d.pj%d[%d]", jpar[i], i + 1, k);
                h = mbs_builder_add_param(b, pn, jp[i][k], -2, 2, "param", &err);
                if (h < 0 || mbs_builder_add_param_target(b, h, tg, 1, 0, "param", &err) < 0) goto fail;
            }
        }
    }
    if (ndriver > 0 && add_drivers(r, b, nb, jh, jtype, ndriver, &err) < 0) goto fail;
    mbs_model *m = mbs_builder_finish(b, &err);
    mbs_builder_free(b);
    if (!m) fprintf(stderr, "random tree: %s\n", err.msg);
    return m;
fail:
    fprintf(stderr, "random tree: %s\n", err.msg);
    mbs_builder_free(b);
    return NULL;
}

/* ndriver coordinate drivers (fewer if the tree has fewer coordinates that
 * are not Euler parameters) on distinct coordinates drawn at random, each
 * following a sine law; every other driven coordinate also carries a
 * joint spring-damper and a constant joint force. */
static int add_drivers(mbs_rng *r, mbs_builder *b, int nb, const int *jh, const int *jtype, int ndriver,
                       mbs_error *err)
{
    int cj[448], cc[448], nc = 0;
    for (int i = 0; i < nb; i++) {
        const int nq = mbs_joint_type_nq((mbs_joint_type)jtype[i]), eu = mbs_joint_type_euler((mbs_joint_type)jtype[i]);
        for (int c = 0; c < nq; c++)
            if (eu < 0 || c < eu || c >= eu + 4) { cj[nc] = i; cc[nc++] = c; }
    }
    for (int k = 0; k < ndriver && nc > 0; k++) {
        const int pick = mbs_rng_int(r, nc), i = cj[pick], c = cc[pick];
        cj[pick] = cj[nc - 1];
        cc[pick] = cc[nc - 1];
        nc--;
        char name[32];
        double law[4] = { mbs_rng_uniform(r, 0.1, 0.5), mbs_rng_uniform(r, 0.2, 1.5), mbs_rng_uniform(r, 0, 6),
                          mbs_rng_uniform(r, -0.5, 0.5) };
        snprintf(name, sizeof name, "law%d", k + 1);
        const int fh = mbs_builder_add_function(b, name, MBS_FUNC_SINE, 0, law, 4, NULL, name, err);
        if (fh < 0) return fh;
        snprintf(name, sizeof name, "drive%d", k + 1);
        if (mbs_builder_add_coordinate_driver(b, name, jh[i], c, fh, 0, 0, name, err) < 0) return -1;
        if (k % 2) continue;
        snprintf(name, sizeof name, "spring%d", k + 1);
        if (mbs_builder_add_joint_spring(b, name, jh[i], c, mbs_rng_uniform(r, 1, 10), mbs_rng_uniform(r, 0.1, 1),
                                         0, name, err) < 0)
            return -1;
        snprintf(name, sizeof name, "push%d", k + 1);
        if (mbs_builder_add_joint_force(b, name, jh[i], c, mbs_rng_uniform(r, -2, 2), -1, name, err) < 0) return -1;
    }
    return 0;
}

mbs_model *mbs_test_random_tree_p(mbs_rng *r, int nb, unsigned types, int with_params)
{
    return random_tree(r, nb, types, with_params, 0);
}

mbs_model *mbs_test_random_tree_driven(mbs_rng *r, int nb, unsigned types, int ndriver)
{
    return random_tree(r, nb, types, 0, ndriver);
}

void mbs_test_random_state(mbs_rng *r, const mbs_model *m, double *q, double *qd, double *qdd)
{
    for (int k = 0; k < m->nq; k++) {
        q[k] = mbs_rng_uniform(r, -1.5, 1.5);
        if (qd) qd[k] = mbs_rng_uniform(r, -2, 2);
        if (qdd) qdd[k] = mbs_rng_uniform(r, -3, 3);
    }
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        double *p = q + jt->qoff + jt->euler, n = 0;
        for (int k = 0; k < 4; k++) n += p[k] * p[k];
        n = sqrt(n);
        for (int k = 0; k < 4; k++) p[k] /= n;
        if (qd) {
            double *pd = qd + jt->qoff + jt->euler, s = 0;
            for (int k = 0; k < 4; k++) s += p[k] * pd[k];
            for (int k = 0; k < 4; k++) pd[k] -= s * p[k];
            if (qdd) {
                double *pdd = qdd + jt->qoff + jt->euler, s2 = 0, pp = 0;
                for (int k = 0; k < 4; k++) { s2 += p[k] * pdd[k]; pp += pd[k] * pd[k]; }
                for (int k = 0; k < 4; k++) pdd[k] += (-pp - s2) * p[k];
            }
        }
    }
}

mbs_model *mbs_test_random_tree(mbs_rng *r, int nb, unsigned types)
{
    return mbs_test_random_tree_p(r, nb, types, 0);
}

mbs_builder *mbs_test_random_tree_builder(mbs_rng *r, int nb, int tangent)
{
    mbs_error err;
    mbs_builder *b = mbs_builder_new("random", "random tree");
    if (!b) return NULL;
    const double g[3] = { mbs_rng_uniform(r, -3, 3), mbs_rng_uniform(r, -3, 3), -9.81 };
    mbs_builder_set_gravity(b, g);
    char name[32];
    for (int i = 0; i < nb; i++) {
        double com[3], p[3], I6[6], pm[3];
        for (int k = 0; k < 3; k++) { com[k] = mbs_rng_uniform(r, -0.5, 0.5); p[k] = mbs_rng_uniform(r, -0.6, 0.6); }
        pm[0] = mbs_rng_uniform(r, 0.5, 1.5);
        pm[1] = mbs_rng_uniform(r, 0.5, 1.5);
        pm[2] = mbs_rng_uniform(r, fabs(pm[0] - pm[1]) + 0.05, pm[0] + pm[1] - 0.05);
        const double mass = mbs_rng_uniform(r, 0.5, 2.0);
        for (int k = 0; k < 3; k++) { I6[k] = 0.1 * mass * pm[k]; I6[3 + k] = 0; }
        snprintf(name, sizeof name, "b%d", i + 1);
        if (mbs_builder_add_body(b, name, mass, com, I6, name, &err) != i + 1 ||
            mbs_builder_add_point(b, i + 1, "p", p, name, &err) < 0)
            goto fail;
    }
    for (int i = 0; i < nb; i++) {
        const int type = 1 + mbs_rng_int(r, MBS_JOINT_TYPE_COUNT - 1), parent = mbs_rng_int(r, i + 1);
        mbs_joint_side ps, cs;
        double pp[3], cp[3];
        for (int k = 0; k < 3; k++) { pp[k] = mbs_rng_uniform(r, -0.5, 0.5); cp[k] = mbs_rng_uniform(r, -0.5, 0.5); }
        snprintf(name, sizeof name, "j%d", i + 1);
        ps.point = mbs_builder_add_point(b, parent, NULL, pp, name, &err);
        cs.point = mbs_builder_add_point(b, i + 1, NULL, cp, name, &err);
        if (ps.point < 0 || cs.point < 0) goto fail;
        for (int k = 0; k < 3; k++) {
            ps.axis[k] = mbs_rng_uniform(r, -1, 1); ps.ref[k] = mbs_rng_uniform(r, -1, 1);
            cs.axis[k] = mbs_rng_uniform(r, -1, 1); cs.ref[k] = mbs_rng_uniform(r, -1, 1);
        }
        ps.has_ref = cs.has_ref = 1;
        if (mbs_builder_add_joint(b, name, (mbs_joint_type)type, parent, i + 1, &ps, &cs, NULL, 0, NULL, 0, name,
                                  &err) != i)
            goto fail;
        const int tg = tangent == 2 || (tangent == 1 && mbs_rng_int(r, 2));
        if ((type == MBS_JOINT_SPHERICAL || type == MBS_JOINT_FLOATING) && tg &&
            mbs_builder_set_joint_velocities(b, i, MBS_VELOCITIES_TANGENT, name, &err) != MBS_OK)
            goto fail;
    }
    return b;
fail:
    fprintf(stderr, "random tree: %s\n", err.msg);
    mbs_builder_free(b);
    return NULL;
}
