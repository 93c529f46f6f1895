/*
 * constraint_common.h - building blocks of the cut-joint equations
 * (internal, included by src/constraints/constraint_*.c only).
 *
 * Each block writes its rows of Phi, dPhi/dt, d2Phi/dt2 (when the entity
 * derivatives are given) and of G = dPhi/de (18 columns per row).
 */
#ifndef MBS_CONSTRAINT_COMMON_H
#define MBS_CONSTRAINT_COMMON_H
#include "constraint.h"
#include "base/algebra.h"

/* Rows r..r+2: e[b] - e[a]. */
static inline void con_diff_eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, int a,
                                 int b, int r, mreal *phi, mreal *phid, mreal *phidd)
{
    v3_sub(phi + r, e[b], e[a]);
    if (ed) v3_sub(phid + r, ed[b], ed[a]);
    if (edd) v3_sub(phidd + r, edd[b], edd[a]);
}

static inline void con_diff_jac(int a, int b, int r, mreal *G)
{
    for (int k = 0; k < 3; k++) {
        G[18 * (r + k) + 3 * a + k] = -1;
        G[18 * (r + k) + 3 * b + k] = 1;
    }
}

/* Rows r..r+2: e[u] x (e[pc] - e[pp]) (a point on the line through e[pp]
 * along e[u]). */
static inline void con_line_eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, int u,
                                 int pp, int pc, int r, mreal *phi, mreal *phid, mreal *phidd)
{
    mreal d[3], dd[3], ddd[3], t[3];
    v3_sub(d, e[pc], e[pp]);
    v3_cross(phi + r, e[u], d);
    if (!ed) return;
    v3_sub(dd, ed[pc], ed[pp]);
    v3_cross(phid + r, ed[u], d);
    v3_cross_add(phid + r, e[u], dd);
    if (!edd) return;
    v3_sub(ddd, edd[pc], edd[pp]);
    v3_cross(phidd + r, edd[u], d);
    v3_cross(t, ed[u], dd);
    v3_axpy(phidd + r, 2, t);
    v3_cross_add(phidd + r, e[u], ddd);
}

/* d(u x d)/du = -S(d), d(u x d)/d(pc) = S(u), d/d(pp) = -S(u). */
static inline void con_line_jac(const mreal *const *e, int u, int pp, int pc, int r, mreal *G)
{
    mreal d[3];
    v3_sub(d, e[pc], e[pp]);
    const mreal *w = e[u];
    /* S(a) = [0 -a2 a1; a2 0 -a0; -a1 a0 0] */
    const mreal Sd[9] = { 0, -d[2], d[1], d[2], 0, -d[0], -d[1], d[0], 0 };
    const mreal Su[9] = { 0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0 };
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            G[18 * (r + i) + 3 * u + k] = -Sd[3 * i + k];
            G[18 * (r + i) + 3 * pc + k] = Su[3 * i + k];
            G[18 * (r + i) + 3 * pp + k] = -Su[3 * i + k];
        }
}

/* Row r: e[a] . e[b]. */
static inline void con_dot_eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, int a,
                                int b, int r, mreal *phi, mreal *phid, mreal *phidd)
{
    phi[r] = v3_dot(e[a], e[b]);
    if (!ed) return;
    phid[r] = v3_dot(ed[a], e[b]) + v3_dot(e[a], ed[b]);
    if (!edd) return;
    phidd[r] = v3_dot(edd[a], e[b]) + 2 * v3_dot(ed[a], ed[b]) + v3_dot(e[a], edd[b]);
}

static inline void con_dot_jac(const mreal *const *e, int a, int b, int r, mreal *G)
{
    for (int k = 0; k < 3; k++) {
        G[18 * r + 3 * a + k] = e[b][k];
        G[18 * r + 3 * b + k] = e[a][k];
    }
}

/* Row r: e[u] . (e[pc] - e[pp]) (the point e[pc] in the plane through
 * e[pp] normal to e[u]). */
static inline void con_plane_eval(const mreal *const *e, const mreal *const *ed, const mreal *const *edd, int u,
                                  int pp, int pc, int r, mreal *phi, mreal *phid, mreal *phidd)
{
    mreal d[3], dd[3], ddd[3];
    v3_sub(d, e[pc], e[pp]);
    phi[r] = v3_dot(e[u], d);
    if (!ed) return;
    v3_sub(dd, ed[pc], ed[pp]);
    phid[r] = v3_dot(ed[u], d) + v3_dot(e[u], dd);
    if (!edd) return;
    v3_sub(ddd, edd[pc], edd[pp]);
    phidd[r] = v3_dot(edd[u], d) + 2 * v3_dot(ed[u], dd) + v3_dot(e[u], ddd);
}

static inline void con_plane_jac(const mreal *const *e, int u, int pp, int pc, int r, mreal *G)
{
    for (int k = 0; k < 3; k++) {
        G[18 * r + 3 * u + k] = e[pc][k] - e[pp][k];
        G[18 * r + 3 * pc + k] = e[u][k];
        G[18 * r + 3 * pp + k] = -e[u][k];
    }
}

/* Entity indices. */
enum { CON_PP = 0, CON_PC = 1, CON_UP = 2, CON_UC = 3, CON_VP = 4, CON_VC = 5 };

#endif
