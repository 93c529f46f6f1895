/*
 * forces.c - the public evaluations of mbsens/forces.h that need more than
 * the model: time functions at t, the elastic energy and the spring lengths
 * at the kinematics held in an mbs_data. The model-side accessors are in
 * src/model/force_model.c, the element kernels in src/forces/.
 */
#include <math.h>

#include "mbsens/forces.h"
#include "kernels/data.h"
#include "kernels/functions.h"
#include "forces/force.h"
#include "forces/force_common.h"

static int force_ok(const mbs_model *m, int k) { return m && k >= 0 && k < m->nforce; }
static int func_ok(const mbs_model *m, int k) { return m && k >= 0 && k < m->nfunc; }

double mbs_function_eval(const mbs_model *m, int k, double t, double *dfdt)
{
    if (!func_ok(m, k)) {
        if (dfdt) *dfdt = NAN;
        return NAN;
    }
    return mbs_func_eval(&m->func[k], m->x, t, dfdt);
}

double mbs_elastic_energy(const mbs_model *m, const mbs_data *d, const double *q)
{
    if (!m || !d || (!q && m->nq > 0)) return NAN;
    return mbs_forces_energy(m, m->x, &d->ws, q);
}

static double spring_length(const mbs_model *m, const mbs_data *d, const mbs_force_info *fe)
{
    double r1[3], r2[3], dd[3];
    const mbs_ws *w = &d->ws;
    fc_point(w->A, w->o, w->V, w->r, fe->body[0], m->x + fe->x_point[0], r1, NULL);
    fc_point(w->A, w->o, w->V, w->r, fe->body[1], m->x + fe->x_point[1], r2, NULL);
    v3_sub(dd, r2, r1);
    return sqrt(v3_dot(dd, dd));
}

double mbs_force_length(const mbs_model *m, const mbs_data *d, int k)
{
    if (!force_ok(m, k) || !d || m->force[k].type != MBS_FORCE_SPRING_DAMPER) return NAN;
    return spring_length(m, d, &m->force[k]);
}

int mbs_forces_degenerate(const mbs_model *m, const mbs_data *d)
{
    if (!m || !d) return -1;
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        if (fe->type != MBS_FORCE_SPRING_DAMPER) continue;
        if (!(spring_length(m, d, fe) >= 1e-6 * fe->l_init)) return k;
    }
    return -1;
}
