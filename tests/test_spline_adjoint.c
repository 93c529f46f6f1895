/*
 * test_spline_adjoint.c - the adjoint accumulation of spline weights
 * (src/forces/functions.c, mbs_spline_adj_*), which the adjoint methods use
 * for knot parameters (src/sensitivity/param_products.c):
 *   - sum_n c_n W(t_n) accumulated in O(1) per term and mapped once to the
 *     knots = the same sum of the weight vectors of mbs_func_dx, at times
 *     before, between, at and after the knots;
 *   - int_ta^tb s(t) W(t) dt for polynomials s of degree 0..7 given by their
 *     values at nodes inside [ta, tb] = a composite Gauss-Legendre rule on
 *     the pieces between knots, evaluated directly with mbs_func_dx weights
 *     (exact for these degrees), for intervals inside a knot interval,
 *     across many knots and beyond the ends;
 *   - the nearest knot;
 * natural and clamped ends, uneven knot spacing, n = 2 .. 60 knots.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "model/model_impl.h"
#include "kernels/functions.h"

static mbs_model *spline_model(int n, int clamped)
{
    char *s = malloc(4096 + 64 * (size_t)n), *p = s;
    p += sprintf(p, "{ \"name\": \"spl\", \"bodies\": [ { \"name\": \"b\", \"mass\": 1, \"inertia\": [1, 1, 1, 0, 0, 0] } ],"
                    " \"joints\": [ { \"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"b\","
                    " \"axis\": [0, 0, 1] } ],"
                    " \"functions\": [ { \"name\": \"u\", \"type\": \"spline\", \"ends\": \"%s\", \"times\": [",
                 clamped ? "clamped" : "natural");
    double t = 0.1;
    for (int k = 0; k < n; k++) {
        p += sprintf(p, "%s%.17g", k ? ", " : "", t);
        t += 0.02 + 0.03 * (double)((k * 7) % 5) / 4;    /* uneven spacing */
    }
    p += sprintf(p, "], \"values\": [");
    for (int k = 0; k < n; k++) p += sprintf(p, "%s%.17g", k ? ", " : "", sin(0.7 * k) + 0.1 * k);
    p += sprintf(p, "] } ] }");
    mbs_error err;
    mbs_model *m = mbs_model_load_string(s, "spl", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    free(s);
    return m;
}

/* a test polynomial of degree deg */
static double poly(int deg, double t)
{
    double v = 0, tk = 1;
    for (int k = 0; k <= deg; k++) {
        v += (1.0 + 0.3 * k) * (k % 2 ? -1 : 1) * tk;
        tk *= 3 * t - 0.4;
    }
    return v;
}

static double relmax(const double *a, const double *b, int n)
{
    double s = 0, e = 0;
    for (int k = 0; k < n; k++) s = fmax(s, fabs(b[k]));
    for (int k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k]));
    return e / fmax(s, 1e-300);
}

static void check_model(const mbs_model *m, double *worst)
{
    const mbs_func_info *f = &m->func[0];
    const int n = f->n;
    const double t0 = f->t[0], t1 = f->t[n - 1];
    double *acc = calloc(2 * (size_t)n, sizeof(double)), *ref = calloc((size_t)n, sizeof(double));
    double *w = calloc((size_t)n, sizeof(double)), *out = calloc((size_t)n, sizeof(double));
    /* sums of point weights */
    for (int k = -5; k <= 45; k++) {
        const double t = t0 + (t1 - t0) * k / 39.0, c = 1 + 0.1 * k;
        mbs_spline_adj_add(f, t, c, acc);
        mbs_func_dx(f, m->x, t, w);
        for (int j = 0; j < n; j++) ref[j] += c * w[j];
    }
    for (int k = 0; k < n; k++) {
        mbs_spline_adj_add(f, f->t[k], -0.5, acc);
        mbs_func_dx(f, m->x, f->t[k], w);
        for (int j = 0; j < n; j++) ref[j] += -0.5 * w[j];
    }
    mbs_spline_adj_finish(f, acc, out);
    double e = relmax(out, ref, n);
    if (e > worst[0]) worst[0] = e;
    /* round-off: the same sums two ways; each weight vector solves the spline's diagonally dominant
     * tridiagonal system (condition at most 3 h_max / h_min = 3 x 0.05 / 0.02 = 7.5), the sums add
     * n + 51 of them with factors up to 5.5 in size: (n + 51) 5.5 x 7.5 eps */
    const double ro = (n + 51) * 5.5 * 7.5 * MBS_EPS;
    CHECK(e < ro, "n = %d, ends %d: point sums %g", n, f->variant, e);
    /* integrals */
    const double iv[][2] = { { t0 - 0.05, t0 - 0.01 }, { t0 - 0.03, t1 + 0.04 }, { 0.5 * (t0 + t1), 0.5 * (t0 + t1) + 1e-3 },
                             { f->t[n / 2], f->t[n - 1] }, { t1 - 0.001, t1 + 0.2 }, { t0 + 0.3 * (t1 - t0), t0 + 0.7 * (t1 - t0) } };
    const double *gu, *gw;
    mbs_gauss_legendre01(8, &gu, &gw);
    for (size_t q = 0; q < sizeof iv / sizeof iv[0]; q++)
        for (int ns = 1; ns <= 8; ns++) {
            const double ta = iv[q][0], tb = iv[q][1];
            double ts[8], sv[8];
            const double *nu, *nw;
            mbs_gauss_legendre01(ns, &nu, &nw);
            for (int g = 0; g < ns; g++) {
                ts[g] = ta + nu[g] * (tb - ta);
                sv[g] = poly(ns - 1, ts[g]);
            }
            memset(acc, 0, sizeof(double) * 2 * (size_t)n);
            memset(ref, 0, sizeof(double) * (size_t)n);
            mbs_spline_adj_add_integral(f, ta, tb, ns, ts, sv, acc);
            mbs_spline_adj_finish(f, acc, out);
            /* reference: pieces between the knots (and beyond the ends), 8-point Gauss on each */
            double cuts[128];
            int nc = 0;
            cuts[nc++] = ta;
            for (int k = 0; k < n; k++)
                if (f->t[k] > ta && f->t[k] < tb) cuts[nc++] = f->t[k];
            cuts[nc++] = tb;
            for (int c = 0; c + 1 < nc; c++) {
                const double h = cuts[c + 1] - cuts[c];
                for (int g = 0; g < 8; g++) {
                    const double t = cuts[c] + gu[g] * h;
                    mbs_func_dx(f, m->x, t, w);
                    for (int j = 0; j < n; j++) ref[j] += gw[g] * h * poly(ns - 1, t) * w[j];
                }
            }
            e = relmax(out, ref, n);
            if (e > worst[1]) worst[1] = e;
            /* round-off as above, over the (n + 1) x 8 Gauss points of the reference, each term rounded
             * a few tens of times (64) */
            CHECK(e < (n + 1) * 8 * 7.5 * 64 * MBS_EPS, "n = %d, ends %d, [%g, %g], %d nodes: integral %g", n,
                  f->variant, ta, tb, ns, e);
        }
    /* nearest knot */
    for (int k = 0; k < n; k++) {
        CHECK(mbs_spline_nearest_knot(f, f->t[k]) == k, "nearest knot at t_%d", k);
        if (k + 1 < n) {
            const double h = f->t[k + 1] - f->t[k];
            CHECK(mbs_spline_nearest_knot(f, f->t[k] + 0.4 * h) == k, "nearest knot left of the middle");
            CHECK(mbs_spline_nearest_knot(f, f->t[k] + 0.6 * h) == k + 1, "nearest knot right of the middle");
        }
    }
    CHECK(mbs_spline_nearest_knot(f, t0 - 1) == 0 && mbs_spline_nearest_knot(f, t1 + 1) == n - 1, "nearest knot outside");
    free(acc); free(ref); free(w); free(out);
}

int main(void)
{
    static const int N[] = { 2, 3, 4, 9, 25, 60 };
    double worst[2] = { 0, 0 };
    for (size_t i = 0; i < sizeof N / sizeof N[0]; i++)
        for (int clamped = 0; clamped < 2; clamped++) {
            mbs_model *m = spline_model(N[i], clamped);
            if (!m) continue;
            check_model(m, worst);
            mbs_model_free(m);
        }
    printf("spline adjoint accumulation: point sums %.2e, integrals %.2e (largest relative differences)\n", worst[0], worst[1]);
    return mbs_test_summary("spline_adjoint");
}
