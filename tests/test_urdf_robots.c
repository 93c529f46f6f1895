/*
 * test_urdf_robots.c - the 16 robots of example-robot-data (BSD-3, not part
 * of this repository) load, with the expected sizes and warnings, fixed and
 * on a floating base, and the analytical derivatives agree with complex step
 * on each of them, and the JSON written by mbs_model_to_json gives the same
 * dynamics (ID, M, FD at random states); both to round-off (testutil.h).
 *
 * The directory is $MBS_URDF_DIR, default ../shared/data/example-robot-data
 * relative to the source directory; if it is absent the test prints
 * "skipped" and returns 77 (CTest SKIP_RETURN_CODE).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct {
    const char *file;
    int ndof;                      /* fixed base */
    int nbodies;                   /* fixed base */
    const char *warn_links;        /* space-separated links named in the warnings, "" if none */
} robot;

/* Sizes from the files: ndof = revolute + continuous + prismatic joints;
 * bodies = the same (fixed joints are merged). The warned links are those
 * whose inertia violates the triangle inequality I1 + I2 >= I3 (computed
 * independently while writing this test: principal moments in closed form,
 * trigonometric solution of the characteristic cubic, relative tolerance
 * 1e-9 as in docs/model-format.md). In icub_reduced, seven of them (head,
 * l_ankle_2, r_ankle_1, r_ankle_2, r_hip_2, r_lower_leg, r_upper_leg) are
 * point masses written with round-off (largest entries 2e-35 to 4e-18
 * kg m^2), which the loader takes as point masses, with a warning of its
 * own.
 *
 * Floating base: icub_reduced's floating body (base_link, a 1e-6 dummy in
 * every inertia entry, singular, with the point mass root_link fixed to it)
 * has a singular inertia: it is rejected unless balance_inertia is set. */
static const robot ROBOTS[] = {
    { "a1.urdf", 12, 12, "" },
    { "anymal.urdf", 12, 12, "base" },
    { "baxter.urdf", 19, 19, "" },
    { "double_pendulum.urdf", 2, 2, "" },
    { "go2.urdf", 12, 12, "" },
    { "hyq_no_sensors.urdf", 12, 12, "base_link lf_foot rf_foot lh_foot rh_foot" },
    { "icub_reduced.urdf", 29, 29,
      "base_link head l_ankle_2 r_ankle_1 r_ankle_2 r_hip_2 r_lower_leg r_upper_leg" },
    { "kinova.urdf", 6, 6, "" },
    { "panda.urdf", 9, 9, "" },
    { "pr2.urdf", 30, 30, "sensor_mount_link double_stereo_link" },
    { "romeo_small.urdf", 31, 31, "RShoulderYawLink RElbowYawLink" },
    { "simple_humanoid.urdf", 29, 29, "" },
    { "solo12.urdf", 12, 12, "" },
    { "talos_full_v2.urdf", 44, 44, "" },
    { "talos_reduced.urdf", 32, 32, "gripper_left_motor_single_link gripper_right_motor_single_link" },
    { "ur5_robot.urdf", 6, 6, "" },
};
#define NROBOTS ((int)(sizeof ROBOTS / sizeof ROBOTS[0]))

typedef struct { int n; char text[16384]; } wlog;

static void collect(void *user, const char *msg)
{
    wlog *w = user;
    size_t len = strlen(w->text);
    snprintf(w->text + len, sizeof w->text - len, "%s\n", msg);
    w->n++;
}

/* every warned link appears in the log as "link NAME: inertia ...", and
 * nothing else is warned */
static void check_warnings(const robot *r, const wlog *w)
{
    int expected = 0;
    char names[512];
    snprintf(names, sizeof names, "%s", r->warn_links);
    for (char *save = NULL, *t = strtok_r(names, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char needle[300];
        snprintf(needle, sizeof needle, ": link %s: inertia ", t);
        CHECK(strstr(w->text, needle) != NULL, "%s: no warning for link %s; warnings:\n%s", r->file, t, w->text);
        expected++;
    }
    CHECK(w->n == expected, "%s: %d warnings, expected %d:\n%s", r->file, w->n, expected, w->text);
}

int main(void)
{
    char dir[4096];
    if (mbs_test_urdf_dir(dir, sizeof dir) != 0) {
        printf("test_urdf_robots: skipped (no directory %s; set MBS_URDF_DIR)\n", dir);
        return 77;
    }
    for (int k = 0; k < NROBOTS; k++) {
        const robot *r = &ROBOTS[k];
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, r->file);
        for (int floating = 0; floating <= 1; floating++) {
            wlog w = { 0, "" };
            mbs_urdf_options o = { floating, 0, collect, &w, 0, MBS_VELOCITIES_EULER_RATES };
            mbs_error err = { 0, "" };
            const int icub = strcmp(r->file, "icub_reduced.urdf") == 0;
            if (floating && icub) {
                mbs_model *ms = mbs_model_load_urdf(path, &o, &err);
                CHECK(ms == NULL && strstr(err.msg, "body base_link: inertia not positive definite"), "%s",
                      ms ? "icub floating: singular base accepted" : err.msg);
                mbs_model_free(ms);
                o.balance_inertia = 1;
                w.n = 0;
                w.text[0] = '\0';
            }
            mbs_model *m = mbs_model_load_urdf(path, &o, &err);
            CHECK(m != NULL, "%s (floating %d): %s", r->file, floating, err.msg);
            if (!m) continue;
            int nd = r->ndof + 6 * floating, nb = r->nbodies + floating;
            CHECK(mbs_model_ndof(m) == nd, "%s: ndof %d, expected %d", r->file, mbs_model_ndof(m), nd);
            CHECK(mbs_model_nq(m) == nd + floating, "%s: nq %d", r->file, mbs_model_nq(m));
            CHECK(mbs_model_nbodies(m) == nb, "%s: %d bodies, expected %d", r->file, mbs_model_nbodies(m), nb);
            check_warnings(r, &w);
            /* strict loading refuses exactly the robots that warn */
            if (!floating) {
                mbs_urdf_options so = { 0, 1, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
                mbs_model *ms = mbs_model_load_urdf(path, &so, &err);
                CHECK((ms == NULL) == (r->warn_links[0] != '\0'), "%s: strict: %s", r->file,
                      ms ? "accepted" : err.msg);
                mbs_model_free(ms);
            }
            /* derivatives vs complex step (fixed base: 2 samples; floating: 1) */
            char label[600];
            snprintf(label, sizeof label, "%s (floating %d)", r->file, floating);
            /* to round-off, with the condition of M at each state (mbs_test_check_derivatives) */
            double worst = mbs_test_check_derivatives(m, floating ? 1 : 2, 11 + (unsigned long)k, label);
            snprintf(label, sizeof label, "%s.json", r->file);
            double rt = mbs_test_json_round_trip(m, label, 100 + (unsigned long)k);
            printf("%-22s %-8s bodies %2d  nq %2d  dof %2d  warnings %d  derivatives %.1e, "
                   "JSON round trip %.1e of the bounds\n", r->file, floating ? "floating" : "fixed",
                   mbs_model_nbodies(m), mbs_model_nq(m), mbs_model_ndof(m), w.n, worst, rt);
            mbs_model_free(m);
        }
    }
    return mbs_test_summary("test_urdf_robots");
}
