/*
 * test_spline_cache.c - a spline of the model's own values is evaluated
 * from its precomputed second derivatives (src/force_model.c,
 * mbs_forces_prepare; src/forces/functions.c), any other values by the
 * sweep. Both must give the same function.
 *
 * On the sweep model (mbs_generate_spline_body_json: a spline whose knot
 * values are the parameters) with p = 2 .. 700 knots, natural and clamped
 * ends, at times before, inside and after the knots:
 *   - f(t) of the model (cached) = f(t) of a copy of its values (sweep),
 *     and the same for df/dt, to round-off of the values' scale;
 *   - after mbs_model_with_params (new knot values) the copy's cache is its
 *     own: it follows the new values, and the original model keeps its own;
 *   - a copy (mbs_model_copy) has its own cache, valid after the original
 *     is freed;
 *   - the spline is linear in its values: f(model) = sum_k W_k(t) y_k with
 *     the weights of mbs_func_dx.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "model/model_impl.h"
#include "model/model_util.h"
#include "kernels/functions.h"

static double worst;

/* the model's function 0 at t, cached, against the sweep on a copy of the values */
static void compare(const mbs_model *m, double t, const char *what)
{
    const mbs_func_info *f = &m->func[0];
    double *x = malloc(sizeof(double) * (size_t)m->nx);
    memcpy(x, m->x, sizeof(double) * (size_t)m->nx);
    double scale = 0;
    for (int k = 0; k < f->n; k++) scale = fmax(scale, fabs(m->x[f->x + k]));
    double d1 = 0, d2 = 0;
    const double v1 = mbs_func_eval(f, m->x, t, &d1), v2 = mbs_func_eval(f, x, t, &d2);
    /* df/dt compared times the knot spacing (0.5 s / p, at least 7e-4 s; 1e-3) */
    const double e = fmax(fabs(v1 - v2), fabs(d1 - d2) * 1e-3) / fmax(scale, 1e-300);
    if (e > worst) worst = e;
    /* round-off: the same spline two ways (the moments once, or the sweep), each from the
     * tridiagonal system of even spacing (diagonally dominant, condition at most 3) in a few tens
     * of roundings: 64 x 3 eps of the values' scale, twice */
    CHECK(e <= 2 * 64 * 3 * MBS_EPS, "%s: t = %g: cached %.17g (%.17g), sweep %.17g (%.17g)", what, t, v1, d1, v2,
          d2);
    /* linear in the values: the weights */
    double *w = malloc(sizeof(double) * (size_t)f->n);
    mbs_func_dx(f, m->x, t, w);
    double s = 0;
    for (int k = 0; k < f->n; k++) s += w[k] * m->x[f->x + k];
    /* a sum of n products (the weights sum in magnitude to at most 2: a cubic spline's Lebesgue
     * constant is below that) */
    CHECK(fabs(s - v1) <= (f->n * 2 + 2 * 64 * 3) * MBS_EPS * fmax(scale, 1e-300), "%s: t = %g: weights %.17g, "
          "value %.17g", what, t, s, v1);
    free(w);
    free(x);
}

static void times(const mbs_model *m, const char *what)
{
    const mbs_func_info *f = &m->func[0];
    const double t0 = f->t[0], t1 = f->t[f->n - 1];
    for (int k = -3; k <= 40; k++) compare(m, t0 + (t1 - t0) * k / 37.0, what);
    for (int k = 0; k < f->n; k++) compare(m, f->t[k], what);   /* at the knots */
}

static mbs_model *sweep_model(int p, int clamped)
{
    mbs_error err = { 0, "" };
    char *js = mbs_generate_spline_body_json(p, 0.5, &err);
    CHECK(js != NULL, "%s", err.msg);
    if (!js) return NULL;
    if (clamped) {   /* "type": "spline" -> "type": "spline", "ends": "clamped" */
        const char *key = "\"type\": \"spline\"", *ins = ", \"ends\": \"clamped\"";
        char *q = strstr(js, key);
        CHECK(q != NULL, "spline in the generated model");
        if (!q) {
            free(js);
            return NULL;
        }
        size_t off = (size_t)(q - js) + strlen(key), L = strlen(ins);
        char *nj = malloc(strlen(js) + L + 1);
        memcpy(nj, js, off);
        memcpy(nj + off, ins, L);
        strcpy(nj + off + L, js + off);
        free(js);
        js = nj;
    }
    mbs_model *m = mbs_model_load_string(js, "spline_body", &err);
    free(js);
    CHECK(m != NULL && m->nfunc == 1 && m->func[0].type == MBS_FUNC_SPLINE, "%s", err.msg);
    return m;
}

int main(void)
{
    static const int P[] = { 2, 3, 4, 7, 32, 101, 700 };
    for (int c = 0; c < 2; c++)
        for (size_t a = 0; a < sizeof P / sizeof P[0]; a++) {
            mbs_model *m = sweep_model(P[a], c);
            if (!m) continue;
            const mbs_func_info *f = &m->func[0];
            CHECK(f->mom != NULL && f->xm == m->x, "p = %d: moments prepared for the model's own values", P[a]);
            times(m, "loaded");
            /* new values through the parameters: the copy's moments follow them */
            const int np = mbs_model_nparams(m);
            CHECK(np == P[a], "p = %d: %d parameters", P[a], np);
            double *v = malloc(sizeof(double) * (size_t)np);
            for (int k = 0; k < np; k++) v[k] = cos(1.7 * k) + 0.25 * k / np;
            mbs_error err = { 0, "" };
            mbs_model *m2 = mbs_model_with_params(m, v, &err);
            CHECK(m2 != NULL, "with_params: %s", err.msg);
            if (m2) {
                CHECK(m2->func[0].xm == m2->x && m2->func[0].mom != m->func[0].mom, "p = %d: own cache", P[a]);
                times(m2, "with_params");
                times(m, "original after with_params");
                mbs_model *m3 = mbs_model_copy(m2);
                CHECK(m3 != NULL && m3->func[0].xm == m3->x, "copy: own cache");
                mbs_model_free(m2);
                if (m3) times(m3, "copy after the original is freed");
                mbs_model_free(m3);
            }
            free(v);
            mbs_model_free(m);
        }
    printf("cached spline = sweep to %.2e of the values' scale\n", worst);
    return mbs_test_summary("spline_cache");
}
