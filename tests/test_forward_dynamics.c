/*
 * test_forward_dynamics.c - both forward-dynamics algorithms on random trees.
 *
 *   - fully recursive qdd = semi-recursive qdd (round-off of the recursions
 *     and of solving with M: ro_fd, with the condition of M completed for
 *     the Euler parameters), three reference points, with body and joint
 *     loads and an actuation tau;
 *   - inverse dynamics of the result gives back tau (Euler parameters: the
 *     component orthogonal to p);
 *   - p.pdd = -|pd|^2 for every Euler-parameter joint;
 *   - the joint-frame fast path of the fully recursive algorithm
 *     (src/kernels/aba_joint_frames.c: trees of fixed, revolute, prismatic,
 *     spherical and floating joints without body loads) = the global-axes
 *     kernels (asked for by mbs_data_set_fr_frames with each reference
 *     point, and forced by a zero body load) = semi-recursive, with joint
 *     loads and tau, and at zero velocity (qd = NULL); the same on models
 *     whose joint frames are axis-aligned (human43, generated chains, the
 *     example-robot-data URDFs when present), where the fast path permutes
 *     instead of rotating;
 *   - the semi-recursive method on the joint-frame M and h
 *     (crba_joint_frames.c), with the tree factorization where it is the
 *     cheaper one, = the fully recursive fast path on human43 plus 10 and
 *     100 free bodies (mbs_generate_free_bodies_json).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"
#include "mbsens/generate.h"

/* The round-off bound of forward dynamics at q: the recursions' (MBS_ROUNDOFF) and solving with M',
 * 2 n eps kappa(M') (the forward error of a backward-stable solve, on both sides of a comparison),
 * M' = M completed by p p^T on each Euler quadruple (mbs_test_complete_euler: the matrix both
 * methods solve with; M alone is singular along p). M: nv^2 scratch. */
static double ro_fd(const mbs_model *m, mbs_data *d, const double *q, double *M)
{
    CHECK(mbs_mass_matrix(m, d, q, M) == MBS_OK, "M");
    mbs_test_complete_euler(m, q, M);
    const double kappa = mbs_test_cond_spd(M, m->nv);
    CHECK(kappa < INFINITY, "M' not positive definite");
    return MBS_ROUNDOFF(m->nb) + 2 * m->nv * MBS_EPS * kappa;
}

/* fast path vs global-axes kernels (zero body load) vs semi-recursive at
 * 5 random states of m; the worst relative differences into w[0], w[1] */
static void compare_paths(mbs_rng *rng, const mbs_model *m, const char *name, double *w)
{
    const int nq = m->nq;
    size_t n1 = (size_t)nq + 1;
    double *q = calloc(n1, 8), *qd = calloc(n1, 8), *tau = calloc(n1, 8);
    double *a1 = calloc(n1, 8), *a2 = calloc(n1, 8), *a3 = calloc(n1, 8), *M = calloc(n1 * n1, 8);
    mbs_data *d = mbs_data_create(m, NULL);
    for (int rep = 0; rep < 5; rep++) {
        mbs_test_random_state(rng, m, q, qd, NULL);
        const double ro = ro_fd(m, d, q, M);
        for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(rng, -2, 2);
        mbs_data_clear_loads(d);
        int r1 = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, a1);
        CHECK(r1 == MBS_OK, "%s fr fast: %s", name, mbs_data_error(d));
        int r3 = mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, a3);
        CHECK(r3 == MBS_OK, "%s semi: %s", name, mbs_data_error(d));
        /* the global-axes form, asked for with each reference point */
        mbs_data_set_fr_frames(d, MBS_FR_GLOBAL);
        CHECK(mbs_data_fr_frames(d) == MBS_FR_GLOBAL, "%s: frames setting", name);
        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            int rg = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, a2);
            CHECK(rg == MBS_OK, "%s fr global: %s", name, mbs_data_error(d));
            /* round-off of the recursions and of solving with M (ro_fd); the global origin as
             * reference point transports every quantity over the lever arms from the origin (up to
             * the chains' length, 4 m, against their unit sizes): 4 times that */
            double eg = mbs_rel_err(a1, a2, nq), tol = ref == MBS_REF_ORIGIN ? 4 * ro : ro;
            CHECK(eg <= tol, "%s: joint frames vs global axes with reference point %s: %g > %g", name,
                  mbs_ref_point_name((mbs_ref_point)ref), eg, tol);
            w[0] = fmax(w[0], eg / tol);
        }
        mbs_data_set_ref(d, MBS_REF_COM);
        mbs_data_set_fr_frames(d, MBS_FR_JOINT_FRAMES);
        /* and forced by a body load (zero) */
        const double zero[3] = { 0, 0, 0 };
        mbs_data_add_body_load(d, 1, NULL, zero, zero);
        int r2 = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, a2);
        CHECK(r2 == MBS_OK, "%s fr: %s", name, mbs_data_error(d));
        double e1 = mbs_rel_err(a1, a2, nq), e2 = mbs_rel_err(a1, a3, nq);
        CHECK(e1 <= ro && e2 <= ro, "%s: fast path vs global-axes fr %g, vs semi %g (bound %g)", name, e1, e2, ro);
        w[0] = fmax(w[0], e1 / ro);
        w[1] = fmax(w[1], e2 / ro);
    }
    mbs_data_free(d);
    free(q); free(qd); free(tau); free(a1); free(a2); free(a3); free(M);
}

/* A massless leaf on a revolute joint: both paths report its joint. */
static void massless_leaf(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(
        "{ \"bodies\": [ { \"name\": \"a\", \"mass\": 1, \"inertia\": [0.1, 0.1, 0.1, 0, 0, 0] },"
        "  { \"name\": \"ghost\", \"mass\": 0 } ],"
        "  \"joints\": [ { \"name\": \"r1\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"a\" },"
        "  { \"name\": \"r2\", \"type\": \"revolute\", \"parent\": \"a\", \"child\": \"ghost\" } ] }",
        "massless_leaf", &err);
    CHECK(m != NULL, "massless leaf: %s", err.msg);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    double q[2] = { 0.3, -0.2 }, qd[2] = { 0.1, 0.5 }, a[2];
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            const double zero[3] = { 0, 0, 0 };
            mbs_data_add_body_load(d, 1, NULL, zero, zero);
        }
        int rc = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, NULL, a);
        CHECK(rc == MBS_ERR_NUMERIC && strstr(mbs_data_error(d), "'r2' is not positive definite"),
              "%s path: massless leaf: rc %d, %s", pass ? "global-axes" : "joint-frame", rc, mbs_data_error(d));
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

static void structured_models(mbs_rng *rng)
{
    double w[2] = { 0, 0 };
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(m != NULL, "human43: %s", err.msg);
    if (m) { compare_paths(rng, m, "human43", w); mbs_model_free(m); }
    const mbs_joint_type kinds[3] = { MBS_JOINT_REVOLUTE, MBS_JOINT_SPHERICAL, MBS_JOINT_CARDAN };
    for (int k = 0; k < 3; k++)
        for (int fl = 0; fl < 2; fl++) {
            char *js = mbs_generate_chain_json(8, kinds[k], fl, &err);
            m = js ? mbs_model_load_string(js, "chain", &err) : NULL;
            free(js);
            CHECK(m != NULL, "chain: %s", err.msg);
            if (m) { compare_paths(rng, m, "chain", w); mbs_model_free(m); }
        }
    const char *dir = getenv("MBS_URDF_DIR");
    char path[4096];
    if (!dir) dir = mbs_test_path("../shared/data/example-robot-data");
    struct stat st;
    int nrobots = 0;
    if (stat(dir, &st) == 0) {
        const char *robots[] = { "a1.urdf", "panda.urdf", "baxter.urdf", "simple_humanoid.urdf", "talos_full_v2.urdf" };
        for (int r = 0; r < 5; r++)
            for (int fl = 0; fl < 2; fl++) {
                snprintf(path, sizeof path, "%s/%s", dir, robots[r]);
                mbs_urdf_options o = { fl, 0, NULL, NULL, 1, MBS_VELOCITIES_EULER_RATES };
                m = mbs_model_load_urdf(path, &o, &err);
                CHECK(m != NULL, "%s: %s", path, err.msg);
                if (m) { compare_paths(rng, m, robots[r], w); mbs_model_free(m); nrobots++; }
            }
    }
    printf("axis-aligned models (human43, chains, %d URDF robot/base pairs): fast path vs global-axes fr %.3f, "
           "vs semi %.3f of the round-off bound\n", nrobots, w[0], w[1]);
}

/* human43 plus n free bodies: the joint-frame semi-recursive method (tree
 * factorization) = the fully recursive fast path, at 3 random states */
static void free_bodies(mbs_rng *rng, int n, double *w)
{
    mbs_error err;
    mbs_model *robot = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(robot != NULL, "human43: %s", err.msg);
    if (!robot) return;
    char *js = mbs_generate_free_bodies_json(robot, n, &err);
    mbs_model *m = js ? mbs_model_load_string(js, "free bodies", &err) : NULL;
    free(js);
    mbs_model_free(robot);
    CHECK(m != NULL, "free bodies: %s", err.msg);
    if (!m) return;
    const int nq = m->nq;
    const size_t n1 = (size_t)nq + 1;
    double *q = calloc(n1, 8), *qd = calloc(n1, 8), *tau = calloc(n1, 8), *a1 = calloc(n1, 8), *a2 = calloc(n1, 8);
    double *M = calloc(n1 * n1, 8);
    mbs_data *d = mbs_data_create(m, NULL);
    CHECK(mbs_abajf_usable(d) && mbs_crbajf_tree(d) != NULL, "%d free bodies: the tree factorization applies", n);
    for (int rep = 0; rep < 3; rep++) {
        mbs_test_random_state(rng, m, q, qd, NULL);
        for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(rng, -2, 2);
        const double ro = ro_fd(m, d, q, M);
        CHECK(mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, a1) == MBS_OK, "fr: %s", mbs_data_error(d));
        CHECK(mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, a2) == MBS_OK, "semi: %s",
              mbs_data_error(d));
        const double e = mbs_rel_err(a2, a1, nq);
        CHECK(e <= ro, "%d free bodies: semi (tree factor) vs fr %g > %g", n, e, ro);
        *w = fmax(*w, e / ro);
    }
    mbs_data_free(d);
    mbs_model_free(m);
    free(q); free(qd); free(tau); free(a1); free(a2); free(M);
}

#define NTREES 250

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 777);
    double w_alg = 0, w_id = 0, w_norm = 0, w_ref = 0;
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 12), 0);
        CHECK(m != NULL, "tree");
        if (!m) continue;
        const int nq = m->nq;
        size_t n1 = (size_t)nq + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *tau = calloc(n1, 8), *tau2 = calloc(n1, 8);
        double *a1 = calloc(n1, 8), *a2 = calloc(n1, 8), *a0 = calloc(n1, 8);
        mbs_test_random_state(&rng, m, q, qd, NULL);
        for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(&rng, -2, 2);
        mbs_data *d = mbs_data_create(m, NULL);
        double *M = calloc(n1 * n1, 8);
        const double ro = ro_fd(m, d, q, M);
        free(M);
        for (int i = 1; i <= m->nb; i++) {
            double p[3], f[3], n[3];
            for (int k = 0; k < 3; k++) { p[k] = mbs_rng_uniform(&rng, -1, 1); f[k] = mbs_rng_uniform(&rng, -1, 1); n[k] = mbs_rng_uniform(&rng, -1, 1); }
            mbs_data_add_body_load(d, i, p, f, n);
        }
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = mbs_rng_uniform(&rng, -1, 1);
        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            int r1 = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, tau, a1);
            CHECK(r1 == MBS_OK, "fr: %s", mbs_data_error(d));
            int r2 = mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, a2);
            CHECK(r2 == MBS_OK, "semi: %s", mbs_data_error(d));
            w_alg = fmax(w_alg, mbs_rel_err(a1, a2, nq) / ro);
            if (ref == MBS_REF_COM) memcpy(a0, a1, 8 * (size_t)nq);
            else w_ref = fmax(w_ref, mbs_rel_err(a1, a0, nq) / ro);
            CHECK(mbs_inverse_dynamics(m, d, q, qd, a1, tau2) == MBS_OK, "id");
            /* compare tau on the complement of each p */
            for (int i = 1; i <= m->nb; i++) {
                const mbs_joint_info *jt = &m->joint[i];
                if (jt->euler < 0) continue;
                int e = jt->qoff + jt->euler;
                double s = 0, s2 = 0, pp = 0, pa = 0;
                for (int k = 0; k < 4; k++) { s += q[e + k] * tau[e + k]; s2 += q[e + k] * tau2[e + k]; }
                for (int k = 0; k < 4; k++) { tau[e + k] -= s * q[e + k]; tau2[e + k] -= s2 * q[e + k]; }
                for (int k = 0; k < 4; k++) { pp += qd[e + k] * qd[e + k]; pa += q[e + k] * a1[e + k]; }
                w_norm = fmax(w_norm, fabs(pa + pp) / (1 + pp) / ro);
            }
            w_id = fmax(w_id, mbs_rel_err(tau2, tau, nq) / ro);
        }
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(tau); free(tau2); free(a1); free(a2); free(a0);
    }
    /* the joint-frame fast path */
    double w_fast = 0, w_fast_semi = 0, w_fast_norm = 0;
    const unsigned fast_types = (1u << MBS_JOINT_FIXED) | (1u << MBS_JOINT_REVOLUTE) | (1u << MBS_JOINT_PRISMATIC) |
                                (1u << MBS_JOINT_SPHERICAL) | (1u << MBS_JOINT_FLOATING);
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, 12), fast_types);
        CHECK(m != NULL, "tree");
        if (!m) continue;
        const int nq = m->nq;
        size_t n1 = (size_t)nq + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *tau = calloc(n1, 8);
        double *a1 = calloc(n1, 8), *a2 = calloc(n1, 8), *a3 = calloc(n1, 8);
        mbs_test_random_state(&rng, m, q, qd, NULL);
        for (int k = 0; k < nq; k++) tau[k] = mbs_rng_uniform(&rng, -2, 2);
        mbs_data *d = mbs_data_create(m, NULL);
        double *M = calloc(n1 * n1, 8);
        const double ro = ro_fd(m, d, q, M);
        free(M);
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = mbs_rng_uniform(&rng, -1, 1);
        for (int vel = 0; vel < 2; vel++) {
            const double *v = vel ? qd : NULL;
            mbs_data_clear_loads(d);
            for (int k = 0; k < nq; k++) jl[k] = 0.5 * tau[k] * (k % 3);
            int r1 = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, v, tau, a1);    /* fast path */
            CHECK(r1 == MBS_OK, "fr fast: %s", mbs_data_error(d));
            int r3 = mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, v, tau, a3);
            CHECK(r3 == MBS_OK, "semi: %s", mbs_data_error(d));
            const double zero[3] = { 0, 0, 0 };
            mbs_data_add_body_load(d, 1, NULL, zero, zero);                         /* global-axes kernels */
            int r2 = mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, v, tau, a2);
            CHECK(r2 == MBS_OK, "fr: %s", mbs_data_error(d));
            w_fast = fmax(w_fast, mbs_rel_err(a1, a2, nq) / ro);
            w_fast_semi = fmax(w_fast_semi, mbs_rel_err(a1, a3, nq) / ro);
            for (int i = 1; i <= m->nb; i++) {
                const mbs_joint_info *jt = &m->joint[i];
                if (jt->euler < 0) continue;
                int e = jt->qoff + jt->euler;
                double pp = 0, pa = 0;
                for (int k = 0; k < 4; k++) { pp += v ? v[e + k] * v[e + k] : 0; pa += q[e + k] * a1[e + k]; }
                w_fast_norm = fmax(w_fast_norm, fabs(pa + pp) / (1 + pp) / ro);
            }
        }
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(tau); free(a1); free(a2); free(a3);
    }
    printf("worst relative errors, as fractions of their round-off bounds: fr vs semi %.3f, reference points %.3f, "
           "ID(FD) %.3f, p.pdd %.3f\n", w_alg, w_ref, w_id, w_norm);
    printf("joint-frame fast path: vs global-axes fr %.3f, vs semi %.3f, p.pdd %.3f\n", w_fast, w_fast_semi,
           w_fast_norm);
    structured_models(&rng);
    double w_free = 0;
    free_bodies(&rng, 10, &w_free);
    free_bodies(&rng, 100, &w_free);
    printf("human43 + 10 and 100 free bodies: joint-frame semi (tree factor) vs fr %.3g of the round-off bound\n",
           w_free);
    massless_leaf();
    CHECK(w_fast <= 1, "fast path = global-axes fully recursive: %g of the bound", w_fast);
    CHECK(w_fast_semi <= 1, "fast path = semi-recursive: %g of the bound", w_fast_semi);
    CHECK(w_fast_norm <= 1, "fast path Euler normalization: %g of the bound", w_fast_norm);
    CHECK(w_alg <= 1, "fully recursive = semi-recursive: %g of the bound", w_alg);
    CHECK(w_ref <= 1, "reference independence: %g of the bound", w_ref);
    CHECK(w_id <= 1, "inverse of forward: %g of the bound", w_id);
    CHECK(w_norm <= 1, "Euler normalization: %g of the bound", w_norm);
    return mbs_test_summary("forward_dynamics");
}
