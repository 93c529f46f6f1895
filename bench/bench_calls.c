/*
 * bench_calls.c - a driver for instruction counts: N calls of each core
 * public call on one model at a fixed state, for
 *
 *   valgrind --tool=callgrind --callgrind-out-file=OUT bench_calls MODEL N
 *   callgrind_annotate --inclusive=yes OUT | grep '=> .*mbs_'
 *
 * whose inclusive counts divided by the calls are the instructions per
 * call (stable on a shared machine, where timings are not). The calls:
 * mbs_kinematics, mbs_inverse_dynamics, mbs_mass_matrix,
 * mbs_forward_dynamics (fr, then semi: 2N calls),
 * mbs_inverse_dynamics_derivatives, mbs_forward_dynamics_derivatives (fr).
 * The state: q in [-1, 1] from a fixed linear congruential sequence,
 * qd = q / 2, qdd = -0.3 q, Euler parameters normalized.
 *
 * Usage: bench_calls MODEL [N]   (N default 200)
 */
#include <stdio.h>
#include <stdlib.h>

#include "mbsens/mbsens.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [N]\n", argv[0]);
        return 2;
    }
    const int n = argc > 2 ? atoi(argv[2]) : 200;
    mbs_error err;
    mbs_model *m = mbs_model_load(argv[1], &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    mbs_data *d = mbs_data_create(m, &err);
    const size_t nq = (size_t)mbs_model_nq(m) + 1;
    double *q = calloc(nq, 8), *qd = calloc(nq, 8), *qdd = calloc(nq, 8), *out = calloc(nq, 8);
    double *A = calloc(nq * nq, 8), *B = calloc(nq * nq, 8);
    if (!d || !q || !qd || !qdd || !out || !A || !B) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    unsigned s = 1;
    for (size_t k = 0; k + 1 < nq; k++) {
        s = s * 1103515245u + 12345u;
        q[k] = (double)(s >> 8) / 16777216.0 * 2 - 1;
        qd[k] = 0.5 * q[k];
        qdd[k] = -0.3 * q[k];
    }
    mbs_normalize_state(m, q, qd);
    int rc = 0;
    for (int i = 0; i < n; i++) rc |= mbs_kinematics(m, d, q, qd, qdd);
    for (int i = 0; i < n; i++) rc |= mbs_inverse_dynamics(m, d, q, qd, qdd, out);
    for (int i = 0; i < n; i++) rc |= mbs_mass_matrix(m, d, q, A);
    for (int i = 0; i < n; i++) rc |= mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, NULL, out);
    for (int i = 0; i < n; i++) rc |= mbs_forward_dynamics(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, NULL, out);
    for (int i = 0; i < n; i++) rc |= mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, out, A, B);
    for (int i = 0; i < n; i++)
        rc |= mbs_forward_dynamics_derivatives(m, d, MBS_FD_RECURSIVE, q, qd, NULL, out, A, B, NULL);
    if (rc) fprintf(stderr, "a call failed: %s\n", mbs_data_error(d));
    free(q); free(qd); free(qdd); free(out); free(A); free(B);
    mbs_data_free(d);
    mbs_model_free(m);
    return rc ? 1 : 0;
}
