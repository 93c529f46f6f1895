/*
 * optimize.c - mbs_optimize: NLopt driven by the trajectory sensitivities
 * (include/mbsens/optimize.h, docs/optimization.md).
 *
 * Every evaluation builds a copy of the model with the trial parameter
 * values (mbs_model_with_params) and runs mbs_sensitivity on it; the
 * weighted objective and its gradient go to NLopt in scaled variables.
 * All state lives in an opt_ctx passed to NLopt as its data pointer.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nlopt.h>

#include "mbsens/optimize.h"
#include "mbsens/constraints.h"
#include "mbsens/sensitivity.h"
#include "mbsens/simulate.h"
#include "base/error.h"
#include "kernels/results.h"
#include "model/state.h"

/* ---------------------------------------------------------------- names */

static const char *const alg_names[] = { "lbfgs", "slsqp", "mma" };
static const char *const scale_names[] = { "value", "bounds", "none" };

const char *mbs_opt_algorithm_name(mbs_opt_algorithm a)
{
    return (int)a >= 0 && (int)a < 3 ? alg_names[a] : "?";
}

int mbs_opt_algorithm_from_name(const char *name)
{
    for (int k = 0; name && k < 3; k++)
        if (!strcmp(name, alg_names[k])) return k;
    return -1;
}

const char *mbs_opt_scaling_name(mbs_opt_scaling s)
{
    return (int)s >= 0 && (int)s < 3 ? scale_names[s] : "?";
}

int mbs_opt_scaling_from_name(const char *name)
{
    for (int k = 0; name && k < 3; k++)
        if (!strcmp(name, scale_names[k])) return k;
    return -1;
}

/* ---------------------------------------------------------------- options */

mbs_opt_options mbs_opt_options_default(const mbs_model *m)
{
    mbs_opt_options o;
    memset(&o, 0, sizeof o);
    o.sens = mbs_sens_options_default(m);
    o.auto_method = 1;
    o.algorithm = MBS_OPT_LBFGS;
    o.objective = 0;
    o.max_iter = 100;
    o.max_eval = 0;
    o.xtol = 1e-8;
    o.ftol = 1e-10;
    o.pgtol = 1e-8;
    o.scaling = MBS_OPT_SCALE_VALUE;
    o.max_failures = 20;
    o.continuation_start = 1;
    o.continuation_step = 1;
    return o;
}

static int model_closed(const mbs_model *m)
{
    return mbs_model_nloop_constraints(m) + mbs_model_ndriver_constraints(m) > 0;
}

mbs_sens_method mbs_opt_auto_method(const mbs_model *m, mbs_sens_options *sens)
{
    if (model_closed(m)) {
        if (sens && sens->sim.loop == MBS_LOOP_NONE) sens->sim.loop = MBS_LOOP_ALI3P;
        return MBS_SENS_DDM;
    }
    if (mbs_model_nparams(m) > mbs_model_nobjectives(m))
        return sens && sens->sim.formulation == MBS_FD_RECURSIVE ? MBS_SENS_CAVM : MBS_SENS_DAVM;
    return MBS_SENS_DDM;
}

void mbs_opt_result_free(mbs_opt_result *res)
{
    if (!res) return;
    free(res->x0);
    free(res->x);
    free(res->grad);
    res->x0 = res->x = res->grad = NULL;
}

/* ---------------------------------------------------------------- context */

typedef struct opt_ctx {
    const mbs_model *m;
    const mbs_opt_options *o;
    mbs_sens_options sens;   /* with the stage's horizon */
    int np, nobj, nfree;
    int *free_idx;           /* nfree: parameter index of each variable (of the stage) */
    int nall;
    int *all_idx;            /* nall: every free parameter */
    double *t_act;           /* nparam: continuation, time from which a parameter acts */
    double *w;               /* nobj weights */
    double *s;               /* nparam scales */
    double *lo, *hi;         /* nparam bounds */
    double *x;               /* nparam: current full parameter vector (work) */
    double *g;               /* nparam: gradient work */
    double fscale;           /* psi scale of the stage */
    /* best accepted point of the stage */
    double best_f;           /* scaled */
    double *best_u;          /* nfree */
    double *best_x, *best_g; /* nparam */
    double best_psi;
    double start_psi;        /* psi and gradient at the start of the stage */
    double *start_g;         /* nparam */
    /* one-entry cache */
    int cache_ok;
    double *cache_u, cache_f, *cache_gu;
    double *gu;              /* nfree work */
    /* counters */
    int iterations, stage_iter, evaluations, stage_evals, failures, consecutive;
    int stage;
    nlopt_opt opt;
    char reason[64];         /* forced-stop reason */
    char msg[MBS_ERROR_MSG_LEN + 128];
} opt_ctx;

static void say(opt_ctx *c, const char *fmt, ...)
{
    if (!c->o->message) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->o->message(c->o->message_user, c->msg);
}

/* psi and gradient (parameter units) at the full parameter vector x. */
static int evaluate(opt_ctx *c, const double *x, double *psi, double *grad, mbs_error *err)
{
    mbs_model *mp = mbs_model_with_params(c->m, x, err);
    if (!mp) return err && err->code ? err->code : MBS_ERR_MODEL;
    mbs_sens_result res;
    int rc = mbs_sensitivity(mp, &c->sens, &res, err);
    mbs_model_free(mp);
    if (rc) return rc;
    double f = 0;
    for (int k = 0; k < c->nobj; k++) f += c->w[k] * res.psi[k];
    int ok = isfinite(f);
    for (int j = 0; j < c->np; j++) {
        double s = 0;
        for (int k = 0; k < c->nobj; k++)
            if (c->w[k] != 0) s += c->w[k] * res.grad[(size_t)k * c->np + j];
        grad[j] = s;
        ok = ok && isfinite(s);
    }
    mbs_sens_result_free(&res);
    *psi = f;
    if (!ok) return mbs_error_set(err, MBS_ERR_NUMERIC, "objective or gradient not finite");
    return MBS_OK;
}

/* 2-norm of the projected gradient in parameter units (free parameters;
 * a component pushing against an active bound is dropped). */
static double pg_norm(const opt_ctx *c, const double *x, const double *g)
{
    double s = 0;
    for (int v = 0; v < c->nfree; v++) {
        const int j = c->free_idx[v];
        const double tl = 1e-10 * fmax(1, fabs(c->lo[j])), tu = 1e-10 * fmax(1, fabs(c->hi[j]));
        if ((x[j] <= c->lo[j] + tl && g[j] > 0) || (x[j] >= c->hi[j] - tu && g[j] < 0)) continue;
        s += g[j] * g[j];
    }
    return sqrt(s);
}

/* inf-norm of P(u - grad_u f) - u of the scaled problem. */
static double pg_scaled(const opt_ctx *c, const double *x, const double *g)
{
    double s = 0;
    for (int v = 0; v < c->nfree; v++) {
        const int j = c->free_idx[v];
        const double u = x[j] / c->s[j], gu = g[j] * c->s[j] / c->fscale;
        double t = u - gu;
        const double lu = c->lo[j] / c->s[j], hu = c->hi[j] / c->s[j];
        if (t < lu) t = lu;
        if (t > hu) t = hu;
        s = fmax(s, fabs(t - u));
    }
    return s;
}

static void full_x(opt_ctx *c, const double *u)
{
    for (int v = 0; v < c->nfree; v++) {
        const int j = c->free_idx[v];
        double xj = u[v] * c->s[j];
        /* NLopt keeps u within the scaled bounds; undo round-off of the scaling */
        if (xj < c->lo[j]) xj = c->lo[j];
        if (xj > c->hi[j]) xj = c->hi[j];
        c->x[j] = xj;
    }
}

static int report(opt_ctx *c, int iteration, double step)
{
    if (!c->o->callback) return 0;
    mbs_opt_iter it;
    it.iteration = iteration;
    it.evaluations = c->evaluations;
    it.stage = c->stage;
    it.tf = c->sens.sim.tf;
    it.psi = c->best_psi;
    it.gnorm = pg_norm(c, c->best_x, c->best_g);
    it.step = step;
    it.nparam = c->np;
    it.x = c->best_x;
    it.grad = c->best_g;
    return c->o->callback(c->o->callback_user, &it);
}

static void stop(opt_ctx *c, const char *why)
{
    if (!c->reason[0]) snprintf(c->reason, sizeof c->reason, "%s", why);
    nlopt_force_stop(c->opt);
}

static double objective(unsigned n, const double *u, double *grad, void *data)
{
    opt_ctx *c = data;
    if (c->cache_ok && memcmp(u, c->cache_u, sizeof(double) * n) == 0) {
        if (grad) memcpy(grad, c->cache_gu, sizeof(double) * n);
        return c->cache_f;
    }
    if (c->reason[0]) {   /* stopping: answer without simulating */
        if (grad) memcpy(grad, c->cache_gu, sizeof(double) * n);
        return c->best_f;
    }
    full_x(c, u);
    double psi = 0;
    mbs_error err;
    memset(&err, 0, sizeof err);
    c->evaluations++;
    c->stage_evals++;
    int rc = evaluate(c, c->x, &psi, c->g, &err);
    double f;
    if (rc) {
        c->failures++;
        c->consecutive++;
        /* a value above the best one (by 1 + |best| in the scaled objective,
         * whose start value is 1) with the best point's gradient: the line
         * searches backtrack towards the best point. A moderate excess lets
         * their interpolation land not too far short of the failing point
         * (tested: 1e3 instead of 1 makes L-BFGS creep) */
        f = c->best_f + 1 + fabs(c->best_f);
        for (unsigned v = 0; v < n; v++) {
            const int j = c->free_idx[v];
            c->gu[v] = c->best_g[j] * c->s[j] / c->fscale;
        }
        say(c, "evaluation %d failed (%s); answered with a large value so that the step is reduced%s",
            c->evaluations, err.msg[0] ? err.msg : "unknown error",
            c->consecutive >= c->o->max_failures ? "; too many failures in a row, stopping" : "");
        if (c->consecutive >= c->o->max_failures) stop(c, "failures");
    } else {
        c->consecutive = 0;
        f = psi / c->fscale;
        for (unsigned v = 0; v < n; v++) {
            const int j = c->free_idx[v];
            c->gu[v] = c->g[j] * c->s[j] / c->fscale;
        }
        if (f < c->best_f) {
            double step = 0;
            for (unsigned v = 0; v < n; v++) step += (u[v] - c->best_u[v]) * (u[v] - c->best_u[v]);
            step = sqrt(step);
            c->best_f = f;
            c->best_psi = psi;
            memcpy(c->best_u, u, sizeof(double) * n);
            memcpy(c->best_x, c->x, sizeof(double) * (size_t)c->np);
            memcpy(c->best_g, c->g, sizeof(double) * (size_t)c->np);
            c->iterations++;
            c->stage_iter++;
            if (report(c, c->stage_iter, step)) stop(c, "callback");
            else if (c->o->pgtol > 0 && pg_scaled(c, c->best_x, c->best_g) < c->o->pgtol) stop(c, "pgtol");
            else if (c->stage_iter >= c->o->max_iter) stop(c, "max_iter");
        }
    }
    memcpy(c->cache_u, u, sizeof(double) * n);
    memcpy(c->cache_gu, c->gu, sizeof(double) * n);
    c->cache_f = f;
    c->cache_ok = 1;
    if (grad) memcpy(grad, c->gu, sizeof(double) * n);
    return f;
}

static const char *nlopt_reason(nlopt_result r)
{
    switch (r) {
    case NLOPT_SUCCESS: return "success";
    case NLOPT_STOPVAL_REACHED: return "stopval";
    case NLOPT_FTOL_REACHED: return "ftol";
    case NLOPT_XTOL_REACHED: return "xtol";
    case NLOPT_MAXEVAL_REACHED: return "max_eval";
    case NLOPT_MAXTIME_REACHED: return "max_time";
    case NLOPT_FAILURE: return "nlopt_failure";
    case NLOPT_INVALID_ARGS: return "invalid_arguments";
    case NLOPT_OUT_OF_MEMORY: return "out_of_memory";
    case NLOPT_ROUNDOFF_LIMITED: return "roundoff";
    case NLOPT_FORCED_STOP: return "forced_stop";
    default: return "unknown";
    }
}

/* One stage over the horizon c->sens.sim.tf, from c->x0stage (in best_x). */
static int run_stage(opt_ctx *c, mbs_opt_result *res, mbs_error *err)
{
    const mbs_opt_options *o = c->o;
    const int n = c->nfree;
    /* starting point: evaluate it (also sets the psi scale of the stage) */
    memcpy(c->x, c->best_x, sizeof(double) * (size_t)c->np);
    double psi;
    c->evaluations++;
    int rc = evaluate(c, c->x, &psi, c->g, err);
    if (rc) return rc;
    c->fscale = fabs(psi) > 0 ? fabs(psi) : 1;
    c->best_psi = psi;
    c->start_psi = psi;
    memcpy(c->start_g, c->g, sizeof(double) * (size_t)c->np);
    c->best_f = psi / c->fscale;
    memcpy(c->best_g, c->g, sizeof(double) * (size_t)c->np);
    c->stage_iter = 0;
    c->stage_evals = 0;
    c->consecutive = 0;
    c->reason[0] = 0;
    double *u = calloc((size_t)n + 1, sizeof *u), *lu = calloc((size_t)n + 1, sizeof *lu),
           *hu = calloc((size_t)n + 1, sizeof *hu);
    if (!u || !lu || !hu) {
        free(u); free(lu); free(hu);
        return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    }
    for (int v = 0; v < n; v++) {
        const int j = c->free_idx[v];
        u[v] = c->best_x[j] / c->s[j];
        lu[v] = isfinite(c->lo[j]) ? c->lo[j] / c->s[j] : -HUGE_VAL;
        hu[v] = isfinite(c->hi[j]) ? c->hi[j] / c->s[j] : HUGE_VAL;
        if (u[v] < lu[v]) u[v] = lu[v];
        if (u[v] > hu[v]) u[v] = hu[v];
        c->gu[v] = c->g[j] * c->s[j] / c->fscale;
    }
    memcpy(c->best_u, u, sizeof(double) * (size_t)n);
    memcpy(c->cache_u, u, sizeof(double) * (size_t)n);
    memcpy(c->cache_gu, c->gu, sizeof(double) * (size_t)n);
    c->cache_f = c->best_f;
    c->cache_ok = 1;
    int stop_now = report(c, 0, 0);
    if (stop_now) snprintf(c->reason, sizeof c->reason, "callback");
    else if (o->pgtol > 0 && pg_scaled(c, c->best_x, c->best_g) < o->pgtol)
        snprintf(c->reason, sizeof c->reason, "pgtol");
    if (c->reason[0]) {
        res->nlopt_code = 0;
        free(u); free(lu); free(hu);
        return MBS_OK;
    }
    static const nlopt_algorithm algs[] = { NLOPT_LD_LBFGS, NLOPT_LD_SLSQP, NLOPT_LD_MMA };
    c->opt = nlopt_create(algs[o->algorithm], (unsigned)n);
    if (!c->opt) {
        free(u); free(lu); free(hu);
        return mbs_error_set(err, MBS_ERR_NOMEM, "optimize: cannot create the NLopt object");
    }
    nlopt_set_lower_bounds(c->opt, lu);
    nlopt_set_upper_bounds(c->opt, hu);
    nlopt_set_min_objective(c->opt, objective, c);
    if (o->xtol > 0) nlopt_set_xtol_rel(c->opt, o->xtol);
    if (o->ftol > 0) nlopt_set_ftol_rel(c->opt, o->ftol);
    nlopt_set_maxeval(c->opt, o->max_eval > 0 ? o->max_eval : 10 * o->max_iter + 20);
    if (o->lbfgs_memory > 0) nlopt_set_vector_storage(c->opt, (unsigned)o->lbfgs_memory);
    double fmin = 0;
    nlopt_result nr = nlopt_optimize(c->opt, u, &fmin);
    res->nlopt_code = (int)nr;
    if (nr == NLOPT_FORCED_STOP && c->reason[0]) {
        /* reason set by us */
    } else {
        snprintf(c->reason, sizeof c->reason, "%s", nlopt_reason(nr));
        if (nr == NLOPT_INVALID_ARGS || nr == NLOPT_OUT_OF_MEMORY) {
            const char *em = nlopt_get_errmsg(c->opt);
            rc = mbs_error_set(err, MBS_ERR_ARG, "optimize: NLopt %s%s%s", c->reason, em ? ": " : "", em ? em : "");
        }
    }
    nlopt_destroy(c->opt);
    c->opt = NULL;
    free(u); free(lu); free(hu);
    return rc;
}

/* The arguments of mbs_optimize, before anything is allocated. */
static int opt_check_args(const mbs_model *m, const mbs_opt_options *o, mbs_error *err)
{
    const int np = mbs_model_nparams(m), nobj = mbs_model_nobjectives(m);
    if (nobj < 1)
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: %s declares no objectives (add an \"objectives\" section)",
                             mbs_model_name(m));
    if (np < 1)
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: %s declares no design parameters", mbs_model_name(m));
    if (o->sens.objective)
        return mbs_error_set(err, MBS_ERR_UNSUPPORTED, "optimize: minimizes the model's objectives; a program's own "
                             "objective (mbs_sens_options.objective) is for mbs_sensitivity only");
    if ((int)o->algorithm < 0 || (int)o->algorithm > 2)
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: unknown algorithm %d", (int)o->algorithm);
    if ((int)o->scaling < 0 || (int)o->scaling > 2)
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: unknown scaling %d", (int)o->scaling);
    if (o->max_iter < 1) return mbs_error_set(err, MBS_ERR_ARG, "optimize: max_iter must be >= 1");
    if (o->max_failures < 1) return mbs_error_set(err, MBS_ERR_ARG, "optimize: max_failures must be >= 1");
    if (!o->weights && (o->objective < 0 || o->objective >= nobj))
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: objective index %d out of range (0..%d)", o->objective,
                             nobj - 1);
    if (o->continuation && !(o->continuation_start > 0 && o->continuation_step > 0))
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: continuation start and step must be > 0");
    return MBS_OK;
}

/* The context's arrays and the result's, once. */
static int opt_alloc(opt_ctx *c, mbs_opt_result *res, mbs_error *err)
{
    const size_t n1 = (size_t)c->np + 1;
    c->free_idx = calloc(n1, sizeof *c->free_idx);
    c->all_idx = calloc(n1, sizeof *c->all_idx);
    c->t_act = calloc(n1, sizeof *c->t_act);
    c->w = calloc((size_t)c->nobj, sizeof *c->w);
    c->s = calloc(n1, sizeof *c->s);
    c->lo = calloc(n1, sizeof *c->lo);
    c->hi = calloc(n1, sizeof *c->hi);
    c->x = calloc(n1, sizeof *c->x);
    c->g = calloc(n1, sizeof *c->g);
    c->best_u = calloc(n1, sizeof *c->best_u);
    c->best_x = calloc(n1, sizeof *c->best_x);
    c->best_g = calloc(n1, sizeof *c->best_g);
    c->start_g = calloc(n1, sizeof *c->start_g);
    c->cache_u = calloc(n1, sizeof *c->cache_u);
    c->cache_gu = calloc(n1, sizeof *c->cache_gu);
    c->gu = calloc(n1, sizeof *c->gu);
    res->x0 = calloc(n1, sizeof *res->x0);
    res->x = calloc(n1, sizeof *res->x);
    res->grad = calloc(n1, sizeof *res->grad);
    if (!c->free_idx || !c->all_idx || !c->t_act || !c->w || !c->s || !c->lo || !c->hi || !c->x || !c->g ||
        !c->best_u || !c->best_x || !c->best_g || !c->start_g || !c->cache_u || !c->cache_gu || !c->gu || !res->x0 ||
        !res->x || !res->grad)
        return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    return MBS_OK;
}

static void opt_free(opt_ctx *c)
{
    free(c->free_idx); free(c->all_idx); free(c->t_act); free(c->w); free(c->s); free(c->lo); free(c->hi);
    free(c->x); free(c->g); free(c->best_u); free(c->best_x); free(c->best_g); free(c->start_g);
    free(c->cache_u); free(c->cache_gu); free(c->gu);
}

/* The weights of the objectives: the options' (finite, not all zero), or
 * 1 on the chosen objective. */
static int opt_weights(opt_ctx *c, mbs_error *err)
{
    const mbs_opt_options *o = c->o;
    if (!o->weights) {
        c->w[o->objective] = 1;
        return MBS_OK;
    }
    int any = 0;
    for (int k = 0; k < c->nobj; k++) {
        if (!isfinite(o->weights[k]))
            return mbs_error_set(err, MBS_ERR_ARG, "optimize: weight %d is not finite", k);
        c->w[k] = o->weights[k];
        any |= c->w[k] != 0;
    }
    if (!any) return mbs_error_set(err, MBS_ERR_ARG, "optimize: every weight is zero");
    return MBS_OK;
}

/* Per parameter: bounds, start value, scale, whether it is free, and from
 * when it acts (continuation). */
static int opt_params(opt_ctx *c, mbs_opt_result *res, mbs_error *err)
{
    const mbs_model *m = c->m;
    const mbs_opt_options *o = c->o;
    for (int j = 0; j < c->np; j++) {
        const double v = mbs_param_value(m, j);
        c->lo[j] = mbs_param_lower(m, j);
        c->hi[j] = mbs_param_upper(m, j);
        res->x0[j] = v;
        c->best_x[j] = v;
        double s = 1;
        if (o->scaling == MBS_OPT_SCALE_VALUE) {
            if (v != 0) s = fabs(v);
            else if (isfinite(c->lo[j]) && isfinite(c->hi[j]) && c->hi[j] > c->lo[j]) s = c->hi[j] - c->lo[j];
        } else if (o->scaling == MBS_OPT_SCALE_BOUNDS) {
            if (isfinite(c->lo[j]) && isfinite(c->hi[j]) && c->hi[j] > c->lo[j]) s = c->hi[j] - c->lo[j];
            else if (v != 0) s = fabs(v);
        }
        c->s[j] = s;
        if (!(o->fixed && o->fixed[j]) && c->hi[j] > c->lo[j]) c->all_idx[c->nall++] = j;
        /* Continuation: a spline knot value is a design variable of a stage
         * whose horizon passes the start of its interval; left free before
         * (the spline is not local), it would be a lever of little effect
         * that the optimizer pushes to a bound, a poor start for the next
         * stage. */
        c->t_act[j] = o->continuation ? mbs_param_acts_from(m, j) : -HUGE_VAL;
    }
    if (c->nall == 0)
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: no free design parameter (all fixed or with equal bounds)");
    return MBS_OK;
}

/* The number of stages: 1, or the continuation's horizons from t0 + start
 * in steps to tf (at most MBS_OPT_MAX_STAGES). */
static int opt_nstages(const opt_ctx *c, int *nstage, mbs_error *err)
{
    const mbs_opt_options *o = c->o;
    const double T0 = c->sens.sim.t0, TF = c->sens.sim.tf;
    *nstage = 1;
    if (!(TF > T0)) return mbs_error_set(err, MBS_ERR_ARG, "optimize: tf (%g) must be after t0 (%g)", TF, T0);
    if (!o->continuation) return MBS_OK;
    /* counted as a double: a small step must not overflow the count */
    const double ns = ceil((TF - T0 - o->continuation_start) / o->continuation_step - 1e-9) + 1;
    if (!(ns <= MBS_OPT_MAX_STAGES))
        return mbs_error_set(err, MBS_ERR_ARG, "optimize: continuation from %g s in steps of %g s to the horizon "
                             "%g s is %.3g stages; at most %d (MBS_OPT_MAX_STAGES)", o->continuation_start,
                             o->continuation_step, TF - T0, ns, MBS_OPT_MAX_STAGES);
    if (ns > 1) *nstage = (int)ns;
    return MBS_OK;
}

/* The stages, each over its horizon with the parameters that act within
 * it; *ran_tf: the horizon of the last stage that ran. A stage after the
 * first that fails ends the run with what the earlier ones found. */
static int opt_stages(opt_ctx *c, mbs_opt_result *res, int nstage, int *have_initial, double *ran_tf,
                      mbs_error *err)
{
    const mbs_opt_options *o = c->o;
    const double T0 = c->sens.sim.t0, TF = c->sens.sim.tf;
    int rc = MBS_OK;
    for (c->stage = 0; c->stage < nstage; c->stage++) {
        double tf = o->continuation ? T0 + o->continuation_start + c->stage * o->continuation_step : TF;
        if (tf > TF || c->stage == nstage - 1) tf = TF;
        c->sens.sim.tf = tf;
        c->nfree = 0;
        for (int v = 0; v < c->nall; v++)
            if (c->t_act[c->all_idx[v]] < tf) c->free_idx[c->nfree++] = c->all_idx[v];
        if (c->nfree == 0) continue;
        rc = run_stage(c, res, err);
        if (!rc && !*have_initial) {
            res->psi_initial = c->start_psi;
            res->pg_norm_initial = pg_norm(c, res->x0, c->start_g);
            *have_initial = 1;
        }
        if (rc) {
            if (c->stage > 0 || c->iterations > 0) {
                say(c, "stage %d (tf = %g) failed: %s", c->stage, tf, err && err->msg[0] ? err->msg : "error");
                snprintf(c->reason, sizeof c->reason, "stage_failed");
                rc = MBS_OK;
            }
            break;
        }
        res->stages = c->stage + 1;
        *ran_tf = tf;
        if (!strcmp(c->reason, "callback") || !strcmp(c->reason, "failures")) break;
    }
    return rc;
}

/* The result: the best point, psi and the gradient over the full horizon
 * TF (evaluated again when the last stage is shorter), the norms, the
 * counters; its numbers checked finite. */
static int opt_finish(opt_ctx *c, mbs_opt_result *res, double TF, int have_initial, double ran_tf, mbs_error *err)
{
    const int np = c->np;
    int rc;
    memcpy(c->free_idx, c->all_idx, sizeof(int) * (size_t)c->nall);
    c->nfree = c->nall;
    snprintf(res->stop_reason, sizeof res->stop_reason, "%s", c->reason);
    memcpy(res->x, c->best_x, sizeof(double) * (size_t)np);
    if (ran_tf == TF) {
        res->psi_final = c->best_psi;
        memcpy(res->grad, c->best_g, sizeof(double) * (size_t)np);
    } else {
        c->sens.sim.tf = TF;
        c->evaluations++;
        if ((rc = evaluate(c, res->x, &res->psi_final, res->grad, err))) return rc;
        c->fscale = fabs(res->psi_final) > 0 ? fabs(res->psi_final) : 1;
    }
    if (!have_initial) {   /* no stage ran: nothing could act within the horizons */
        res->psi_initial = res->psi_final;
        res->pg_norm_initial = pg_norm(c, res->x0, res->grad);
        if (!c->reason[0]) snprintf(c->reason, sizeof c->reason, "no_stage");
        snprintf(res->stop_reason, sizeof res->stop_reason, "%s", c->reason);
    }
    res->pg_norm = pg_norm(c, res->x, res->grad);
    res->pg_norm_scaled = pg_scaled(c, res->x, res->grad);
    res->nparam = np;
    res->iterations = c->iterations;
    res->evaluations = c->evaluations;
    res->failed_evaluations = c->failures;
    return mbs_error_results(err, c->m, "optimize",
                             MBS_RESULTS({ "x", res->x, np, 1, MBS_IX_PARAM, 0 },
                                         { "gradient", res->grad, np, 1, MBS_IX_PARAM, 0 },
                                         { "psi", &res->psi_final, 1, 1, MBS_IX_NONE, 0 },
                                         { "projected gradient norm", &res->pg_norm, 1, 1, MBS_IX_NONE, 0 }));
}

int mbs_optimize(const mbs_model *m, const mbs_opt_options *o, mbs_opt_result *res, mbs_error *err)
{
    if (!m || !o || !res) return mbs_error_set(err, MBS_ERR_ARG, "mbs_optimize: NULL argument");
    memset(res, 0, sizeof *res);
    if (m && mbs_tangent_unsupported_err(m, "optimization", err)) return MBS_ERR_UNSUPPORTED;
    int rc = opt_check_args(m, o, err);
    if (rc) return rc;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    opt_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.o = o;
    c.np = mbs_model_nparams(m);
    c.nobj = mbs_model_nobjectives(m);
    c.sens = o->sens;
    if (o->auto_method) c.sens.method = mbs_opt_auto_method(m, &c.sens);
    else if (model_closed(m) && c.sens.sim.loop == MBS_LOOP_NONE) c.sens.sim.loop = MBS_LOOP_ALI3P;
    int nstage = 1, have_initial = 0;
    double ran_tf = -HUGE_VAL;   /* horizon of the last stage that ran */
    const double TF = c.sens.sim.tf;
    if (!(rc = opt_alloc(&c, res, err)) && !(rc = opt_weights(&c, err)) && !(rc = opt_params(&c, res, err))) {
        res->method = c.sens.method;
        res->sens = c.sens;
        rc = opt_nstages(&c, &nstage, err);
    }
    if (!rc) {
        memcpy(c.free_idx, c.all_idx, sizeof(int) * (size_t)c.nall);
        c.nfree = c.nall;
        if (nstage > 1) {
            /* psi at the start over the full horizon (the first stage is shorter) */
            double psi0;
            c.evaluations++;
            if (!(rc = evaluate(&c, res->x0, &psi0, c.g, err))) {
                res->psi_initial = psi0;
                res->pg_norm_initial = pg_norm(&c, res->x0, c.g);
                have_initial = 1;
            }
        }
    }
    if (!rc) rc = opt_stages(&c, res, nstage, &have_initial, &ran_tf, err);
    if (!rc) rc = opt_finish(&c, res, TF, have_initial, ran_tf, err);
    opt_free(&c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rc) mbs_opt_result_free(res);
    return rc;
}

/* ---------------------------------------------------------------- trace */

/* The values handed to the trace function, finite (src/kernels/results.c). */
static int trace_finite(const mbs_model *m, double g, double psi, mbs_error *err)
{
    return mbs_error_results(err, m, "objective trace",
                             MBS_RESULTS({ "g", &g, 1, 1, MBS_IX_NONE, 0 }, { "psi", &psi, 1, 1, MBS_IX_NONE, 0 }));
}

/* The model's objectives (integrands, or terminal parts) at the state of
 * the integrator into g[nobjectives]. */
static void objectives_at(const mbs_model *m, mbs_data *d, const mbs_integrator *it, double t, int terminal,
                          double *g)
{
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    for (int k = 0; k < mbs_model_nobjectives(m); k++)
        mbs_objective_integrand_at(m, d, k, terminal, t, q, qd, qdd, g + k);
}

int mbs_objective_trace(const mbs_model *m, const mbs_sens_options *o, int objective, const double *weights,
                        mbs_opt_trace_fn fn, void *user, mbs_error *err)
{
    if (!m || !o || !fn) return mbs_error_set(err, MBS_ERR_ARG, "mbs_objective_trace: NULL argument");
    if (o->objective)
        return mbs_error_set(err, MBS_ERR_UNSUPPORTED, "objective trace: traces the model's objectives, not a "
                             "program's own (mbs_sens_options.objective)");
    const int nobj = mbs_model_nobjectives(m);
    if (nobj < 1) return mbs_error_set(err, MBS_ERR_ARG, "objective trace: the model declares no objectives");
    if (!weights && (objective < 0 || objective >= nobj))
        return mbs_error_set(err, MBS_ERR_ARG, "objective trace: objective index %d out of range", objective);
    mbs_sim_options so = o->sim;
    so.project = 0;
    if (model_closed(m) && so.loop == MBS_LOOP_NONE) so.loop = MBS_LOOP_ALI3P;
    int rc = mbs_sim_options_check(&so, err);
    if (rc) return rc;
    mbs_data *d = mbs_data_create(m, err);
    if (!d) return err && err->code ? err->code : MBS_ERR_NOMEM;
    mbs_data_set_ref(d, so.ref);
    mbs_integrator *it = mbs_integrator_create(m, d, &so, err);
    double *g = calloc((size_t)nobj, sizeof *g);
    if (!it || !g) {
        rc = err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = mbs_integrator_reset(it, so.t0, NULL, NULL, err))) goto done;
#define WSUM(out)                                                                    \
    do {                                                                             \
        out = 0;                                                                     \
        for (int k_ = 0; k_ < nobj; k_++)                                            \
            out += (weights ? weights[k_] : (k_ == objective ? 1.0 : 0.0)) * g[k_];  \
    } while (0)
    double t = so.t0, psi = 0, gw, gprev;
    objectives_at(m, d, it, t, 0, g);
    WSUM(gw);
    if ((rc = trace_finite(m, gw, psi, err)) || fn(user, t, gw, psi)) goto done;
    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        const double h = fmin(so.dt, so.tf - t);
        gprev = gw;
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        objectives_at(m, d, it, t, 0, g);
        WSUM(gw);
        psi += 0.5 * h * (gprev + gw);
        if (t >= so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
            double gi = gw;
            objectives_at(m, d, it, t, 1, g);
            double G;
            WSUM(G);
            psi += G;
            gw = gi;
        }
        if ((rc = trace_finite(m, gw, psi, err)) || fn(user, t, gw, psi)) break;
    }
#undef WSUM
done:
    free(g);
    mbs_integrator_free(it);
    mbs_data_free(d);
    return rc;
}
