/*
 * batch.c - N independent cases on the threads of an OpenMP team, one
 * mbs_data per thread (mbsens/batch.h). Built only on the public API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "mbsens/batch.h"
#include "mbsens/mbsens.h"

int mbs_batch_threads(int threads)
{
    if (threads > 0)
        return threads;
    int t = omp_get_max_threads();
    return t > 0 ? t : 1;
}

static int batch_arg_error(mbs_error *err, const char *msg)
{
    if (err) {
        err->code = MBS_ERR_ARG;
        snprintf(err->msg, sizeof err->msg, "batch: %s", msg);
    }
    return MBS_ERR_ARG;
}

/* The failing case of lowest index, kept across the team. */
typedef struct batch_failure {
    long index;
    int code;
    mbs_error err;
} batch_failure;

static void batch_note_failure(batch_failure *f, long i, int code, const mbs_error *e)
{
#pragma omp critical(mbs_batch_failure)
    if (i < f->index) {
        f->index = i;
        f->code = code;
        f->err = *e;
    }
}

/* The cases of one thread, taken one at a time from the shared loop. */
static void batch_team_member(const mbs_model *m, long n, mbs_batch_fn fn, void *user, int *status,
                              batch_failure *fail)
{
    mbs_error derr = {0};
    mbs_data *d = mbs_data_create(m, &derr);
#pragma omp for schedule(dynamic, 1)
    for (long i = 0; i < n; i++) {
        mbs_error e = {0};
        int rc;
        if (d) {
            rc = fn(user, m, d, i, &e);
        } else {
            rc = derr.code ? derr.code : MBS_ERR_NOMEM;
            e = derr;
        }
        if (rc > 0)
            rc = MBS_ERR_ARG;
        if (status)
            status[i] = rc;
        if (rc != MBS_OK)
            batch_note_failure(fail, i, rc, &e);
    }
    mbs_data_free(d);
}

int mbs_batch_run(const mbs_model *m, long n, int threads, mbs_batch_fn fn, void *user, int *status,
                  mbs_error *err)
{
    if (!m || !fn || n < 0)
        return batch_arg_error(err, "model, function and a case count >= 0 are required");
    int nested = omp_in_parallel();
    long t = nested ? 1 : mbs_batch_threads(threads);
    if (t > n)
        t = n > 0 ? n : 1;
    batch_failure fail = {n, MBS_OK, {0}};
    int blas_threads = 0;
    if (!nested) {
        blas_threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
    }
#pragma omp parallel num_threads((int)t) if (t > 1)
    batch_team_member(m, n, fn, user, status, &fail);
    if (!nested)
        openblas_set_num_threads(blas_threads);
    if (fail.code == MBS_OK)
        return MBS_OK;
    if (err) {
        err->code = fail.code;
        snprintf(err->msg, sizeof err->msg, "case %ld: %.*s", fail.index, MBS_ERROR_MSG_LEN - 32, fail.err.msg);
    }
    return fail.code;
}

/* ---- per-instant functions ---- */

typedef struct batch_eval_ctx {
    const mbs_batch_eval *e;
    size_t nq, nv, np;        /* coordinates, velocities, parameters */
    size_t size[4];           /* doubles per case of each output */
    const double *zero;       /* nv zeros for qd or u left NULL */
} batch_eval_ctx;

/* Doubles per case of output k of function f (0: no such output). */
static size_t batch_out_size(mbs_batch_function f, int k, size_t nv, size_t np)
{
    static const int kinds[7][4] = {
        /* 1: nv, 2: nv x nv, 3: nv x np */
        [MBS_BATCH_INVERSE_DYNAMICS] = {1, 0, 0, 0},
        [MBS_BATCH_ID_DERIVATIVES] = {1, 2, 2, 0},
        [MBS_BATCH_ID_PARAM_DERIVATIVES] = {3, 0, 0, 0},
        [MBS_BATCH_MASS_MATRIX] = {2, 0, 0, 0},
        [MBS_BATCH_FORWARD_DYNAMICS] = {1, 0, 0, 0},
        [MBS_BATCH_FD_DERIVATIVES] = {1, 2, 2, 2},
        [MBS_BATCH_FD_PARAM_DERIVATIVES] = {1, 3, 0, 0},
    };
    switch (kinds[f][k]) {
    case 1: return nv;
    case 2: return nv * nv;
    case 3: return nv * np;
    default: return 0;
    }
}

static int batch_eval_case(void *user, const mbs_model *m, mbs_data *d, long i, mbs_error *err)
{
    const batch_eval_ctx *c = user;
    const mbs_batch_eval *e = c->e;
    size_t r = (size_t)i;
    const double *q = e->q + r * c->nq;
    const double *qd = e->qd ? e->qd + r * c->nv : c->zero;
    const double *u = e->u ? e->u + r * c->nv : c->zero;
    double *o[4];
    for (int k = 0; k < 4; k++)
        o[k] = e->out[k] && c->size[k] ? e->out[k] + r * c->size[k] : NULL;
    mbs_data_set_ref(d, e->ref);
    int rc;
    switch (e->function) {
    case MBS_BATCH_INVERSE_DYNAMICS: rc = mbs_inverse_dynamics(m, d, q, qd, u, o[0]); break;
    case MBS_BATCH_ID_DERIVATIVES:
        rc = mbs_inverse_dynamics_derivatives(m, d, q, qd, u, o[0], o[1], o[2]);
        break;
    case MBS_BATCH_ID_PARAM_DERIVATIVES: rc = mbs_inverse_dynamics_param_derivatives(m, d, q, qd, u, o[0]); break;
    case MBS_BATCH_MASS_MATRIX: rc = mbs_mass_matrix(m, d, q, o[0]); break;
    case MBS_BATCH_FORWARD_DYNAMICS: rc = mbs_forward_dynamics(m, d, e->alg, q, qd, u, o[0]); break;
    case MBS_BATCH_FD_DERIVATIVES:
        rc = mbs_forward_dynamics_derivatives(m, d, e->alg, q, qd, u, o[0], o[1], o[2], o[3]);
        break;
    default: rc = mbs_forward_dynamics_param_derivatives(m, d, e->alg, q, qd, u, o[0], o[1]); break;
    }
    if (rc != MBS_OK) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "%s", mbs_data_error(d));
    }
    return rc;
}

int mbs_batch_evaluate(const mbs_model *m, long n, const mbs_batch_eval *e, int threads, int *status,
                       mbs_error *err)
{
    if (!m || !e || !e->q || n < 0)
        return batch_arg_error(err, "model, evaluation and its states q are required");
    if ((unsigned)e->function > MBS_BATCH_FD_PARAM_DERIVATIVES)
        return batch_arg_error(err, "unknown function");
    batch_eval_ctx c = {e, (size_t)mbs_model_nq(m), (size_t)mbs_model_nv(m), (size_t)mbs_model_nparams(m), {0},
                        NULL};
    for (int k = 0; k < 4; k++)
        c.size[k] = batch_out_size(e->function, k, c.nv, c.np);
    double *zero = calloc(c.nv ? c.nv : 1, sizeof *zero);
    if (!zero) {
        if (err) {
            err->code = MBS_ERR_NOMEM;
            snprintf(err->msg, sizeof err->msg, "batch: out of memory");
        }
        return MBS_ERR_NOMEM;
    }
    c.zero = zero;
    int rc = mbs_batch_run(m, n, threads, batch_eval_case, &c, status, err);
    free(zero);
    return rc;
}

/* ---- whole runs ---- */

typedef struct batch_run_ctx {
    const mbs_sim_options *sim;
    const mbs_sens_options *sens;
    const double *rho, *q0, *qd0;
    double *out0, *out1;      /* simulate: qf, qdf; sensitivity: psi, grad */
    size_t nq, nv, np, nobj;
} batch_run_ctx;

/* The model of case i: m itself, or a copy with the case's parameters
 * (*own set to free it). */
static const mbs_model *batch_case_model(const batch_run_ctx *c, const mbs_model *m, long i,
                                         mbs_model **own, mbs_error *err)
{
    *own = NULL;
    if (!c->rho)
        return m;
    *own = mbs_model_with_params(m, c->rho + (size_t)i * c->np, err);
    return *own;
}

typedef struct batch_final_state {
    double *q, *qd;
    size_t nq, nv;
} batch_final_state;

static int batch_keep_state(void *user, const mbs_model *m, mbs_data *d, double t, const double *q,
                            const double *qd, const double *qdd)
{
    (void)m, (void)d, (void)t, (void)qdd;
    const batch_final_state *f = user;
    if (f->q)
        memcpy(f->q, q, f->nq * sizeof *q);
    if (f->qd)
        memcpy(f->qd, qd, f->nv * sizeof *qd);
    return 0;
}

static int batch_simulate_case(void *user, const mbs_model *m, mbs_data *d, long i, mbs_error *err)
{
    const batch_run_ctx *c = user;
    mbs_model *own;
    const mbs_model *mc = batch_case_model(c, m, i, &own, err);
    if (!mc)
        return err->code ? err->code : MBS_ERR_MODEL;
    mbs_data *dc = own ? mbs_data_create(own, err) : d;
    int rc = err->code ? err->code : MBS_ERR_NOMEM;
    if (dc) {
        const size_t rq = (size_t)i * c->nq, rv = (size_t)i * c->nv;
        batch_final_state f = {c->out0 ? c->out0 + rq : NULL, c->out1 ? c->out1 + rv : NULL, c->nq, c->nv};
        rc = mbs_simulate(mc, dc, c->sim, c->q0 ? c->q0 + rq : NULL, c->qd0 ? c->qd0 + rv : NULL,
                          batch_keep_state, &f, NULL, err);
    }
    if (own) {
        mbs_data_free(dc);
        mbs_model_free(own);
    }
    return rc;
}

int mbs_batch_simulate(const mbs_model *m, const mbs_sim_options *opts, long n, const double *rho,
                       const double *q0, const double *qd0, double *qf, double *qdf, int threads,
                       int *status, mbs_error *err)
{
    if (!m || !opts)
        return batch_arg_error(err, "model and options are required");
    batch_run_ctx c = {opts, NULL, rho, q0, qd0, qf, qdf, (size_t)mbs_model_nq(m), (size_t)mbs_model_nv(m),
                       (size_t)mbs_model_nparams(m), 0};
    return mbs_batch_run(m, n, threads, batch_simulate_case, &c, status, err);
}

static int batch_sensitivity_case(void *user, const mbs_model *m, mbs_data *d, long i, mbs_error *err)
{
    (void)d;
    const batch_run_ctx *c = user;
    mbs_model *own;
    const mbs_model *mc = batch_case_model(c, m, i, &own, err);
    if (!mc)
        return err->code ? err->code : MBS_ERR_MODEL;
    mbs_sens_options o = *c->sens;
    o.history = NULL;
    o.history_user = NULL;
    mbs_sens_result res = {0};
    int rc = mbs_sensitivity(mc, &o, &res, err);
    if (rc == MBS_OK && (size_t)res.nobj == c->nobj && (size_t)res.nparam == c->np) {
        size_t r = (size_t)i;
        if (c->out0)
            memcpy(c->out0 + r * c->nobj, res.psi, c->nobj * sizeof *res.psi);
        if (c->out1)
            memcpy(c->out1 + r * c->nobj * c->np, res.grad, c->nobj * c->np * sizeof *res.grad);
    } else if (rc == MBS_OK) {
        rc = MBS_ERR_ARG;
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "sensitivity: %d objectives x %d parameters, expected %zu x %zu",
                 res.nobj, res.nparam, c->nobj, c->np);
    }
    mbs_sens_result_free(&res);
    mbs_model_free(own);
    return rc;
}

int mbs_batch_sensitivity(const mbs_model *m, const mbs_sens_options *opts, long n, const double *rho,
                          double *psi, double *grad, int threads, int *status, mbs_error *err)
{
    if (!m || !opts)
        return batch_arg_error(err, "model and options are required");
    size_t nobj = (size_t)mbs_model_nobjectives(m) + (opts->objective ? 1 : 0);
    batch_run_ctx c = {NULL, opts, rho, NULL, NULL, psi, grad, (size_t)mbs_model_nq(m), (size_t)mbs_model_nv(m),
                       (size_t)mbs_model_nparams(m), nobj};
    return mbs_batch_run(m, n, threads, batch_sensitivity_case, &c, status, err);
}
