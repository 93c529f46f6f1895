/*
 * test_integrators_alloc.c - integration steps do not allocate.
 *
 * malloc, calloc, realloc and free are interposed (forwarding to glibc's
 * __libc_* functions) and counted around mbs_integrator_step for every
 * method and solver, on a model with every ingredient: a floating base,
 * spherical and revolute joints, a spring-damper and a joint spring. All
 * the memory is allocated by mbs_integrator_create.
 *
 * Under AddressSanitizer, which owns malloc itself, the interposition is
 * not possible and the test only runs the steps.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "alloc_count.h"

static const char *MODEL =
    "{ \"name\": \"mix\", \"gravity\": [0, 0, -9.81],"
    "  \"bodies\": ["
    "    { \"name\": \"base\", \"mass\": 3, \"inertia\": [0.1, 0.2, 0.25, 0.01, 0, 0], \"points\": { \"top\": [0, 0, 0.2] } },"
    "    { \"name\": \"arm\", \"mass\": 1, \"com\": [0.2, 0, 0], \"inertia\": [0.01, 0.02, 0.02, 0, 0, 0],"
    "      \"points\": { \"tip\": [0.4, 0, 0] } },"
    "    { \"name\": \"hand\", \"mass\": 0.5, \"com\": [0.1, 0, 0], \"inertia\": [0.002, 0.003, 0.004, 0, 0, 0] } ],"
    "  \"joints\": ["
    "    { \"name\": \"free\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"base\","
    "      \"q0\": [0, 0, 1, 1, 0, 0, 0], \"qd0\": [0.1, 0, 0, 0, 0.2, 0.1, 0.3] },"
    "    { \"name\": \"shoulder\", \"type\": \"spherical\", \"parent\": \"base\", \"child\": \"arm\","
    "      \"parent_point\": \"top\", \"qd0\": [0, 0.3, -0.2, 0.1] },"
    "    { \"name\": \"elbow\", \"type\": \"revolute\", \"parent\": \"arm\", \"child\": \"hand\","
    "      \"parent_point\": \"tip\", \"axis\": [0, 1, 0], \"q0\": [0.4], \"qd0\": [1] } ],"
    "  \"forces\": ["
    "    { \"name\": \"rope\", \"type\": \"spring_damper\", \"body1\": \"ground\", \"point1\": [0, 0, 2],"
    "      \"point2\": \"base.top\", \"stiffness\": 100, \"damping\": 1, \"length\": 0.6 },"
    "    { \"name\": \"hinge\", \"type\": \"joint_spring\", \"joint\": \"elbow\", \"stiffness\": 5, \"damping\": 0.2 } ] }";

int main(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(MODEL, "mix", &err);
    CHECK(m != NULL, "load: %s", m ? "" : err.msg);
    if (!m) return mbs_test_summary("test_integrators_alloc");
    mbs_data *d = mbs_data_create(m, NULL);
    struct { mbs_integrator_type integ; mbs_nl_solver solver; mbs_fd_algorithm form; mbs_cvodes_method cm;
             int analytic; } cases[] = {
        { MBS_INTEGRATOR_TRAPEZOIDAL, MBS_SOLVER_NEWTON, MBS_FD_RECURSIVE, 0, 0 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, MBS_SOLVER_NEWTON, MBS_FD_SEMI_RECURSIVE, 0, 1 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, MBS_SOLVER_FIXEDPOINT, MBS_FD_RECURSIVE, 0, 0 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, MBS_SOLVER_FIXEDPOINT, MBS_FD_SEMI_RECURSIVE, 0, 0 },
        { MBS_INTEGRATOR_RK4, 0, MBS_FD_RECURSIVE, 0, 0 },
        { MBS_INTEGRATOR_RK4, 0, MBS_FD_SEMI_RECURSIVE, 0, 0 },
        { MBS_INTEGRATOR_CVODES, 0, MBS_FD_RECURSIVE, MBS_CVODES_BDF, 0 },
        { MBS_INTEGRATOR_CVODES, 0, MBS_FD_SEMI_RECURSIVE, MBS_CVODES_ADAMS, 0 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mbs_sim_options o = mbs_sim_options_default();
        o.integrator = cases[c].integ;
        o.solver = cases[c].solver;
        o.formulation = cases[c].form;
        o.cvodes_method = cases[c].cm;
        o.dt = 2e-3;
        if (cases[c].analytic) o.tangent = mbs_tangent_analytic;
        mbs_integrator *it = mbs_integrator_create(m, d, &o, &err);
        CHECK(it != NULL, "create: %s", it ? "" : err.msg);
        if (!it) continue;
        /* warm-up: CVODES sets up its Jacobian on the first steps */
        int rc = MBS_OK;
        for (int k = 0; k < 3 && !rc; k++) rc = mbs_integrator_step(it, o.dt, &err);
        mbs_alloc_count = 0;
        mbs_alloc_counting = 1;
        for (int k = 0; k < 50 && !rc; k++) rc = mbs_integrator_step(it, o.dt, &err);
        mbs_alloc_counting = 0;
        CHECK(rc == MBS_OK, "steps: %s", err.msg);
        mbs_sim_stats st;
        mbs_integrator_stats(it, &st);
        printf("%-11s %-10s %-4s %-5s%s: %ld allocations in 50 steps (%ld internal steps)%s\n",
               mbs_integrator_name(o.integrator),
               o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL ? mbs_nl_solver_name(o.solver) : "",
               mbs_fd_algorithm_name(o.formulation),
               o.integrator == MBS_INTEGRATOR_CVODES ? mbs_cvodes_method_name(o.cvodes_method) : "",
               cases[c].analytic ? " analytical tangent" : "", mbs_alloc_count, st.steps,
               MBS_COUNT_ALLOC ? "" : " (not counted under AddressSanitizer)");
        CHECK(mbs_alloc_count == 0, "%s: %ld allocations during steps", mbs_integrator_name(o.integrator), mbs_alloc_count);
        mbs_integrator_free(it);
    }
    mbs_data_free(d);
    mbs_model_free(m);
    return mbs_test_summary("test_integrators_alloc");
}
