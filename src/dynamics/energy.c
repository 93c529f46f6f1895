/*
 * energy.c - mbs_kinetic_energy, mbs_potential_energy (gravity) of the
 * kinematics held in an mbs_data.
 */
#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "base/algebra.h"

double mbs_kinetic_energy(const mbs_model *m, const mbs_data *d)
{
    double T = 0;
    for (int i = 1; i <= m->nb; i++) {
        double v[3], w[3], Jw[3];
        mbs_body_velocity(d, i, v, w);
        m3_mv(Jw, d->ws.J + 9 * i, w);
        T += 0.5 * (m->x[m->body[i].x_mass] * v3_dot(v, v) + v3_dot(w, Jw));
    }
    return T;
}

double mbs_potential_energy(const mbs_model *m, const mbs_data *d)
{
    double U = 0;
    const double *g = m->x + m->x_gravity;
    for (int i = 1; i <= m->nb; i++)
        U -= m->x[m->body[i].x_mass] * v3_dot(g, d->ws.rG + 3 * i);
    return U;
}
