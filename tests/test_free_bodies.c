/*
 * test_free_bodies.c - mbs_generate_free_bodies_json: the same arguments
 * give the same text; the model loads with the robot unchanged in front
 * (its mass matrix the leading block, bit for bit) and one ground subtree
 * of 7 coordinates per free body; unit Euler parameters with p.pdot = 0;
 * the argument errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* the model of robot (NULL: none) plus n bodies, checked; NULL on failure */
static mbs_model *generated(const mbs_model *robot, int n, const char *what)
{
    mbs_error err;
    char *a = mbs_generate_free_bodies_json(robot, n, &err), *b = mbs_generate_free_bodies_json(robot, n, &err);
    CHECK(a && b && strcmp(a, b) == 0, "%s: the same text twice", what);
    mbs_model *m = a ? mbs_model_load_string(a, what, &err) : NULL;
    CHECK(m != NULL, "%s: loads: %s", what, err.msg);
    free(a);
    free(b);
    if (!m) return NULL;
    const int nq0 = robot ? mbs_model_nq(robot) : 0, nb0 = robot ? mbs_model_nbodies(robot) : 0;
    CHECK(mbs_model_nq(m) == nq0 + 7 * n && mbs_model_nbodies(m) == nb0 + n, "%s: sizes nq %d, bodies %d", what,
          mbs_model_nq(m), mbs_model_nbodies(m));
    /* the ground subtrees: the robot's, then one chain of 7 per body */
    mbs_tree_pattern p;
    CHECK(mbs_model_tree_pattern(m, &p, &err) == MBS_OK, "%s: pattern", what);
    int roots = 0, ok = 1;
    for (int k = nq0; k < p.n; k++) {
        roots += p.parent[k] < 0;
        ok &= p.parent[k] < 0 ? (k - nq0) % 7 == 0 && p.subtree_end[k] == k + 7 : p.parent[k] == k - 1;
    }
    CHECK(ok && roots == n, "%s: %d ground subtrees of 7 after the robot", what, roots);
    mbs_tree_pattern_free(&p);
    /* initial Euler parameters of the bodies: unit, p.pdot = 0 */
    const size_t nq = (size_t)mbs_model_nq(m);
    double *q = malloc(sizeof(double) * nq), *qd = malloc(sizeof(double) * nq);
    mbs_model_initial_state(m, q, qd);
    double worst = 0;
    for (int k = 0; k < n; k++) {
        const double *e = q + nq0 + 7 * k + 3, *ed = qd + nq0 + 7 * k + 3;
        worst = fmax(worst, fabs(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] + e[3] * e[3] - 1));
        worst = fmax(worst, fabs(e[0] * ed[0] + e[1] * ed[1] + e[2] * ed[2] + e[3] * ed[3]));
    }
    /* a unit vector formed and normalized in double: a few ulps */
    CHECK(worst <= 8 * DBL_EPSILON, "%s: |p| - 1 and p.pdot up to %g", what, worst);
    free(q);
    free(qd);
    return m;
}

/* the robot's mass matrix is the leading block of the composite's, bit for
 * bit (the robot's bodies come first and keep their numbers) */
static void same_robot(const mbs_model *robot, const mbs_model *m, const char *what)
{
    const int n0 = mbs_model_nq(robot), n = mbs_model_nq(m);
    double *q = malloc(sizeof(double) * (size_t)n), *qd = malloc(sizeof(double) * (size_t)n);
    double *M0 = malloc(sizeof(double) * (size_t)n0 * n0), *M = malloc(sizeof(double) * (size_t)n * n);
    mbs_error err;
    mbs_data *d0 = mbs_data_create(robot, &err), *d = mbs_data_create(m, &err);
    mbs_model_initial_state(m, q, qd);
    CHECK(mbs_mass_matrix(robot, d0, q, M0) == MBS_OK && mbs_mass_matrix(m, d, q, M) == MBS_OK, "%s: M", what);
    int same = 1;
    for (int i = 0; i < n0; i++) same &= memcmp(M + (size_t)i * n, M0 + (size_t)i * n0, sizeof(double) * n0) == 0;
    CHECK(same, "%s: the robot's M is the leading block", what);
    for (int k = 0; k < n0; k++) CHECK(strcmp(mbs_coord_name(m, k), mbs_coord_name(robot, k)) == 0, "%s: names", what);
    mbs_data_free(d0);
    mbs_data_free(d);
    free(q);
    free(qd);
    free(M0);
    free(M);
}

int main(void)
{
    mbs_model *m = generated(NULL, 25, "25 bodies");
    CHECK(m && strcmp(mbs_model_name(m), "free_bodies_25") == 0, "name");
    CHECK(m && strcmp(mbs_body_name(m, 1), "free1") == 0 && strcmp(mbs_joint_name(m, 25), "free25_joint") == 0,
          "body and joint names");
    /* body 1: sides 0.185 x 0.118 x 0.065 m at 500 kg/m^3 (generate.h) */
    CHECK(m && mbs_body_mass(m, 1) == 500 * 0.185 * 0.118 * 0.065, "mass of free1: %.17g", m ? mbs_body_mass(m, 1) : 0);
    mbs_model_free(m);

    mbs_error err;
    mbs_model *robot = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(robot != NULL, "human43: %s", err.msg);
    if (robot) {
        m = generated(robot, 10, "human43 + 10");
        CHECK(m && strcmp(mbs_model_name(m), "human43_free_bodies_10") == 0, "name %s", m ? mbs_model_name(m) : "");
        if (m) same_robot(robot, m, "human43 + 10");
        /* a robot that already has the names */
        char *t = mbs_generate_free_bodies_json(m, 3, &err);
        CHECK(!t && err.code == MBS_ERR_ARG && strstr(err.msg, "body named 'free1'"), "names taken: %s", err.msg);
        free(t);
        mbs_model_free(m);
        mbs_model_free(robot);
    }
    const int bad[3] = { -1, 0, MBS_GENERATE_FREE_BODIES_MAX + 1 };
    for (int k = 0; k < 3; k++) {
        char *t = mbs_generate_free_bodies_json(NULL, bad[k], &err);
        CHECK(!t && err.code == MBS_ERR_ARG && strstr(err.msg, "out of range"), "n = %d: %s", bad[k], err.msg);
        free(t);
    }
    return mbs_test_summary("test_free_bodies");
}
