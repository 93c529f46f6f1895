/*
 * param_dx.c - mbs_deriv_param_dx, mbs_deriv_param_direction: the direction
 * of the design parameters in the model vector x (the targets of each
 * parameter with their scales), for the derivatives with respect to rho.
 */
#include <string.h>

#include "mbsens/mbsens.h"
#include "dynamics/derivatives.h"
#include "model/model_impl.h"

/* dx = sum_k drho_k d x / d rho_k */
void mbs_deriv_param_direction(const mbs_model *m, const double *drho, double *dx)
{
    memset(dx, 0, sizeof(double) * (size_t)m->nx);
    for (int k = 0; k < m->nparam; k++) {
        if (!drho || drho[k] == 0) continue;
        const mbs_param_info *p = &m->param[k];
        for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] += p->scale[t] * drho[k];
    }
}

void mbs_deriv_param_dx(const mbs_model *m, int k, double *dx)
{
    memset(dx, 0, sizeof(double) * (size_t)m->nx);
    const mbs_param_info *p = &m->param[k];
    for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] += p->scale[t];
}
