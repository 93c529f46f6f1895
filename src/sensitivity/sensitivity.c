/*
 * sensitivity.c - mbs_sensitivity: the checks of the options, then the
 * method that applies to the method and formulation asked for (the only
 * file that calls the methods); the names of the methods and the options'
 * defaults.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sens_common.h"
#include "mbsens/constraints.h"
#include "kernels/results.h"
#include "model/state.h"

/* ---------------------------------------------------------------- names */

static const char *const method_names[] = { "ddm", "davm", "cavm", "fd", "cs" };

const char *mbs_sens_method_name(mbs_sens_method m)
{
    return (int)m >= 0 && (int)m < 5 ? method_names[m] : "?";
}

int mbs_sens_method_from_name(const char *name)
{
    for (int k = 0; name && k < 5; k++)
        if (!strcmp(name, method_names[k])) return k;
    return -1;
}

mbs_sens_options mbs_sens_options_default(const mbs_model *m)
{
    mbs_sens_options o;
    memset(&o, 0, sizeof o);
    o.sim = mbs_model_sim_options(m);
    o.method = MBS_SENS_DDM;
    o.fd_step = 1e-6;
    o.threads = 1;
    return o;
}

void mbs_sens_result_free(mbs_sens_result *res)
{
    if (!res) return;
    free(res->psi);
    free(res->grad);
    res->psi = res->grad = NULL;
}

/* ---------------------------------------------------------------- api */

/* The method for the options o (checked by the caller): its run into r, its
 * statistics into stats. */
static int dispatch(sens_run *r, const mbs_sens_options *o, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    int rc = MBS_OK;
    /* Closed loops: the open-tree methods below differentiate the tree's
     * equations and would ignore the constraints. Only the finite
     * differences (which re-simulate with the closed-loop formulation) and
     * the closed-loop methods dispatched here apply. */
    const int closed = mbs_model_nloop_constraints(m) + mbs_model_ndriver_constraints(m) > 0;
    if (o->method == MBS_SENS_DDM && o->sim.loop == MBS_LOOP_ALI3P) {
        /* closed-loop formulations: direct differentiation of their discrete steps */
        return sens_ddm_ali3p(r, stats, err);
    }
    if (o->method == MBS_SENS_DDM && o->sim.loop == MBS_LOOP_MATRIXR) return sens_ddm_matrixr(r, stats, err);
    if (o->method == MBS_SENS_DAVM && (o->sim.loop == MBS_LOOP_ALI3P || o->sim.loop == MBS_LOOP_MATRIXR)) {
        /* the transpose of the closed-loop DDM's recursion (davm_ali3p.c, _matrixr.c) */
        return o->sim.loop == MBS_LOOP_ALI3P ? sens_davm_ali3p(r, stats, err)
                                             : sens_davm_matrixr(r, stats, err);
    }
    if (o->method == MBS_SENS_CAVM && (o->sim.loop == MBS_LOOP_ALI3P || o->sim.loop == MBS_LOOP_MATRIXR))
        return sens_cavm_loops(r, stats, err);
    if ((closed || o->sim.loop != MBS_LOOP_NONE) && o->method != MBS_SENS_FD) {
        if (o->method == MBS_SENS_DDM && o->sim.loop == MBS_LOOP_NONE)
            rc = mbs_error_set(err, MBS_ERR_UNSUPPORTED,
                               "sensitivity: %s has closed loops: choose a closed-loop formulation "
                               "(--formulation ali3p|matrixr with --method ddm or cavm; or --method fd)", m->name);
        else if (o->method == MBS_SENS_DDM)
            rc = mbs_error_set(err, MBS_ERR_UNSUPPORTED,
                               "sensitivity: method ddm is implemented for the closed-loop formulations ali3p "
                               "and matrixr, not %s (or use --method fd)", mbs_loop_formulation_name(o->sim.loop));
        else
            rc = mbs_error_set(err, MBS_ERR_UNSUPPORTED,
                               "sensitivity: %s has closed loops; method %s is not available for them "
                               "(closed-loop sensitivities: --method ddm|davm|cavm with --formulation "
                               "ali3p|matrixr, or --method fd)", m->name, mbs_sens_method_name(o->method));
        return rc;
    }
    switch (o->method) {
    case MBS_SENS_DDM:
        rc = o->sim.formulation == MBS_FD_RECURSIVE ? sens_ddm_rk4(r, stats, err)
                                                    : sens_ddm_trapezoidal(r, stats, err);
        break;
    case MBS_SENS_DAVM:
        rc = o->sim.formulation == MBS_FD_RECURSIVE
                 ? mbs_error_set(err, MBS_ERR_UNSUPPORTED, "sensitivity: the discrete adjoint (davm) is "
                                 "implemented for the trapezoidal rule of the semi-recursive formulation; "
                                 "use --formulation semi, or ddm/cavm with fr")
                 : sens_davm_trapezoidal(r, stats, err);
        break;
    case MBS_SENS_CAVM: rc = sens_cavm(r, stats, err); break;
    case MBS_SENS_FD: rc = sens_fd(r, stats, err); break;
    case MBS_SENS_CS:
        rc = o->sim.formulation == MBS_FD_RECURSIVE
                 ? mbs_sens_complex_step_rk4(m, &o->sim, r->psi, r->grad, err)
                 : mbs_error_set(err, MBS_ERR_UNSUPPORTED, "sensitivity: the complex-step reference runs the "
                                 "RK4 scheme of the fully recursive formulation: use --formulation fr");
        break;
    default: rc = mbs_error_set(err, MBS_ERR_ARG, "sensitivity: unknown method %d", (int)o->method);
    }
    return rc;
}

int mbs_sensitivity(const mbs_model *m, const mbs_sens_options *o, mbs_sens_result *res,
                    mbs_error *err)
{
    if (!m || !o || !res) return mbs_error_set(err, MBS_ERR_ARG, "mbs_sensitivity: NULL argument");
    memset(res, 0, sizeof *res);
    if (m && mbs_tangent_unsupported_err(m, "sensitivities", err)) return MBS_ERR_UNSUPPORTED;
    if (sens_nobj(m, o) < 1)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: the model declares no objectives (add an \"objectives\" section, "
                             "or give a program's own objective)", m->source ? m->source : m->name);
    if (m->nparam < 1)
        return mbs_error_set(err, MBS_ERR_ARG, "%s: the model declares no design parameters (add a \"parameters\" section)",
                             m->source ? m->source : m->name);
    int rc = mbs_sim_options_check(&o->sim, err);
    if (rc) return rc;
    if (!(o->sim.tf > o->sim.t0))
        return mbs_error_set(err, MBS_ERR_ARG, "sensitivity: tf (%g) must be after t0 (%g)", o->sim.tf, o->sim.t0);
    if (o->objective && o->method == MBS_SENS_CS)
        return mbs_error_set(err, MBS_ERR_UNSUPPORTED, "sensitivity: method cs runs the kernels in complex "
                             "arithmetic, which a program's own objective (a double callback) cannot follow: "
                             "use ddm, davm, cavm or fd");
    if (o->method == MBS_SENS_CS && sens_objectives_read_forces(m))
        return mbs_error_set(err, MBS_ERR_UNSUPPORTED, "sensitivity: method cs has no complex inverse dynamics "
                             "for the objectives that read a coordinate force: use ddm, davm, cavm or fd");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sens_run r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.o = o;
    r.nq = m->nq;
    r.nv = m->nv;
    r.np = m->nparam;
    r.nobj = sens_nobj(m, o);
    res->nobj = r.nobj;
    res->nparam = r.np;
    res->psi = calloc((size_t)r.nobj, sizeof(double));
    res->grad = calloc((size_t)r.nobj * (size_t)r.np, sizeof(double));
    r.psi = res->psi;
    r.grad = res->grad;
    r.d = mbs_data_create(m, err);
    if (!res->psi || !res->grad || !r.d || sens_run_user_init(&r)) {
        sens_run_user_free(&r);
        mbs_data_free(r.d);
        mbs_sens_result_free(res);
        return err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    }
    mbs_data_set_ref(r.d, o->sim.ref);
    rc = dispatch(&r, o, &res->stats, err);
    if (!rc) rc = sens_run_user_check(&r, err);
    if (!rc)
        rc = mbs_error_results(err, m, "sensitivity",
                               MBS_RESULTS({ "psi", res->psi, r.nobj, 1, MBS_IX_OBJ, 0 },
                                           { "dpsi/drho", res->grad, r.nobj, r.np, MBS_IX_OBJ, MBS_IX_PARAM }));
    sens_run_user_free(&r);
    mbs_data_free(r.d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rc) mbs_sens_result_free(res);
    return rc;
}
