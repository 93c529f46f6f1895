/*
 * pyref.c - the C side of the Python bit-for-bit tests (test_against_c.py):
 * every per-instant function of the public API on a model at given states,
 * written as JSON with 17 significant digits (which read back exactly).
 *
 *   mbs_pyref < request.json > results.json
 *
 * request: {"model": PATH, "configs": [[REF, FRAMES], ...], "states": [{"t",
 * "q", "qd", "qdd", "tau", "dq", "dqd", "dqdd", "dtau", "drho"}, ...]}.
 * For each config a fresh mbs_data makes the calls in the order of
 * test_against_c.py (the results of a call must not depend on earlier calls,
 * but the comparison does not rely on it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mbsens/mbsens.h"

static json_t *vec(const double *x, int n)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++) json_array_append_new(a, json_real(x[k]));
    return a;
}

static double *get(json_t *st, const char *key, int n)
{
    json_t *a = json_object_get(st, key);
    double *x = calloc((size_t)n + 1, sizeof *x);
    for (int k = 0; a && k < n; k++) x[k] = json_number_value(json_array_get(a, (size_t)k));
    return x;
}

/* Status and values of a call: {"rc": rc} or the array. */
static void put(json_t *o, const char *key, int rc, const double *x, int n)
{
    if (rc != MBS_OK) {
        char k[128];
        snprintf(k, sizeof k, "%s.rc", key);
        json_object_set_new(o, k, json_integer(rc));
        return;
    }
    json_object_set_new(o, key, vec(x, n));
}

static void kinematics_results(const mbs_model *m, mbs_data *d, json_t *o)
{
    const int nb = mbs_model_nbodies(m) + 1, np = mbs_model_npoints(m), nvec = mbs_model_nvectors(m);
    double *A = calloc(9 * (size_t)nb, sizeof *A), *org = calloc(3 * (size_t)nb, sizeof *org);
    double *com = calloc(3 * (size_t)nb, sizeof *com), *vw = calloc(6 * (size_t)nb, sizeof *vw);
    double *aa = calloc(6 * (size_t)nb, sizeof *aa);
    double *pts = calloc(9 * (size_t)np + 1, sizeof *pts), *vecs = calloc(9 * (size_t)nvec + 1, sizeof *vecs);
    for (int b = 0; b < nb; b++) {
        mbs_body_pose(d, b, A + 9 * b, org + 3 * b);
        mbs_body_com(d, b, com + 3 * b);
        mbs_body_velocity(d, b, vw + 6 * b, vw + 6 * b + 3);
        mbs_body_acceleration(d, b, aa + 6 * b, aa + 6 * b + 3);
    }
    for (int k = 0; k < np; k++) mbs_point_kinematics(m, d, k, pts + 9 * k, pts + 9 * k + 3, pts + 9 * k + 6);
    for (int k = 0; k < nvec; k++) mbs_vector_kinematics(m, d, k, vecs + 9 * k, vecs + 9 * k + 3, vecs + 9 * k + 6);
    put(o, "body_rotations", 0, A, 9 * nb);
    put(o, "body_origins", 0, org, 3 * nb);
    put(o, "body_coms", 0, com, 3 * nb);
    put(o, "body_velocities", 0, vw, 6 * nb);
    put(o, "body_accelerations", 0, aa, 6 * nb);
    put(o, "points", 0, pts, 9 * np);
    put(o, "vectors", 0, vecs, 9 * nvec);
    double e[2] = { mbs_kinetic_energy(m, d), mbs_potential_energy(m, d) };
    put(o, "energies", 0, e, 2);
    free(A), free(org), free(com), free(vw), free(aa), free(pts), free(vecs);
}

/* One state on data d: the calls of test_against_c.py, in its order. */
static json_t *state_results(const mbs_model *m, mbs_data *d, json_t *st)
{
    const int nq = mbs_model_nq(m), nv = mbs_model_nv(m), np = mbs_model_nparams(m);
    const int nc = mbs_model_nconstraints(m);
    const double t = json_number_value(json_object_get(st, "t"));
    double *q = get(st, "q", nq), *qd = get(st, "qd", nv), *qdd = get(st, "qdd", nv), *tau = get(st, "tau", nv);
    double *dq = get(st, "dq", nv), *dqd = get(st, "dqd", nv), *dqdd = get(st, "dqdd", nv);
    double *dtau = get(st, "dtau", nv), *drho = get(st, "drho", np);
    const size_t big = (size_t)(nv > nc ? nv : nc) * (size_t)(nv + np + 1) + 1;
    double *a = calloc(big, sizeof *a), *b = calloc(big, sizeof *b), *c = calloc(big, sizeof *c);
    double *e = calloc(big, sizeof *e), *f = calloc(big, sizeof *f);
    json_t *o = json_object();
    int rc;
    mbs_data_set_time(d, t);
    rc = mbs_kinematics(m, d, q, qd, qdd);
    json_object_set_new(o, "kinematics.rc", json_integer(rc));
    if (rc == MBS_OK) kinematics_results(m, d, o);
    rc = mbs_inverse_dynamics(m, d, q, qd, qdd, a);
    put(o, "inverse_dynamics", rc, a, nv);
    rc = mbs_mass_matrix(m, d, q, a);
    put(o, "mass_matrix", rc, a, nv * nv);
    rc = mbs_bias_forces(m, d, q, qd, a);
    put(o, "bias_forces", rc, a, nv);
    static const char *const alg_name[2] = { "fr", "semi" };
    for (int alg = 0; alg < 2; alg++) {
        char key[64];
        snprintf(key, sizeof key, "forward_dynamics.%s", alg_name[alg]);
        rc = mbs_forward_dynamics(m, d, (mbs_fd_algorithm)alg, q, qd, tau, a);
        put(o, key, rc, a, nv);
    }
    rc = mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, a, b, c);
    put(o, "id_derivatives.tau", rc, a, nv);
    put(o, "id_derivatives.dq", rc, b, nv * nv);
    put(o, "id_derivatives.dqd", rc, c, nv * nv);
    rc = mbs_inverse_dynamics_param_derivatives(m, d, q, qd, qdd, a);
    put(o, "id_param_derivatives", rc, a, nv * np);
    rc = mbs_inverse_dynamics_directional(m, d, q, qd, qdd, dq, dqd, dqdd, drho, a);
    put(o, "id_directional", rc, a, nv);
    for (int alg = 0; alg < 2; alg++) {
        char key[4][64];
        static const char *const part[4] = { "qdd", "dq", "dqd", "dtau" };
        for (int k = 0; k < 4; k++) snprintf(key[k], sizeof key[k], "fd_derivatives.%s.%s", alg_name[alg], part[k]);
        rc = mbs_forward_dynamics_derivatives(m, d, (mbs_fd_algorithm)alg, q, qd, tau, a, b, c, e);
        put(o, key[0], rc, a, nv);
        put(o, key[1], rc, b, nv * nv);
        put(o, key[2], rc, c, nv * nv);
        put(o, key[3], rc, e, nv * nv);
    }
    rc = mbs_forward_dynamics_param_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, tau, a, b);
    put(o, "fd_param_derivatives.qdd", rc, a, nv);
    put(o, "fd_param_derivatives.drho", rc, b, nv * np);
    rc = mbs_forward_dynamics_directional(m, d, MBS_FD_RECURSIVE, q, qd, tau, dq, dqd, dtau, drho, a, b);
    put(o, "fd_directional.qdd", rc, a, nv);
    put(o, "fd_directional.dqdd", rc, b, nv);
    if (nc > 0) {
        rc = mbs_constraint_eval(m, d, q, qd, t, a, b, c, e, f);
        put(o, "constraint_eval.phi", rc, a, nc);
        put(o, "constraint_eval.Phi_q", rc, b, nc * nv);
        put(o, "constraint_eval.phid", rc, c, nc);
        put(o, "constraint_eval.b", rc, e, nc);
        put(o, "constraint_eval.c", rc, f, nc);
        int rank = -1;
        rc = mbs_constraint_rank(m, d, q, t, &rank);
        json_object_set_new(o, "constraint_rank", json_integer(rc == MBS_OK ? rank : -1));
        rc = mbs_constraint_violation(m, d, t, q, qd, qdd, a);
        put(o, "constraint_violation", rc, a, 3);
    }
    memcpy(a, q, (size_t)nq * sizeof *a);
    memcpy(b, qd, (size_t)nv * sizeof *b);
    rc = mbs_normalize_state(m, a, b);
    put(o, "normalize_state.q", rc, a, nq);
    put(o, "normalize_state.qd", rc, b, nv);
    free(q), free(qd), free(qdd), free(tau), free(dq), free(dqd), free(dqdd), free(dtau), free(drho);
    free(a), free(b), free(c), free(e), free(f);
    return o;
}

int main(void)
{
    json_error_t je;
    json_t *req = json_loadf(stdin, 0, &je);
    if (!req) {
        fprintf(stderr, "mbs_pyref: request: %d:%d: %s\n", je.line, je.column, je.text);
        return 2;
    }
    mbs_error err;
    mbs_model *m = mbs_model_load(json_string_value(json_object_get(req, "model")), &err);
    if (!m) {
        fprintf(stderr, "mbs_pyref: %s\n", err.msg);
        return 1;
    }
    json_t *out = json_array(), *configs = json_object_get(req, "configs"), *states = json_object_get(req, "states");
    for (size_t k = 0; k < json_array_size(configs); k++) {
        json_t *cfg = json_array_get(configs, k), *res = json_array();
        mbs_data *d = mbs_data_create(m, &err);
        mbs_data_set_ref(d, (mbs_ref_point)mbs_ref_point_from_name(json_string_value(json_array_get(cfg, 0))));
        if (strcmp(json_string_value(json_array_get(cfg, 1)), "global") == 0) mbs_data_set_fr_frames(d, MBS_FR_GLOBAL);
        for (size_t s = 0; s < json_array_size(states); s++)
            json_array_append_new(res, state_results(m, d, json_array_get(states, s)));
        json_array_append_new(out, res);
        mbs_data_free(d);
    }
    json_dumpf(out, stdout, JSON_REAL_PRECISION(17) | JSON_COMPACT);
    fputc('\n', stdout);
    json_decref(out);
    json_decref(req);
    mbs_model_free(m);
    return 0;
}
