/*
 * cli_session.c - the model with its data, and the simulation options of
 * a command line (cli_session.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_session.h"
#include "cli_util.h"

int cli_formulation_from_name(const char *name)
{
    int k = mbs_fd_algorithm_from_name(name);
    if (k >= 0) return k;
    k = mbs_loop_formulation_from_name(name);
    return k > 0 ? CLI_LOOP + k : -1;
}

int cli_tangent_from_name(const char *name)
{
    if (!strcmp(name, "fd")) return 0;
    if (!strcmp(name, "analytic")) return 1;
    return -1;
}

cli_sim_args cli_sim_args_absent(void)
{
    cli_sim_args a;
    memset(&a, 0, sizeof a);
    a.formulation = a.ref = a.integrator = a.solver = a.cvodes_method = -1;
    a.tangent = a.tangent_update = a.projection = -1;
    a.dt = a.tf = a.tolerance = a.rtol = a.atol = a.penalty = a.proj_scale = NAN;
    return a;
}

void cli_sim_apply(const cli_sim_args *a, mbs_sim_options *o)
{
    if (a->formulation >= CLI_LOOP) {
        o->loop = (mbs_loop_formulation)(a->formulation - CLI_LOOP);
    } else if (a->formulation >= 0) {
        o->formulation = (mbs_fd_algorithm)a->formulation;
        o->loop = MBS_LOOP_NONE;
    }
    if (a->ref >= 0) o->ref = (mbs_ref_point)a->ref;
    if (!isnan(a->dt)) o->dt = a->dt;
    if (!isnan(a->tf)) o->tf = a->tf;
    if (a->integrator >= 0) o->integrator = (mbs_integrator_type)a->integrator;
    if (a->solver >= 0) o->solver = (mbs_nl_solver)a->solver;
    if (a->cvodes_method >= 0) o->cvodes_method = (mbs_cvodes_method)a->cvodes_method;
    if (a->tangent >= 0) o->tangent = a->tangent ? mbs_tangent_analytic : mbs_tangent_fd;
    if (a->tangent_update >= 0) o->tangent_update = (mbs_tangent_update)a->tangent_update;
    if (a->projection >= 0) o->projection = (mbs_projection)a->projection;
    if (!isnan(a->tolerance)) o->tolerance = a->tolerance;
    if (!isnan(a->rtol)) o->rtol = a->rtol;
    if (!isnan(a->atol)) o->atol = a->atol;
    if (!isnan(a->penalty)) o->penalty = a->penalty;
    if (!isnan(a->proj_scale)) o->proj_scale = a->proj_scale;
    if (a->max_iterations > 0) o->max_iterations = (int)a->max_iterations;
    if (a->no_project) o->project = 0;
}

int cli_session_open(cli_session *s, const char *cmd, const char *path, int ref)
{
    memset(s, 0, sizeof *s);
    s->m = cli_load_model(cmd, path);
    if (!s->m) return CLI_EXIT_FAIL;
    if (ref >= 0 && cli_session_data(s, cmd, ref) != CLI_EXIT_OK) {
        cli_session_close(s);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int cli_session_data(cli_session *s, const char *cmd, int ref)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    s->d = mbs_data_create(s->m, &err);
    if (!s->d) {
        cli_error(cmd, "%s", err.msg[0] ? err.msg : mbs_status_string(err.code));
        return CLI_EXIT_FAIL;
    }
    mbs_data_set_ref(s->d, (mbs_ref_point)ref);
    return CLI_EXIT_OK;
}

void cli_session_close(cli_session *s)
{
    mbs_data_free(s->d);
    mbs_model_free(s->m);
    memset(s, 0, sizeof *s);
}

/* ---- the state of kinematics and inverse ---- */

int cli_state_init(cli_state *st, const char *cmd, const char *model_path,
                   const char *q, const char *qd, const char *qdd,
                   const char *ref, void (*usage)(FILE *))
{
    memset(st, 0, sizeof *st);
    st->ref = MBS_REF_COM;
    if (ref) {
        int r = mbs_ref_point_from_name(ref);
        if (r < 0)
            return cli_usage_error(cmd, usage,
                                   "--ref: unknown reference point '%s' (com, origin or joint)",
                                   ref);
        st->ref = (mbs_ref_point)r;
    }
    cli_session ses;
    if (cli_session_open(&ses, cmd, model_path, -1) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    st->m = ses.m;
    st->nq = mbs_model_nq(st->m);
    st->nv = mbs_model_nv(st->m);
    size_t n = st->nq > 0 ? (size_t)st->nq : 1, nv = st->nv > 0 ? (size_t)st->nv : 1;
    st->q = calloc(n, sizeof(double));
    st->qd = calloc(nv, sizeof(double));
    st->qdd = calloc(nv, sizeof(double));
    if (!st->q || !st->qd || !st->qdd) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    mbs_model_initial_state(st->m, st->q, st->qd);
    int rc;
    if (q && (rc = cli_parse_values(cmd, "--q", q, st->m, CLI_VALUES_COORDS, st->q, st->nq, usage)) != CLI_EXIT_OK)
        return rc;
    if (qd && (rc = cli_parse_values(cmd, "--qd", qd, st->m, CLI_VALUES_VELS, st->qd, st->nv, usage)) != CLI_EXIT_OK)
        return rc;
    if (qdd && (rc = cli_parse_values(cmd, "--qdd", qdd, st->m, CLI_VALUES_VELS, st->qdd, st->nv, usage)) != CLI_EXIT_OK)
        return rc;
    if (cli_session_data(&ses, cmd, st->ref) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    st->d = ses.d;
    return CLI_EXIT_OK;
}

void cli_state_free(cli_state *st)
{
    if (st->d)
        mbs_data_free(st->d);
    if (st->m)
        mbs_model_free(st->m);
    free(st->q);
    free(st->qd);
    free(st->qdd);
    memset(st, 0, sizeof *st);
}
