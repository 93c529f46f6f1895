/*
 * finish_initial.c - the last stage of mbs_builder_finish (builder_impl.h:
 * mbs_builder_finish_initial): the initial configuration, evaluated with
 * the kernels (kinematics at q0, the force elements' points), gives every
 * spring_damper its initial length and regularization and, where none is
 * given, its free length; then the spline moments, the physical checks,
 * the name index and the warnings of the lenient inertia policy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder/builder_impl.h"
#include "model/force_model.h"
#include "kernels/kernels.h"
#include "forces/force_common.h"

/* The place of an element for messages: where it is described, else the
 * model's source or name. */
static const char *where_of(const mbs_model *m, const char *where)
{
    return where ? where : (m->source ? m->source : (m->name ? m->name : "model"));
}

/* For every spring_damper, the length in the initial configuration (joint
 * q0), the regularization eps and, where free_given[k] == 0 (no length
 * given), the free length = initial length. Fails (MBS_ERR_MODEL) if the
 * two points of an element coincide in the initial configuration. */
static int spring_lengths(mbs_model *m, const int *free_given, mbs_error *err)
{
    int nspring = 0;
    for (int k = 0; k < m->nforce; k++)
        if (m->force[k].type == MBS_FORCE_SPRING_DAMPER) nspring++;
    if (nspring == 0) return MBS_OK;
    size_t n1 = (size_t)m->nq + 1;
    double *q = calloc(n1, sizeof *q);
    mbs_ws w;
    memset(&w, 0, sizeof w);
    if (!q || mbs_ws_init_kinematics(&w, m) != 0) {
        free(q);
        return oom(err);
    }
    mbs_model_initial_state(m, q, NULL);
    mbs_kin_forward(m, m->x, &w, q, NULL, NULL, 0);
    int rc = MBS_OK;
    for (int k = 0; k < m->nforce && rc == MBS_OK; k++) {
        mbs_force_info *fe = &m->force[k];
        if (fe->type != MBS_FORCE_SPRING_DAMPER) continue;
        double r1[3], r2[3], d[3];
        fc_point(w.A, w.o, w.V, w.r, fe->body[0], m->x + fe->x_point[0], r1, NULL);
        fc_point(w.A, w.o, w.V, w.r, fe->body[1], m->x + fe->x_point[1], r2, NULL);
        v3_sub(d, r2, r1);
        double l = sqrt(v3_dot(d, d));
        double scale = sqrt(v3_dot(r1, r1)) + sqrt(v3_dot(r2, r2));
        if (!(l > 1e-9 * scale) || !(l > 0) || !isfinite(l)) {
            rc = mbs_error_set(err, MBS_ERR_MODEL,
                               "%s: spring_damper %s: its two points coincide in the initial configuration "
                               "(distance %g at q0), so the direction of its force is undefined; "
                               "move a point or change the joints' q0",
                               where_of(m, fe->where), fe->name, l);
            break;
        }
        fe->l_init = l;
        fe->eps = 1e-8 * l;
        if (!free_given[k]) m->x[fe->x_free] = l;
    }
    mbs_ws_free(&w);
    free(q);
    return rc;
}

/* Lenient inertia policy: one warning per body whose inertia violates the
 * triangle inequality (same test as mbs_model_check_physics). */
static void warn_triangle(const mbs_builder *b, const mbs_model *m)
{
    if (!b->warn) return;
    for (int i = 1; i <= m->nb; i++) {
        const double *I = m->x + m->body[i].x_inertia;
        double lam[3];
        if (!(m->x[m->body[i].x_mass] > 0)) continue;
        mbs_inertia_principal(I, lam);
        if (lam[0] > 0 && lam[0] + lam[1] < lam[2] * (1 - 1e-9)) {
            char msg[MBS_ERROR_MSG_LEN];
            snprintf(msg, sizeof msg,
                     "%s: body %s: inertia violates the triangle inequality: principal moments %g, %g, %g "
                     "(%g + %g < %g); accepted (lenient inertia)",
                     W(m->body[i].where), m->body[i].name, lam[0], lam[1], lam[2], lam[0], lam[1], lam[2]);
            b->warn(b->warn_user, msg);
        }
    }
}

/* The initial configuration's spring lengths (default free lengths), then
 * the parameters again so that a parameter setting a free length wins; the
 * spline moments of the values set; the physical checks and the name
 * index. */
int mbs_builder_finish_initial(finish_ctx *c)
{
    const mbs_builder *b = c->b;
    mbs_model *m = c->m;
    int rc = m->nforce > 0 ? spring_lengths(m, c->free_given, c->err) : MBS_OK;
    if (rc != MBS_OK) return rc;
    if (m->nforce > 0) mbs_model_apply_params(m);
    m->lenient_inertia = b->lenient_inertia;
    rc = mbs_forces_prepare(m, c->err);
    if (rc == MBS_OK) rc = mbs_model_check_physics(m, c->err);
    if (rc != MBS_OK) return rc;
    if (mbs_model_index_names(m) != 0) return oom(c->err);
    if (b->lenient_inertia) warn_triangle(b, m);
    return MBS_OK;
}
