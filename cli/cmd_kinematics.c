/*
 * cmd_kinematics.c - `mbsens kinematics MODEL [--q ...] [--qd ...] [--qdd ...]
 * [--ref com|origin|joint] [--jacobian BODY [--point X,Y,Z] [--axes
 * world|local]] [--com] [--json]`: kinematics of every body and named
 * point, and the energies; or a frame Jacobian and J-dot v, or the centre
 * of mass, its Jacobian and the centroidal momentum (mbsens/jacobians.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "cli_session.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens kinematics MODEL [--q LIST] [--qd LIST] [--qdd LIST]\n"
          "                         [--ref com|origin|joint] [--jacobian BODY\n"
          "                         [--point X,Y,Z] [--axes world|local]] [--com] [--json]\n"
          "\n"
          "Recursive kinematics at the state (q, qd, qdd). Prints, in global\n"
          "components, for every body: the centre-of-mass position r_com, the body\n"
          "frame origin and rotation matrix A (local to global), the CoM velocity\n"
          "v_com and acceleration a_com, the angular velocity omega and acceleration\n"
          "alpha; for every named point: position r, velocity v, acceleration a;\n"
          "for every named vector: u and its derivatives; the kinetic and the\n"
          "gravitational potential energy.\n"
          "\n"
          "LIST is a comma-separated list of numbers, one per coordinate, in the\n"
          "order of 'mbsens info MODEL' (e.g. --q 0.1,-0.2,0.3). Euler parameters\n"
          "must be normalized.\n"
          "\n"
          "Options:\n"
          "  --q LIST       joint coordinates (default: the model's q0)\n"
          "  --qd LIST      joint velocities (default: the model's qd0)\n"
          "  --qdd LIST     joint accelerations (default: zero)\n"
          "  --ref POINT    reference point of the recursive velocity variables:\n"
          "                 com (default), origin or joint; results do not depend on it\n"
          "  --jacobian BODY  print instead the frame Jacobian J (6 x nv: rows v_x v_y\n"
          "                 v_z w_x w_y w_z, a column per velocity) of body BODY at\n"
          "                 the point --point and J-dot v, [a; alpha] = J qdd + J-dot v\n"
          "  --point X,Y,Z  the body point, body-local coordinates (default: origin)\n"
          "  --axes AXES    world (default) or local: the body's own axes\n"
          "  --com          print instead (or as well) the centre of mass r_G, v_G,\n"
          "                 a_G, its Jacobian J_G, the centroidal momentum h_G\n"
          "                 (angular part about G, world axes), A_G and A_G-dot v\n"
          "  --json         print a JSON object instead of text\n"
          "  -h, --help     show this help and exit\n", out);
}

static void text_output(cli_buf *b, const cli_state *st)
{
    const mbs_model *m = st->m;
    const mbs_data *d = st->d;
    int nb = mbs_model_nbodies(m), np = mbs_model_npoints(m), nv = mbs_model_nvectors(m);

    cli_buf_printf(b, "model %s  (ref: %s)\n", mbs_model_name(m), mbs_ref_point_name(st->ref));
    for (int i = 1; i <= nb; i++) {
        double A[9], o[3], r[3], v[3], w[3], a[3], al[3];
        mbs_body_pose(d, i, A, o);
        mbs_body_com(d, i, r);
        mbs_body_velocity(d, i, v, w);
        mbs_body_acceleration(d, i, a, al);
        cli_buf_printf(b, "\nbody %s\n", mbs_body_name(m, i));
        cli_buf_puts(b, "  r_com   ");
        cli_text_vec(b, r, 3);
        cli_buf_puts(b, "\n  origin  ");
        cli_text_vec(b, o, 3);
        cli_buf_puts(b, "\n  A       ");
        cli_text_vec(b, A, 3);
        cli_buf_puts(b, "\n          ");
        cli_text_vec(b, A + 3, 3);
        cli_buf_puts(b, "\n          ");
        cli_text_vec(b, A + 6, 3);
        cli_buf_puts(b, "\n  v_com   ");
        cli_text_vec(b, v, 3);
        cli_buf_puts(b, "\n  a_com   ");
        cli_text_vec(b, a, 3);
        cli_buf_puts(b, "\n  omega   ");
        cli_text_vec(b, w, 3);
        cli_buf_puts(b, "\n  alpha   ");
        cli_text_vec(b, al, 3);
        cli_buf_puts(b, "\n");
    }
    for (int k = 0; k < np; k++) {
        double r[3], v[3], a[3];
        mbs_point_kinematics(m, d, k, r, v, a);
        cli_buf_printf(b, "\npoint %s\n  r  ", mbs_point_name(m, k));
        cli_text_vec(b, r, 3);
        cli_buf_puts(b, "\n  v  ");
        cli_text_vec(b, v, 3);
        cli_buf_puts(b, "\n  a  ");
        cli_text_vec(b, a, 3);
        cli_buf_puts(b, "\n");
    }
    for (int k = 0; k < nv; k++) {
        double u[3], ud[3], udd[3];
        mbs_vector_kinematics(m, d, k, u, ud, udd);
        cli_buf_printf(b, "\nvector %s\n  u    ", mbs_vector_name(m, k));
        cli_text_vec(b, u, 3);
        cli_buf_puts(b, "\n  ud   ");
        cli_text_vec(b, ud, 3);
        cli_buf_puts(b, "\n  udd  ");
        cli_text_vec(b, udd, 3);
        cli_buf_puts(b, "\n");
    }
    cli_buf_printf(b, "\nenergy\n  kinetic    % .9e\n  potential  % .9e\n",
                   mbs_kinetic_energy(m, d), mbs_potential_energy(m, d));
}

static void json_key_vec(cli_buf *b, const char *key, const double *x, int n, int last)
{
    cli_buf_printf(b, "      \"%s\": ", key);
    cli_json_vec(b, x, n);
    cli_buf_puts(b, last ? "\n" : ",\n");
}

static void json_output(cli_buf *b, const cli_state *st)
{
    const mbs_model *m = st->m;
    const mbs_data *d = st->d;
    int nb = mbs_model_nbodies(m), np = mbs_model_npoints(m), nv = mbs_model_nvectors(m);

    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(m));
    cli_buf_puts(b, ",\n  \"ref\": ");
    cli_json_str(b, mbs_ref_point_name(st->ref));
    cli_buf_puts(b, ",\n  \"coordinates\": ");
    cli_json_coord_names(b, m);
    if (st->nv != st->nq) {   /* a joint with tangent velocities: qd, qdd are velocities */
        cli_buf_puts(b, ",\n  \"velocities\": ");
        cli_json_vel_names(b, m);
    }
    cli_buf_puts(b, ",\n  \"q\": ");
    cli_json_vec(b, st->q, st->nq);
    cli_buf_puts(b, ",\n  \"qd\": ");
    cli_json_vec(b, st->qd, st->nv);
    cli_buf_puts(b, ",\n  \"qdd\": ");
    cli_json_vec(b, st->qdd, st->nv);

    cli_buf_puts(b, ",\n  \"bodies\": [");
    for (int i = 1; i <= nb; i++) {
        double A[9], o[3], r[3], v[3], w[3], a[3], al[3];
        mbs_body_pose(d, i, A, o);
        mbs_body_com(d, i, r);
        mbs_body_velocity(d, i, v, w);
        mbs_body_acceleration(d, i, a, al);
        cli_buf_puts(b, i > 1 ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ");
        cli_json_str(b, mbs_body_name(m, i));
        cli_buf_puts(b, ",\n");
        json_key_vec(b, "r_com", r, 3, 0);
        json_key_vec(b, "origin", o, 3, 0);
        cli_buf_puts(b, "      \"A\": ");
        cli_json_mat3(b, A);
        cli_buf_puts(b, ",\n");
        json_key_vec(b, "v_com", v, 3, 0);
        json_key_vec(b, "a_com", a, 3, 0);
        json_key_vec(b, "omega", w, 3, 0);
        json_key_vec(b, "alpha", al, 3, 1);
        cli_buf_puts(b, "    }");
    }
    cli_buf_puts(b, nb ? "\n  ],\n" : "],\n");

    cli_buf_puts(b, "  \"points\": [");
    for (int k = 0; k < np; k++) {
        double r[3], v[3], a[3];
        mbs_point_kinematics(m, d, k, r, v, a);
        cli_buf_puts(b, k ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ");
        cli_json_str(b, mbs_point_name(m, k));
        cli_buf_puts(b, ",\n      \"body\": ");
        cli_json_str(b, mbs_body_name(m, mbs_point_body(m, k)));
        cli_buf_puts(b, ",\n");
        json_key_vec(b, "r", r, 3, 0);
        json_key_vec(b, "v", v, 3, 0);
        json_key_vec(b, "a", a, 3, 1);
        cli_buf_puts(b, "    }");
    }
    cli_buf_puts(b, np ? "\n  ],\n" : "],\n");

    cli_buf_puts(b, "  \"vectors\": [");
    for (int k = 0; k < nv; k++) {
        double u[3], ud[3], udd[3];
        mbs_vector_kinematics(m, d, k, u, ud, udd);
        cli_buf_puts(b, k ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ");
        cli_json_str(b, mbs_vector_name(m, k));
        cli_buf_puts(b, ",\n      \"body\": ");
        cli_json_str(b, mbs_body_name(m, mbs_vector_body(m, k)));
        cli_buf_puts(b, ",\n");
        json_key_vec(b, "u", u, 3, 0);
        json_key_vec(b, "ud", ud, 3, 0);
        json_key_vec(b, "udd", udd, 3, 1);
        cli_buf_puts(b, "    }");
    }
    cli_buf_puts(b, nv ? "\n  ],\n" : "],\n");

    cli_buf_puts(b, "  \"kinetic_energy\": ");
    cli_json_num(b, mbs_kinetic_energy(m, d));
    cli_buf_puts(b, ",\n  \"potential_energy\": ");
    cli_json_num(b, mbs_potential_energy(m, d));
    cli_buf_puts(b, "\n}\n");
}

typedef struct {
    const char *q, *qd, *qdd, *ref, *jacobian, *point;
    int axes, com, json;
} kin_args;

static int axes_from_name(const char *name)
{
    if (!strcmp(name, "world")) return MBS_AXES_WORLD;
    if (!strcmp(name, "local")) return MBS_AXES_LOCAL;
    return -1;
}

/* What --jacobian and --com print, computed before any output. */
typedef struct {
    int body, axes;
    double point[3];
    double *J, Jdv[6];                                /* J: 6 nv */
    double rG[3], vG[3], aG[3], hG[6], AGdv[6];
    double *JG, *AG;                                  /* 3 nv, 6 nv */
} jac_out;

static int compute_jacobians(const cli_state *st, const kin_args *a, jac_out *o)
{
    const mbs_model *m = st->m;
    mbs_data *d = st->d;
    const double *pt = a->point ? o->point : NULL;
    int rc = MBS_OK;
    if (a->jacobian) {
        rc = mbs_frame_jacobian(m, d, o->body, pt, (mbs_axes)o->axes, o->J);
        if (!rc) rc = mbs_frame_jacobian_dot_v(m, d, o->body, pt, (mbs_axes)o->axes, o->Jdv);
    }
    if (!rc && a->com) {
        rc = mbs_com(m, d, o->rG, o->vG, o->aG);
        if (!rc) rc = mbs_com_jacobian(m, d, o->JG);
        if (!rc) rc = mbs_centroidal_momentum(m, d, o->hG);
        if (!rc) rc = mbs_centroidal_momentum_matrix(m, d, o->AG);
        if (!rc) rc = mbs_centroidal_momentum_dot_v(m, d, o->AGdv);
    }
    if (rc) cli_error("kinematics", "%s", mbs_data_error(d));
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* rows of a row-major rows x n matrix, each after its label */
static void text_rows(cli_buf *b, const char *const *labels, const double *A, int rows, int n)
{
    for (int r = 0; r < rows; r++) {
        cli_buf_printf(b, "  %-6s", labels[r]);
        cli_text_vec(b, A + (size_t)r * (size_t)n, n);
        cli_buf_puts(b, "\n");
    }
}

static void text_jacobians(cli_buf *b, const cli_state *st, const kin_args *a, const jac_out *o)
{
    static const char *const lab[6] = { "v_x", "v_y", "v_z", "w_x", "w_y", "w_z" };
    static const char *const hlab[6] = { "p_x", "p_y", "p_z", "L_x", "L_y", "L_z" };
    const mbs_model *m = st->m;
    const int nv = mbs_model_nv(m);
    cli_buf_printf(b, "model %s  (ref: %s)\n", mbs_model_name(m), mbs_ref_point_name(st->ref));
    if (a->jacobian) {
        cli_buf_printf(b, "\njacobian of body %s at point ", mbs_body_name(m, o->body));
        cli_text_vec(b, o->point, 3);
        cli_buf_printf(b, " (%s axes; columns: the %d velocities)\n", o->axes ? "local" : "world", nv);
        cli_buf_puts(b, "  columns");
        for (int k = 0; k < nv; k++) cli_buf_printf(b, " %s", mbs_vel_name(m, k));
        cli_buf_puts(b, "\n");
        text_rows(b, lab, o->J, 6, nv);
        cli_buf_puts(b, "J-dot v\n  ");
        cli_text_vec(b, o->Jdv, 6);
        cli_buf_puts(b, "\n");
    }
    if (!a->com) return;
    cli_buf_puts(b, "\ncentre of mass (world axes)\n  r_G   ");
    cli_text_vec(b, o->rG, 3);
    cli_buf_puts(b, "\n  v_G   ");
    cli_text_vec(b, o->vG, 3);
    cli_buf_puts(b, "\n  a_G   ");
    cli_text_vec(b, o->aG, 3);
    cli_buf_puts(b, "\nJ_G\n");
    text_rows(b, lab, o->JG, 3, nv);
    cli_buf_puts(b, "h_G (linear; angular about G)\n  ");
    cli_text_vec(b, o->hG, 6);
    cli_buf_puts(b, "\nA_G\n");
    text_rows(b, hlab, o->AG, 6, nv);
    cli_buf_puts(b, "A_G-dot v\n  ");
    cli_text_vec(b, o->AGdv, 6);
    cli_buf_puts(b, "\n");
}

/* a row-major matrix as an array of rows */
static void json_rows(cli_buf *b, const double *A, int rows, int n)
{
    cli_buf_puts(b, "[");
    for (int r = 0; r < rows; r++) {
        cli_buf_puts(b, r ? ",\n      " : "\n      ");
        cli_json_vec(b, A + (size_t)r * (size_t)n, n);
    }
    cli_buf_puts(b, "\n    ]");
}

static void json_jacobians(cli_buf *b, const cli_state *st, const kin_args *a, const jac_out *o)
{
    const mbs_model *m = st->m;
    const int nv = mbs_model_nv(m);
    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(m));
    cli_buf_puts(b, ",\n  \"ref\": ");
    cli_json_str(b, mbs_ref_point_name(st->ref));
    cli_buf_puts(b, ",\n  \"velocities\": ");   /* the columns of J, J_G, A_G */
    cli_json_vel_names(b, m);
    if (a->jacobian) {
        cli_buf_puts(b, ",\n  \"jacobian\": {\n    \"body\": ");
        cli_json_str(b, mbs_body_name(m, o->body));
        cli_buf_puts(b, ",\n    \"point\": ");
        cli_json_vec(b, o->point, 3);
        cli_buf_printf(b, ",\n    \"axes\": \"%s\",\n    \"J\": ", o->axes ? "local" : "world");
        json_rows(b, o->J, 6, nv);
        cli_buf_puts(b, ",\n    \"Jdot_v\": ");
        cli_json_vec(b, o->Jdv, 6);
        cli_buf_puts(b, "\n  }");
    }
    if (a->com) {
        const double *v[5] = { o->rG, o->vG, o->aG, o->hG, o->AGdv };
        static const char *const key[5] = { "r_G", "v_G", "a_G", "h_G", "AGdot_v" };
        cli_buf_puts(b, ",\n  \"com\": {");
        for (int k = 0; k < 5; k++) {
            cli_buf_printf(b, "%s\n    \"%s\": ", k ? "," : "", key[k]);
            cli_json_vec(b, v[k], k < 3 ? 3 : 6);
        }
        cli_buf_puts(b, ",\n    \"J_G\": ");
        json_rows(b, o->JG, 3, nv);
        cli_buf_puts(b, ",\n    \"A_G\": ");
        json_rows(b, o->AG, 6, nv);
        cli_buf_puts(b, "\n  }");
    }
    cli_buf_puts(b, "\n}\n");
}

/* The body of --jacobian (its name; "ground" is body 0), --point and
 * --axes: CLI_EXIT_OK, or a usage error naming what is wrong. */
static int jacobian_options(const cli_state *st, const kin_args *a, jac_out *o)
{
    const char *cmd = "kinematics";
    const mbs_model *m = st->m;
    if (!a->jacobian && (a->point || a->axes >= 0))
        return cli_usage_error(cmd, usage, "%s needs --jacobian BODY", a->point ? "--point" : "--axes");
    o->axes = a->axes >= 0 ? a->axes : MBS_AXES_WORLD;
    if (a->point) {
        int rc = cli_parse_values(cmd, "--point", a->point, NULL, CLI_VALUES_PLAIN, o->point, 3, usage);
        if (rc) return rc;
    }
    if (!a->jacobian) return CLI_EXIT_OK;
    o->body = mbs_body_find(m, a->jacobian);
    if (o->body >= 0) return CLI_EXIT_OK;
    const int nb = mbs_model_nbodies(m);
    if (nb > 20)
        return cli_usage_error(cmd, usage, "--jacobian: no body '%s' in the model (%d bodies: 'mbsens info %s' lists them)",
                               a->jacobian, nb, mbs_model_source(m) ? mbs_model_source(m) : "MODEL");
    cli_error(cmd, "--jacobian: no body '%s' in the model; its bodies:", a->jacobian);
    for (int i = 0; i <= nb; i++) fprintf(stderr, "  %s\n", mbs_body_name(m, i));
    cli_usage_hint(cmd, usage);
    return CLI_EXIT_USAGE;
}

/* --jacobian and --com: the results, then the text or JSON. */
static int jacobians_output(const cli_state *st, const kin_args *a)
{
    const size_t nv = (size_t)mbs_model_nv(st->m) + 1;
    jac_out o = { 0 };
    int rc = jacobian_options(st, a, &o);
    if (rc) return rc;
    o.J = calloc(6 * nv, sizeof(double));
    o.JG = calloc(3 * nv, sizeof(double));
    o.AG = calloc(6 * nv, sizeof(double));
    if (!o.J || !o.JG || !o.AG) {
        cli_error("kinematics", "out of memory");
        rc = CLI_EXIT_FAIL;
    }
    if (!rc) rc = compute_jacobians(st, a, &o);
    if (!rc) {
        cli_buf b = {0};
        if (a->json)
            json_jacobians(&b, st, a, &o);
        else
            text_jacobians(&b, st, a, &o);
        rc = cli_buf_emit(&b, stdout, "kinematics");
        cli_buf_free(&b);
    }
    free(o.J);
    free(o.JG);
    free(o.AG);
    return rc;
}

static const cli_opt kinematics_opts[] = {
    CLI_ROW(kin_args, "--q", NULL, CLI_STRING, q),
    CLI_ROW(kin_args, "--qd", NULL, CLI_STRING, qd),
    CLI_ROW(kin_args, "--qdd", NULL, CLI_STRING, qdd),
    CLI_ROW(kin_args, "--ref", NULL, CLI_STRING, ref),
    CLI_ROW(kin_args, "--jacobian", NULL, CLI_STRING, jacobian),
    CLI_ROW(kin_args, "--point", NULL, CLI_STRING, point),
    CLI_ROW_NAME(kin_args, "--axes", axes, axes_from_name, "world or local"),
    CLI_ROW(kin_args, "--com", NULL, CLI_FLAG, com),
    CLI_ROW(kin_args, "--json", NULL, CLI_FLAG, json),
};

const cli_command cli_kinematics_command = {
    "kinematics", usage, kinematics_opts, CLI_NELEM(kinematics_opts),
    NULL, 0, 1, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

int cmd_kinematics(int argc, char **argv)
{
    const char *cmd = "kinematics";
    const char *pos[1];
    kin_args a = {0};
    a.axes = -1;
    int npos = 0;
    int rc = cli_parse(&cli_kinematics_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;

    cli_state st;
    rc = cli_state_init(&st, cmd, pos[0], a.q, a.qd, a.qdd, a.ref, usage);
    if (rc == CLI_EXIT_OK) {
        if (mbs_kinematics(st.m, st.d, st.q, st.qd, st.qdd) != MBS_OK) {
            const char *msg = mbs_data_error(st.d);
            cli_error(cmd, "%s", msg && msg[0] ? msg : "kinematics failed");
            rc = CLI_EXIT_FAIL;
        } else if (a.jacobian || a.com || a.point || a.axes >= 0) {
            rc = jacobians_output(&st, &a);
        } else {
            cli_buf b = {0};
            if (a.json)
                json_output(&b, &st);
            else
                text_output(&b, &st);
            rc = cli_buf_emit(&b, stdout, cmd);
            cli_buf_free(&b);
        }
    }
    cli_state_free(&st);
    return rc;
}
