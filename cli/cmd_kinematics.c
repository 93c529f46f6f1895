/*
 * cmd_kinematics.c - `mbsens kinematics MODEL [--q ...] [--qd ...] [--qdd ...]
 * [--ref com|origin|joint] [--json]`: kinematics of every body and named
 * point, and the energies.
 */
#include "cli_options.h"
#include "cli_session.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens kinematics MODEL [--q LIST] [--qd LIST] [--qdd LIST]\n"
          "                         [--ref com|origin|joint] [--json]\n"
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
    const char *q, *qd, *qdd, *ref;
    int json;
} kin_args;

static const cli_opt kinematics_opts[] = {
    CLI_ROW(kin_args, "--q", NULL, CLI_STRING, q),
    CLI_ROW(kin_args, "--qd", NULL, CLI_STRING, qd),
    CLI_ROW(kin_args, "--qdd", NULL, CLI_STRING, qdd),
    CLI_ROW(kin_args, "--ref", NULL, CLI_STRING, ref),
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
