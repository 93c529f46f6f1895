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

int sens_fd(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    int rc = sens_psi_only(m, r->o, r->psi, stats, err);
    if (rc) return rc;
    double *vals = malloc(sizeof(double) * (size_t)r->np);
    double *pp = malloc(sizeof(double) * (size_t)r->nobj), *pm = malloc(sizeof(double) * (size_t)r->nobj);
    if (!vals || !pp || !pm) { rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
    for (int j = 0; j < r->np; j++) vals[j] = m->param[j].value;
    for (int j = 0; j < r->np && !rc; j++) {
        double h = r->o->fd_step * fmax(1, fabs(vals[j]));
        double *out[2] = { pp, pm };
        for (int s = 0; s < 2 && !rc; s++) {
            vals[j] = m->param[j].value + (s ? -h : h);
            /* bounds are a design constraint, not a model one: evaluate
             * outside them if needed for the difference */
            mbs_model *mp = mbs_model_with_params(m, vals, err);
            if (!mp) {
                /* retry ignoring bounds is not possible through the API:
                 * report with the parameter name */
                rc = err ? err->code : MBS_ERR_MODEL;
                break;
            }
            rc = sens_psi_only(mp, r->o, out[s], NULL, err);
            mbs_model_free(mp);
        }
        vals[j] = m->param[j].value;
        if (rc) break;
        for (int k = 0; k < r->nobj; k++) r->grad[k * r->np + j] = (pp[k] - pm[k]) / (2 * h);
    }
done:
    free(vals);
    free(pp);
    free(pm);
    return rc;
}
