/*
 * test_batch.c - batches on several threads (mbsens/batch.h) give bit for
 * bit the results of serial calls on fresh data, record a failing case and
 * carry on, and keep OpenBLAS on one thread while they run.
 *
 * Models: random trees with every joint type and parameters of every kind
 * (per-instant functions, both forward-dynamics algorithms, two reference
 * points), the five-bar linkage (short simulations and discrete-adjoint
 * gradients from several parameter vectors, and the 2p runs of its
 * finite-difference gradient, mbs_sens_options.threads). Threads 1, 2 and 3 (more
 * threads than cores is allowed; the cases are handed out dynamically, so
 * which thread takes which case varies from run to run).
 */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "random_model.h"
#include "testutil.h"

enum { NCASE = 23 };

/* The serial reference of case i on a fresh data. */
static int serial_eval(const mbs_model *m, const mbs_batch_eval *e, long i, double *o[4])
{
    size_t nq = (size_t)mbs_model_nq(m);
    mbs_data *d = mbs_data_create(m, NULL);
    mbs_data_set_ref(d, e->ref);
    const double *q = e->q + i * nq, *qd = e->qd + i * nq, *u = e->u + i * nq;
    int rc;
    switch (e->function) {
    case MBS_BATCH_INVERSE_DYNAMICS: rc = mbs_inverse_dynamics(m, d, q, qd, u, o[0]); break;
    case MBS_BATCH_ID_DERIVATIVES: rc = mbs_inverse_dynamics_derivatives(m, d, q, qd, u, o[0], o[1], o[2]); break;
    case MBS_BATCH_ID_PARAM_DERIVATIVES: rc = mbs_inverse_dynamics_param_derivatives(m, d, q, qd, u, o[0]); break;
    case MBS_BATCH_MASS_MATRIX: rc = mbs_mass_matrix(m, d, q, o[0]); break;
    case MBS_BATCH_FORWARD_DYNAMICS: rc = mbs_forward_dynamics(m, d, e->alg, q, qd, u, o[0]); break;
    case MBS_BATCH_FD_DERIVATIVES:
        rc = mbs_forward_dynamics_derivatives(m, d, e->alg, q, qd, u, o[0], o[1], o[2], o[3]);
        break;
    default: rc = mbs_forward_dynamics_param_derivatives(m, d, e->alg, q, qd, u, o[0], o[1]); break;
    }
    mbs_data_free(d);
    return rc;
}

/* Every function at NCASE random states, case 7 with a NaN velocity. */
static void check_evaluate(const mbs_model *m, mbs_rng *r, mbs_ref_point ref, mbs_fd_algorithm alg)
{
    size_t nq = (size_t)mbs_model_nq(m), np = (size_t)mbs_model_nparams(m);
    size_t big = nq * (nq > np ? nq : np);
    double *q = malloc(NCASE * nq * sizeof *q), *qd = malloc(NCASE * nq * sizeof *q);
    double *u = malloc(NCASE * nq * sizeof *q);
    for (int i = 0; i < NCASE; i++)
        mbs_test_random_state(r, m, q + i * nq, qd + i * nq, u + i * nq);
    qd[7 * nq] = NAN;
    double *out[4], *ref_out[4];
    for (int k = 0; k < 4; k++) {
        out[k] = malloc(NCASE * big * sizeof(double));
        ref_out[k] = malloc(big * sizeof(double));
    }
    for (int f = MBS_BATCH_INVERSE_DYNAMICS; f <= MBS_BATCH_FD_PARAM_DERIVATIVES; f++) {
        mbs_batch_eval e = {f, alg, ref, q, qd, u, {out[0], out[1], out[2], out[3]}};
        for (int threads = 1; threads <= 3; threads++) {
            int status[NCASE];
            for (int k = 0; k < 4; k++)
                memset(out[k], 0, NCASE * big * sizeof(double));
            mbs_error err = {0};
            int rc = mbs_batch_evaluate(m, NCASE, &e, threads, status, &err);
            int fails = f == MBS_BATCH_MASS_MATRIX ? 0 : 1;   /* M does not read qd */
            CHECK(fails ? rc != MBS_OK && strncmp(err.msg, "case 7: ", 8) == 0 : rc == MBS_OK,
                  "function %d, %d threads: status %d, message '%s'", f, threads, rc, err.msg);
            int same = 1;
            for (long i = 0; i < NCASE; i++) {
                int rs = serial_eval(m, &e, i, ref_out);
                if (rs != status[i]) {
                    same = 0;
                    continue;
                }
                if (rs != MBS_OK)
                    continue;
                for (int k = 0; k < 4; k++) {
                    size_t n = 0;
                    static const size_t nout[7] = {1, 3, 1, 1, 1, 4, 2};
                    if (k >= (int)nout[f])
                        continue;
                    if (f == MBS_BATCH_ID_PARAM_DERIVATIVES || (f == MBS_BATCH_FD_PARAM_DERIVATIVES && k == 1))
                        n = nq * np;
                    else if (k > 0 || f == MBS_BATCH_MASS_MATRIX)
                        n = nq * nq;
                    else
                        n = nq;
                    if (memcmp(out[k] + i * n, ref_out[k], n * sizeof(double)) != 0)
                        same = 0;
                }
            }
            CHECK(same, "function %d (ref %d, alg %d), %d threads: bit for bit the serial results",
                  f, ref, alg, threads);
        }
    }
    for (int k = 0; k < 4; k++) {
        free(out[k]);
        free(ref_out[k]);
    }
    free(q), free(qd), free(u);
}

/* Parameter vectors of case i: the model's values scaled by 1 + 0.02 (i - 2). */
static void fivebar_params(const mbs_model *m, int n, double *rho)
{
    int np = mbs_model_nparams(m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < np; j++)
            rho[i * np + j] = mbs_param_value(m, j) * (1 + 0.02 * (i - 2));
}

static int keep_last(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                     const double *qdd)
{
    (void)d, (void)t, (void)qdd;
    int nq = mbs_model_nq(m);
    memcpy(user, q, nq * sizeof *q);
    memcpy((double *)user + nq, qd, nq * sizeof *qd);
    return 0;
}

static void check_runs(void)
{
    mbs_error err = {0};
    mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m)
        return;
    enum { N = 5 };
    int np = mbs_model_nparams(m), nobj = mbs_model_nobjectives(m), nq = mbs_model_nq(m);
    double rho[N * 8];
    fivebar_params(m, N, rho);
    mbs_sens_options o = mbs_sens_options_default(m);
    o.method = MBS_SENS_DAVM;
    o.sim.tf = 0.05;
    double psi[N * 8], grad[N * 8 * 8], qf[N * 8], qdf[N * 8];
    int status[N];
    int rc = mbs_batch_sensitivity(m, &o, N, rho, psi, grad, 2, status, &err);
    CHECK(rc == MBS_OK, "batch sensitivity: %s", err.msg);
    rc = mbs_batch_simulate(m, &o.sim, N, rho, NULL, NULL, qf, qdf, 2, status, &err);
    CHECK(rc == MBS_OK, "batch simulate: %s", err.msg);
    int same_s = 1, same_q = 1;
    for (int i = 0; i < N; i++) {
        mbs_model *mi = mbs_model_with_params(m, rho + i * np, &err);
        mbs_sens_result res = {0};
        if (mbs_sensitivity(mi, &o, &res, &err) != MBS_OK
            || memcmp(res.psi, psi + i * nobj, nobj * sizeof(double)) != 0
            || memcmp(res.grad, grad + i * nobj * np, nobj * np * sizeof(double)) != 0)
            same_s = 0;
        mbs_sens_result_free(&res);
        mbs_data *d = mbs_data_create(mi, &err);
        double last[2 * 8];
        if (mbs_simulate(mi, d, &o.sim, NULL, NULL, keep_last, last, NULL, &err) != MBS_OK
            || memcmp(last, qf + i * nq, nq * sizeof(double)) != 0
            || memcmp(last + nq, qdf + i * nq, nq * sizeof(double)) != 0)
            same_q = 0;
        mbs_data_free(d);
        mbs_model_free(mi);
    }
    CHECK(same_s, "five-bar davm from %d parameter vectors on 2 threads: bit for bit serial", N);
    CHECK(same_q, "five-bar simulations from %d parameter vectors on 2 threads: bit for bit serial", N);
    /* The fd reference's 2p runs on 1 and 3 threads: the same gradient. */
    mbs_sens_result f1 = {0}, f3 = {0};
    o.method = MBS_SENS_FD;
    o.threads = 1;
    int r1 = mbs_sensitivity(m, &o, &f1, &err);
    o.threads = 3;
    int r3 = mbs_sensitivity(m, &o, &f3, &err);
    CHECK(r1 == MBS_OK && r3 == MBS_OK && memcmp(f1.grad, f3.grad, (size_t)(nobj * np) * sizeof(double)) == 0
              && memcmp(f1.psi, f3.psi, (size_t)nobj * sizeof(double)) == 0,
          "fd on 3 threads: the serial gradient bit for bit (%s)", err.msg);
    mbs_sens_result_free(&f1);
    mbs_sens_result_free(&f3);
    o.method = MBS_SENS_DAVM;
    /* A bad parameter vector fails its case only. */
    rho[3 * np + 2] = -1;   /* m_A1 < 0 */
    rc = mbs_batch_sensitivity(m, &o, N, rho, psi, grad, 2, status, &err);
    CHECK(rc != MBS_OK && status[3] != MBS_OK && status[0] == MBS_OK && status[4] == MBS_OK
              && strncmp(err.msg, "case 3: ", 8) == 0,
          "a negative mass fails case 3 only: %d, '%s'", rc, err.msg);
    mbs_model_free(m);
}

/* OpenBLAS inside the team: one thread; after it: as before. */
static int blas_inside(void *user, const mbs_model *m, mbs_data *d, long i, mbs_error *err)
{
    (void)m, (void)d, (void)err;
    int *seen = user;
    seen[i] = openblas_get_num_threads() * 100 + omp_get_num_threads();
    return MBS_OK;
}

static void check_openblas(const mbs_model *m)
{
    openblas_set_num_threads(2);
    int seen[8] = {0};
    int rc = mbs_batch_run(m, 8, 2, blas_inside, seen, NULL, NULL);
    int ok = rc == MBS_OK;
    for (int i = 0; i < 8; i++)
        ok = ok && seen[i] == 100 + 2;
    CHECK(ok, "2 threads: OpenBLAS on 1 thread in every case (saw %d)", seen[0]);
    CHECK(openblas_get_num_threads() == 2, "OpenBLAS threads restored: %d", openblas_get_num_threads());
    int nested = 0;
#pragma omp parallel num_threads(2)
    {
        int s[2] = {0};
        mbs_batch_run(m, 2, 2, blas_inside, s, NULL, NULL);
#pragma omp atomic
        nested += s[0] == 201 && s[1] == 201;   /* serially, BLAS setting untouched */
    }
    CHECK(nested == 2, "a batch inside a parallel region runs serially on its caller's thread");
    CHECK(mbs_batch_threads(0) == omp_get_max_threads() && mbs_batch_threads(3) == 3,
          "threads follow OMP_NUM_THREADS");
}

int main(void)
{
    /* The serial references run with OpenBLAS on one thread, as the
     * batches do (mbsens/batch.h: its threaded kernels sum in another
     * order). */
    openblas_set_num_threads(1);
    mbs_rng r;
    mbs_rng_seed(&r, 18);
    for (int k = 0; k < 3; k++) {
        mbs_model *m = mbs_test_random_tree_p(&r, 4 + 2 * k, 0, 1);
        if (!m)
            continue;
        check_evaluate(m, &r, k == 1 ? MBS_REF_ORIGIN : MBS_REF_COM, k == 2 ? MBS_FD_SEMI_RECURSIVE : MBS_FD_RECURSIVE);
        if (k == 0) {
            check_openblas(m);
            openblas_set_num_threads(1);
        }
        mbs_model_free(m);
    }
    check_runs();
    return mbs_test_summary("test_batch");
}
