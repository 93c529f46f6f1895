/*
 * functions.c - time functions (see functions.h for the definitions).
 *
 * Spline evaluation. Knots t_0 < ... < t_{n-1}, values y_k (in x), second
 * derivatives M_k = f''(t_k) from T M = R y, where row k of T is
 * (a_k, b_k, c_k) on (M_{k-1}, M_k, M_{k+1}) and row k of R is
 * (R-_k, R0_k, R+_k) on (y_{k-1}, y_k, y_{k+1}):
 *   interior   h_{k-1} M_{k-1} + 2 (h_{k-1} + h_k) M_k + h_k M_{k+1}
 *                = 6 (y_{k+1} - y_k)/h_k - 6 (y_k - y_{k-1})/h_{k-1}
 *   natural    M_0 = 0, M_{n-1} = 0
 *   clamped    f'(t_0) = 0, f'(t_{n-1}) = 0
 * (h_k = t_{k+1} - t_k). T = L U (Thomas): U unit upper bidiagonal with
 * super-diagonal c'_k, L lower bidiagonal with diagonal 1/piv_k and
 * sub-diagonal a_k. coef stores per knot (a_k, c'_k, piv_k, R-_k, R0_k, R+_k),
 * all functions of the times only (mbs_spline_setup in force_model.c).
 *
 * On [t_i, t_{i+1}], A = (t_{i+1} - t)/h, B = 1 - A:
 *   f = A y_i + B y_{i+1} + ((A^3 - A) M_i + (B^3 - B) M_{i+1}) h^2/6
 * which we write f = alpha M_i + beta M_{i+1} + gamma y_i + delta y_{i+1};
 * outside the knots f follows the end tangent, again of that form.
 *
 * For the model's own values M_i, M_{i+1} are precomputed (f->mom, see
 * functions.h). For any other values they come from one forward sweep
 * without storage (spline_eval: it starts and stops where the rest of the
 * sweep cannot change the result): the forward
 * substitution d'_j = (r_j - a_j d'_{j-1}) piv_j (r = R y) and the back
 * substitution M_k = d'_k - c'_k M_{k+1} unrolled,
 *   M_k = sum_{j >= k} d'_j prod_{l=k}^{j-1} (-c'_l).
 * The weights dF/dy = R^T T^{-T} (alpha e_i + beta e_{i+1}) + gamma e_i +
 * delta e_{i+1} are the transposed solve, done in the output array.
 */
#include <stdint.h>
#include <string.h>

#include "kernels/functions.h"

static const double TWO_PI = 6.283185307179586476925286766559;

/* Interval i in 0..n-2 and the coefficients alpha..delta and their time
 * derivatives at t. */
static int spline_coeffs(const mbs_func_info *f, mreal t, mreal c[4], mreal dc[4])
{
    const double *tk = f->t;
    const int n = f->n;
    const double tr = MRE(t);
    int i;
    if (tr < tk[0]) {
        const double h = tk[1] - tk[0];
        const mreal s = t - tk[0];
        c[0] = -h / 3 * s;   dc[0] = -h / 3;
        c[1] = -h / 6 * s;   dc[1] = -h / 6;
        c[2] = 1 - s / h;    dc[2] = -1 / h;
        c[3] = s / h;        dc[3] = 1 / h;
        return 0;
    }
    if (tr > tk[n - 1]) {
        i = n - 2;
        const double h = tk[n - 1] - tk[n - 2];
        const mreal s = t - tk[n - 1];
        c[0] = h / 6 * s;    dc[0] = h / 6;
        c[1] = h / 3 * s;    dc[1] = h / 3;
        c[2] = -s / h;       dc[2] = -1 / h;
        c[3] = 1 + s / h;    dc[3] = 1 / h;
        return i;
    }
    int lo = 0, hi = n - 1;              /* tk[lo] <= tr <= tk[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (tk[mid] <= tr) lo = mid;
        else hi = mid;
    }
    i = lo;
    const double h = tk[i + 1] - tk[i];
    const mreal A = (tk[i + 1] - t) / h, B = 1 - A;
    c[0] = (A * A * A - A) * h * h / 6;  dc[0] = -(3 * A * A - 1) * h / 6;
    c[1] = (B * B * B - B) * h * h / 6;  dc[1] = (3 * B * B - 1) * h / 6;
    c[2] = A;                            dc[2] = -1 / h;
    c[3] = B;                            dc[3] = 1 / h;
    return i;
}

/* |a| < 2^-54 |b| in each component, or a = 0 there: then fl(b + a) = b
 * (the addition rounds back to b; 2^-54 |b| is below half an ulp of b). */
static int negligible(mreal a, mreal b)
{
    const double ar = MRE(a), ai = MIM(a);
    return (ar == 0 || fabs(ar) < 0x1p-54 * fabs(MRE(b))) && (ai == 0 || fabs(ai) < 0x1p-54 * fabs(MIM(b)));
}

static mreal spline_eval(const mbs_func_info *f, const mreal *y, mreal t, mreal *dfdt)
{
    const int n = f->n;
    const double *cf = f->coef;
    mreal c[4], dc[4];
    const int i = spline_coeffs(f, t, c, dc);
    mreal Mi = 0, Mi1 = 0;
#ifndef MBS_COMPLEX
    if (f->mom && f->xm && y == f->xm + f->x) {
        /* the model's own values: their moments are precomputed (mbs_forces_prepare) */
        Mi = f->mom[i];
        Mi1 = f->mom[i + 1];
    } else
#endif
    {
        /* any other values (tangent directions, complex copies): the sweep,
         * over the rows that can change the result. The values are zero
         * outside k0..k1 (unit directions: k0 = k1). Rows j < k0 - 1 have
         * r_j = 0, hence d'_j = 0: they only carry the products ci, ci1.
         * Rows j >= k1 + 2 have r_j = 0: d'_j = -a_j piv_j d'_{j-1}, and the
         * terms ci d'_j shrink by the factor c'_{j-1} a_j piv_j < 1/3 from
         * row to row (T diagonally dominant); from the first term that
         * changes neither Mi nor Mi1 (negligible()) on, none does. The result is the
         * full sweep's, bit for bit. */
        int k0 = 0, k1 = n - 1;
#ifndef MBS_COMPLEX
        /* directions are mostly zero here: eight values per test, on their
         * bits with the sign shifted out (+0 and -0 are zero) */
        for (; k0 + 8 <= n; k0 += 8) {
            uint64_t b[8], o = 0;
            memcpy(b, y + k0, sizeof b);
            for (int l = 0; l < 8; l++) o |= b[l] << 1;
            if (o) break;
        }
#endif
        while (k0 < n && y[k0] == 0) k0++;
        if (k0 == n) {
            /* all values zero (a tangent direction that leaves this function): zero */
            if (dfdt) *dfdt = 0;
            return 0;
        }
        while (k1 > k0 && y[k1] == 0) k1--;
        const int j0 = k0 < n ? (k0 > 0 ? k0 - 1 : 0) : n;
        double ci = 1, ci1 = 1;
        for (int l = i; l < j0; l++) {
            ci *= -cf[6 * l + 1];
            if (l > i) ci1 *= -cf[6 * l + 1];
        }
        mreal dprev = 0;
        for (int j = j0; j < n; j++) {
            const double *r = cf + 6 * j;
            mreal rj = r[4] * y[j];
            if (j > 0) rj += r[3] * y[j - 1];
            if (j < n - 1) rj += r[5] * y[j + 1];
            const mreal dj = (rj - r[0] * dprev) * r[2];
            if (j > k1 + 1 && j > i && negligible(ci * dj, Mi) && negligible(ci1 * dj, Mi1)) break;
            if (j >= i) { Mi += ci * dj; ci *= -r[1]; }
            if (j > i) { Mi1 += ci1 * dj; ci1 *= -r[1]; }
            dprev = dj;
            if (j > i && ci == 0 && ci1 == 0) break;  /* the products underflowed */
        }
    }
    if (dfdt) *dfdt = dc[0] * Mi + dc[1] * Mi1 + dc[2] * y[i] + dc[3] * y[i + 1];
    return c[0] * Mi + c[1] * Mi1 + c[2] * y[i] + c[3] * y[i + 1];
}

/* w <- R^T T^-T w in place (the transposed moment solve, O(n)) */
static void spline_solve_t(const mbs_func_info *f, mreal *w)
{
    const int n = f->n;
    const double *cf = f->coef;
    /* U^T v = g (forward), L^T z = v (backward), in place */
    for (int k = 1; k < n; k++) w[k] -= cf[6 * (k - 1) + 1] * w[k - 1];
    w[n - 1] *= cf[6 * (n - 1) + 2];
    for (int k = n - 2; k >= 0; k--) w[k] = (w[k] - cf[6 * (k + 1)] * w[k + 1]) * cf[6 * k + 2];
    /* R^T z in place: w_j = R+_{j-1} z_{j-1} + R0_j z_j + R-_{j+1} z_{j+1} */
    mreal zprev = 0;
    for (int j = 0; j < n; j++) {
        const mreal zj = w[j];
        mreal s = cf[6 * j + 4] * zj;
        if (j > 0) s += cf[6 * (j - 1) + 5] * zprev;
        if (j < n - 1) s += cf[6 * (j + 1) + 3] * w[j + 1];
        w[j] = s;
        zprev = zj;
    }
}

static void spline_weights(const mbs_func_info *f, mreal t, mreal *w)
{
    mreal c[4], dc[4];
    const int i = spline_coeffs(f, t, c, dc);
    for (int k = 0; k < f->n; k++) w[k] = 0;
    w[i] = c[0];
    w[i + 1] = c[1];
    spline_solve_t(f, w);
    w[i] += c[2];
    w[i + 1] += c[3];
}

/* Step shape p(xi) and dp/dxi. */
static mreal step_shape(int quintic, mreal xi, mreal *dp)
{
    if (quintic) {
        *dp = 30 * xi * xi * (1 - xi) * (1 - xi);
        return xi * xi * xi * (10 - 15 * xi + 6 * xi * xi);
    }
    *dp = 6 * xi * (1 - xi);
    return xi * xi * (3 - 2 * xi);
}

mreal MBS_K(mbs_func_eval)(const mbs_func_info *f, const mreal *x, mreal t, mreal *dfdt)
{
    const mreal *p = x + f->x;
    mreal d = 0, v = 0;
    switch (f->type) {
    case MBS_FUNC_CONSTANT:
        v = p[0];
        break;
    case MBS_FUNC_STEP: {
        const mreal t0 = p[0], v0 = p[1], t1 = p[2], v1 = p[3];
        if (MRE(t) <= MRE(t0)) v = v0;
        else if (MRE(t) >= MRE(t1)) v = v1;
        else {
            mreal dp, h = t1 - t0;
            mreal s = step_shape(f->variant, (t - t0) / h, &dp);
            v = v0 + (v1 - v0) * s;
            d = (v1 - v0) * dp / h;
        }
        break;
    }
    case MBS_FUNC_SINE: {
        const mreal w = TWO_PI * p[1], ph = w * t + p[2];
        v = p[3] + p[0] * MSIN(ph);
        d = p[0] * w * MCOS(ph);
        break;
    }
    case MBS_FUNC_SPLINE:
        v = spline_eval(f, p, t, &d);
        break;
    default:
        break;
    }
    if (dfdt) *dfdt = d;
    return v;
}

mreal MBS_K(mbs_func_eval_d)(const mbs_func_info *f, const mreal *x, const mreal *dx, mreal t)
{
    if (!dx) return 0;
    if (f->type == MBS_FUNC_SPLINE) return spline_eval(f, dx + f->x, t, 0);
    mreal g[4], s = 0;
    MBS_K(mbs_func_dx)(f, x, t, g);
    for (int j = 0; j < f->nx && j < 4; j++) s += g[j] * dx[f->x + j];
    return s;
}

void MBS_K(mbs_func_dx)(const mbs_func_info *f, const mreal *x, mreal t, mreal *dfdx)
{
    const mreal *p = x + f->x;
    switch (f->type) {
    case MBS_FUNC_CONSTANT:
        dfdx[0] = 1;
        break;
    case MBS_FUNC_STEP: {
        const mreal t0 = p[0], v0 = p[1], t1 = p[2], v1 = p[3];
        for (int k = 0; k < 4; k++) dfdx[k] = 0;
        if (MRE(t) <= MRE(t0)) dfdx[1] = 1;
        else if (MRE(t) >= MRE(t1)) dfdx[3] = 1;
        else {
            mreal dp, h = t1 - t0, xi = (t - t0) / h;
            mreal s = step_shape(f->variant, xi, &dp);
            dfdx[0] = (v1 - v0) * dp * (xi - 1) / h;
            dfdx[1] = 1 - s;
            dfdx[2] = -(v1 - v0) * dp * xi / h;
            dfdx[3] = s;
        }
        break;
    }
    case MBS_FUNC_SINE: {
        const mreal w = TWO_PI * p[1], ph = w * t + p[2], c = MCOS(ph);
        dfdx[0] = MSIN(ph);
        dfdx[1] = p[0] * c * TWO_PI * t;
        dfdx[2] = p[0] * c;
        dfdx[3] = 1;
        break;
    }
    case MBS_FUNC_SPLINE:
        spline_weights(f, t, dfdx);
        break;
    default:
        for (int k = 0; k < f->nx; k++) dfdx[k] = 0;
        break;
    }
}

#ifndef MBS_COMPLEX
/* ---- adjoints of splines (double only; functions.h) ---- */

/* Gauss-Legendre rules on [0, 1], G = 1..8 points: nodes, then weights */
static const double GL_U[8][8] = {
    { 0.5 },
    { 0.21132486540518711, 0.78867513459481287 },
    { 0.11270166537925831, 0.5, 0.8872983346207417 },
    { 0.069431844202973714, 0.33000947820757187, 0.66999052179242813, 0.93056815579702634 },
    { 0.046910077030668004, 0.23076534494715845, 0.5, 0.7692346550528415, 0.95308992296933204 },
    { 0.033765242898423989, 0.16939530676686773, 0.38069040695840156, 0.61930959304159849, 0.83060469323313224,
      0.96623475710157603 },
    { 0.025446043828620736, 0.12923440720030277, 0.29707742431130141, 0.5, 0.70292257568869854, 0.87076559279969723,
      0.9745539561713793 },
    { 0.019855071751231884, 0.10166676129318664, 0.2372337950418355, 0.40828267875217511, 0.59171732124782495,
      0.7627662049581645, 0.89833323870681336, 0.98014492824876809 },
};
static const double GL_W[8][8] = {
    { 1 },
    { 0.5, 0.5 },
    { 0.27777777777777779, 0.44444444444444442, 0.27777777777777779 },
    { 0.17392742256872692, 0.32607257743127305, 0.32607257743127305, 0.17392742256872692 },
    { 0.11846344252809454, 0.23931433524968324, 0.28444444444444444, 0.23931433524968324, 0.11846344252809454 },
    { 0.085662246189585178, 0.1803807865240693, 0.23395696728634552, 0.23395696728634552, 0.1803807865240693,
      0.085662246189585178 },
    { 0.064742483084434851, 0.13985269574463832, 0.19091502525255946, 0.2089795918367347, 0.19091502525255946,
      0.13985269574463832, 0.064742483084434851 },
    { 0.050614268145188129, 0.11119051722668724, 0.15685332293894363, 0.181341891689181, 0.181341891689181,
      0.15685332293894363, 0.11119051722668724, 0.050614268145188129 },
};

void mbs_gauss_legendre01(int G, const double **u, const double **w)
{
    if (G < 1) G = 1;
    if (G > 8) G = 8;
    *u = GL_U[G - 1];
    *w = GL_W[G - 1];
}

int mbs_spline_nearest_knot(const mbs_func_info *f, double t)
{
    const double *tk = f->t;
    int lo = 0, hi = f->n - 1;
    if (t <= tk[lo]) return lo;
    if (t >= tk[hi]) return hi;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (tk[mid] <= t) lo = mid;
        else hi = mid;
    }
    return t - tk[lo] <= tk[hi] - t ? lo : hi;
}

void mbs_spline_adj_add(const mbs_func_info *f, double t, double c, double *acc)
{
    double cf[4], dc[4];
    const int i = spline_coeffs(f, t, cf, dc);
    double *am = acc, *ay = acc + f->n;
    am[i] += c * cf[0];
    am[i + 1] += c * cf[1];
    ay[i] += c * cf[2];
    ay[i + 1] += c * cf[3];
}

/* the interpolating polynomial through (ts[k], s[k]), k < ns, at u (Lagrange) */
static double lagrange(int ns, const double *ts, const double *s, double u)
{
    double v = 0;
    for (int k = 0; k < ns; k++) {
        double l = 1;
        for (int j = 0; j < ns; j++)
            if (j != k) l *= (u - ts[j]) / (ts[k] - ts[j]);
        v += l * s[k];
    }
    return v;
}

void mbs_spline_adj_add_integral(const mbs_func_info *f, double ta, double tb, int ns, const double *ts,
                                 const double *s, double *acc)
{
    if (!(tb > ta) || ns < 1) return;
    /* the integrand s(t) c_k(t) has degree ns - 1 + 3 on each piece:
     * G points integrate it exactly when 2 G - 1 >= ns + 2 */
    int G = (ns + 4) / 2;
    if (G > 8) G = 8;
    const double *gu = GL_U[G - 1], *gw = GL_W[G - 1];
    const double *tk = f->t;
    const int n = f->n;
    double *am = acc, *ay = acc + n;
    /* pieces of [ta, tb] between consecutive knots (and beyond the ends) */
    int k = 0;                              /* first knot > ta */
    {
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (tk[mid] <= ta) lo = mid + 1;
            else hi = mid;
        }
        k = lo;
    }
    double u0 = ta;
    while (u0 < tb) {
        const double u1 = (k < n && tk[k] < tb) ? tk[k] : tb;
        const double h = u1 - u0;
        if (h > 0) {
            double cf[4], dc[4];
            int i = spline_coeffs(f, 0.5 * (u0 + u1), cf, dc);
            double sm[4] = { 0, 0, 0, 0 };
            for (int g = 0; g < G; g++) {
                const double u = u0 + gu[g] * h, wv = gw[g] * h * lagrange(ns, ts, s, u);
                spline_coeffs(f, u, cf, dc);
                for (int c = 0; c < 4; c++) sm[c] += wv * cf[c];
            }
            am[i] += sm[0];
            am[i + 1] += sm[1];
            ay[i] += sm[2];
            ay[i + 1] += sm[3];
        }
        u0 = u1;
        k++;
    }
}

void mbs_spline_adj_finish(const mbs_func_info *f, double *acc, double *dfdx)
{
    const int n = f->n;
    spline_solve_t(f, acc);
    for (int k = 0; k < n; k++) dfdx[k] = acc[k] + acc[n + k];
}
#endif
