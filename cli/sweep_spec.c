/*
 * sweep_spec.c - the spec of `mbsens sweep` (docs/scaling.md): the model,
 * the cases (a grid, a list or a seeded random sample of parameter values
 * and initial coordinates) and what to compute for each case.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli_util.h"
#include "sweep.h"

#define SWEEP_MAX_CASES 1000000000L

/* "SPEC: PATH: message" on stderr; returns CLI_EXIT_FAIL. */
static int spec_error(const char *cmd, const char *spec, const char *where, const char *fmt, ...)
    CLI_PRINTF(4, 5);
static int spec_error(const char *cmd, const char *spec, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error(cmd, "%s: %s: %s", spec, where, msg);
    return CLI_EXIT_FAIL;
}

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            char *t = realloc(s, cap);
            if (!t)
                break;
            s = t;
        }
        size_t r = fread(s + n, 1, 4096, f);
        n += r;
        if (r < 4096)
            break;
    }
    int bad = ferror(f) || !s;
    fclose(f);
    if (bad) {
        free(s);
        return NULL;
    }
    s[n] = 0;
    *len = n;
    return s;
}

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        h ^= (unsigned char)s[k];
        h *= 1099511628211ULL;
    }
    return h;
}

/* The target of a variable name: a parameter, q0.COORD or qd0.VELOCITY. */
static int find_target(const mbs_model *m, const char *name, sweep_var *v)
{
    int k = mbs_param_find(m, name);
    if (k >= 0) {
        v->target = SWEEP_PARAM;
        v->index = k;
        return 0;
    }
    const char *c = NULL;
    if (strncmp(name, "q0.", 3) == 0) {
        v->target = SWEEP_Q0;
        c = name + 3;
    } else if (strncmp(name, "qd0.", 4) == 0) {
        v->target = SWEEP_QD0;
        c = name + 4;
    }
    const int qd0 = v->target == SWEEP_QD0, n = qd0 ? mbs_model_nv(m) : mbs_model_nq(m);
    for (int j = 0; c && j < n; j++)
        if (strcmp(qd0 ? mbs_vel_name(m, j) : mbs_coord_name(m, j), c) == 0) {
            v->index = j;
            return 0;
        }
    return -1;
}

static int json_number(const json_t *x, double *v)
{
    if (!json_is_number(x))
        return -1;
    *v = json_number_value(x);
    return isfinite(*v) ? 0 : -1;
}

static int add_var(sweep *s, const char *cmd, const char *spec, const char *where, const char *name)
{
    sweep_var *t = realloc(s->var, (size_t)(s->nvar + 1) * sizeof *t);
    if (!t)
        return spec_error(cmd, spec, where, "out of memory");
    s->var = t;
    sweep_var *v = &s->var[s->nvar];
    memset(v, 0, sizeof *v);
    v->name = strdup(name);
    s->nvar++;
    if (!v->name)
        return spec_error(cmd, spec, where, "out of memory");
    if (find_target(s->m, name, v) != 0)
        return spec_error(cmd, spec, where,
                          "'%s' is neither a parameter of the model nor q0.COORD or qd0.COORD", name);
    return CLI_EXIT_OK;
}

/* "grid": {"NAME": [values] | {"from": a, "to": b, "count": n}, ...} */
static int load_grid(sweep *s, const char *cmd, const char *spec, json_t *g)
{
    const char *name;
    json_t *x;
    s->kind = SWEEP_GRID;
    s->ncases = 1;
    json_object_foreach(g, name, x) {
        char where[300];
        snprintf(where, sizeof where, "grid.%s", name);
        if (add_var(s, cmd, spec, where, name) != CLI_EXIT_OK)
            return CLI_EXIT_FAIL;
        sweep_var *v = &s->var[s->nvar - 1];
        double a = 0, b = 0;
        json_int_t n = 0;
        if (json_is_array(x)) {
            n = (json_int_t)json_array_size(x);
        } else if (!json_is_object(x) || json_number(json_object_get(x, "from"), &a) || json_number(json_object_get(x, "to"), &b)
                   || !json_is_integer(json_object_get(x, "count"))) {
            return spec_error(cmd, spec, where, "expected an array of numbers or {\"from\", \"to\", \"count\"}");
        } else {
            n = json_integer_value(json_object_get(x, "count"));
        }
        if (n < 1 || n > SWEEP_MAX_CASES || s->ncases > SWEEP_MAX_CASES / n)
            return spec_error(cmd, spec, where, "expected 1 to %ld values in all, got %lld here", SWEEP_MAX_CASES, (long long)n);
        v->count = (int)n;
        v->values = malloc((size_t)n * sizeof *v->values);
        if (!v->values)
            return spec_error(cmd, spec, where, "out of memory");
        for (json_int_t k = 0; k < n; k++) {
            if (!json_is_array(x))
                v->values[k] = n == 1 ? a : a + (b - a) * (double)k / (double)(n - 1);
            else if (json_number(json_array_get(x, (size_t)k), &v->values[k]))
                return spec_error(cmd, spec, where, "value %lld is not a finite number", (long long)k);
        }
        s->ncases *= n;
    }
    return s->nvar ? CLI_EXIT_OK : spec_error(cmd, spec, "grid", "no variables");
}

/* "list": {"variables": [names], "values": [[...], ...]} */
static int load_list(sweep *s, const char *cmd, const char *spec, json_t *l)
{
    s->kind = SWEEP_LIST;
    json_t *names = json_object_get(l, "variables"), *rows = json_object_get(l, "values");
    if (!json_is_array(names) || !json_array_size(names) || !json_is_array(rows) || !json_array_size(rows))
        return spec_error(cmd, spec, "list", "expected \"variables\": [names] and \"values\": [[numbers], ...]");
    for (size_t k = 0; k < json_array_size(names); k++) {
        const char *name = json_string_value(json_array_get(names, k));
        char where[64];
        snprintf(where, sizeof where, "list.variables[%zu]", k);
        if (!name)
            return spec_error(cmd, spec, where, "expected a name");
        if (add_var(s, cmd, spec, where, name) != CLI_EXIT_OK)
            return CLI_EXIT_FAIL;
    }
    s->ncases = (long)json_array_size(rows);
    s->list = malloc((size_t)s->ncases * (size_t)s->nvar * sizeof *s->list);
    if (!s->list)
        return spec_error(cmd, spec, "list", "out of memory");
    for (long i = 0; i < s->ncases; i++) {
        json_t *r = json_array_get(rows, (size_t)i);
        char where[64];
        snprintf(where, sizeof where, "list.values[%ld]", i);
        if (!json_is_array(r) || json_array_size(r) != (size_t)s->nvar)
            return spec_error(cmd, spec, where, "expected %d numbers", s->nvar);
        for (int k = 0; k < s->nvar; k++)
            if (json_number(json_array_get(r, (size_t)k), &s->list[i * s->nvar + k]))
                return spec_error(cmd, spec, where, "value %d is not a finite number", k);
    }
    return CLI_EXIT_OK;
}

/* "random": {"count": N, "seed": S, "variables": {"NAME": {"uniform": [lo, hi]} | {"normal": [mean, sd]}}} */
static int load_random(sweep *s, const char *cmd, const char *spec, json_t *r)
{
    s->kind = SWEEP_RANDOM;
    json_t *c = json_object_get(r, "count"), *sd = json_object_get(r, "seed"), *vars = json_object_get(r, "variables");
    if (!json_is_integer(c) || json_integer_value(c) < 1 || json_integer_value(c) > SWEEP_MAX_CASES)
        return spec_error(cmd, spec, "random.count", "expected an integer from 1 to %ld", SWEEP_MAX_CASES);
    if (!json_is_integer(sd) || json_integer_value(sd) < 0)
        return spec_error(cmd, spec, "random.seed", "expected an integer >= 0");
    if (!json_is_object(vars) || !json_object_size(vars))
        return spec_error(cmd, spec, "random.variables", "expected {\"NAME\": {\"uniform\": [lo, hi]} or {\"normal\": [mean, sd]}, ...}");
    s->ncases = (long)json_integer_value(c);
    s->seed = (uint64_t)json_integer_value(sd);
    const char *name;
    json_t *x;
    json_object_foreach(vars, name, x) {
        char where[300];
        snprintf(where, sizeof where, "random.variables.%s", name);
        if (add_var(s, cmd, spec, where, name) != CLI_EXIT_OK)
            return CLI_EXIT_FAIL;
        sweep_var *v = &s->var[s->nvar - 1];
        json_t *u = json_object_get(x, "uniform"), *n = json_object_get(x, "normal");
        json_t *p = u ? u : n;
        v->dist = u ? SWEEP_UNIFORM : SWEEP_NORMAL;
        if (!json_is_object(x) || json_object_size(x) != 1 || !json_is_array(p) || json_array_size(p) != 2
            || json_number(json_array_get(p, 0), &v->a) || json_number(json_array_get(p, 1), &v->b))
            return spec_error(cmd, spec, where, "expected {\"uniform\": [lo, hi]} or {\"normal\": [mean, sd]}");
        if (u ? !(v->a <= v->b) : !(v->b >= 0))
            return spec_error(cmd, spec, where, u ? "lo > hi" : "negative standard deviation");
    }
    return CLI_EXIT_OK;
}

static int set_col(sweep *s, int k, const char *fmt, ...) CLI_PRINTF(3, 4);
static int set_col(sweep *s, int k, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->cols[k] = strdup(buf);
    return s->cols[k] ? 0 : -1;
}

/* The names of the result columns of what is computed. */
static int make_columns(sweep *s)
{
    const mbs_model *m = s->m;
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m), np = mbs_model_nparams(m), no = mbs_model_nobjectives(m);
    int c = 0, bad = 0;
    int nout = mbs_model_noutputs(m), ocols = 0;
    for (int k = 0; k < nout; k++) {
        mbs_output o = mbs_model_output(m, k);
        ocols += mbs_output_ncolumns(&o);
    }
    static const char *const dname[4] = {"qdd.%s", "d(qdd.%s)/d(q.%s)", "d(qdd.%s)/d(qd.%s)", "d(qdd.%s)/d(tau.%s)"};
    switch (s->what) {
    case SWEEP_SENSITIVITY: s->ncols = no * (1 + np); break;
    case SWEEP_SIMULATE: s->ncols = nq + nv + ocols; break;
    case SWEEP_DERIVATIVES:
        for (int k = 0; k < 4; k++)
            s->ncols += s->write >> k & 1 ? (k ? nv * nv : nv) : 0;
        break;
    default: s->ncols = 0;
    }
    s->cols = calloc((size_t)s->ncols + 1, sizeof *s->cols);
    if (!s->cols)
        return -1;
    if (s->what == SWEEP_SENSITIVITY) {
        for (int i = 0; i < no; i++)
            bad |= set_col(s, c++, "%s", mbs_objective_name(m, i));
        for (int i = 0; i < no; i++)
            for (int j = 0; j < np; j++)
                bad |= set_col(s, c++, "d%s/d%s", mbs_objective_name(m, i), mbs_param_name(m, j));
    } else if (s->what == SWEEP_SIMULATE) {
        for (int j = 0; j < nq; j++)
            bad |= set_col(s, c++, "q.%s", mbs_coord_name(m, j));
        for (int j = 0; j < nv; j++)
            bad |= set_col(s, c++, "qd.%s", mbs_vel_name(m, j));
        for (int k = 0; k < nout; k++) {
            mbs_output o = mbs_model_output(m, k);
            for (int j = 0; j < mbs_output_ncolumns(&o); j++) {
                char name[256];
                mbs_output_column_name(m, &o, j, name, sizeof name);
                bad |= set_col(s, c++, "%s", name);
            }
        }
    } else if (s->what == SWEEP_DERIVATIVES) {
        for (int k = 0; k < 4; k++)
            for (int i = 0; s->write >> k & 1 && i < nv; i++)
                for (int j = 0; j < (k ? nv : 1); j++)
                    bad |= set_col(s, c++, dname[k], mbs_vel_name(m, i), mbs_vel_name(m, j));
    }
    return bad;
}

static int load_number(json_t *c, const char *key, double *v, int positive)
{
    json_t *x = json_object_get(c, key);
    if (!x)
        return 0;
    return json_number(x, v) || (positive && !(*v > 0)) ? -1 : 0;
}

/* "compute": {"what": "sensitivity", "method", "formulation", "dt", "tf", "fd_step"}
 *          | {"what": "simulate", "formulation", "dt", "tf"}
 *          | {"what": "derivatives", "algorithm": "fr"|"semi", "write": [...]}
 *          | {"what": "none"} */
static int load_compute(sweep *s, const char *cmd, const char *spec, json_t *c)
{
    static const char *const whats[] = {"sensitivity", "simulate", "derivatives", "none"};
    static const char *const writes[] = {"qdd", "dqdd_dq", "dqdd_dqd", "dqdd_dtau"};
    const char *w = json_string_value(json_object_get(c, "what"));
    int k = 0;
    while (w && k < 4 && strcmp(w, whats[k]) != 0)
        k++;
    if (!json_is_object(c) || !w || k == 4)
        return spec_error(cmd, spec, "compute.what", "expected sensitivity, simulate, derivatives or none");
    s->what = (sweep_what)k;
    s->sens = mbs_sens_options_default(s->m);
    const char *meth = json_string_value(json_object_get(c, "method"));
    const char *form = json_string_value(json_object_get(c, "formulation"));
    const char *alg = json_string_value(json_object_get(c, "algorithm"));
    int f = -1, loop = -1;
    if (json_object_get(c, "method") && (!meth || (k = mbs_sens_method_from_name(meth)) < 0))
        return spec_error(cmd, spec, "compute.method", "expected ddm, davm, cavm, fd or cs");
    if (meth)
        s->sens.method = (mbs_sens_method)k;
    if (json_object_get(c, "formulation")
        && (!form || ((f = mbs_fd_algorithm_from_name(form)) < 0 && (loop = mbs_loop_formulation_from_name(form)) <= 0)))
        return spec_error(cmd, spec, "compute.formulation", "expected fr, semi, matrixr, ali3p, penalty or index1");
    if (f >= 0) {
        s->sens.sim.formulation = (mbs_fd_algorithm)f;
        s->sens.sim.loop = MBS_LOOP_NONE;
    } else if (loop < 0) {
        s->sens.sim.formulation = MBS_FD_SEMI_RECURSIVE;   /* as `mbsens sensitivity` */
    } else {
        s->sens.sim.loop = (mbs_loop_formulation)loop;
    }
    if (load_number(c, "dt", &s->sens.sim.dt, 1) || load_number(c, "tf", &s->sens.sim.tf, 1)
        || load_number(c, "fd_step", &s->sens.fd_step, 1))
        return spec_error(cmd, spec, "compute", "dt, tf and fd_step must be positive numbers");
    s->alg = MBS_FD_RECURSIVE;
    if (json_object_get(c, "algorithm") && (!alg || (k = mbs_fd_algorithm_from_name(alg)) < 0))
        return spec_error(cmd, spec, "compute.algorithm", "expected fr or semi");
    if (alg)
        s->alg = (mbs_fd_algorithm)k;
    json_t *wr = json_object_get(c, "write");
    s->write = wr ? 0 : 15;
    for (size_t j = 0; json_is_array(wr) && j < json_array_size(wr); j++) {
        const char *x = json_string_value(json_array_get(wr, j));
        for (k = 0; x && k < 4 && strcmp(x, writes[k]) != 0;)
            k++;
        if (!x || k == 4)
            return spec_error(cmd, spec, "compute.write", "expected names among qdd, dqdd_dq, dqdd_dqd, dqdd_dtau");
        s->write |= 1u << k;
    }
    if (wr && (!json_is_array(wr) || !s->write))
        return spec_error(cmd, spec, "compute.write", "expected a non-empty array of names");
    mbs_error err = {0};
    if (mbs_sim_options_check(&s->sens.sim, &err) != MBS_OK)
        return spec_error(cmd, spec, "compute", "%s", err.msg);
    return CLI_EXIT_OK;
}

/* The model named by the spec, relative to the spec's directory. */
static int load_model(sweep *s, const char *cmd, const char *spec, json_t *root, uint64_t *hash)
{
    const char *mp = json_string_value(json_object_get(root, "model"));
    if (!mp)
        return spec_error(cmd, spec, "model", "expected the model file's path");
    const char *slash = strrchr(spec, '/');
    size_t dl = mp[0] == '/' || !slash ? 0 : (size_t)(slash - spec + 1);
    s->model_path = malloc(dl + strlen(mp) + 1);
    if (!s->model_path)
        return spec_error(cmd, spec, "model", "out of memory");
    memcpy(s->model_path, spec, dl);
    strcpy(s->model_path + dl, mp);
    s->m = cli_load_model(cmd, s->model_path);
    if (!s->m)
        return CLI_EXIT_FAIL;
    size_t len = 0;
    char *text = read_text(s->model_path, &len);
    if (!text)
        return spec_error(cmd, spec, "model", "%s: cannot read (%s)", s->model_path, strerror(errno));
    *hash = fnv1a(*hash, text, len);
    free(text);
    return CLI_EXIT_OK;
}

int sweep_load(sweep *s, const char *cmd, const char *path)
{
    memset(s, 0, sizeof *s);
    size_t len = 0;
    char *text = read_text(path, &len);
    if (!text) {
        cli_error(cmd, "%s: cannot read (%s)", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    s->hash = fnv1a(14695981039346656037ULL, text, len);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root) {
        cli_error(cmd, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return CLI_EXIT_FAIL;
    }
    int rc = json_is_object(root) ? load_model(s, cmd, path, root, &s->hash)
                                  : spec_error(cmd, path, "(root)", "expected an object");
    json_t *g = json_object_get(root, "grid"), *l = json_object_get(root, "list"), *r = json_object_get(root, "random");
    if (rc == CLI_EXIT_OK && (!!g + !!l + !!r) != 1)
        rc = spec_error(cmd, path, "(root)", "expected exactly one of \"grid\", \"list\" and \"random\"");
    if (rc == CLI_EXIT_OK && (g ? !json_is_object(g) : l ? !json_is_object(l) : !json_is_object(r)))
        rc = spec_error(cmd, path, g ? "grid" : l ? "list" : "random", "expected an object");
    if (rc == CLI_EXIT_OK)
        rc = g ? load_grid(s, cmd, path, g) : l ? load_list(s, cmd, path, l) : load_random(s, cmd, path, r);
    if (rc == CLI_EXIT_OK)
        rc = load_compute(s, cmd, path, json_object_get(root, "compute"));
    for (int k = 0; rc == CLI_EXIT_OK && k < s->nvar; k++)
        if (s->var[k].target != SWEEP_PARAM && s->what == SWEEP_SENSITIVITY)
            rc = spec_error(cmd, path, s->var[k].name, "initial coordinates vary only with simulate and derivatives");
    if (rc == CLI_EXIT_OK && make_columns(s) != 0)
        rc = spec_error(cmd, path, "compute", "out of memory");
    json_decref(root);
    return rc;
}

void sweep_free(sweep *s)
{
    for (int k = 0; k < s->nvar; k++) {
        free(s->var[k].name);
        free(s->var[k].values);
    }
    for (int k = 0; s->cols && k < s->ncols; k++)
        free(s->cols[k]);
    free(s->cols);
    free(s->var);
    free(s->list);
    free(s->model_path);
    mbs_model_free(s->m);
    memset(s, 0, sizeof *s);
}

/* ---- the cases ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t cases_rng(uint64_t seed, long i)
{
    uint64_t g = seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t)i;
    splitmix64(&g);
    return g;
}

double cases_unit_open(uint64_t *x)
{
    return ((double)(splitmix64(x) >> 11) + 0.5) / 9007199254740992.0;
}

void sweep_case_values(const sweep *s, long i, double *x)
{
    if (s->kind == SWEEP_LIST) {
        memcpy(x, s->list + (size_t)i * (size_t)s->nvar, (size_t)s->nvar * sizeof *x);
        return;
    }
    if (s->kind == SWEEP_GRID) {
        long r = i;
        for (int k = s->nvar - 1; k >= 0; k--) {   /* the first variable varies slowest */
            x[k] = s->var[k].values[r % s->var[k].count];
            r /= s->var[k].count;
        }
        return;
    }
    uint64_t g = cases_rng(s->seed, i);
    for (int k = 0; k < s->nvar; k++) {
        const sweep_var *v = &s->var[k];
        double u1 = cases_unit_open(&g), u2 = cases_unit_open(&g);
        if (v->dist == SWEEP_UNIFORM)
            x[k] = v->a + (v->b - v->a) * u1;
        else
            x[k] = v->a + v->b * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
    }
}

typedef struct sweep_tail {
    const sweep *s;
    double *row;
} sweep_tail;

/* simulate: the final state and the model's outputs at tf. */
static int keep_tail(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                     const double *qdd)
{
    const sweep_tail *a = user;
    const mbs_sim_options *o = &a->s->sens.sim;
    if (t < o->tf - 1e-9 * o->dt)
        return 0;
    int nq = mbs_model_nq(m), nv = mbs_model_nv(m), c = nq + nv;
    memcpy(a->row, q, (size_t)nq * sizeof *q);
    memcpy(a->row + nq, qd, (size_t)nv * sizeof *qd);
    mbs_data *fd = NULL;   /* force outputs: inverse dynamics on a data of their own */
    for (int k = 0; k < mbs_model_noutputs(m); k++) {
        mbs_output out = mbs_model_output(m, k);
        if (out.kind != MBS_OUTPUT_FORCE) {
            mbs_output_eval(m, d, q, &out, a->row + c);
        } else {
            if (!fd && !(fd = mbs_data_create(m, NULL))) return MBS_ERR_NOMEM;
            const int rc = mbs_output_eval_state(m, fd, t, q, qd, qdd, &out, a->row + c);
            if (rc) {
                mbs_data_free(fd);
                return rc;
            }
        }
        c += mbs_output_ncolumns(&out);
    }
    mbs_data_free(fd);
    return 0;
}

static int run_derivatives(const sweep *s, const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                           double *row, mbs_error *err)
{
    size_t nv = (size_t)mbs_model_nv(m), c = 0;
    double *w = calloc(nv + 3 * nv * nv + nv, sizeof *w);
    if (!w) {
        err->code = MBS_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return err->code;
    }
    double *out[4] = {w, w + nv, w + nv + nv * nv, w + nv + 2 * nv * nv}, *tau = w + nv + 3 * nv * nv;
    int rc = mbs_forward_dynamics_derivatives(m, d, s->alg, q, qd, tau, out[0], out[1], out[2], out[3]);
    if (rc != MBS_OK) {
        err->code = rc;
        snprintf(err->msg, sizeof err->msg, "%s", mbs_data_error(d));
    }
    for (int k = 0; rc == MBS_OK && k < 4; k++)
        if (s->write >> k & 1) {
            size_t n = k ? nv * nv : nv;
            memcpy(row + c, out[k], n * sizeof *row);
            c += n;
        }
    free(w);
    return rc;
}

static int run_case(const sweep *s, const mbs_model *m, mbs_data *d, const double *q0, const double *qd0,
                    double *row, mbs_error *err)
{
    if (s->what == SWEEP_SENSITIVITY) {
        mbs_sens_result res = {0};
        int rc = mbs_sensitivity(m, &s->sens, &res, err);
        if (rc == MBS_OK) {
            int no = res.nobj, np = res.nparam;
            memcpy(row, res.psi, (size_t)no * sizeof *row);
            memcpy(row + no, res.grad, (size_t)no * (size_t)np * sizeof *row);
        }
        mbs_sens_result_free(&res);
        return rc;
    }
    if (s->what == SWEEP_SIMULATE) {
        sweep_tail a = {s, row};
        return mbs_simulate(m, d, &s->sens.sim, q0, qd0, keep_tail, &a, NULL, err);
    }
    if (s->what == SWEEP_DERIVATIVES)
        return run_derivatives(s, m, d, q0, qd0, row, err);
    return MBS_OK;
}

int sweep_case_run(const sweep *s, mbs_data *d, long i, double *row, mbs_error *err)
{
    size_t nq = (size_t)mbs_model_nq(s->m), nv = (size_t)mbs_model_nv(s->m), np = (size_t)mbs_model_nparams(s->m);
    double *w = malloc(((size_t)s->nvar + nq + nv + np + 1) * sizeof *w);
    if (!w) {
        err->code = MBS_ERR_NOMEM;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return err->code;
    }
    double *x = w, *q0 = w + s->nvar, *qd0 = q0 + nq, *rho = qd0 + nv;
    sweep_case_values(s, i, x);
    int own_params = 0;
    for (size_t j = 0; j < np; j++)
        rho[j] = mbs_param_value(s->m, (int)j);
    for (int k = 0; k < s->nvar; k++)
        if (s->var[k].target == SWEEP_PARAM) {
            rho[s->var[k].index] = x[k];
            own_params = 1;
        }
    mbs_model *own = own_params ? mbs_model_with_params(s->m, rho, err) : NULL;
    mbs_data *dc = own ? mbs_data_create(own, err) : own_params ? NULL : d;
    int rc = !dc ? (err->code ? err->code : MBS_ERR_MODEL) : MBS_OK;
    if (rc == MBS_OK) {
        mbs_model_initial_state(own ? own : s->m, q0, qd0);
        for (int k = 0; k < s->nvar; k++)   /* initial coordinates over the model's */
            if (s->var[k].target != SWEEP_PARAM)
                (s->var[k].target == SWEEP_Q0 ? q0 : qd0)[s->var[k].index] = x[k];
        rc = run_case(s, own ? own : s->m, dc, q0, qd0, row, err);
    }
    if (own)
        mbs_data_free(dc);
    mbs_model_free(own);
    free(w);
    return rc;
}
