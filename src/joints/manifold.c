/* manifold.c - exp, log, J_r, J_r^-1, Ad^-1 and the truncated dexp^-1 of
 * SO(3) and SE(3) on unit quaternions (manifold.h; docs/tangent-space.md §4). */
#include "manifold.h"
#include "base/algebra.h"

#ifdef MBS_COMPLEX
#define MATAN(x) catan(x)
#else
#define MATAN(x) atan(x)
#endif

#define NSERIES 12   /* terms of every series in z */
#define HALF_PI 1.57079632679489661923

/* sum_{k<NSERIES} (-z)^k / (2k + m)!, times m!, by Horner from the last term */
static mreal alt_series(mreal z, int m)
{
    mreal f = 1;
    for (int k = NSERIES - 1; k >= 1; k--) f = 1 - z * f / ((2 * k + m - 1) * (2 * k + m));
    return f;
}

/* |B_2n| / (2n)!, n = 1..12: dj = sum_n (these) z^(n-1) (th/2 cot(th/2) = 1 - z dj) */
static const double dj_coef[NSERIES] = {
    (1.0 / 6) / 2, (1.0 / 30) / 24, (1.0 / 42) / 720, (1.0 / 30) / 40320, (5.0 / 66) / 3628800,
    (691.0 / 2730) / 479001600.0, (7.0 / 6) / 87178291200.0, (3617.0 / 510) / 20922789888000.0,
    (43867.0 / 798) / 6402373705728000.0, (174611.0 / 330) / 2432902008176640000.0,
    (854513.0 / 138) / 1124000727777607680000.0,
    (236364091.0 / 2730) / 620448401733239439360000.0
};

void MBS_K(mbs_so3_coeffs_series)(mreal z, mreal *c)
{
    c[MBS_SO3_COS] = alt_series(z, 0);
    c[MBS_SO3_SINC] = alt_series(z, 1);
    c[MBS_SO3_C1] = alt_series(z, 2) / 2;
    c[MBS_SO3_S1] = alt_series(z, 3) / 6;
    c[MBS_SO3_C2] = alt_series(z, 4) / 24;
    /* s2 = sum_j (-z)^j (j + 1) / (2j + 5)! */
    mreal f = 1;
    for (int j = NSERIES - 1; j >= 1; j--) f = 1 - z * f * (j + 1) / (j * (2 * j + 4) * (2 * j + 5));
    c[MBS_SO3_S2] = f / 120;
    mreal d = dj_coef[NSERIES - 1];
    for (int n = NSERIES - 2; n >= 0; n--) d = dj_coef[n] + z * d;
    c[MBS_SO3_DJ] = d;
    c[MBS_SO3_HCOS] = alt_series(z / 4, 0);
    c[MBS_SO3_HSINC] = alt_series(z / 4, 1) / 2;
}

void MBS_K(mbs_so3_coeffs_closed)(mreal z, mreal *c)
{
    mreal th = MSQRT(z), s = MSIN(th), co = MCOS(th), hs = MSIN(th / 2), hc = MCOS(th / 2);
    c[MBS_SO3_COS] = co;
    c[MBS_SO3_SINC] = s / th;
    c[MBS_SO3_C1] = 2 * hs * hs / z;
    c[MBS_SO3_S1] = (th - s) / (z * th);
    c[MBS_SO3_C2] = (z + 2 * co - 2) / (2 * z * z);
    c[MBS_SO3_S2] = (2 * th - 3 * s + th * co) / (2 * z * z * th);
    c[MBS_SO3_DJ] = 1 / z - hc / (2 * th * hs);
    c[MBS_SO3_HCOS] = hc;
    c[MBS_SO3_HSINC] = hs / th;
}

void MBS_K(mbs_so3_coeffs)(mreal z, mreal *c)
{
    if (MRE(z) <= MBS_SO3_SERIES_MAX) MBS_K(mbs_so3_coeffs_series)(z, c);
    else MBS_K(mbs_so3_coeffs_closed)(z, c);
}

/* ---------------------------------------------------------------- quaternions */

void MBS_K(mbs_quat_mul)(const mreal *a, const mreal *b, mreal *r)
{
    r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    r[1] = a[0] * b[1] + b[0] * a[1] + a[2] * b[3] - a[3] * b[2];
    r[2] = a[0] * b[2] + b[0] * a[2] + a[3] * b[1] - a[1] * b[3];
    r[3] = a[0] * b[3] + b[0] * a[3] + a[1] * b[2] - a[2] * b[1];
}

/* A(lambda p) = lambda^2 R + (lambda^2 - 1) I for the rotation R of p / |p| */
void MBS_K(mbs_quat_rotation)(const mreal *p, mreal *R)
{
    mreal pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3];
    ep_rotation(R, p);
    for (int k = 0; k < 9; k++) R[k] = (R[k] + (k % 4 == 0 ? 1 - pp : 0)) / pp;
}

/* ---------------------------------------------------------------- SO(3) */

/* J = I + a S(w) + b S(w)^2, with S(w)^2 = w w^T - (w.w) I */
static void so3_poly(mreal *J, const mreal *w, mreal a, mreal b)
{
    mreal z = v3_dot(w, w);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) J[3 * i + j] = b * w[i] * w[j] + (i == j ? 1 - b * z : 0);
    J[1] -= a * w[2]; J[2] += a * w[1];
    J[3] += a * w[2]; J[5] -= a * w[0];
    J[6] -= a * w[1]; J[7] += a * w[0];
}

void MBS_K(mbs_so3_exp)(const mreal *w, mreal *p)
{
    mreal c[MBS_SO3_NCOEF];
    MBS_K(mbs_so3_coeffs)(v3_dot(w, w), c);
    p[0] = c[MBS_SO3_HCOS];
    for (int k = 0; k < 3; k++) p[1 + k] = c[MBS_SO3_HSINC] * w[k];
}

void MBS_K(mbs_so3_exp_matrix)(const mreal *w, mreal *R)
{
    mreal c[MBS_SO3_NCOEF];
    MBS_K(mbs_so3_coeffs)(v3_dot(w, w), c);
    so3_poly(R, w, c[MBS_SO3_SINC], c[MBS_SO3_C1]);
}

/* w = 2 atan(s / e0) e / s, s^2 = e.e, with p taken with e0 >= 0. For
 * r = s^2 / e0^2 <= 1/16 the series atan(x)/x = sum (-x^2)^k / (2k + 1)
 * (14 terms: the first left out is below 1e-18); above, atan of the smaller
 * of s/e0 and e0/s. Scale-invariant in p. */
void MBS_K(mbs_so3_log)(const mreal *p, mreal *w)
{
    mreal sg = MRE(p[0]) < 0 ? -1 : 1, e0 = sg * p[0];
    mreal e[3] = { sg * p[1], sg * p[2], sg * p[3] };
    mreal ss = v3_dot(e, e), f;
    if (MRE(ss) <= MRE(e0 * e0) / 16) {
        mreal r = ss / (e0 * e0);
        f = 1.0 / 27;
        for (int k = 13; k >= 1; k--) f = 1.0 / (2 * k - 1) - r * f;
        f = 2 * f / e0;
    } else {
        mreal s = MSQRT(ss);
        mreal half = MRE(e0) >= MRE(s) ? MATAN(s / e0) : HALF_PI - MATAN(e0 / s);
        f = 2 * half / s;
    }
    for (int k = 0; k < 3; k++) w[k] = f * e[k];
}

void MBS_K(mbs_so3_integrate)(const mreal *p, const mreal *w, mreal *p1)
{
    mreal x[4];
    MBS_K(mbs_so3_exp)(w, x);
    MBS_K(mbs_quat_mul)(p, x, p1);
}

void MBS_K(mbs_so3_difference)(const mreal *p0, const mreal *p1, mreal *w)
{
    mreal c0[4] = { p0[0], -p0[1], -p0[2], -p0[3] }, x[4];
    MBS_K(mbs_quat_mul)(c0, p1, x);
    MBS_K(mbs_so3_log)(x, w);
}

void MBS_K(mbs_so3_jr)(const mreal *w, mreal *J)
{
    mreal c[MBS_SO3_NCOEF];
    MBS_K(mbs_so3_coeffs)(v3_dot(w, w), c);
    so3_poly(J, w, -c[MBS_SO3_C1], c[MBS_SO3_S1]);
}

void MBS_K(mbs_so3_jr_inv)(const mreal *w, mreal *J)
{
    mreal c[MBS_SO3_NCOEF];
    MBS_K(mbs_so3_coeffs)(v3_dot(w, w), c);
    so3_poly(J, w, 0.5, c[MBS_SO3_DJ]);
}

void MBS_K(mbs_so3_ad_inv)(const mreal *w, mreal *A)
{
    mreal c[MBS_SO3_NCOEF];
    MBS_K(mbs_so3_coeffs)(v3_dot(w, w), c);
    so3_poly(A, w, -c[MBS_SO3_SINC], c[MBS_SO3_C1]);
}

void MBS_K(mbs_so3_dexpinv)(const mreal *z, const mreal *v, mreal *r)
{
    mreal a[3], b[3];
    v3_cross(a, z, v);
    v3_cross(b, z, a);
    for (int k = 0; k < 3; k++) r[k] = v[k] + a[k] / 2 + b[k] / 12;
}

/* ---------------------------------------------------------------- SE(3) */

/* Barfoot's Q(rho, phi) with the coefficients c of z = phi.phi */
static void se3_q(mreal *Q, const mreal *rho, const mreal *phi, const mreal *c)
{
    mreal P[9], Rh[9], PR[9], RP[9], PRP[9], PPR[9], RPP[9], PRPP[9], PPRP[9];
    so3_poly(P, phi, 1, 0);
    so3_poly(Rh, rho, 1, 0);
    for (int k = 0; k < 9; k += 4) P[k] = Rh[k] = 0;   /* the skew matrices alone */
    m3_mul(PR, P, Rh);
    m3_mul(RP, Rh, P);
    m3_mul(PRP, PR, P);
    m3_mul(PPR, P, PR);
    m3_mul(RPP, RP, P);
    m3_mul(PRPP, PRP, P);
    m3_mul(PPRP, P, PRP);
    mreal s1 = c[MBS_SO3_S1], c2 = c[MBS_SO3_C2], s2 = c[MBS_SO3_S2];
    for (int k = 0; k < 9; k++)
        Q[k] = Rh[k] / 2 + s1 * (PR[k] + RP[k] + PRP[k]) + c2 * (PPR[k] + RPP[k] - 3 * PRP[k]) +
               s2 * (PRPP[k] + PPRP[k]);
}

/* 6x6 row-major from the blocks [A, B; 0, A] */
static void se3_blocks(mreal *J, const mreal *A, const mreal *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            J[6 * i + j] = A[3 * i + j];
            J[6 * i + j + 3] = B[3 * i + j];
            J[6 * (i + 3) + j] = 0;
            J[6 * (i + 3) + j + 3] = A[3 * i + j];
        }
}

void MBS_K(mbs_se3_integrate)(const mreal *q, const mreal *d, mreal *q1)
{
    mreal c[MBS_SO3_NCOEF], V[9], R[9], u[3], t[3];
    MBS_K(mbs_so3_coeffs)(v3_dot(d + 3, d + 3), c);
    so3_poly(V, d + 3, c[MBS_SO3_C1], c[MBS_SO3_S1]);
    m3_mv(u, V, d);
    MBS_K(mbs_quat_rotation)(q + 3, R);
    m3_mv(t, R, u);
    for (int k = 0; k < 3; k++) q1[k] = q[k] + t[k];
    MBS_K(mbs_so3_integrate)(q + 3, d + 3, q1 + 3);
}

void MBS_K(mbs_se3_difference)(const mreal *q0, const mreal *q1, mreal *d)
{
    mreal R[9], dt[3], u[3], c[MBS_SO3_NCOEF], Vi[9];
    MBS_K(mbs_quat_rotation)(q0 + 3, R);
    v3_sub(dt, q1, q0);
    m3_mtv(u, R, dt);
    MBS_K(mbs_so3_difference)(q0 + 3, q1 + 3, d + 3);
    MBS_K(mbs_so3_coeffs)(v3_dot(d + 3, d + 3), c);
    so3_poly(Vi, d + 3, -0.5, c[MBS_SO3_DJ]);
    m3_mv(d, Vi, u);
}

void MBS_K(mbs_se3_jr)(const mreal *d, mreal *J)
{
    mreal c[MBS_SO3_NCOEF], Jw[9], Q[9], mr[3] = { -d[0], -d[1], -d[2] }, mp[3] = { -d[3], -d[4], -d[5] };
    MBS_K(mbs_so3_coeffs)(v3_dot(d + 3, d + 3), c);
    so3_poly(Jw, d + 3, -c[MBS_SO3_C1], c[MBS_SO3_S1]);
    se3_q(Q, mr, mp, c);
    se3_blocks(J, Jw, Q);
}

void MBS_K(mbs_se3_jr_inv)(const mreal *d, mreal *J)
{
    mreal c[MBS_SO3_NCOEF], Ji[9], Q[9], T[9], B[9];
    mreal mr[3] = { -d[0], -d[1], -d[2] }, mp[3] = { -d[3], -d[4], -d[5] };
    MBS_K(mbs_so3_coeffs)(v3_dot(d + 3, d + 3), c);
    so3_poly(Ji, d + 3, 0.5, c[MBS_SO3_DJ]);
    se3_q(Q, mr, mp, c);
    m3_mul(T, Q, Ji);
    m3_mul(B, Ji, T);
    for (int k = 0; k < 9; k++) B[k] = -B[k];
    se3_blocks(J, Ji, B);
}

void MBS_K(mbs_se3_ad_inv)(const mreal *d, mreal *A)
{
    mreal c[MBS_SO3_NCOEF], R[9], V[9], t[3], St[9], Rt[9], B[9];
    MBS_K(mbs_so3_coeffs)(v3_dot(d + 3, d + 3), c);
    so3_poly(R, d + 3, c[MBS_SO3_SINC], c[MBS_SO3_C1]);
    so3_poly(V, d + 3, c[MBS_SO3_C1], c[MBS_SO3_S1]);
    m3_mv(t, V, d);
    m3_skew_mul(St, t, R);   /* S(t) R, whose transpose is -R^T S(t) */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            Rt[3 * i + j] = R[3 * j + i];
            B[3 * i + j] = St[3 * j + i];
        }
    se3_blocks(A, Rt, B);
}

void MBS_K(mbs_se3_dexpinv)(const mreal *z, const mreal *v, mreal *r)
{
    mreal a[6], b[6];
    s6_mcross(a, z, v);
    s6_mcross(b, z, a);
    for (int k = 0; k < 6; k++) r[k] = v[k] + a[k] / 2 + b[k] / 12;
}
