/*
 * body_terms_derivatives.c - tangent of body_terms.c: dM^v and dQ^v along a
 * direction, from the kinematic tangents in dw (positions, velocities), the
 * model-vector direction dx (mass, CoM, inertia, gravity) and the tangent of
 * the applied loads dw->xfrc (zero for constant user loads; force elements
 * add theirs). Bodies first..last-1.
 */
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "base/algebra.h"

static const mreal zeros[9];

#if defined(__GNUC__)
#define BTD_INLINE static inline __attribute__((always_inline))
#else
#define BTD_INLINE static inline
#endif

/* dM^v = [dm I, -S(dmg); S(dmg), dJ + d(m (|g|^2 I - g g^T))], mg = m g
 * (dmz: dm = 0) */
BTD_INLINE void btd_mass_matrix(mreal *dM, mreal mass, mreal dmass, int dmz, const mreal *g, const mreal *dg,
                                const mreal *dJ)
{
    mreal dmg[3];
    if (dmz)
        for (int k = 0; k < 3; k++) dmg[k] = mass * dg[k];
    else
        for (int k = 0; k < 3; k++) dmg[k] = dmass * g[k] + mass * dg[k];
    dM[0] = dmass;    dM[1] = 0;        dM[2] = 0;
    dM[6] = 0;        dM[7] = dmass;    dM[8] = 0;
    dM[12] = 0;       dM[13] = 0;       dM[14] = dmass;
    dM[3] = 0;        dM[4] = dmg[2];   dM[5] = -dmg[1];
    dM[9] = -dmg[2];  dM[10] = 0;       dM[11] = dmg[0];
    dM[15] = dmg[1];  dM[16] = -dmg[0]; dM[17] = 0;
    dM[18] = 0;       dM[19] = -dmg[2]; dM[20] = dmg[1];
    dM[24] = dmg[2];  dM[25] = 0;       dM[26] = -dmg[0];
    dM[30] = -dmg[1]; dM[31] = dmg[0];  dM[32] = 0;
    mreal gg = v3_dot(g, g), dgg = 2 * v3_dot(g, dg);
    if (dmz) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                dM[6 * (3 + r) + 3 + c] = dJ[3 * r + c] + mass * ((r == c ? dgg : 0) - dg[r] * g[c] - g[r] * dg[c]);
    } else {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                dM[6 * (3 + r) + 3 + c] = dJ[3 * r + c] +
                    dmass * ((r == c ? gg : 0) - g[r] * g[c]) +
                    mass * ((r == c ? dgg : 0) - dg[r] * g[c] - g[r] * dg[c]);
    }
}

/* The applied part of the moment's tangent: dn = dn_applied + eps(d(A P))
 * - d((A c) x f_applied), into dn (fx, dfx: the applied loads and their
 * tangent, 15 numbers) */
BTD_INLINE void btd_applied_moment(mreal *dn, const mreal *fx, const mreal *dfx, const mreal *Ai, const mreal *dAi,
                                   const mreal *ci, const mreal *dci)
{
    mreal dAP[9], T[9], Ac[3], dAc[3], tmp[3];
    m3_mul(dAP, dAi, fx + 6);
    m3_mul(T, Ai, dfx + 6);
    for (int k = 0; k < 9; k++) dAP[k] += T[k];
    m3_mv(Ac, Ai, ci);
    m3_mv(dAc, dAi, ci);
    m3_mv(tmp, Ai, dci);
    v3_add(dAc, dAc, tmp);
    dn[0] = dfx[3] + dAP[5] - dAP[7];
    dn[1] = dfx[4] + dAP[6] - dAP[2];
    dn[2] = dfx[5] + dAP[1] - dAP[3];
    mreal t[3];
    v3_zero(t);
    v3_cross_add(t, dAc, fx);
    v3_cross_add(t, Ac, dfx);
    for (int c = 0; c < 3; c++) dn[c] -= t[c];
}

#if defined(__GNUC__)
__attribute__((flatten))   /* the small vector helpers inline */
#endif
void MBS_K(mbs_body_terms_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                             const mreal *dx, MBS_K(mbs_ws) *dw, int first, int last)
{
    const mreal *grav = x + m->x_gravity;
    const int dgz = !dx || m_all_zero(dx + m->x_gravity, 3);
    const mreal *dgrav = dgz ? zeros : dx + m->x_gravity;
    if (first < 1) first = 1;
    if (last > m->nb + 1) last = m->nb + 1;
    for (int i = first; i < last; i++) {
        const mreal mass = x[m->body[i].x_mass], dmass = dx ? dx[m->body[i].x_mass] : 0;
        const int dmz = MRE(dmass) == 0 && MIM(dmass) == 0;
        const mreal *J = w->J + 9 * i, *dJ = dw->J + 9 * i;
        const mreal *wi = w->V + 6 * i + 3, *dwi = dw->V + 6 * i + 3;
        const mreal *fx = w->xfrc + 15 * i, *dfx = dw->xfrc + 15 * i;
        const mreal *Ai = w->A + 9 * i, *dAi = dw->A + 9 * i;
        const mreal *ci = x + m->body[i].x_com, *dci = dx ? dx + m->body[i].x_com : zeros;
        mreal g[3], dg[3];
        v3_sub(g, w->rG + 3 * i, w->r + 3 * i);
        v3_sub(dg, dw->rG + 3 * i, dw->r + 3 * i);

        btd_mass_matrix(dw->Mv + 36 * i, mass, dmass, dmz, g, dg, dJ);

        /* f' = m grav + f - m w x (w x g) */
        mreal t[3], dt[3], f[3], df[3];
        v3_cross(t, wi, g);
        v3_zero(dt);
        v3_cross_add(dt, dwi, g);
        v3_cross_add(dt, wi, dg);
        v3_cross(f, wi, t);
        v3_zero(df);
        v3_cross_add(df, dwi, t);
        v3_cross_add(df, wi, dt);
        const mreal *Q = w->Qv + 6 * i;
        mreal *dQ = dw->Qv + 6 * i;
        if (dmz && dgz)
            for (int c = 0; c < 3; c++) dQ[c] = dfx[c] - mass * df[c];
        else
            for (int c = 0; c < 3; c++)
                dQ[c] = dmass * grav[c] + mass * dgrav[c] + dfx[c] - dmass * f[c] - mass * df[c];
        /* n = n_applied + eps(A P) - (A c) x f_applied - w x (J w) + g x f'
         * (the applied part vanishes with its tangent for a body without loads) */
        if (m_all_zero(fx, 15) && m_all_zero(dfx, 15))
            dQ[3] = dQ[4] = dQ[5] = 0;
        else
            btd_applied_moment(dQ + 3, fx, dfx, Ai, dAi, ci, dci);
        mreal Jw[3], dJw[3], tmp[3], dn[3];
        m3_mv(Jw, J, wi);
        m3_mv(dJw, dJ, wi);
        m3_mv(tmp, J, dwi);
        v3_add(dJw, dJw, tmp);
        v3_zero(dn);
        v3_cross_add(dn, dwi, Jw);
        v3_cross_add(dn, wi, dJw);
        for (int c = 0; c < 3; c++) dQ[3 + c] -= dn[c];
        v3_cross_add(dQ + 3, dg, Q);
        v3_cross_add(dQ + 3, g, dQ);
    }
}
