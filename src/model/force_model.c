/*
 * force_model.c - force elements and time functions on the model side:
 * names, the spline set-up, checks, spline moments, copy and release, and
 * the public accessors of mbsens/forces.h that read the model alone. The
 * kernels are in src/forces/ (compiled for double and complex like every
 * kernel); the evaluations at a state in src/dynamics/forces.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/forces.h"
#include "model/force_model.h"
#include "model/model_util.h"
#include "base/error.h"
#include "model/force_contact_layout.h"

static const char *const force_type_names[MBS_FORCE_TYPE_COUNT] = {
    [MBS_FORCE_SPRING_DAMPER] = "spring_damper",
    [MBS_FORCE_JOINT_SPRING] = "joint_spring",
    [MBS_FORCE_JOINT_FORCE] = "joint_force",
    [MBS_FORCE_BODY_LOAD] = "body_load",
    [MBS_FORCE_CONTACT_PLANE] = "contact_plane",
    [MBS_FORCE_TIRE] = "tire",
};

static const char *const func_type_names[MBS_FUNC_TYPE_COUNT] = {
    [MBS_FUNC_CONSTANT] = "constant",
    [MBS_FUNC_STEP] = "step",
    [MBS_FUNC_SINE] = "sine",
    [MBS_FUNC_SPLINE] = "spline",
};

const char *mbs_force_type_name(mbs_force_type t)
{
    return (int)t >= 0 && t < MBS_FORCE_TYPE_COUNT ? force_type_names[t] : "unknown";
}

int mbs_force_type_from_name(const char *name)
{
    if (!name) return -1;
    for (int t = 0; t < MBS_FORCE_TYPE_COUNT; t++)
        if (strcmp(name, force_type_names[t]) == 0) return t;
    return -1;
}

const char *mbs_function_type_name(mbs_func_type t)
{
    return (int)t >= 0 && t < MBS_FUNC_TYPE_COUNT ? func_type_names[t] : "unknown";
}

int mbs_function_type_from_name(const char *name)
{
    if (!name) return -1;
    for (int t = 0; t < MBS_FUNC_TYPE_COUNT; t++)
        if (strcmp(name, func_type_names[t]) == 0) return t;
    return -1;
}

int mbs_func_type_nx(mbs_func_type t, int n)
{
    switch (t) {
    case MBS_FUNC_CONSTANT: return 1;
    case MBS_FUNC_STEP: return 4;
    case MBS_FUNC_SINE: return 4;
    case MBS_FUNC_SPLINE: return n;
    default: return -1;
    }
}

/* ---------------------------------------------------------------- spline */

int mbs_spline_setup(int n, const double *t, int clamped, double *coef)
{
    if (n < 2 || !t || !coef) return -1;
    for (int k = 0; k < n; k++)
        if (!isfinite(t[k]) || (k > 0 && !(t[k] > t[k - 1]))) return -1;
    double cprev = 0;
    for (int k = 0; k < n; k++) {
        double a = 0, b = 1, c = 0, rm = 0, r0 = 0, rp = 0;
        if (k > 0 && k < n - 1) {
            const double h0 = t[k] - t[k - 1], h1 = t[k + 1] - t[k];
            a = h0; b = 2 * (h0 + h1); c = h1;
            rm = 6 / h0; r0 = -6 / h0 - 6 / h1; rp = 6 / h1;
        } else if (clamped && k == 0) {
            const double h = t[1] - t[0];          /* f'(t_0) = 0 */
            b = 2 * h; c = h;
            r0 = -6 / h; rp = 6 / h;
        } else if (clamped) {
            const double h = t[n - 1] - t[n - 2];  /* f'(t_{n-1}) = 0 */
            a = h; b = 2 * h;
            rm = 6 / h; r0 = -6 / h;
        }
        const double den = b - a * cprev;
        if (!(fabs(den) > 0) || !isfinite(den)) return -1;
        double *r = coef + 6 * k;
        r[0] = a;
        r[1] = c / den;
        r[2] = 1 / den;
        r[3] = rm;
        r[4] = r0;
        r[5] = rp;
        cprev = r[1];
    }
    return 0;
}

/* ---------------------------------------------------------------- checks */

static const char *W(const mbs_model *m, const char *where)
{
    return where ? where : (m->source ? m->source : (m->name ? m->name : "model"));
}

static int all_finite(const double *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k])) return 0;
    return 1;
}

int mbs_forces_check(const mbs_model *m, mbs_error *err)
{
    const double *x = m->x;
    for (int k = 0; k < m->nfunc; k++) {
        const mbs_func_info *f = &m->func[k];
        const char *tn = mbs_function_type_name(f->type);
        if (!all_finite(x + f->x, f->nx))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s function %s: a value is not finite",
                                 W(m, f->where), tn, f->name);
        if (f->type == MBS_FUNC_STEP && !(x[f->x + 2] > x[f->x]))
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: step function %s: t1 (%g) must be greater than t0 (%g)",
                                 W(m, f->where), f->name, x[f->x + 2], x[f->x]);
    }
    for (int k = 0; k < m->nforce; k++) {
        const mbs_force_info *fe = &m->force[k];
        const char *tn = mbs_force_type_name(fe->type);
        if (!all_finite(x + fe->x, fe->nx))
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: a value is not finite",
                                 W(m, fe->where), tn, fe->name);
        for (int s = 0; s < 2; s++)
            if (fe->x_point[s] >= 0 && !all_finite(x + fe->x_point[s], 3))
                return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: point %d is not finite",
                                     W(m, fe->where), tn, fe->name, s + 1);
        if (fe->x_damping >= 0 && x[fe->x_damping] < 0)
            return mbs_error_set(err, MBS_ERR_MODEL,
                                 "%s: %s %s: damping must be >= 0 (a negative damping feeds energy in), got %g",
                                 W(m, fe->where), tn, fe->name, x[fe->x_damping]);
        if (fe->type == MBS_FORCE_SPRING_DAMPER && x[fe->x_free] < 0)
            return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: free length must be >= 0, got %g",
                                 W(m, fe->where), tn, fe->name, x[fe->x_free]);
        if (fe->type == MBS_FORCE_CONTACT_PLANE || fe->type == MBS_FORCE_TIRE) {
            /* numbers as in src/forces/force_contact_common.h */
            const double *e = x + fe->x;
            const char *bad = e[0] < 0 ? "stiffness must be >= 0"
                              : !(e[1] >= 1) ? "exponent must be >= 1"
                              : !(e[3] > 0) ? "radius must be > 0"
                              : !(e[4] > 0) ? "smoothing must be > 0"
                              : fe->type == MBS_FORCE_CONTACT_PLANE && !(e[14] >= 0) ? "friction must be >= 0"
                              : fe->type == MBS_FORCE_CONTACT_PLANE && !(e[15] > 0) ? "slip_speed must be > 0"
                              : fe->type == MBS_FORCE_TIRE && !(e[14] > 0) ? "kappa_c must be > 0"
                              : fe->type == MBS_FORCE_TIRE && !(e[15] > 0) ? "alpha_c must be > 0"
                              : fe->type == MBS_FORCE_TIRE && !(e[16] >= 0 && e[17] >= 0) ? "mu_x and mu_y must be >= 0"
                              : fe->type == MBS_FORCE_TIRE && !(e[18] > 0) ? "speed_regularization must be > 0"
                                                                           : NULL;
            if (bad) return mbs_error_set(err, MBS_ERR_MODEL, "%s: %s %s: %s", W(m, fe->where), tn, fe->name, bad);
        }
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- spline moments */

int mbs_forces_prepare(mbs_model *m, mbs_error *err)
{
    for (int k = 0; k < m->nfunc; k++) {
        mbs_func_info *f = &m->func[k];
        if (f->type != MBS_FUNC_SPLINE) continue;
        const int n = f->n;
        if (!f->mom && !(f->mom = malloc((size_t)n * sizeof *f->mom)))
            return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        /* T M = R y with T = L U (functions.c): L d' = R y forward, U M = d' backward */
        const double *y = m->x + f->x, *cf = f->coef;
        double *M = f->mom, dprev = 0;
        for (int j = 0; j < n; j++) {
            const double *r = cf + 6 * j;
            double rj = r[4] * y[j];
            if (j > 0) rj += r[3] * y[j - 1];
            if (j < n - 1) rj += r[5] * y[j + 1];
            M[j] = dprev = (rj - r[0] * dprev) * r[2];
        }
        for (int j = n - 2; j >= 0; j--) M[j] -= cf[6 * j + 1] * M[j + 1];
        f->xm = m->x;
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- copy, free */

void mbs_forces_free(mbs_model *m)
{
    if (!m) return;
    if (m->force)
        for (int k = 0; k < m->nforce; k++) { free(m->force[k].name); free(m->force[k].where); }
    if (m->func)
        for (int k = 0; k < m->nfunc; k++) {
            free(m->func[k].name);
            free(m->func[k].where);
            free(m->func[k].t);
            free(m->func[k].coef);
            free(m->func[k].mom);
        }
    free(m->force);
    free(m->func);
    m->force = NULL;
    m->func = NULL;
    m->nforce = m->nfunc = 0;
}

static char *dup(const char *s, int *fail)
{
    if (!s) return NULL;
    char *r = mbs_strdup(s);
    if (!r) *fail = 1;
    return r;
}

static double *dupd(const double *s, size_t n, int *fail)
{
    if (!s || n == 0) return NULL;
    double *r = malloc(n * sizeof *r);
    if (!r) { *fail = 1; return NULL; }
    memcpy(r, s, n * sizeof *r);
    return r;
}

int mbs_forces_copy(mbs_model *c, const mbs_model *m)
{
    int fail = 0;
    c->force = NULL;
    c->func = NULL;
    c->nforce = c->nfunc = 0;
    if (m->nforce > 0) {
        c->force = malloc((size_t)m->nforce * sizeof *c->force);
        if (!c->force) return -1;
        for (int k = 0; k < m->nforce; k++) {
            c->force[k] = m->force[k];
            c->force[k].name = dup(m->force[k].name, &fail);
            c->force[k].where = dup(m->force[k].where, &fail);
            c->nforce = k + 1;
        }
    }
    if (m->nfunc > 0) {
        c->func = malloc((size_t)m->nfunc * sizeof *c->func);
        if (!c->func) return -1;
        for (int k = 0; k < m->nfunc; k++) {
            const mbs_func_info *s = &m->func[k];
            c->func[k] = *s;
            c->func[k].name = dup(s->name, &fail);
            c->func[k].where = dup(s->where, &fail);
            c->func[k].t = dupd(s->t, (size_t)s->n, &fail);
            c->func[k].coef = dupd(s->coef, 6 * (size_t)s->n, &fail);
            c->func[k].mom = s->mom ? dupd(s->mom, (size_t)s->n, &fail) : NULL;   /* c->x = m->x's values */
            c->func[k].xm = s->mom ? c->x : NULL;
            c->nfunc = k + 1;
        }
    }
    return fail ? -1 : 0;
}

/* ---------------------------------------------------------------- printing */

/* "body.point" if a named point sits at x offset xp, else "body [x, y, z]". */
static void print_end(const mbs_model *m, int body, int xp, FILE *out)
{
    for (int k = 0; k < m->npoint; k++)
        if (m->point[k].x == xp) {
            fputs(m->point[k].name, out);
            return;
        }
    const double *p = m->x + xp;
    if (body > 0 && xp == m->body[body].x_com) fprintf(out, "%s (centre of mass)", m->body[body].name);
    else fprintf(out, "%s [%g, %g, %g]", m->body[body].name, p[0], p[1], p[2]);
}

void mbs_forces_print(const mbs_model *m, FILE *out)
{
    const double *x = m->x;
    if (m->nfunc > 0) {
        fprintf(out, "\nfunctions\n");
        for (int k = 0; k < m->nfunc; k++) {
            const mbs_func_info *f = &m->func[k];
            const double *p = x + f->x;
            fprintf(out, "  %-16s %-9s ", f->name, mbs_function_type_name(f->type));
            switch (f->type) {
            case MBS_FUNC_CONSTANT: fprintf(out, "%g", p[0]); break;
            case MBS_FUNC_STEP:
                fprintf(out, "%g at t <= %g to %g at t >= %g (%s)", p[1], p[0], p[3], p[2],
                        f->variant ? "quintic" : "cubic");
                break;
            case MBS_FUNC_SINE:
                fprintf(out, "%g + %g sin(2 pi %g t + %g)", p[3], p[0], p[1], p[2]);
                break;
            default:
                fprintf(out, "%d knots on [%g, %g] (%s)", f->n, f->t[0], f->t[f->n - 1],
                        f->variant ? "clamped" : "natural");
                break;
            }
            fputc('\n', out);
        }
    }
    if (m->nforce > 0) {
        fprintf(out, "\nforces\n");
        for (int k = 0; k < m->nforce; k++) {
            const mbs_force_info *fe = &m->force[k];
            fprintf(out, "  %-16s %-14s ", fe->name, mbs_force_type_name(fe->type));
            switch (fe->type) {
            case MBS_FORCE_SPRING_DAMPER:
                print_end(m, fe->body[0], fe->x_point[0], out);
                fputs(" -- ", out);
                print_end(m, fe->body[1], fe->x_point[1], out);
                fprintf(out, ": k %g, c %g, l0 %g", x[fe->x_stiffness], x[fe->x_damping], x[fe->x_free]);
                break;
            case MBS_FORCE_JOINT_SPRING:
                fprintf(out, "%s: k %g, c %g, q0 %g", m->coord_name[fe->coord], x[fe->x_stiffness], x[fe->x_damping],
                        x[fe->x_free]);
                break;
            case MBS_FORCE_JOINT_FORCE:
                fprintf(out, "%s: %g", m->coord_name[fe->coord], x[fe->x_value]);
                break;
            case MBS_FORCE_CONTACT_PLANE:
            case MBS_FORCE_TIRE: {
                const double *e = x + fe->x;
                fprintf(out, "%s radius %g at ", fe->shape ? "circle" : "sphere", e[3]);
                print_end(m, fe->body[0], fe->x_point[0], out);
                fprintf(out, ": K %g, n %g, chi %g", e[0], e[1], e[2]);
                if (fe->type == MBS_FORCE_CONTACT_PLANE && e[14] != 0)
                    fprintf(out, ", friction %g, slip_speed %g", e[14], e[15]);
                if (fe->type == MBS_FORCE_TIRE)
                    fprintf(out, ", kappa_c %g, alpha_c %g, mu_x %g, mu_y %g", e[14], e[15], e[16], e[17]);
                break;
            }
            default: {
                const double *f = x + fe->x_value, *n = x + fe->x_torque;
                print_end(m, fe->body[0], fe->x_point[0], out);
                fprintf(out, ": force [%g, %g, %g], torque [%g, %g, %g] (%s axes)", f[0], f[1], f[2], n[0], n[1],
                        n[2], fe->body_axes ? "body" : "global");
                break;
            }
            }
            if (fe->func >= 0) fprintf(out, " x %s(t)", m->func[fe->func].name);
            fputc('\n', out);
        }
    }
}

/* ---------------------------------------------------------------- public API */

static int force_ok(const mbs_model *m, int k) { return m && k >= 0 && k < m->nforce; }
static int func_ok(const mbs_model *m, int k) { return m && k >= 0 && k < m->nfunc; }

int mbs_model_nforces(const mbs_model *m) { return m ? m->nforce : 0; }
const char *mbs_force_name(const mbs_model *m, int k) { return force_ok(m, k) ? m->force[k].name : NULL; }

mbs_force_type mbs_force_type_of(const mbs_model *m, int k)
{
    return force_ok(m, k) ? m->force[k].type : MBS_FORCE_TYPE_COUNT;
}

int mbs_force_find(const mbs_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int k = 0; k < m->nforce; k++)
        if (strcmp(m->force[k].name, name) == 0) return k;
    return -1;
}

int mbs_model_nfunctions(const mbs_model *m) { return m ? m->nfunc : 0; }
const char *mbs_function_name(const mbs_model *m, int k) { return func_ok(m, k) ? m->func[k].name : NULL; }

mbs_func_type mbs_function_type_of(const mbs_model *m, int k)
{
    return func_ok(m, k) ? m->func[k].type : MBS_FUNC_TYPE_COUNT;
}

int mbs_function_find(const mbs_model *m, const char *name)
{
    if (!m || !name) return -1;
    for (int k = 0; k < m->nfunc; k++)
        if (strcmp(m->func[k].name, name) == 0) return k;
    return -1;
}

int mbs_force_geometry_of(const mbs_model *m, int k, mbs_force_geometry *g)
{
    if (!force_ok(m, k) || !g) return MBS_ERR_ARG;
    const mbs_force_info *fe = &m->force[k];
    const double *x = m->x;
    memset(g, 0, sizeof *g);
    g->body[0] = g->body[1] = g->joint = -1;
    for (int e = 0; e < 2; e++)
        if (fe->body[e] >= 0 && fe->x_point[e] >= 0) {
            g->body[e] = fe->body[e];
            memcpy(g->point[e], x + fe->x_point[e], sizeof g->point[e]);
        }
    if (fe->type == MBS_FORCE_JOINT_SPRING || fe->type == MBS_FORCE_JOINT_FORCE) g->joint = fe->joint;
    if (fe->type == MBS_FORCE_CONTACT_PLANE || fe->type == MBS_FORCE_TIRE) {
        g->radius = x[fe->x + CT_R];
        if (fe->shape == 1) memcpy(g->axis, x + fe->x + CT_AX, sizeof g->axis);
        memcpy(g->plane_point, x + fe->x + CT_P0, sizeof g->plane_point);
        memcpy(g->plane_normal, x + fe->x + CT_NRM, sizeof g->plane_normal);
    }
    return MBS_OK;
}
