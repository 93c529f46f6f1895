/*
 * opt_stop.c - the stop reason of an optimization (mbs_opt_result.stop_reason,
 * NLopt's codes among them) in plain words, and a verdict from the
 * projected gradient, whatever made it stop:
 *
 *   - converged if the inf-norm of the projected gradient of the scaled
 *     problem (psi divided by its starting value, parameters by their
 *     scales: both of order one) is below --pgtol;
 *   - converged to the objective's resolution if it is below sqrt(ftol):
 *     a step along that gradient could lower the scaled psi by about
 *     |g|^2 < ftol, the relative change the optimizer already treats as
 *     nothing (the scaled curvature taken as of order one);
 *   - not converged otherwise, whatever the reason (an iteration limit, a
 *     line search that failed, too many failed simulations).
 */
#include "opt_stop.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *reason, *words;
} table[] = {
    { "pgtol", "the projected gradient fell below --pgtol" },
    { "ftol", "psi changed by less than --ftol (relative) in an iteration" },
    { "xtol", "the parameters changed by less than --xtol (relative) in an iteration" },
    { "success", "NLopt reports success" },
    { "stopval", "psi reached the target value" },
    { "max_iter", "the iteration limit (--max-iter) was reached" },
    { "max_eval", "the evaluation limit (--max-eval) was reached" },
    { "max_time", "the time limit was reached" },
    { "roundoff", "NLopt stopped: round-off errors limit the progress (NLOPT_ROUNDOFF_LIMITED)" },
    { "nlopt_failure", "NLopt's line search found no lower point (NLOPT_FAILURE): near a minimum this "
                       "means psi is flat to round-off; elsewhere, a gradient that does not match psi" },
    { "failures", "too many simulations failed in a row (--max-failures)" },
    { "stage_failed", "a continuation stage failed" },
    { "no_stage", "no continuation stage ran" },
    { "callback", "stopped by the caller" },
    { "forced_stop", "stopped by a forced stop" },
};

int cli_opt_stop_code(const char *reason)
{
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (!strcmp(reason, table[k].reason)) return (int)k;
    return -1;
}

const char *cli_opt_stop_reason(int code)
{
    return code >= 0 && (size_t)code < sizeof table / sizeof table[0] ? table[code].reason : "unknown";
}

void cli_opt_stop_explain(const mbs_opt_result *res, const mbs_opt_options *o, cli_opt_stop *out)
{
    out->words = "an unknown reason";
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (!strcmp(res->stop_reason, table[k].reason)) out->words = table[k].words;
    const double g = res->pg_norm_scaled, pgtol = o->pgtol, res_tol = o->ftol > 0 ? sqrt(o->ftol) : 0;
    if (pgtol > 0 && g <= pgtol) {
        out->converged = 1;
        snprintf(out->verdict, sizeof out->verdict,
                 "converged: projected gradient %.3g <= pgtol %.3g (scaled problem)", g, pgtol);
    } else if (g <= res_tol) {
        out->converged = 1;
        snprintf(out->verdict, sizeof out->verdict,
                 "converged to the objective's resolution: projected gradient %.3g <= sqrt(ftol) %.3g "
                 "(scaled problem; a further step would lower psi by about %.1g relative)", g, res_tol, g * g);
    } else {
        out->converged = 0;
        snprintf(out->verdict, sizeof out->verdict,
                 "NOT converged: projected gradient %.3g > %.3g (scaled problem): not a minimum yet", g,
                 pgtol > res_tol ? pgtol : res_tol);
    }
}
