/*
 * mbsens/batch.h - many evaluations at once on every core (OpenMP).
 *
 * A batch runs N independent cases on T threads, each thread with its own
 * mbs_data on the shared, immutable model. Case i writes only row i of the
 * caller's arrays, and every case is computed exactly as the serial call
 * would compute it on a fresh mbs_data, so the results are bit for bit
 * those of N serial calls whatever T and whatever thread takes which case.
 *
 * Threads. threads > 0 asks for that many; threads = 0 takes OpenMP's
 * default, omp_get_max_threads(), which follows OMP_NUM_THREADS. A batch
 * started inside a parallel region runs serially on the calling thread.
 *
 * OpenBLAS. While a batch runs, OpenBLAS is set to one thread
 * (openblas_set_num_threads(1)), whatever T: T threads each calling a
 * threaded BLAS would oversubscribe the cores, and OpenBLAS's threaded
 * kernels sum in another order than its serial ones (the dense solves of
 * the forward-dynamics derivatives differ in the last bits), so the
 * results would depend on T. They are those of serial calls made with
 * OpenBLAS on one thread (OPENBLAS_NUM_THREADS=1). The previous setting is
 * restored when the batch returns. The setting is process-wide: run one
 * batch at a time, and no threaded BLAS work of the caller alongside it.
 * A batch inside a parallel region leaves the setting alone.
 *
 * Failures. A case that fails leaves its rows unspecified, its status in
 * status[i] (MBS_OK or negative; status may be NULL) and the other cases
 * carry on. The call returns MBS_OK when every case succeeded, otherwise
 * the status of the failing case of lowest index, with that case's message
 * in err prefixed by "case I: ".
 */
#ifndef MBSENS_BATCH_H
#define MBSENS_BATCH_H

#include "sensitivity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of threads a batch asked for `threads` uses (>= 1). */
int mbs_batch_threads(int threads);

/* ---- any computation ----
 * fn computes case i with the data d of the thread running it. A thread's
 * data serves all its cases in turn: its settings (reference point, time,
 * loads) are what the previous case left, so fn sets those it needs before
 * its calls (the library's results do not depend on earlier calls
 * otherwise). fn returns MBS_OK or a negative status with a message in
 * err; it must not write anything that another case reads. */
typedef int (*mbs_batch_fn)(void *user, const mbs_model *m, mbs_data *d, long i, mbs_error *err);

int mbs_batch_run(const mbs_model *m, long n, int threads, mbs_batch_fn fn, void *user, int *status,
                  mbs_error *err);

/* ---- per-instant functions at N states ---- */
typedef enum mbs_batch_function {
    MBS_BATCH_INVERSE_DYNAMICS = 0,   /* out[0] = tau (nv) from q, qd, u = qdd */
    MBS_BATCH_ID_DERIVATIVES,         /* out[0..2] = tau, dtau/dq, dtau/dqd (nv, nv x nv) */
    MBS_BATCH_ID_PARAM_DERIVATIVES,   /* out[0] = dtau/drho (nv x nparams) */
    MBS_BATCH_MASS_MATRIX,            /* out[0] = M(q) (nv x nv) */
    MBS_BATCH_FORWARD_DYNAMICS,       /* out[0] = qdd (nv) from q, qd, u = tau */
    MBS_BATCH_FD_DERIVATIVES,         /* out[0..3] = qdd, dqdd/dq, dqdd/dqd, dqdd/dtau */
    MBS_BATCH_FD_PARAM_DERIVATIVES    /* out[0..1] = qdd, dqdd/drho (nv x nparams) */
} mbs_batch_function;

typedef struct mbs_batch_eval {
    mbs_batch_function function;
    mbs_fd_algorithm alg;     /* forward dynamics: the algorithm (MBS_FD_RECURSIVE) */
    mbs_ref_point ref;        /* reference point of every case's data (MBS_REF_COM) */
    const double *q, *qd, *u; /* N x nq (q), N x nv (qd, u), row i the state of case i; qd, u
                               * may be NULL (0) */
    double *out[4];           /* N rows of each output (sizes above); NULL: not wanted */
} mbs_batch_eval;

int mbs_batch_evaluate(const mbs_model *m, long n, const mbs_batch_eval *e, int threads, int *status,
                       mbs_error *err);

/* ---- whole runs from N parameter vectors or initial states ----
 * rho: N x nparams parameter values (NULL: the model's for every case;
 * each case runs on mbs_model_with_params). q0, qd0: N x nq and N x nv
 * initial states (NULL: the model's). */

/* N simulations with opts from t0 to tf: final state in qf, qdf (N x nq,
 * N x nv; either may be NULL). */
int mbs_batch_simulate(const mbs_model *m, const mbs_sim_options *opts, long n, const double *rho,
                       const double *q0, const double *qd0, double *qf, double *qdf, int threads,
                       int *status, mbs_error *err);

/* N sensitivity analyses with opts (its history callback is not called):
 * psi N x nobj, grad N x nobj x nparams (row-major per case; either may be
 * NULL); nobj counts the program's own objective when opts has one. */
int mbs_batch_sensitivity(const mbs_model *m, const mbs_sens_options *opts, long n, const double *rho,
                          double *psi, double *grad, int threads, int *status, mbs_error *err);

#ifdef __cplusplus
}
#endif
#endif
