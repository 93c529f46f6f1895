/*
 * cmd_info.c - `mbsens info MODEL [--json]`: a summary of a model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "cli_util.h"

static void usage(FILE *out)
{
    fputs("Usage: mbsens info MODEL [--json]\n"
          "\n"
          "Summary of a model file: name, counts, bodies (name, parent, mass),\n"
          "joints (name, type, bodies, coordinate names), the velocities (nv, the\n"
          "convention of every spherical and floating joint: euler_rates or\n"
          "tangent, with the velocity names and v0 when nv != nq), named points and vectors,\n"
          "design parameters (name, value, bounds), time functions and force\n"
          "elements (name, type), the initial state, the simulation settings, the\n"
          "outputs (columns of simulate) and the objectives.\n"
          "\n"
          "Options:\n"
          "  --json      print a JSON object instead of text\n"
          "  -h, --help  show this help and exit\n", out);
}

static int max_int(int a, int b) { return a > b ? a : b; }

/* 1 if a joint of m has tangent velocities (then nv != nq). */
static int has_tangent(const mbs_model *m)
{
    for (int i = 1; i <= mbs_model_nbodies(m); i++)
        if (mbs_joint_velocities(m, i) == MBS_VELOCITIES_TANGENT) return 1;
    return 0;
}

/* The velocity convention of joint i in the words of the model format
 * ("euler_rates" or "tangent"). */
static const char *velocities_word(const mbs_model *m, int i)
{
    return mbs_joint_velocities(m, i) == MBS_VELOCITIES_TANGENT ? "tangent" : "euler_rates";
}

/* 1 if joint i has a unit quaternion (spherical, floating): a velocity convention. */
static int has_convention(const mbs_model *m, int i)
{
    const mbs_joint_type t = mbs_joint_type_of(m, i);
    return t == MBS_JOINT_SPHERICAL || t == MBS_JOINT_FLOATING;
}

static int name_width(const char *s) { return (int)strlen(s ? s : ""); }

/* Bound as text: "-inf"/"inf" for infinite bounds. */
static void text_bound(cli_buf *b, double x)
{
    if (isinf(x))
        cli_buf_puts(b, x < 0 ? "-inf" : "inf");
    else
        cli_buf_printf(b, "%.9g", x);
}

/* Mobility at the initial configuration: nq - rank(Phi_q) (mbs_constraint_rank);
 * -1 if it cannot be computed. For a tree it is the number of DOF. */
static int mobility(const mbs_model *m, const double *q0)
{
    mbs_data *d = mbs_data_create(m, NULL);
    int rank = 0;
    int rc = d ? mbs_constraint_rank(m, d, q0, 0, &rank) : MBS_ERR_NOMEM;
    mbs_data_free(d);
    return rc == MBS_OK ? mbs_model_nq(m) - rank : -1;
}

/* "outputs" columns of the model, in order, as one comma-separated line */
static void output_columns(cli_buf *b, const mbs_model *m, int json)
{
    int first = 1;
    for (int k = 0; k < mbs_model_noutputs(m); k++) {
        const mbs_output o = mbs_model_output(m, k);
        for (int c = 0; c < mbs_output_ncolumns(&o); c++) {
            char name[512];
            mbs_output_column_name(m, &o, c, name, sizeof name);
            cli_buf_puts(b, first ? "" : ", ");
            if (json) cli_json_str(b, name);
            else cli_buf_puts(b, name);
            first = 0;
        }
    }
}

static const char *formulation_name(const mbs_sim_options *o)
{
    return o->loop != MBS_LOOP_NONE ? mbs_loop_formulation_name(o->loop) : mbs_fd_algorithm_name(o->formulation);
}

/* the simulation settings, the outputs and the objectives */
static void text_run_sections(cli_buf *b, const mbs_model *m)
{
    const mbs_sim_options o = mbs_model_sim_options(m);
    cli_buf_printf(b, "\nsimulation (the model's settings, the defaults of simulate):\n"
                      "  integrator %s, formulation %s, ref %s, dt %g, t = %g .. %g\n",
                   mbs_integrator_name(o.integrator), formulation_name(&o), mbs_ref_point_name(o.ref), o.dt, o.t0,
                   o.tf);
    if (mbs_model_noutputs(m) > 0) {
        cli_buf_puts(b, "\noutputs (columns of simulate after the state):\n  ");
        output_columns(b, m, 0);
        cli_buf_puts(b, "\n");
    }
    const int nobj = mbs_model_nobjectives(m);
    if (nobj > 0) {
        cli_buf_puts(b, "\nobjectives:\n ");
        for (int k = 0; k < nobj; k++) cli_buf_printf(b, " %s", mbs_objective_name(m, k));
        cli_buf_puts(b, "\n");
    }
}

static void json_run_sections(cli_buf *b, const mbs_model *m)
{
    const mbs_sim_options o = mbs_model_sim_options(m);
    cli_buf_printf(b, "  \"simulation\": {\"integrator\": \"%s\", \"formulation\": \"%s\", \"ref\": \"%s\", \"dt\": ",
                   mbs_integrator_name(o.integrator), formulation_name(&o), mbs_ref_point_name(o.ref));
    cli_json_num(b, o.dt);
    cli_buf_puts(b, ", \"t0\": ");
    cli_json_num(b, o.t0);
    cli_buf_puts(b, ", \"tf\": ");
    cli_json_num(b, o.tf);
    cli_buf_puts(b, "},\n  \"outputs\": [");
    output_columns(b, m, 1);
    cli_buf_puts(b, "],\n  \"objectives\": [");
    for (int k = 0; k < mbs_model_nobjectives(m); k++) {
        if (k) cli_buf_puts(b, ", ");
        cli_json_str(b, mbs_objective_name(m, k));
    }
    cli_buf_puts(b, "],\n");
}

/* The counts and the gravity. */
static void text_head(cli_buf *b, const mbs_model *m, const double *q0)
{
    int nb = mbs_model_nbodies(m), nq = mbs_model_nq(m), np = mbs_model_npoints(m);
    int nv = mbs_model_nvectors(m), npar = mbs_model_nparams(m);
    double g[3];
    mbs_model_gravity(m, g);

    cli_buf_printf(b, "model        %s\n", mbs_model_name(m));
    cli_buf_printf(b, "bodies       %d\n", nb);
    cli_buf_printf(b, "coordinates  %d\n", nq);
    cli_buf_printf(b, "velocities   %d\n", mbs_model_nv(m));
    cli_buf_printf(b, "dof          %d\n", mbs_model_ndof(m));
    cli_buf_printf(b, "constraints  %d\n", mbs_model_nconstraints(m));
    if (mbs_model_ncuts(m) > 0 || mbs_model_ndrivers(m) > 0)
        cli_buf_printf(b, "mobility     %d (at q0)\n", mobility(m, q0));
    cli_buf_printf(b, "points       %d\n", np);
    cli_buf_printf(b, "vectors      %d\n", nv);
    cli_buf_printf(b, "parameters   %d\n", npar);
    cli_buf_printf(b, "gravity      [ %.9g %.9g %.9g ]\n", g[0], g[1], g[2]);
}

/* The velocity convention of every spherical and floating joint, with its
 * velocity names. */
static void text_conventions(cli_buf *b, const mbs_model *m, int wj)
{
    int any = 0;
    for (int i = 1; i <= mbs_model_nbodies(m); i++) {
        if (!has_convention(m, i)) continue;
        if (!any++) cli_buf_printf(b, "\njoint velocities:\n  %-*s  %-11s  %s\n", wj, "name", "convention", "velocities");
        cli_buf_printf(b, "  %-*s  %-11s ", wj, mbs_joint_name(m, i), velocities_word(m, i));
        const int off = mbs_joint_vel_offset(m, i), n = mbs_joint_nv(m, i);
        for (int k = 0; k < n; k++) cli_buf_printf(b, " %s", mbs_vel_name(m, off + k));
        cli_buf_puts(b, "\n");
    }
}

/* The bodies and the joints of the tree. */
static void text_tree(cli_buf *b, const mbs_model *m)
{
    const int nb = mbs_model_nbodies(m);
    int w = 4, wp = 6;
    for (int i = 1; i <= nb; i++) {
        w = max_int(w, name_width(mbs_body_name(m, i)));
        wp = max_int(wp, name_width(mbs_body_name(m, mbs_body_parent(m, i))));
    }
    cli_buf_printf(b, "\nbodies:\n  %-*s  %-*s  %s\n", w, "name", wp, "parent", "mass");
    for (int i = 1; i <= nb; i++)
        cli_buf_printf(b, "  %-*s  %-*s  %.9g\n", w, mbs_body_name(m, i), wp,
                       mbs_body_name(m, mbs_body_parent(m, i)), mbs_body_mass(m, i));

    int wj = 4, wt = 4, wc = max_int(w, 5);
    for (int i = 1; i <= nb; i++) {
        wj = max_int(wj, name_width(mbs_joint_name(m, i)));
        wt = max_int(wt, name_width(mbs_joint_type_name(mbs_joint_type_of(m, i))));
    }
    cli_buf_printf(b, "\njoints:\n  %-*s  %-*s  %-*s  %-*s  %s\n", wj, "name", wt, "type",
                   wp, "parent", wc, "child", "coordinates");
    for (int i = 1; i <= nb; i++) {
        cli_buf_printf(b, "  %-*s  %-*s  %-*s  %-*s ", wj, mbs_joint_name(m, i), wt,
                       mbs_joint_type_name(mbs_joint_type_of(m, i)), wp,
                       mbs_body_name(m, mbs_body_parent(m, i)), wc, mbs_body_name(m, i));
        int off = mbs_joint_coord_offset(m, i), n = mbs_joint_nq(m, i);
        if (n == 0)
            cli_buf_puts(b, " -");
        for (int k = 0; k < n; k++)
            cli_buf_printf(b, " %s", mbs_coord_name(m, off + k));
        cli_buf_puts(b, "\n");
    }
    text_conventions(b, m, wj);
}

static void text_cuts(cli_buf *b, const mbs_model *m)
{
    int ncut = mbs_model_ncuts(m);
    if (ncut > 0) {
        /* joints cut to open closed loops: no coordinates, loop-closure rows */
        cli_buf_puts(b, "\ncut joints (closed loops):\n");
        for (int k = 0; k < ncut; k++) {
            cli_buf_printf(b, "  %s  %s  %s  %s  %d rows  loop:", mbs_cut_name(m, k),
                           mbs_joint_type_name(mbs_cut_type(m, k)), mbs_body_name(m, mbs_cut_body(m, k, 0)),
                           mbs_body_name(m, mbs_cut_body(m, k, 1)), mbs_cut_nrows(m, k));
            const int *lb;
            int nl = mbs_cut_loop(m, k, &lb);
            for (int i = 0; i < nl; i++)
                cli_buf_printf(b, "%s%s", i ? " -> " : " ", mbs_body_name(m, lb[i]));
            cli_buf_puts(b, "\n");
        }
    }
}

/* Coordinates with q0, qd0 (the rates of the coordinates); the velocities
 * with v0 when a joint has tangent velocities; points, vectors, parameters. */
static void text_named(cli_buf *b, const mbs_model *m, const double *q0, const double *qd0, const double *v0)
{
    const int nq = mbs_model_nq(m), np = mbs_model_npoints(m), nv = mbs_model_nvectors(m);
    const int npar = mbs_model_nparams(m);
    if (nq > 0) {
        int wc = 10;
        for (int k = 0; k < nq; k++)
            wc = max_int(wc, name_width(mbs_coord_name(m, k)));
        cli_buf_printf(b, "\ncoordinates:\n  %-*s  %16s  %16s\n", wc, "name", "q0", "qd0");
        for (int k = 0; k < nq; k++)
            cli_buf_printf(b, "  %-*s  % 16.9g  % 16.9g\n", wc, mbs_coord_name(m, k), q0[k],
                           qd0[k]);
    }
    if (has_tangent(m)) {
        const int nvel = mbs_model_nv(m);
        int wc = 10;
        for (int k = 0; k < nvel; k++) wc = max_int(wc, name_width(mbs_vel_name(m, k)));
        cli_buf_printf(b, "\nvelocities:\n  %-*s  %16s\n", wc, "name", "v0");
        for (int k = 0; k < nvel; k++) cli_buf_printf(b, "  %-*s  % 16.9g\n", wc, mbs_vel_name(m, k), v0[k]);
    }

    if (np > 0) {
        int wn = 4;
        for (int k = 0; k < np; k++)
            wn = max_int(wn, name_width(mbs_point_name(m, k)));
        cli_buf_printf(b, "\npoints:\n  %-*s  %s\n", wn, "name", "body");
        for (int k = 0; k < np; k++)
            cli_buf_printf(b, "  %-*s  %s\n", wn, mbs_point_name(m, k),
                           mbs_body_name(m, mbs_point_body(m, k)));
    }
    if (nv > 0) {
        int wn = 4;
        for (int k = 0; k < nv; k++)
            wn = max_int(wn, name_width(mbs_vector_name(m, k)));
        cli_buf_printf(b, "\nvectors:\n  %-*s  %s\n", wn, "name", "body");
        for (int k = 0; k < nv; k++)
            cli_buf_printf(b, "  %-*s  %s\n", wn, mbs_vector_name(m, k),
                           mbs_body_name(m, mbs_vector_body(m, k)));
    }
    if (npar > 0) {
        int wn = 4;
        for (int k = 0; k < npar; k++)
            wn = max_int(wn, name_width(mbs_param_name(m, k)));
        cli_buf_printf(b, "\nparameters:\n  %-*s  %16s  %s\n", wn, "name", "value", "bounds");
        for (int k = 0; k < npar; k++) {
            cli_buf_printf(b, "  %-*s  %16.9g  [", wn, mbs_param_name(m, k),
                           mbs_param_value(m, k));
            text_bound(b, mbs_param_lower(m, k));
            cli_buf_puts(b, ", ");
            text_bound(b, mbs_param_upper(m, k));
            cli_buf_puts(b, "]\n");
        }
    }
}

/* Time functions and force elements: name and type. */
static void text_elements(cli_buf *b, const mbs_model *m)
{
    int nfn = mbs_model_nfunctions(m), nfo = mbs_model_nforces(m);
    if (nfn > 0) {
        int wn = 4;
        for (int k = 0; k < nfn; k++) wn = max_int(wn, name_width(mbs_function_name(m, k)));
        cli_buf_printf(b, "\nfunctions:\n  %-*s  %s\n", wn, "name", "type");
        for (int k = 0; k < nfn; k++)
            cli_buf_printf(b, "  %-*s  %s\n", wn, mbs_function_name(m, k),
                           mbs_function_type_name(mbs_function_type_of(m, k)));
    }
    if (nfo > 0) {
        int wn = 4;
        for (int k = 0; k < nfo; k++) wn = max_int(wn, name_width(mbs_force_name(m, k)));
        cli_buf_printf(b, "\nforces:\n  %-*s  %s\n", wn, "name", "type");
        for (int k = 0; k < nfo; k++)
            cli_buf_printf(b, "  %-*s  %s\n", wn, mbs_force_name(m, k), mbs_force_type_name(mbs_force_type_of(m, k)));
    }
}

static void text_info(cli_buf *b, const mbs_model *m, const double *q0, const double *qd0, const double *v0)
{
    text_head(b, m, q0);
    text_tree(b, m);
    text_cuts(b, m);
    text_named(b, m, q0, qd0, v0);
    text_elements(b, m);
    text_run_sections(b, m);
}

/* From the opening brace to the gravity. */
static void json_head(cli_buf *b, const mbs_model *m, const double *q0)
{
    int nb = mbs_model_nbodies(m), nq = mbs_model_nq(m), np = mbs_model_npoints(m);
    int nv = mbs_model_nvectors(m), npar = mbs_model_nparams(m);
    double g[3];
    mbs_model_gravity(m, g);

    cli_buf_puts(b, "{\n  \"model\": ");
    cli_json_str(b, mbs_model_name(m));
    cli_buf_printf(b, ",\n  \"n_bodies\": %d,\n  \"n_coordinates\": %d,\n  \"n_dof\": %d,\n"
                      "  \"n_constraints\": %d,\n  \"mobility\": %d,\n  \"n_points\": %d,\n  \"n_vectors\": %d,\n"
                      "  \"n_parameters\": %d,\n",
                   nb, nq, mbs_model_ndof(m), mbs_model_nconstraints(m), mobility(m, q0), np, nv, npar);
    if (has_tangent(m)) cli_buf_printf(b, "  \"n_velocities\": %d,\n", mbs_model_nv(m));
    cli_buf_puts(b, "  \"gravity\": ");
    cli_json_vec(b, g, 3);
}

/* "bodies" and "joints" of the tree. */
static void json_tree(cli_buf *b, const mbs_model *m)
{
    const int nb = mbs_model_nbodies(m);
    cli_buf_puts(b, ",\n  \"bodies\": [");
    for (int i = 1; i <= nb; i++) {
        cli_buf_puts(b, i > 1 ? ",\n    {\"name\": " : "\n    {\"name\": ");
        cli_json_str(b, mbs_body_name(m, i));
        cli_buf_puts(b, ", \"parent\": ");
        cli_json_str(b, mbs_body_name(m, mbs_body_parent(m, i)));
        cli_buf_puts(b, ", \"mass\": ");
        cli_json_num(b, mbs_body_mass(m, i));
        cli_buf_puts(b, "}");
    }
    cli_buf_puts(b, nb ? "\n  ],\n" : "],\n");

    cli_buf_puts(b, "  \"joints\": [");
    for (int i = 1; i <= nb; i++) {
        cli_buf_puts(b, i > 1 ? ",\n    {\"name\": " : "\n    {\"name\": ");
        cli_json_str(b, mbs_joint_name(m, i));
        cli_buf_puts(b, ", \"type\": ");
        cli_json_str(b, mbs_joint_type_name(mbs_joint_type_of(m, i)));
        cli_buf_puts(b, ", \"parent\": ");
        cli_json_str(b, mbs_body_name(m, mbs_body_parent(m, i)));
        cli_buf_puts(b, ", \"child\": ");
        cli_json_str(b, mbs_body_name(m, i));
        cli_buf_puts(b, ", \"coordinates\": [");
        int off = mbs_joint_coord_offset(m, i), n = mbs_joint_nq(m, i);
        for (int k = 0; k < n; k++) {
            if (k)
                cli_buf_puts(b, ", ");
            cli_json_str(b, mbs_coord_name(m, off + k));
        }
        if (has_tangent(m)) {
            if (has_convention(m, i)) cli_buf_printf(b, "], \"velocities\": \"%s\"", velocities_word(m, i));
            else cli_buf_puts(b, "]");
            cli_buf_puts(b, ", \"velocity_names\": [");
            const int voff = mbs_joint_vel_offset(m, i), nvj = mbs_joint_nv(m, i);
            for (int k = 0; k < nvj; k++) {
                if (k) cli_buf_puts(b, ", ");
                cli_json_str(b, mbs_vel_name(m, voff + k));
            }
        }
        cli_buf_puts(b, "]}");
    }
    cli_buf_puts(b, nb ? "\n  ],\n" : "],\n");
}

/* "cut_joints": joints cut to open closed loops, with the bodies of each loop. */
static void json_cuts(cli_buf *b, const mbs_model *m)
{
    int ncut = mbs_model_ncuts(m);
    cli_buf_puts(b, "  \"cut_joints\": [");
    for (int k = 0; k < ncut; k++) {
        cli_buf_puts(b, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        cli_json_str(b, mbs_cut_name(m, k));
        cli_buf_puts(b, ", \"type\": ");
        cli_json_str(b, mbs_joint_type_name(mbs_cut_type(m, k)));
        cli_buf_puts(b, ", \"parent\": ");
        cli_json_str(b, mbs_body_name(m, mbs_cut_body(m, k, 0)));
        cli_buf_puts(b, ", \"child\": ");
        cli_json_str(b, mbs_body_name(m, mbs_cut_body(m, k, 1)));
        cli_buf_printf(b, ", \"rows\": %d, \"loop\": [", mbs_cut_nrows(m, k));
        const int *lb;
        int nl = mbs_cut_loop(m, k, &lb);
        for (int i = 0; i < nl; i++) {
            if (i)
                cli_buf_puts(b, ", ");
            cli_json_str(b, mbs_body_name(m, lb[i]));
        }
        cli_buf_puts(b, "]}");
    }
    cli_buf_puts(b, ncut ? "\n  ],\n" : "],\n");
}

/* "coordinates" with q0, qd0; "points", "vectors". */
static void json_named(cli_buf *b, const mbs_model *m, const double *q0, const double *qd0, const double *v0)
{
    const int nq = mbs_model_nq(m), np = mbs_model_npoints(m), nv = mbs_model_nvectors(m);
    cli_buf_puts(b, "  \"coordinates\": ");
    cli_json_coord_names(b, m);
    cli_buf_puts(b, ",\n  \"q0\": ");
    cli_json_vec(b, q0, nq);
    cli_buf_puts(b, ",\n  \"qd0\": ");
    cli_json_vec(b, qd0, nq);
    if (has_tangent(m)) {
        cli_buf_puts(b, ",\n  \"velocities\": ");
        cli_json_vel_names(b, m);
        cli_buf_puts(b, ",\n  \"v0\": ");
        cli_json_vec(b, v0, mbs_model_nv(m));
    }

    cli_buf_puts(b, ",\n  \"points\": [");
    for (int k = 0; k < np; k++) {
        cli_buf_puts(b, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        cli_json_str(b, mbs_point_name(m, k));
        cli_buf_puts(b, ", \"body\": ");
        cli_json_str(b, mbs_body_name(m, mbs_point_body(m, k)));
        cli_buf_puts(b, "}");
    }
    cli_buf_puts(b, np ? "\n  ],\n" : "],\n");

    cli_buf_puts(b, "  \"vectors\": [");
    for (int k = 0; k < nv; k++) {
        cli_buf_puts(b, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        cli_json_str(b, mbs_vector_name(m, k));
        cli_buf_puts(b, ", \"body\": ");
        cli_json_str(b, mbs_body_name(m, mbs_vector_body(m, k)));
        cli_buf_puts(b, "}");
    }
    cli_buf_puts(b, nv ? "\n  ],\n" : "],\n");
}

/* "parameters" (names) and "parameter_details". */
static void json_params(cli_buf *b, const mbs_model *m)
{
    const int npar = mbs_model_nparams(m);
    cli_buf_puts(b, "  \"parameters\": [");
    for (int k = 0; k < npar; k++) {
        if (k)
            cli_buf_puts(b, ", ");
        cli_json_str(b, mbs_param_name(m, k));
    }
    cli_buf_puts(b, "],\n  \"parameter_details\": [");
    for (int k = 0; k < npar; k++) {
        cli_buf_puts(b, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        cli_json_str(b, mbs_param_name(m, k));
        cli_buf_puts(b, ", \"value\": ");
        cli_json_num(b, mbs_param_value(m, k));
        cli_buf_puts(b, ", \"lower\": ");
        cli_json_num(b, mbs_param_lower(m, k));   /* null if unbounded */
        cli_buf_puts(b, ", \"upper\": ");
        cli_json_num(b, mbs_param_upper(m, k));
        cli_buf_puts(b, "}");
    }
    cli_buf_puts(b, npar ? "\n  ],\n" : "],\n");
}

/* "functions" and "forces": {name, type}; the closing brace. */
static void json_elements(cli_buf *b, const mbs_model *m)
{
    for (int list = 0; list < 2; list++) {
        int n = list ? mbs_model_nforces(m) : mbs_model_nfunctions(m);
        cli_buf_puts(b, list ? "  \"forces\": [" : "  \"functions\": [");
        for (int k = 0; k < n; k++) {
            cli_buf_puts(b, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
            cli_json_str(b, list ? mbs_force_name(m, k) : mbs_function_name(m, k));
            cli_buf_puts(b, ", \"type\": ");
            cli_json_str(b, list ? mbs_force_type_name(mbs_force_type_of(m, k))
                                 : mbs_function_type_name(mbs_function_type_of(m, k)));
            cli_buf_puts(b, "}");
        }
        cli_buf_puts(b, n ? "\n  ]" : "]");
        cli_buf_puts(b, list ? "\n}\n" : ",\n");
    }
}

static void json_info(cli_buf *b, const mbs_model *m, const double *q0, const double *qd0, const double *v0)
{
    json_head(b, m, q0);
    json_tree(b, m);
    json_cuts(b, m);
    json_named(b, m, q0, qd0, v0);
    json_params(b, m);
    json_run_sections(b, m);
    json_elements(b, m);
}

typedef struct {
    int json;
} info_args;

static const cli_opt info_opts[] = {
    CLI_ROW(info_args, "--json", NULL, CLI_FLAG, json),
};

const cli_command cli_info_command = {
    "info", usage, info_opts, CLI_NELEM(info_opts), NULL, 0, 1, 1, "missing MODEL argument", CLI_WORDS_VALUE,
};

int cmd_info(int argc, char **argv)
{
    const char *cmd = "info";
    const char *pos[1];
    info_args a = {0};
    int npos = 0;
    int rc = cli_parse(&cli_info_command, argc, argv, &a, pos, &npos);
    if (rc != CLI_EXIT_OK) return rc == CLI_PARSE_HELP ? CLI_EXIT_OK : rc;

    mbs_model *m = cli_load_model(cmd, pos[0]);
    if (!m)
        return CLI_EXIT_FAIL;
    int nq = mbs_model_nq(m);
    size_t n = nq > 0 ? (size_t)nq : 1;
    double *q0 = calloc(n, sizeof *q0), *qd0 = calloc(n, sizeof *qd0);
    cli_buf b = {0};
    if (!q0 || !qd0) {
        b.oom = 1;
    } else {
        mbs_model_initial_state(m, q0, qd0);
        /* the rates of the coordinates (the velocities of a tangent joint mapped,
         * mbsens/manifold.h; a copy for every other joint) */
        double *v0 = malloc(n * sizeof *v0);
        if (v0) {
            memcpy(v0, qd0, n * sizeof *v0);
            mbs_rates_from_velocity(m, q0, v0, NULL, qd0, NULL);
            if (a.json)
                json_info(&b, m, q0, qd0, v0);
            else
                text_info(&b, m, q0, qd0, v0);
            free(v0);
        } else {
            b.oom = 1;
        }
    }
    rc = cli_buf_emit(&b, stdout, cmd);
    cli_buf_free(&b);
    free(q0);
    free(qd0);
    mbs_model_free(m);
    return rc;
}
