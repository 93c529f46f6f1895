/*
 * hello_mbsens.c - the smallest program using an installed mbsens.
 *
 * Usage: hello_mbsens MODEL.json [q_1 ... q_n]
 *
 * Loads the model, prints the library version, the model's number of
 * degrees of freedom and the joint torques that hold it still at q
 * (velocities and accelerations zero), i.e. the inverse dynamics
 * tau = M(q) qdd - Q(q, qd) at qd = qdd = 0, with 12 significant digits.
 * Missing coordinates are taken from the model's initial state. Built as
 * examples/CMakeLists.txt says (tests/sh/install.sh checks these lines):
 *
 *     $ hello_mbsens models/double_pendulum.json 0.3 0
 *     mbsens 0.1.0
 *     model double_pendulum
 *     n_dof 2
 *     tau 8.69715968204 2.89905322735
 */
#include <mbsens/mbsens.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.json [q_1 ... q_n]\n", argv[0]);
        return 2;
    }
    mbs_error err;
    mbs_model *m = mbs_model_load(argv[1], &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int nq = mbs_model_nq(m), rc = 1;
    double *q = calloc((size_t)nq, sizeof *q), *qd = calloc((size_t)nq, sizeof *qd);
    double *qdd = calloc((size_t)nq, sizeof *qdd), *tau = calloc((size_t)nq, sizeof *tau);
    mbs_data *d = mbs_data_create(m, &err);
    if (!q || !qd || !qdd || !tau || !d) {
        fprintf(stderr, "%s\n", d ? "out of memory" : err.msg);
        goto out;
    }
    mbs_model_initial_state(m, q, qd);
    if (argc - 2 > nq) {
        fprintf(stderr, "too many coordinates: the model has %d\n", nq);
        goto out;
    }
    for (int k = 0; k < argc - 2; k++) {
        char *end;
        q[k] = strtod(argv[k + 2], &end);
        if (end == argv[k + 2] || *end) {
            fprintf(stderr, "not a number: %s\n", argv[k + 2]);
            goto out;
        }
    }
    for (int k = 0; k < nq; k++) qd[k] = 0;
    if (mbs_normalize_state(m, q, NULL) != MBS_OK ||
        mbs_inverse_dynamics(m, d, q, qd, qdd, tau) != MBS_OK) {
        fprintf(stderr, "inverse dynamics failed: %s\n", mbs_data_error(d));
        goto out;
    }
    printf("mbsens %s\n", mbs_version());
    printf("model %s\n", mbs_model_name(m));
    printf("n_dof %d\n", mbs_model_ndof(m));
    printf("tau");
    for (int k = 0; k < nq; k++) printf(" %.12g", tau[k]);
    printf("\n");
    rc = 0;
out:
    mbs_data_free(d);
    free(q); free(qd); free(qdd); free(tau);
    mbs_model_free(m);
    return rc;
}
