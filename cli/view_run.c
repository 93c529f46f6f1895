/*
 * view_run.c - the run that the page of `mbsens view` plays back
 * (view_page.h): the trajectory CSV of `mbsens simulate`, the body poses
 * at every row (mbs_kinematics at the row's q), the curves beside the 3D
 * view, and a sensitivity result to show.
 *
 * The page stores the run as binary: times as Float64, poses and curves as
 * Float32 (7 per drawn body and frame: origin, then the unit quaternion
 * qw qx qy qz), base64-encoded; 9 significant digits as text would take
 * about 2.5 times the space.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "view_page.h"

/* ---------------------------------------------------------------- CSV */

typedef struct csv_line {
    char *s;
    size_t cap;
    long no;
} csv_line;

static int next_line(FILE *f, csv_line *l)
{
    size_t len = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF && ch != '\n') {
        if (len + 2 > l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 4096;
            char *s = realloc(l->s, cap);
            if (!s) return -1;
            l->s = s;
            l->cap = cap;
        }
        l->s[len++] = (char)ch;
    }
    if (ch == EOF && len == 0) return 0;
    if (len > 0 && l->s[len - 1] == '\r') len--;
    if (!l->s && !(l->s = malloc(l->cap = 16))) return -1;
    l->s[len] = '\0';
    l->no++;
    return 1;
}

/* The field of a CSV header line that starts at *p, unquoted in place
 * (RFC 4180: "a,""b""" is a,"b"); *p moves past its comma, or to NULL
 * after the last field. */
static char *csv_field(char **p)
{
    char *s = *p, *in = s, *out = s;
    if (*in == '"') {
        for (in++; *in; in++) {
            if (*in == '"' && in[1] != '"') {
                in++;
                break;
            }
            if (*in == '"') in++;   /* a doubled quote */
            *out++ = *in;
        }
        while (*in && *in != ',') in++;
    } else {
        while (*in && *in != ',') in++;
        out = in;
    }
    *p = *in == ',' ? in + 1 : NULL;
    *out = '\0';
    return s;
}

/* column indices of the coordinates (pos), their rates (vel), accelerations (acc) */
static int map_header(const char *cmd, const char *path, const mbs_model *m, char *hdr, int *ncol, int *pos,
                      int *vel, int *acc)
{
    const int nq = mbs_model_nq(m);
    for (int k = 0; k < nq; k++) pos[k] = vel[k] = acc[k] = -1;
    int c = 0, tcol = -1;
    for (char *rest = hdr; rest; c++) {
        const char *tok = csv_field(&rest);
        if (!strcmp(tok, "t")) tcol = c;
        for (int k = 0; k < nq; k++) {
            const char *name = mbs_coord_name(m, k);
            size_t n = strlen(name);
            if (strncmp(tok, name, n) != 0) continue;
            if (!tok[n]) pos[k] = c;
            else if (!strcmp(tok + n, ".qd")) vel[k] = c;
            else if (!strcmp(tok + n, ".qdd")) acc[k] = c;
        }
    }
    *ncol = c;
    if (tcol != 0) {
        cli_error(cmd, "%s:1: the first column must be t (a CSV of mbsens simulate)", path);
        return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < nq; k++)
        if (pos[k] < 0) {
            cli_error(cmd, "%s:1: no column for coordinate %s of model %s", path, mbs_coord_name(m, k),
                      mbs_model_name(m));
            return CLI_EXIT_FAIL;
        }
    return CLI_EXIT_OK;
}

static int parse_row(const char *cmd, const char *path, csv_line *l, int ncol, double *vals)
{
    char *p = l->s;
    for (int c = 0; c < ncol; c++) {
        char *end;
        errno = 0;
        vals[c] = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || (*end == '\0' && c + 1 < ncol)) {
            cli_error(cmd, "%s:%ld: column %d: expected %s number, got '%.40s'", path, l->no, c + 1,
                      *end == '\0' && c + 1 < ncol && end != p ? "more columns: a" : "a", p);
            return CLI_EXIT_FAIL;
        }
        p = *end ? end + 1 : end;
    }
    if (*p) {
        cli_error(cmd, "%s:%ld: more than the %d columns of the header", path, l->no, ncol);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static int grow(view_run *r, int nq, int cap, int have_vel, int have_acc)
{
    double *t = realloc(r->t, sizeof *t * (size_t)cap);
    if (t) r->t = t;
    double *q = t ? realloc(r->q, sizeof *q * (size_t)cap * nq) : NULL;
    if (q) r->q = q;
    double *qd = q && have_vel ? realloc(r->qd, sizeof *qd * (size_t)cap * nq) : NULL;
    if (qd) r->qd = qd;
    double *qdd = q && have_acc ? realloc(r->qdd, sizeof *qdd * (size_t)cap * nq) : NULL;
    if (qdd) r->qdd = qdd;
    return q && (qd || !have_vel) && (qdd || !have_acc) ? 0 : -1;
}

static int all_mapped(const int *col, int n)
{
    for (int k = 0; k < n; k++)
        if (col[k] < 0) return 0;
    return 1;
}

static int read_rows(const char *cmd, const char *path, FILE *f, csv_line *l, const int *pos, const int *vel,
                     const int *acc, const mbs_model *m, view_run *r)
{
    const int nq = mbs_model_nq(m), hv = all_mapped(vel, nq), ha = hv && all_mapped(acc, nq);
    double *vals = malloc(sizeof *vals * (size_t)r->ncol);
    int cap = 0, rc = CLI_EXIT_OK, got;
    while (rc == CLI_EXIT_OK && (got = next_line(f, l)) > 0) {
        if (!l->s[0]) continue;
        if (r->n == cap && grow(r, nq, cap = cap ? 2 * cap : 1024, hv, ha) != 0) got = -1;
        if (!vals || got < 0) break;
        if ((rc = parse_row(cmd, path, l, r->ncol, vals)) != CLI_EXIT_OK) break;
        const double t = vals[0];
        if (!isfinite(t) || (r->n > 0 && !(t > r->t[r->n - 1]))) {
            cli_error(cmd, "%s:%ld: time %g does not increase", path, l->no, t);
            rc = CLI_EXIT_FAIL;
            break;
        }
        r->t[r->n] = t;
        for (int k = 0; k < nq; k++) {
            r->q[(size_t)r->n * nq + k] = vals[pos[k]];
            if (hv) r->qd[(size_t)r->n * nq + k] = vals[vel[k]];
            if (ha) r->qdd[(size_t)r->n * nq + k] = vals[acc[k]];
        }
        r->n++;
    }
    if (rc == CLI_EXIT_OK && (!vals || got < 0)) {
        cli_error(cmd, "%s: out of memory", path);
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK && r->n == 0) {
        cli_error(cmd, "%s: no rows after the header", path);
        rc = CLI_EXIT_FAIL;
    }
    free(vals);
    return rc;
}

int view_run_read(const char *cmd, const char *path, const mbs_model *m, view_run *r)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error(cmd, "cannot read '%s': %s", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    const int nq = mbs_model_nq(m);
    int *cols = malloc(sizeof *cols * 3 * (size_t)(nq + 1));
    csv_line l = { NULL, 0, 0 };
    int rc = CLI_EXIT_FAIL;
    if (!cols) cli_error(cmd, "out of memory");
    else if (next_line(f, &l) <= 0) cli_error(cmd, "%s: empty file (expected a CSV of mbsens simulate)", path);
    else if (map_header(cmd, path, m, l.s, &r->ncol, cols, cols + nq, cols + 2 * nq) == CLI_EXIT_OK)
        rc = read_rows(cmd, path, f, &l, cols, cols + nq, cols + 2 * nq, m, r);
    fclose(f);
    free(l.s);
    free(cols);
    if (rc != CLI_EXIT_OK) view_run_free(r);
    return rc;
}

int view_run_initial(const char *cmd, const mbs_model *m, mbs_data *d, view_run *r)
{
    memset(r, 0, sizeof *r);
    const int nq = mbs_model_nq(m);
    r->n = 1;
    r->t = calloc(1, sizeof *r->t);
    r->q = calloc((size_t)nq + 1, sizeof *r->q);
    double *qd = calloc((size_t)nq + 1, sizeof *qd);
    if (!r->t || !r->q || !qd) {
        free(qd);
        view_run_free(r);
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    mbs_model_initial_state(m, r->q, qd);
    free(qd);
    if (mbs_model_nloop_constraints(m) + mbs_model_ndriver_constraints(m) > 0 &&
        mbs_assemble(m, d, r->q, 0, NULL, NULL) != MBS_OK) {
        cli_error(cmd, "%s: the initial state does not assemble: %s", mbs_model_name(m), mbs_data_error(d));
        view_run_free(r);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

void view_run_free(view_run *r)
{
    free(r->t);
    free(r->q);
    free(r->qd);
    free(r->qdd);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- frames and curves */

typedef struct series {
    const char *group;
    char name[256];
    float *v;
} series;

/* the curves the page plots, their names and groups: coordinates; with
 * velocities the energies; closed loops: the violations; with velocities
 * and accelerations the objective integrands */
static int plan_series(const mbs_model *m, const view_run *r, series **out)
{
    static const char *const energy[4] = { "kinetic_energy", "potential_energy", "elastic_energy", "energy" };
    static const char *const viol[3] = { "phi_norm", "phid_norm", "phidd_norm" };
    const int nq = mbs_model_nq(m), nobj = r->qd && r->qdd ? mbs_model_nobjectives(m) : 0;
    const int loops = mbs_model_nloop_constraints(m) + mbs_model_ndriver_constraints(m) > 0;
    const int ns = r->n > 1 ? nq + (r->qd ? 4 : 0) + (loops ? 3 : 0) + nobj : 0;
    series *s = calloc((size_t)ns + 1, sizeof *s);
    if (!s) return -1;
    int k = 0;
    for (int c = 0; c < nq && ns; c++, k++) {
        s[k].group = "coordinates";
        snprintf(s[k].name, sizeof s[k].name, "%s", mbs_coord_name(m, c));
    }
    for (int c = 0; c < 4 && ns && r->qd; c++, k++) {
        s[k].group = "energy";
        snprintf(s[k].name, sizeof s[k].name, "%s", energy[c]);
    }
    for (int c = 0; c < 3 && ns && loops; c++, k++) {
        s[k].group = "violation";
        snprintf(s[k].name, sizeof s[k].name, "%s", viol[c]);
    }
    for (int c = 0; c < nobj && ns; c++, k++) {
        s[k].group = "objectives";
        snprintf(s[k].name, sizeof s[k].name, "g %s", mbs_objective_name(m, c));
    }
    for (int c = 0; c < k; c++)
        if (!(s[c].v = malloc(sizeof *s[c].v * (size_t)r->n))) k = -1 - c;
    if (k < 0)
        for (int c = 0; c < -1 - k; c++) free(s[c].v);
    if (k < 0) free(s);
    *out = k < 0 ? NULL : s;
    return k;
}

/* frame i: kinematics, the poses of the drawn bodies, the curves */
static int eval_frame(const mbs_model *m, mbs_data *d, const view_run *r, const int *bodies, int nstore, int i,
                      float *pose, series *s, int ns)
{
    const int nq = mbs_model_nq(m);
    const double *q = r->q + (size_t)i * nq, *qd = r->qd ? r->qd + (size_t)i * nq : NULL;
    const double *qdd = r->qdd ? r->qdd + (size_t)i * nq : NULL;
    mbs_data_set_time(d, r->t[i]);
    int rc = mbs_kinematics(m, d, q, qd, qdd);
    if (rc != MBS_OK) return rc;
    for (int j = 0; j < nstore; j++) {
        double A[9], o[3], quat[4];
        mbs_body_pose(d, bodies[j], A, o);
        mbs_rotation_quaternion(A, quat);
        for (int c = 0; c < 3; c++) pose[7 * j + c] = (float)o[c];
        for (int c = 0; c < 4; c++) pose[7 * j + 3 + c] = (float)quat[c];
    }
    int k = 0;
    for (; k < ns && !strcmp(s[k].group, "coordinates"); k++) s[k].v[i] = (float)q[k];
    if (k < ns && !strcmp(s[k].group, "energy")) {
        double ke = mbs_kinetic_energy(m, d), pe = mbs_potential_energy(m, d), ee = mbs_elastic_energy(m, d, q);
        double e[4] = { ke, pe, ee, ke + pe + ee };
        for (int c = 0; c < 4; c++) s[k++].v[i] = (float)e[c];
    }
    if (k < ns && !strcmp(s[k].group, "violation")) {
        double v[3];
        if ((rc = mbs_constraint_violation(m, d, r->t[i], q, qd, qdd, v)) != MBS_OK) return rc;
        for (int c = 0; c < 3; c++) s[k++].v[i] = (float)v[c];
    }
    for (int c = 0; k < ns; c++, k++) {
        double g;
        if ((rc = mbs_objective_integrand_at(m, d, c, 0, r->t[i], q, qd, qdd, &g)) != MBS_OK) return rc;
        s[k].v[i] = (float)g;
    }
    return MBS_OK;
}

static void write_series(cli_buf *b, const series *s, int ns, int n)
{
    cli_buf_puts(b, "\"series\": [");
    for (int k = 0; k < ns; k++) {
        cli_buf_printf(b, "%s{\"group\": \"%s\", \"name\": ", k ? ",\n  " : "\n  ", s[k].group);
        view_str(b, s[k].name);
        cli_buf_puts(b, ", \"data\": ");
        view_base64(b, s[k].v, sizeof *s[k].v * (size_t)n);
        cli_buf_puts(b, "}");
    }
    cli_buf_puts(b, "],\n");
}

static int frames_loop(const char *cmd, const char *csv, const mbs_model *m, mbs_data *d, const view_run *r,
                       const int *bodies, int nstore, float *poses, series *s, int ns)
{
    for (int i = 0; i < r->n; i++) {
        int rc = eval_frame(m, d, r, bodies, nstore, i, poses + (size_t)7 * nstore * i, s, ns);
        if (rc != MBS_OK) {
            cli_error(cmd, "%s: row %d (t = %g): %s", csv ? csv : mbs_model_name(m), i + 2, r->t[i],
                      mbs_data_error(d));
            return CLI_EXIT_FAIL;
        }
    }
    return CLI_EXIT_OK;
}

int view_run_write(const char *cmd, const char *csv, const mbs_model *m, mbs_data *d, const view_run *r,
                   const view_scene *sc, int *follow, cli_buf *b)
{
    int nstore = 0, *bodies = malloc(sizeof *bodies * (size_t)(sc->nb + 1));
    for (int i = 1; bodies && i <= sc->nb; i++)
        if (sc->drawn[i]) bodies[nstore++] = i;
    float *poses = malloc(sizeof *poses * 7 * (size_t)(nstore + 1) * (size_t)r->n);
    series *s = NULL;
    int ns = plan_series(m, r, &s), rc = CLI_EXIT_FAIL;
    if (!bodies || !poses || ns < 0) cli_error(cmd, "out of memory");
    else rc = frames_loop(cmd, csv, m, d, r, bodies, nstore, poses, s, ns);
    if (rc == CLI_EXIT_OK) {
        *follow = 0;
        for (int i = 0; nstore > 0 && i < r->n && !*follow; i++) {
            const float *p0 = poses, *p = poses + (size_t)7 * nstore * i;
            double dx = p[0] - p0[0], dy = p[1] - p0[1], dz = p[2] - p0[2];
            *follow = sqrt(dx * dx + dy * dy + dz * dz) > 3 * sc->size;
        }
        cli_buf_printf(b, "\"frames\": {\"n\": %d, \"bodies\": [", r->n);
        for (int j = 0; j < nstore; j++) cli_buf_printf(b, j ? ",%d" : "%d", bodies[j]);
        cli_buf_puts(b, "],\n  \"t\": ");
        view_base64(b, r->t, sizeof *r->t * (size_t)r->n);
        cli_buf_puts(b, ",\n  \"poses\": ");
        view_base64(b, poses, sizeof *poses * 7 * (size_t)nstore * (size_t)r->n);
        cli_buf_puts(b, "},\n");
        write_series(b, s, ns, r->n);
    }
    for (int k = 0; k < ns; k++) free(s[k].v);
    free(s);
    free(poses);
    free(bodies);
    return rc;
}

/* ---------------------------------------------------------------- sensitivity */

static int fail_json(const char *cmd, const char *path, const char *where, const char *what)
{
    cli_error(cmd, "%s: %s: %s (expected the output of mbsens sensitivity --json)", path, where, what);
    return CLI_EXIT_FAIL;
}

static int check_names(const char *cmd, const char *path, json_t *root, const char *key, size_t *n)
{
    json_t *a = json_object_get(root, key);
    if (!json_is_array(a)) return fail_json(cmd, path, key, "missing or not an array");
    for (size_t k = 0; k < json_array_size(a); k++)
        if (!json_is_string(json_array_get(a, k))) {
            char where[64];
            snprintf(where, sizeof where, "%s[%zu]", key, k);
            return fail_json(cmd, path, where, "not a string");
        }
    *n = json_array_size(a);
    return CLI_EXIT_OK;
}

static int check_numbers(const char *cmd, const char *path, json_t *a, const char *where, size_t n)
{
    if (!json_is_array(a) || json_array_size(a) != n) {
        char what[96];
        snprintf(what, sizeof what, "expected an array of %zu numbers", n);
        return fail_json(cmd, path, where, what);
    }
    for (size_t k = 0; k < n; k++) {
        json_t *v = json_array_get(a, k);
        if (!json_is_number(v) && !json_is_null(v)) {
            char w[96];
            snprintf(w, sizeof w, "%s[%zu]", where, k);
            return fail_json(cmd, path, w, "not a number");
        }
    }
    return CLI_EXIT_OK;
}

int view_sensitivity_write(const char *cmd, const char *path, cli_buf *b)
{
    cli_buf_puts(b, "\"sensitivity\": ");
    if (!path) {
        cli_buf_puts(b, "null,\n");
        return CLI_EXIT_OK;
    }
    json_error_t e;
    json_t *root = json_load_file(path, 0, &e);
    if (!root) {
        if (e.line > 0)
            cli_error(cmd, "%s:%d:%d: %s", path, e.line, e.column, e.text);
        else   /* not a syntax error: the file cannot be read (e.text names it) */
            cli_error(cmd, "--sensitivity: %s", e.text);
        return CLI_EXIT_FAIL;
    }
    size_t nobj = 0, npar = 0;
    int rc = json_is_object(root) ? CLI_EXIT_OK : fail_json(cmd, path, "(root)", "not an object");
    if (!rc) rc = check_names(cmd, path, root, "objectives", &nobj);
    if (!rc) rc = check_names(cmd, path, root, "parameters", &npar);
    if (!rc) rc = check_numbers(cmd, path, json_object_get(root, "psi"), "psi", nobj);
    json_t *g = json_object_get(root, "gradient");
    if (!rc && (!json_is_array(g) || json_array_size(g) != nobj))
        rc = fail_json(cmd, path, "gradient", "expected one row per objective");
    for (size_t k = 0; !rc && k < nobj; k++) {
        char where[64];
        snprintf(where, sizeof where, "gradient[%zu]", k);
        rc = check_numbers(cmd, path, json_array_get(g, k), where, npar);
    }
    if (!rc) {
        char *text = json_dumps(root, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(17));
        if (!text) {
            cli_error(cmd, "out of memory");
            rc = CLI_EXIT_FAIL;
        } else {
            for (const char *p = text; *p; p++) {   /* < > & as in view_str */
                if (*p == '<' || *p == '>' || *p == '&') cli_buf_printf(b, "\\u%04x", (unsigned)*p);
                else cli_buf_printf(b, "%c", *p);
            }
            cli_buf_puts(b, ",\n");
            free(text);
        }
    }
    json_decref(root);
    return rc;
}
