/*
 * test_urdf_visuals.c - the URDF <visual> and <collision> shapes a model
 * keeps for viewers (mbs_model_visual; src/io/load_urdf.c add_visuals):
 * shapes, sizes, placements in the body frame, colours inline and by name,
 * mesh names and mirrored scales; a malformed shape is skipped with a
 * warning naming file and line; copies keep them.
 *
 * Placements compose the link's placement in its body with the element's
 * <origin>: exact for the axis-aligned ones used here, so the checks are
 * exact except after rpy rotations (round-off, 1e-15).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

typedef struct { int n; char last[1024]; } warnings;

static void on_warning(void *user, const char *msg)
{
    warnings *w = user;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static void test_arm(void)
{
    mbs_error err;
    warnings w = { 0, "" };
    mbs_urdf_options o = { 0, 0, on_warning, &w, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_model *m = mbs_model_load_urdf(mbs_test_path("tests/urdf/viewer_arm.urdf"), &o, &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    CHECK(w.n == 0, "%d warnings: %s", w.n, w.last);
    CHECK(mbs_model_nvisuals(m) == 7, "%d shapes", mbs_model_nvisuals(m));
    mbs_visual v;
    /* base: a box on the ground (the root link), steel by name */
    CHECK(mbs_model_visual(m, 0, &v) == MBS_OK && v.body == 0 && v.shape == MBS_VISUAL_BOX && v.size[0] == 0.3 &&
          v.size[2] == 0.1 && v.p[2] == 0.05 && v.rgba[0] == 0.55 && v.rgba[3] == 1 && !v.collision,
          "base box: body %d shape %d size %g %g p %g rgba %g %g", v.body, (int)v.shape, v.size[0], v.size[2], v.p[2],
          v.rgba[0], v.rgba[3]);
    /* upper: a cylinder with an inline colour */
    CHECK(mbs_model_visual(m, 1, &v) == MBS_OK && v.body == mbs_body_find(m, "upper") &&
          v.shape == MBS_VISUAL_CYLINDER && v.size[0] == 0.04 && v.size[1] == 0.4 && v.rgba[1] == 0.55,
          "upper cylinder");
    /* fore: a box and a sphere; the mesh of tool; hand: a missing mesh and its collision box */
    CHECK(mbs_model_visual(m, 3, &v) == MBS_OK && v.shape == MBS_VISUAL_SPHERE && v.size[0] == 0.045 &&
          v.p[2] == 0.32 && !strcmp(v.link, "fore"), "fore sphere");
    CHECK(mbs_model_visual(m, 4, &v) == MBS_OK && v.shape == MBS_VISUAL_MESH && !strcmp(v.mesh, "meshes/wedge.stl") &&
          v.size[0] == 1 && v.body == mbs_body_find(m, "tool"), "tool mesh");
    CHECK(mbs_model_visual(m, 6, &v) == MBS_OK && v.collision && v.shape == MBS_VISUAL_BOX && v.rgba[3] < 0 &&
          v.p[2] == 0.04, "hand collision box");
    CHECK(mbs_model_visual(m, 7, &v) == MBS_ERR_ARG, "index past the end accepted");
    mbs_model *c = mbs_model_with_params(m, NULL, &err);   /* a copy */
    CHECK(c && mbs_model_nvisuals(c) == 7 && mbs_model_visual(c, 5, &v) == MBS_OK &&
          !strcmp(v.mesh, "package://viewer_arm_missing/meshes/hand.dae"), "copy keeps the shapes");
    mbs_model_free(c);
    mbs_model_free(m);
}

/* a merged (fixed) link, a mirrored mesh, a malformed shape */
static void test_merged_and_bad(void)
{
    static const char *urdf =
        "<robot name=\"r\">\n"
        "  <link name=\"a\"><inertial><mass value=\"1\"/>"
        "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
        "  <joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"0 0 1\"/></joint>\n"
        "  <link name=\"b\"><inertial><mass value=\"1\"/>"
        "<inertia ixx=\"0.1\" iyy=\"0.1\" izz=\"0.1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
        "    <visual><geometry><box size=\"1 -2 3\"/></geometry></visual>\n"
        "  </link>\n"
        "  <joint name=\"f\" type=\"fixed\"><parent link=\"b\"/><child link=\"c\"/>"
        "<origin xyz=\"1 0 0\" rpy=\"0 0 1.5707963267948966\"/></joint>\n"
        "  <link name=\"c\"><visual><origin xyz=\"0 2 0\"/>"
        "<geometry><mesh filename=\"m.stl\" scale=\"1 -1 1\"/></geometry></visual></link>\n"
        "</robot>\n";
    const char *path = "/tmp/mbs_test_urdf_visuals.urdf";
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(urdf, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    mbs_error err;
    warnings w = { 0, "" };
    mbs_urdf_options o = { 0, 0, on_warning, &w, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_model *m = mbs_model_load_urdf(path, &o, &err);
    remove(path);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    CHECK(w.n == 1 && strstr(w.last, "mbs_test_urdf_visuals.urdf:5: link b: negative size of <box> (shape ignored)"),
          "%d warnings: %s", w.n, w.last);
    mbs_visual v;
    CHECK(mbs_model_nvisuals(m) == 1 && mbs_model_visual(m, 0, &v) == MBS_OK, "%d shapes", mbs_model_nvisuals(m));
    /* c is merged into body b: origin (1, 0, 0) rotated by 90 deg about z, then (0, 2, 0) -> (-1, 0, 0) */
    const double p[3] = { -1, 0, 0 };
    CHECK(v.body == mbs_body_find(m, "b") && v.size[1] == -1 && !strcmp(v.link, "c") && mbs_rel_err(v.p, p, 3) < 1e-15,
          "merged mesh: body %d scale %g p %g %g %g", v.body, v.size[1], v.p[0], v.p[1], v.p[2]);
    mbs_model_free(m);
}

int main(void)
{
    test_arm();
    test_merged_and_bad();
    return mbs_test_summary("test_urdf_visuals");
}
