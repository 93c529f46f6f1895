/*
 * state.c - the checks of a state against the model (finite values, Euler
 * parameters on |p| = 1) and the projection onto |p| = 1, p.pd = 0 (the
 * rates of Euler-rate joints; tangent velocities need no projection).
 */
#include <math.h>

#include "model/state.h"
#include "base/error.h"
#include "model/model_impl.h"

int mbs_state_check(const mbs_model *m, const double *q, const double *qd, const double *qdd,
                    char msg[MBS_ERROR_MSG_LEN])
{
    const double *v[3] = { q, qd, qdd };
    const char *nm[3] = { "q", "qd", "qdd" };
    for (int s = 0, n = m->nq; s < 3; s++, n = m->nv) {
        if (!v[s]) continue;
        /* 0 x is NaN exactly for a non-finite x: one multiply-add per entry,
         * the entry is looked for only on failure */
        double z = 0;
        for (int k = 0; k < n; k++) z += 0.0 * v[s][k];
        if (z == 0) continue;
        for (int k = 0; k < n; k++)
            if (!isfinite(v[s][k]))
                return mbs_fail(msg, MBS_ERR_NUMERIC, "%s[%d] (%s) is not finite (%g)", nm[s], k,
                                m->coord_name[k], v[s][k]);
    }
    for (int i = 1; i <= m->nb && m->n_quat > 0; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->quat < 0) continue;
        const double *p = q + jt->qoff + jt->quat;
        double nn = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
        if (fabs(nn - 1) > 1e-6)
            return mbs_fail(msg, MBS_ERR_NUMERIC,
                            "joint '%s': Euler parameters not normalized (|p| = %.9g); "
                            "use mbs_normalize_state", jt->name, nn);
    }
    return MBS_OK;
}

int mbs_normalize_state(const mbs_model *m, double *q, double *qd)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->quat < 0) continue;
        double *p = q + jt->qoff + jt->quat;
        double nn = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
        if (!(nn > 0) || !isfinite(nn)) return MBS_ERR_NUMERIC;
        for (int k = 0; k < 4; k++) p[k] /= nn;
        if (qd && jt->euler >= 0) {
            double *pd = qd + jt->voff + jt->euler;
            double s = p[0] * pd[0] + p[1] * pd[1] + p[2] * pd[2] + p[3] * pd[3];
            for (int k = 0; k < 4; k++) pd[k] -= s * p[k];
        }
    }
    return MBS_OK;
}

int mbs_tangent_unsupported(const mbs_model *m, const char *what, char msg[MBS_ERROR_MSG_LEN])
{
    if (m->n_quat == m->n_euler) return MBS_OK;
    for (int i = 1; i <= m->nb; i++)
        if (m->joint[i].velocities == MBS_VELOCITIES_TANGENT)
            return mbs_fail(msg, MBS_ERR_UNSUPPORTED,
                            "%s: not yet implemented for joint '%s' with tangent velocities (give the joint "
                            "\"velocities\": \"euler_rates\", or convert the model: mbsens convert "
                            "--velocities euler-rates, or mbs_model_with_velocities)",
                            what, m->joint[i].name);
    return MBS_OK;
}

int mbs_tangent_unsupported_err(const mbs_model *m, const char *what, mbs_error *err)
{
    char msg[MBS_ERROR_MSG_LEN];
    int rc = mbs_tangent_unsupported(m, what, msg);
    return rc ? mbs_error_set(err, rc, "%s", msg) : MBS_OK;
}
