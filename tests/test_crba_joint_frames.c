/*
 * test_crba_joint_frames.c - the mass matrix and the bias forces in joint
 * frames (src/kernels/crba_joint_frames.c) against the global-axes
 * kernels.
 *
 *   - mbs_mass_matrix takes the joint-frame pass on every model whose
 *     joints are fixed, revolute, prismatic, spherical or floating, and
 *     its M equals the global composite-rigid-body pass (mbs_crba) to the
 *     round-off of two recursions over the tree, MBS_ROUNDOFF(nb) relative
 *     to the largest entry (testutil.h: each entry is a sum over at most nb
 *     bodies of terms through about 50 roundings, each at most 20 times the
 *     result; two ways of computing it differ by at most twice that, which
 *     the factor 20 covers);
 *   - mbs_mass_matrix_sparse holds bit for bit the dense entries (the same
 *     pass writes both);
 *   - the joint-frame bias forces h = ID(q, qd, 0) with joint loads equal
 *     mbs_bias_forces (global Newton-Euler) to the same bound;
 *   - models with another joint type (cardan, cylindrical, planar) keep the
 *     global pass: mbs_mass_matrix is bit for bit mbs_crba;
 *   - off the unit sphere (|p|^2 = 1 + dp) the public call refuses |p|
 *     beyond 1e-6 of 1; within it, and at dp = 0.0201 through the internal
 *     call, M is the global one to a multiple of dp (off_unit_sphere);
 * on random trees (250 of the eligible kinds, Euler-parameter spherical and
 * floating joints included, and 50 of all kinds; 30 more with 1 to 4 free
 * bodies added, mbs_generate_free_bodies_json), human43 and the example
 * robots (fixed and floating base) when present.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"

#define ELIGIBLE ((1u << MBS_JOINT_FIXED) | (1u << MBS_JOINT_REVOLUTE) | (1u << MBS_JOINT_PRISMATIC) | \
                  (1u << MBS_JOINT_SPHERICAL) | (1u << MBS_JOINT_FLOATING))

/* 5 random states of m: worst M and h differences, in units of the bound, into w[0], w[1] */
static void compare(mbs_rng *rng, const mbs_model *m, const char *name, int eligible, double *w)
{
    const int nq = m->nq;
    const size_t n1 = (size_t)nq + 1;
    double *q = calloc(n1, 8), *qd = calloc(n1, 8), *h1 = calloc(n1, 8), *h2 = calloc(n1, 8);
    double *M1 = calloc(n1 * n1, 8), *M2 = calloc(n1 * n1, 8), *M3 = calloc(n1 * n1, 8);
    mbs_data *d = mbs_data_create(m, NULL);
    mbs_tree_pattern p;
    mbs_error err;
    CHECK(d && mbs_model_tree_pattern(m, &p, &err) == MBS_OK, "%s: data, pattern", name);
    double *val = calloc((size_t)p.nnz + 1, 8);
    CHECK(mbs_crbajf_usable(d) == eligible, "%s: joint-frame mass matrix usable %d, expected %d", name,
          mbs_crbajf_usable(d), eligible);
    const double bound = MBS_ROUNDOFF(m->nb);
    for (int rep = 0; rep < 5; rep++) {
        mbs_test_random_state(rng, m, q, qd, NULL);
        CHECK(mbs_mass_matrix(m, d, q, M1) == MBS_OK, "%s: M: %s", name, mbs_data_error(d));
        mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
        mbs_mass_terms(m, m->x, &d->ws);
        mbs_crba(m, &d->ws, M2);
        const double eM = mbs_rel_err(M1, M2, nq * nq);
        if (eligible) {
            CHECK(eM <= bound, "%s: joint-frame M vs global %g > %g", name, eM, bound);
            w[0] = fmax(w[0], eM / bound);
        } else {
            CHECK(eM == 0, "%s: ineligible model: M differs from mbs_crba by %g", name, eM);
        }
        CHECK(mbs_mass_matrix_sparse(m, d, q, &p, val) == MBS_OK, "%s: sparse M: %s", name, mbs_data_error(d));
        mbs_tree_to_dense(&p, val, M3, nq);
        int same = 1;
        for (int r = 0; r < nq; r++)
            for (int c = 0; c <= r; c++) same &= M3[r * nq + c] == M1[r * nq + c];
        CHECK(same, "%s: sparse M is not the dense M bit for bit", name);
        if (!eligible || m->nforce) continue;
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = mbs_rng_uniform(rng, -1, 1);
        CHECK(mbs_abajf_usable(d), "%s: joint-frame bias forces usable", name);
        mbs_crbajf_bias_forces(m, d, q, qd, h1);
        CHECK(mbs_bias_forces(m, d, q, qd, h2) == MBS_OK, "%s: h: %s", name, mbs_data_error(d));
        const double eh = mbs_rel_err(h1, h2, nq);
        CHECK(eh <= bound, "%s: joint-frame h vs global %g > %g", name, eh, bound);
        w[1] = fmax(w[1], eh / bound);
        mbs_data_clear_loads(d);
    }
    free(val);
    mbs_tree_pattern_free(&p);
    mbs_data_free(d);
    free(q); free(qd); free(h1); free(h2); free(M1); free(M2); free(M3);
}

/* Off the unit sphere, |p|^2 = 1 + dp on every Euler quadruple: the public
 * calls refuse |p| more than 1e-6 from 1 (mbs_state_check), so the
 * joint-frame M (free-body blocks included) is reached only within that;
 * there, as at |p|^2 = 1.0201 through the internal call, it differs from
 * the global pass by the terms the two write for |p| = 1 only. On each
 * side, every Euler joint on a path from the ground brings A(p) = |p|^2
 * A(p/|p|) + (|p|^2 - 1) 1, within 2 dp of the rotation (relative), at most
 * twice (a congruence): 4 dp each, and the two motion columns of an entry
 * G(p) or E(p), dp/2 each: with ne Euler joints on the longest such path,
 * 2 (4 ne + 1) dp for the two sides, plus the round-off of both
 * (MBS_ROUNDOFF(nb)). The worst difference / bound into *w. */
static void off_unit_sphere(mbs_rng *rng, double *w)
{
    const double dps[2] = { 5e-7, 0.0201 };
    for (int t = 0; t < 20; t++) {
        mbs_error e;
        mbs_model *r = mbs_test_random_tree(rng, 1 + mbs_rng_int(rng, 6), ELIGIBLE);
        char *text = r ? mbs_generate_free_bodies_json(r, 1 + mbs_rng_int(rng, 4), &e) : NULL;
        mbs_model *m = text ? mbs_model_load_string(text, "free bodies", &e) : NULL;
        CHECK(m != NULL, "random tree plus free bodies: %s", r ? e.msg : "tree");
        mbs_data *d = m ? mbs_data_create(m, NULL) : NULL;
        const int nq = m ? m->nq : 0;
        int ne = 0;
        for (int i = 1; m && i <= m->nb; i++) {
            int n = 0;
            for (int j = i; j > 0; j = m->joint[j].parent) n += m->joint[j].euler >= 0;
            ne = n > ne ? n : ne;
        }
        double *q = calloc((size_t)nq + 1, 8), *M1 = calloc((size_t)nq * nq + 1, 8), *M2 = calloc((size_t)nq * nq + 1, 8);
        for (int k = 0; d && k < 2; k++) {
            mbs_test_random_state(rng, m, q, NULL, NULL);
            for (int i = 1; i <= m->nb; i++)
                for (int c = 0; c < 4 && m->joint[i].euler >= 0; c++) q[m->joint[i].qoff + m->joint[i].euler + c] *= sqrt(1 + dps[k]);
            const int rc = mbs_mass_matrix(m, d, q, M1);
            if (k == 1) {
                CHECK(rc == MBS_ERR_NUMERIC && strstr(mbs_data_error(d), "not normalized"),
                      "|p| = 1.01 refused by mbs_mass_matrix: %d %s", rc, mbs_data_error(d));
                mbs_crbajf_mass_matrix(m, d, q, 0, M1);
            } else {
                CHECK(rc == MBS_OK, "|p|^2 = 1 + %g accepted: %s", dps[k], mbs_data_error(d));
            }
            mbs_kin_forward(m, m->x, &d->ws, q, NULL, NULL, 0);
            mbs_mass_terms(m, m->x, &d->ws);
            mbs_crba(m, &d->ws, M2);
            const double eM = mbs_rel_err(M1, M2, nq * nq), bound = MBS_ROUNDOFF(m->nb) + 2 * (4 * ne + 1) * dps[k];
            CHECK(eM <= bound, "|p|^2 = 1 + %g: joint-frame M vs global %g > %g", dps[k], eM, bound);
            w[k] = fmax(w[k], eM / bound);
        }
        free(q); free(M1); free(M2);
        mbs_data_free(d);
        mbs_model_free(m);
        mbs_model_free(r);
        free(text);
    }
}

static void robots(mbs_rng *rng, double *w)
{
    char dir[4096], path[4200];
    if (mbs_test_urdf_dir(dir, sizeof dir) != 0) {
        printf("example robots: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return;
    }
    const char *names[] = { "a1.urdf", "solo12.urdf", "simple_humanoid.urdf", "talos_full_v2.urdf",
                            "panda.urdf", "baxter.urdf" };
    int n = 0;
    for (int r = 0; r < 6; r++)
        for (int fl = 0; fl < 2; fl++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[r]);
            mbs_urdf_options o = { fl, 0, NULL, NULL, 1, MBS_VELOCITIES_EULER_RATES };
            mbs_error err;
            mbs_model *m = mbs_model_load_urdf(path, &o, &err);
            CHECK(m != NULL, "%s: %s", path, err.msg);
            if (!m) continue;
            compare(rng, m, names[r], 1, w);
            mbs_model_free(m);
            n++;
        }
    printf("example robots (%d robot/base pairs): M %.3f, h %.3f of the bound\n", n, w[0], w[1]);
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2121);
    double w[2] = { 0, 0 }, wr[2] = { 0, 0 };
    for (int t = 0; t < 300; t++) {
        const int eligible = t < 250;
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 12), eligible ? ELIGIBLE : 0);
        CHECK(m != NULL, "tree");
        if (!m) continue;
        int kinds = 1;
        for (int i = 1; i <= m->nb; i++) {
            const mbs_joint_type ty = m->joint[i].type;
            kinds &= ty != MBS_JOINT_CARDAN && ty != MBS_JOINT_CYLINDRICAL && ty != MBS_JOINT_PLANAR;
        }
        compare(&rng, m, "random tree", kinds, w);
        mbs_model_free(m);
    }
    /* random trees plus free bodies (floating joints from the ground that
     * carry one body each: their blocks in closed form) */
    for (int t = 0; t < 30; t++) {
        mbs_error e;
        mbs_model *r = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 6), ELIGIBLE);
        char *text = r ? mbs_generate_free_bodies_json(r, 1 + mbs_rng_int(&rng, 4), &e) : NULL;
        mbs_model *m = text ? mbs_model_load_string(text, "free bodies", &e) : NULL;
        CHECK(m != NULL, "random tree plus free bodies: %s", r ? e.msg : "tree");
        if (m) compare(&rng, m, "random tree plus free bodies", 1, w);
        mbs_model_free(m);
        mbs_model_free(r);
        free(text);
    }
    printf("random trees: M %.3f, h %.3f of the bound MBS_ROUNDOFF(nb)\n", w[0], w[1]);
    double wo[2] = { 0, 0 };
    off_unit_sphere(&rng, wo);
    printf("off the unit sphere: M vs global %.3f (|p|^2 = 1 + 5e-7), %.3f (1.0201) of the bound\n", wo[0], wo[1]);
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(m != NULL, "human43: %s", err.msg);
    if (m) { compare(&rng, m, "human43", 1, w); mbs_model_free(m); }
    robots(&rng, wr);
    return mbs_test_summary("test_crba_joint_frames");
}
