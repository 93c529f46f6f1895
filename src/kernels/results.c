/*
 * results.c - the check of what a public call hands back (results.h):
 * never a NaN or an infinity returned as a result.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/results.h"
#include "kernels/data.h"
#include "model/model_impl.h"
#include "base/error.h"

/* The sum of x[0..n-1] in eight chains of additions (the compiler turns
 * them into vector additions; no fast-math needed): finite when every
 * entry is, unless it overflows. */
static double sum(const double *x, size_t n)
{
    double s[8] = { 0 };
    size_t k = 0;
    for (; k + 7 < n; k += 8)
        for (int j = 0; j < 8; j++) s[j] += x[k + j];
    for (; k < n; k++) s[0] += x[k];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* The name of entry i of an index of kind k, as "[name]". */
static void index_name(const mbs_model *m, mbs_index_kind k, int i, char *buf, size_t len)
{
    const char *s = NULL;
    switch (k) {
    case MBS_IX_COORD: s = mbs_coord_name(m, i); break;
    case MBS_IX_VEL: s = mbs_vel_name(m, i); break;
    case MBS_IX_PARAM: s = mbs_param_name(m, i); break;
    case MBS_IX_CON: s = mbs_constraint_name(m, i); break;
    case MBS_IX_OBJ: s = mbs_objective_name(m, i); break;
    case MBS_IX_NONE: break;
    }
    if (s) snprintf(buf, len, "[%s]", s);
    else snprintf(buf, len, "[%d]", i);
}

int mbs_results_finite(const mbs_model *m, const char *what, const mbs_result *r, int nr, char *msg,
                       size_t len)
{
    for (int j = 0; j < nr; j++) {
        const size_t n = (size_t)(r[j].rows > 0 ? r[j].rows : 0) * (size_t)(r[j].cols > 0 ? r[j].cols : 0);
        if (!r[j].x || n == 0) continue;
        const double s = sum(r[j].x, n);
        if (s - s == 0) continue;
        for (size_t k = 0; k < n; k++) {
            if (isfinite(r[j].x[k])) continue;
            const int row = (int)(k / (size_t)r[j].cols), col = (int)(k % (size_t)r[j].cols);
            char ri[160] = "", ci[160] = "";
            index_name(m, r[j].rk, row, ri, sizeof ri);
            if (r[j].cols > 1) index_name(m, r[j].ck, col, ci, sizeof ci);
            snprintf(msg, len, "%s: %s%s%s is not finite (%g)", what, r[j].name, ri, ci, r[j].x[k]);
            return MBS_ERR_NUMERIC;
        }
    }
    return MBS_OK;
}

int mbs_data_results(mbs_data *d, const char *what, const mbs_result *r, int nr)
{
    int rc = mbs_results_finite(d->model, what, r, nr, d->err, sizeof d->err);
    if (!rc) d->err[0] = 0;
    return rc;
}

int mbs_error_results(mbs_error *err, const mbs_model *m, const char *what, const mbs_result *r, int nr)
{
    char msg[MBS_ERROR_MSG_LEN];
    int rc = mbs_results_finite(m, what, r, nr, msg, sizeof msg);
    return rc ? mbs_error_set(err, rc, "%s", msg) : MBS_OK;
}
