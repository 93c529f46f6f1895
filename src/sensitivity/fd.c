/*
 * fd.c - the finite-difference reference: central differences of psi over
 * whole simulations (2 np + 1 runs), and psi alone by the integrator of the
 * options (sens_psi_only).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"

/* ---------------------------------------------------------------- psi only */

/* psi by the trapezoidal quadrature of g on the steps of the integrator. */
static int psi_trapezoidal_grid(const mbs_model *m, const mbs_sens_options *o, double *psi,
                                mbs_sim_stats *stats, mbs_error *err)
{
    int rc;
    mbs_data *d = mbs_data_create(m, err);
    if (!d) return err ? err->code : MBS_ERR_NOMEM;
    mbs_sim_options so = o->sim;
    so.project = 0;
    mbs_integrator *it = mbs_integrator_create(m, d, &so, err);
    const int no = sens_nobj(m, o);
    double *g = calloc((size_t)no + 1, sizeof *g);
    sens_run r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.o = o;
    r.d = d;
    r.nq = m->nq;
    r.nv = m->nv;
    r.nobj = no;
    if (!it || !g || sens_run_user_init(&r)) { rc = err && err->code ? err->code : MBS_ERR_NOMEM; goto done; }
    if ((rc = mbs_integrator_reset(it, so.t0, NULL, NULL, err))) goto done;
    for (int k = 0; k < no; k++) psi[k] = 0;
    double t = so.t0;
    sens_objectives(&r, mbs_integrator_q(it), mbs_integrator_qd(it), mbs_integrator_qdd(it), t, 0, g);
    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        double h = fmin(so.dt, so.tf - t);
        for (int k = 0; k < no; k++) psi[k] += 0.5 * h * g[k];
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        sens_objectives(&r, mbs_integrator_q(it), mbs_integrator_qd(it), mbs_integrator_qdd(it), t, 0, g);
        for (int k = 0; k < no; k++) psi[k] += 0.5 * h * g[k];
    }
    sens_objectives(&r, mbs_integrator_q(it), mbs_integrator_qd(it), mbs_integrator_qdd(it), t, 1, g);
    for (int k = 0; k < no; k++) psi[k] += g[k];
    if (stats) mbs_integrator_stats(it, stats);
    rc = sens_run_user_check(&r, err);
done:
    sens_run_user_free(&r);
    free(g);
    mbs_integrator_free(it);
    mbs_data_free(d);
    return rc;
}

int sens_psi_only(const mbs_model *m, const mbs_sens_options *o, double *psi,
                  mbs_sim_stats *stats, mbs_error *err)
{
    if (o->sim.formulation == MBS_FD_RECURSIVE && o->sim.loop == MBS_LOOP_NONE) {
        /* the RK4 quadrature of the fully recursive DDM, without sensitivities */
        sens_run r;
        memset(&r, 0, sizeof r);
        r.m = m;
        r.o = o;
        r.nq = m->nq;
        r.nv = m->nv;
        r.np = 0;
        r.nobj = sens_nobj(m, o);
        r.psi = psi;
        r.d = mbs_data_create(m, err);
        if (!r.d) return err ? err->code : MBS_ERR_NOMEM;
        int rc = sens_run_user_init(&r) ? mbs_error_set(err, MBS_ERR_NOMEM, "out of memory")
                                        : sens_ddm_rk4(&r, stats, err);
        if (!rc) rc = sens_run_user_check(&r, err);
        sens_run_user_free(&r);
        mbs_data_free(r.d);
        return rc;
    }
    return psi_trapezoidal_grid(m, o, psi, stats, err);
}

/* ---------------------------------------------------------------- fd */

/* psi of the fd run k (parameter k / 2 moved by +h, k odd: by -h) into psi. */
static int sens_fd_run(const sens_run *r, int k, double *vals, double *psi, mbs_error *err)
{
    const mbs_model *m = r->m;
    int j = k / 2;
    for (int i = 0; i < r->np; i++) vals[i] = m->param[i].value;
    double h = r->o->fd_step * fmax(1, fabs(vals[j]));
    vals[j] += k % 2 ? -h : h;
    mbs_model *mp = mbs_model_with_params(m, vals, err);
    if (!mp) return err->code ? err->code : MBS_ERR_MODEL;
    int rc = sens_psi_only(mp, r->o, psi, NULL, err);
    mbs_model_free(mp);
    return rc;
}

/* The 2p runs are independent: on o->threads threads, each with its own
 * model copy; the failure of lowest index is reported, as serially. */
int sens_fd(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    int rc = sens_psi_only(r->m, r->o, r->psi, stats, err);
    if (rc) return rc;
    int n = 2 * r->np, no = r->nobj, threads = r->o->threads > 1 ? r->o->threads : 1;
    double *vals = malloc(sizeof(double) * (size_t)n * (size_t)r->np);
    double *out = malloc(sizeof(double) * (size_t)n * (size_t)no);
    int *st = calloc((size_t)n, sizeof *st);
    mbs_error *errs = calloc((size_t)n, sizeof *errs);
    if (!vals || !out || !st || !errs) { rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
    int blas = sens_blas_single(threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int k = 0; k < n; k++)
        st[k] = sens_fd_run(r, k, vals + (size_t)k * r->np, out + (size_t)k * no, &errs[k]);
    sens_blas_restore(threads, blas);
    for (int k = 0; k < n && !rc; k++)
        if ((rc = st[k]) && err) *err = errs[k];
    for (int j = 0; j < r->np && !rc; j++) {
        double h = r->o->fd_step * fmax(1, fabs(r->m->param[j].value));
        for (int k = 0; k < no; k++)
            r->grad[k * r->np + j] = (out[(2 * j) * no + k] - out[(2 * j + 1) * no + k]) / (2 * h);
    }
done:
    free(vals);
    free(out);
    free(st);
    free(errs);
    return rc;
}
