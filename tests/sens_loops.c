/*
 * sens_loops.c - shared pieces of the closed-loop sensitivity tests (see
 * sens_loops.h).
 */
#include "sens_loops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

const double MBS_FIVEBAR_THESIS[3][5] = {
    { -4.228, 3.212, 0.3186, 0.4423, 3.360 },
    { -15.45, 50.32, 0.9700, 0.7454, -27.37 },
    { 221.8, 2437, -32.51, -85.70, -2547 },
};
const double MBS_FIVEBAR_PSI[3] = { 0.726877, 7.342288, 304.9207 };
/* half a unit of their last digits */
static const double FIVEBAR_PSI_DIGIT[3] = { 5e-7, 5e-7, 5e-5 };

static int last_psi(void *user, double t, double g, double psi)
{
    (void)t; (void)g;
    *(double *)user = psi;
    return 0;
}

void mbs_test_check_fivebar_psi(const mbs_model *m, mbs_loop_formulation f, mbs_ref_point ref, double tf, double dt,
                                const double *psi, const char *title)
{
    double p[2][3];
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++)
        for (int i = 0; i < 3 && !rc; i++) {
            mbs_sens_options o = mbs_sens_options_default(m);
            o.sim.loop = f;
            o.sim.ref = ref;
            o.sim.tf = tf;
            o.sim.dt = dt / (2 << k);
            mbs_error err;
            memset(&err, 0, sizeof err);
            rc = mbs_objective_trace(m, &o, i, NULL, last_psi, &p[k][i], &err);
            CHECK(rc == MBS_OK, "%s: psi at %g s: %s", title, o.sim.dt, err.msg);
        }
    if (rc) return;
    double c0 = 0, c1 = 0;
    for (int i = 0; i < 3; i++) {
        c0 = fmax(c0, fabs(psi[i] - p[0][i]) / fabs(psi[i]));
        c1 = fmax(c1, fabs(p[0][i] - p[1][i]) / fabs(psi[i]));
    }
    const double r = c1 > 0 ? c0 / c1 : INFINITY, rr = fmin(r, 4), fct = 1.25 * (r > 2 ? rr / (rr - 1) : 2);
    CHECK(r > 2, "%s: psi changes %g, %g (relative) from h to h/2 to h/4: not second order", title, c0, c1);
    for (int i = 0; i < 3; i++) {
        const double b = fct * fabs(psi[i] - p[0][i]) + FIVEBAR_PSI_DIGIT[i];
        CHECK(fabs(psi[i] - MBS_FIVEBAR_PSI[i]) <= b, "%s: psi%d = %.9g, expected %.9g (bound %.2e)", title, i + 1,
              psi[i], MBS_FIVEBAR_PSI[i], b);
    }
}

/* remove the "objectives" member of the JSON text s (in place) */
static void drop_objectives(char *s)
{
    char *k = strstr(s, "\"objectives\"");
    char *b = k ? strchr(k, '[') : NULL;
    if (!b) return;
    int depth = 0;
    char *e = b;
    for (; *e; e++) {
        if (*e == '[') depth++;
        if (*e == ']' && --depth == 0) break;
    }
    char *from = k, *to = *e ? e + 1 : e;
    while (*to == ' ' || *to == '\n' || *to == '\r' || *to == '\t') to++;
    if (*to == ',') {
        to++;
    } else {   /* the last member: drop the comma before it */
        while (from > s && from[-1] != ',') from--;
        if (from > s) from--;
    }
    memmove(from, to, strlen(to) + 1);
}

mbs_model *mbs_test_load_edited(const char *name, const char *extra, const char *params)
{
    char rel[256];
    snprintf(rel, sizeof rel, strchr(name, '/') ? "%s.json" : "models/%s.json", name);
    FILE *fp = fopen(mbs_test_path(rel), "rb");
    CHECK(fp != NULL, "open %s", rel);
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    const size_t plen = params ? strlen(params) + 1 : 0;
    char *s = calloc((size_t)len + strlen(extra ? extra : "") + plen + 8, 1);
    size_t got = s ? fread(s, 1, (size_t)len, fp) : 0;
    fclose(fp);
    CHECK(s != NULL, "out of memory");
    if (!s) return NULL;
    s[got] = 0;
    if (extra && strstr(extra, "\"objectives\"")) drop_objectives(s);
    if (extra) {   /* insert ",extra" before the final brace */
        char *e = strrchr(s, '}');
        sprintf(e, ",%s}", extra);
    }
    if (params) {
        char *b = strstr(s, "\"parameters\"");
        b = b ? strchr(b, '[') : NULL;
        CHECK(b != NULL, "%s has no parameters", name);
        if (b) {
            b++;
            memmove(b + plen, b, strlen(b) + 1);
            memcpy(b, params, plen - 1);
            b[plen - 1] = ',';
        }
    }
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *m = mbs_model_load_string(s, name, &err);
    CHECK(m != NULL, "%s: %s", name, err.msg);
    free(s);
    return m;
}

/* The closed-loop models of the sensitivity tests with their objectives
 * (thesis §7.2 for the slider-crank) and parameters. */
static const struct { const char *name, *extra; } SENS_CASES[] = {
    { "slider_crank",
      "\"objectives\": ["
      "{\"name\": \"psi1\", \"integral\": [{\"point\": \"slider.D\", \"quantity\": \"position\","
      " \"reference\": [0.25, 0, 0]}]},"
      "{\"name\": \"psi2\", \"integral\": [{\"point\": \"slider.D\", \"quantity\": \"velocity\"}]},"
      "{\"name\": \"psi3\", \"integral\": [{\"point\": \"slider.D\", \"quantity\": \"acceleration\"}]}]" },
    { "fourbar_redundant",
      "\"parameters\": ["
      "{\"name\": \"L_crank\", \"value\": 0.1, \"sets\": [\"crank.B[0]\"]},"
      "{\"name\": \"m_coupler\", \"value\": 1.0, \"sets\": [\"coupler.mass\"]},"
      "{\"name\": \"g\", \"value\": -9.81, \"sets\": [\"gravity[1]\"]}],"
      "\"objectives\": ["
      "{\"name\": \"rocker\", \"integral\": [{\"coordinate\": \"jC\", \"quantity\": \"velocity\"}]},"
      "{\"name\": \"C\", \"integral\": [{\"point\": \"coupler.C\", \"quantity\": \"acceleration\"}]}]" },
    { "quarter_car",
      "\"parameters\": ["
      "{\"name\": \"k\", \"value\": 40000, \"sets\": [\"coilover.stiffness\"]},"
      "{\"name\": \"m_knuckle\", \"value\": 5.0, \"sets\": [\"knuckle.mass\"]},"
      "{\"name\": \"L_uca\", \"value\": 0.27, \"sets\": [\"uca.ubj[1]\"]}],"
      "\"objectives\": ["
      "{\"name\": \"travel\", \"integral\": [{\"point\": \"wheel.centre\", \"quantity\": \"position\","
      " \"reference\": [0, 0.75, 0.30]}]},"
      "{\"name\": \"acc\", \"integral\": [{\"point\": \"knuckle.spindle\", \"quantity\": \"acceleration\"}]}]" },
};

mbs_model *mbs_test_load_sens_case(const char *name)
{
    for (size_t k = 0; k < sizeof SENS_CASES / sizeof SENS_CASES[0]; k++)
        if (strcmp(SENS_CASES[k].name, name) == 0) return mbs_test_load_edited(name, SENS_CASES[k].extra, NULL);
    CHECK(0, "no sensitivity case %s", name);
    return NULL;
}

mbs_sens_options mbs_test_sens_options(const mbs_model *m, mbs_loop_formulation f, mbs_sens_method meth,
                                       mbs_ref_point ref, double tf, double dt, double tol, double fd_step,
                                       const mbs_sim_options *base)
{
    mbs_sens_options o = mbs_sens_options_default(m);
    if (base) o.sim = *base;
    o.sim.loop = f;
    o.sim.ref = ref;
    o.sim.tf = tf;
    o.sim.dt = dt;
    o.sim.tolerance = tol;
    o.method = meth;
    o.fd_step = fd_step;
    return o;
}

int mbs_test_sens(const mbs_model *m, mbs_loop_formulation f, mbs_sens_method meth, mbs_ref_point ref, double tf,
                  double dt, double tol, double fd_step, const mbs_sim_options *base, mbs_sens_result *res)
{
    mbs_sens_options o = mbs_test_sens_options(m, f, meth, ref, tf, dt, tol, fd_step, base);
    mbs_error err;
    memset(&err, 0, sizeof err);
    memset(res, 0, sizeof *res);
    int rc = mbs_sensitivity(m, &o, res, &err);
    CHECK(rc == MBS_OK, "%s %s: %s", mbs_loop_formulation_name(f), mbs_sens_method_name(meth), err.msg);
    return rc;
}

double mbs_test_grad_err(const mbs_sens_result *a, const double *b)
{
    double worst = 0;
    for (int i = 0; i < a->nobj; i++) {
        double e = 0, s = 0;
        for (int j = 0; j < a->nparam; j++) {
            const double x = a->grad[i * a->nparam + j], y = b[i * a->nparam + j];
            if (isnan(x - y)) return INFINITY;
            if (fabs(x - y) > e) e = fabs(x - y);
            if (fabs(y) > s) s = fabs(y);
        }
        const double r = e / (s > 0 ? s : 1);
        if (r > worst) worst = r;
    }
    return worst;
}

void mbs_test_print_grad(const char *title, const mbs_sens_result *r, int digits)
{
    printf("  %s (%.3f s)\n", title, r->wall_seconds);
    for (int i = 0; i < r->nobj; i++) {
        printf("    psi%d %.9g |", i + 1, r->psi[i]);
        for (int j = 0; j < r->nparam; j++) printf(" %*.*g", digits + 5, digits, r->grad[i * r->nparam + j]);
        printf("\n");
    }
}

int mbs_test_zero_objective(void *user, double t, int nq, const double *q, const double *qd, const double *qdd,
                            int nparam, const double *rho, double *g, double *g_q, double *g_qd, double *g_qdd,
                            double *g_rho)
{
    (void)user; (void)t; (void)q; (void)qd; (void)qdd; (void)rho;
    *g = 0;
    if (g_q) {
        for (int i = 0; i < nq; i++) g_q[i] = g_qd[i] = g_qdd[i] = 0;
        for (int j = 0; j < nparam; j++) g_rho[j] = 0;
    }
    return 0;
}
