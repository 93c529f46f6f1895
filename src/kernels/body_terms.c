/*
 * body_terms.c - per-body Newton-Euler terms at the reference point
 * (thesis §2.4.1, eqs. for M^v and Q^v; docs/formulations.md §4).
 *
 * With g = r_G - r_i, J the inertia about the CoM in global axes,
 * f = m gravity + applied force, n = applied torque about the CoM
 * (point forces contribute sum_k A (pbar_k - c) x f_k = eps(A P) - (A c) x f):
 *   M^v = [ m I, -m S(g); m S(g), J - m S(g) S(g) ]
 *   f'  = f - m w x (w x g)
 *   Q^v = [ f'; n - w x (J w) + g x f' ]
 * This is the single place where body inertia and forces enter; inverse
 * dynamics, the mass matrix and both forward-dynamics algorithms use it.
 */
#include "kernels.h"
#include "base/algebra.h"

void MBS_K(mbs_body_terms)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w)
{
    const mreal *grav = x + m->x_gravity;
    for (int i = 1; i <= m->nb; i++) {
        const mreal mass = x[m->body[i].x_mass];
        const mreal *J = w->J + 9 * i, *wi = w->V + 6 * i + 3, *fx = w->xfrc + 15 * i;
        mreal g[3], t[3], Jw[3], f[3];
        v3_sub(g, w->rG + 3 * i, w->r + 3 * i);
        m6_body_inertia(w->Mv + 36 * i, mass, g, J);
        mreal *Q = w->Qv + 6 * i;
        /* f' */
        v3_cross(t, wi, g);
        v3_cross(f, wi, t);
        for (int c = 0; c < 3; c++) Q[c] = mass * grav[c] + fx[c] - mass * f[c];
        /* n: applied torque, moment of point forces about the CoM, gyroscopic term
         * (the load part skipped when the body has no loads: exact zeros) */
        int loaded = 0;
        for (int k = 0; k < 15; k++) loaded |= fx[k] != 0;
        if (loaded) {
            mreal AP[9], Ac[3];
            const mreal *Ai = w->A + 9 * i;
            m3_mul(AP, Ai, fx + 6);
            m3_mv(Ac, Ai, x + m->body[i].x_com);
            v3_cross(t, Ac, fx);
            Q[3] = fx[3] + AP[5] - AP[7] - t[0];
            Q[4] = fx[4] + AP[6] - AP[2] - t[1];
            Q[5] = fx[5] + AP[1] - AP[3] - t[2];
        } else {
            Q[3] = Q[4] = Q[5] = 0;
        }
        m3_mv(Jw, J, wi);
        v3_cross(t, wi, Jw);
        for (int c = 0; c < 3; c++) Q[3 + c] -= t[c];
        v3_cross_add(Q + 3, g, Q);
    }
}

void MBS_K(mbs_mass_terms)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w)
{
    for (int i = 1; i <= m->nb; i++) {
        mreal g[3];
        v3_sub(g, w->rG + 3 * i, w->r + 3 * i);
        m6_body_inertia(w->Mv + 36 * i, x[m->body[i].x_mass], g, w->J + 9 * i);
    }
}
