/*
 * driver_spline.c - the second time derivative of a cubic spline, which a
 * driving constraint needs for its acceleration right-hand side
 * (src/kernels/functions.c evaluates f and f').
 *
 * On [t_i, t_{i+1}] the spline is cubic with f'' linear between the knot
 * moments, f'' = A M_i + B M_{i+1}, A = (t_{i+1} - t)/h, B = 1 - A; outside
 * the knots it continues along a straight line, f'' = 0. The moments solve
 * T M = R y with the factors stored per knot in f->coef (a_k, c'_k, piv_k,
 * R-_k, R0_k, R+_k; functions.c): forward d'_j = (r_j - a_j d'_{j-1}) piv_j,
 * back M_k = d'_k - c'_k M_{k+1}, unrolled as
 *     M_k = sum_{j >= k} d'_j prod_{l=k}^{j-1} (-c'_l),
 * so M_i and M_{i+1} come from one sweep without storage (O(n)). The result
 * is linear in the values y, which makes its tangent along a direction of
 * the knot values the same function of that direction.
 */
#include "constraint.h"

mreal MBS_K(mbs_spline_dd)(const mbs_func_info *f, const mreal *y, mreal t)
{
    const int n = f->n;
    const double *tk = f->t, *cf = f->coef;
    const double tr = MRE(t);
    if (tr < tk[0] || tr > tk[n - 1]) return 0;
    int lo = 0, hi = n - 1;   /* tk[lo] <= tr <= tk[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (tk[mid] <= tr) lo = mid;
        else hi = mid;
    }
    const int i = lo;
    mreal Mi = 0, Mi1 = 0, dprev = 0;
    double ci = 1, ci1 = 1;   /* prod (-c'_l) from l = i (resp. i + 1) up to j - 1 */
    for (int j = 0; j < n; j++) {
        const double *r = cf + 6 * j;
        mreal rj = r[4] * y[j];
        if (j > 0) rj += r[3] * y[j - 1];
        if (j < n - 1) rj += r[5] * y[j + 1];
        const mreal dj = (rj - r[0] * dprev) * r[2];
        if (j >= i) {
            Mi += ci * dj;
            ci *= -r[1];
        }
        if (j > i) {
            Mi1 += ci1 * dj;
            ci1 *= -r[1];
        }
        dprev = dj;
    }
    const double h = tk[i + 1] - tk[i];
    const mreal A = (tk[i + 1] - t) / h;
    return A * Mi + (1 - A) * Mi1;
}
