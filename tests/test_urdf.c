/*
 * test_urdf.c - the URDF loader on small URDFs of our own (tests/urdf/):
 * errors name file:line; a small robot with every joint type, fixed joints,
 * a massless link and a massive link merged into their parents: counts,
 * names, merged inertia, limits, and kinematics at a known q against a hand
 * computation; warnings for lenient inertias; dispatch on ".urdf" in
 * mbs_model_load; JSON "lenient_inertia"; loading from text; derivatives
 * (complex step).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbs_testing.h"
#include "model_compare.h"

static const double PI = 3.14159265358979323846;


/* ---------------------------------------------------------------- errors */

static void expect_error(const char *rel, int code, const char *line_prefix, const char *const *needles)
{
    char path[4096], prefix[4200];
    snprintf(path, sizeof path, "%s", mbs_test_path(rel));
    snprintf(prefix, sizeof prefix, "%s%s", path, line_prefix);
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_urdf(path, NULL, &err);
    if (getenv("MBS_TEST_VERBOSE")) printf("%s\n", err.msg);
    CHECK(m == NULL, "%s: the model was accepted", rel);
    mbs_model_free(m);
    CHECK(err.code == code, "%s: status %d, expected %d: %s", rel, err.code, code, err.msg);
    CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0, "%s: message does not start with \"%s\": %s", rel,
          prefix, err.msg);
    CHECK(strchr(err.msg, '\n') == NULL, "%s: message is not one line: %s", rel, err.msg);
    for (const char *const *n = needles; *n; n++)
        CHECK(strstr(err.msg, *n) != NULL, "%s: message lacks \"%s\": %s", rel, *n, err.msg);
}

static void test_errors(void)
{
    expect_error("tests/urdf/malformed.urdf", MBS_ERR_PARSE, ":7:",
                 (const char *const[]){ "XML error", "inertial", NULL });
    expect_error("tests/urdf/no_inertial.urdf", MBS_ERR_MODEL, ":9: ",
                 (const char *const[]){ "link arm", "no <inertial>", "j1", NULL });
    expect_error("tests/urdf/bad_joint_type.urdf", MBS_ERR_MODEL, ":7: ",
                 (const char *const[]){ "joint j1", "unknown joint type \"hinge\"", NULL });
    expect_error("tests/urdf/dangling_parent.urdf", MBS_ERR_MODEL, ":8: ",
                 (const char *const[]){ "joint j1", "parent link \"bsae\" does not exist", NULL });
    expect_error("tests/urdf/dangling_child.urdf", MBS_ERR_MODEL, ":9: ",
                 (const char *const[]){ "joint j1", "child link \"amr\" does not exist", NULL });
    expect_error("tests/urdf/not_pd.urdf", MBS_ERR_MODEL, ":12: ",
                 (const char *const[]){ "link arm", "not positive definite", NULL });
    expect_error("tests/urdf/does_not_exist.urdf", MBS_ERR_IO, ": ", (const char *const[]){ "cannot read", NULL });
    expect_error("tests/urdf/entity_attribute.urdf", MBS_ERR_MODEL, ":7: ",
                 (const char *const[]){ "<link name=", "entity reference &e;", "not supported", NULL });
    expect_error("tests/urdf", MBS_ERR_IO, ": ", (const char *const[]){ "is a directory", NULL });

    /* the root of the small robot is massless: it cannot float */
    mbs_urdf_options o = { 1, 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_urdf(mbs_test_path("tests/urdf/small_robot.urdf"), &o, &err);
    CHECK(m == NULL && strstr(err.msg, "small_robot.urdf:7: link world is the floating base") != NULL, "%s",
          err.msg);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- warnings */

typedef struct { int n; char text[4096]; } wlog;

static void collect(void *user, const char *msg)
{
    wlog *w = user;
    size_t len = strlen(w->text);
    snprintf(w->text + len, sizeof w->text - len, "%s\n", msg);
    w->n++;
}

static void test_warnings(void)
{
    const char *path = mbs_test_path("tests/urdf/triangle.urdf");
    char where[4200];
    snprintf(where, sizeof where, "%s:15: link rod: inertia violates the triangle inequality", path);
    wlog w = { 0, "" };
    mbs_urdf_options o = { 0, 0, collect, &w, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_urdf(path, &o, &err);
    CHECK(m != NULL, "%s", err.msg);
    CHECK(w.n == 1 && strstr(w.text, where) == w.text, "warnings: %s", w.text);
    /* the lenient policy stays with the model */
    if (m && mbs_model_nparams(m) == 0) {
        mbs_model *c = mbs_model_with_params(m, NULL, &err);
        CHECK(c != NULL, "%s", err.msg);
        mbs_model_free(c);
    }
    mbs_model_free(m);

    /* mbs_model_load_warn dispatches on the extension and reports */
    w.n = 0;
    w.text[0] = '\0';
    m = mbs_model_load_warn(path, collect, &w, &err);
    CHECK(m != NULL && w.n == 1, "%d warnings: %s", w.n, m ? w.text : err.msg);
    mbs_model_free(m);
    m = mbs_model_load(path, &err);   /* silently */
    CHECK(m != NULL, "%s", err.msg);
    mbs_model_free(m);

    /* strict */
    o.strict_inertia = 1;
    m = mbs_model_load_urdf(path, &o, &err);
    CHECK(m == NULL && strstr(err.msg, where) == err.msg, "%s", err.msg);
    mbs_model_free(m);

    /* JSON: strict unless "lenient_inertia": true */
    const char *json =
        "{\"bodies\": [{\"name\": \"rod\", \"mass\": 1, \"inertia\": [0.1, 0.1, 1, 0, 0, 0]}],"
        " \"joints\": [{\"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"rod\"}]%s}";
    char buf[1024];
    snprintf(buf, sizeof buf, json, "");
    m = mbs_model_load_string(buf, "t.json", &err);
    CHECK(m == NULL && strstr(err.msg, "triangle inequality") != NULL, "%s", m ? "accepted" : err.msg);
    mbs_model_free(m);
    snprintf(buf, sizeof buf, json, ", \"lenient_inertia\": true");
    m = mbs_model_load_string(buf, "t.json", &err);
    CHECK(m != NULL, "%s", err.msg);
    mbs_model_free(m);
    snprintf(buf, sizeof buf, json, ", \"lenient_inertia\": 1");
    m = mbs_model_load_string(buf, "t.json", &err);
    CHECK(m == NULL && strstr(err.msg, "t.json: lenient_inertia: expected true or false") != NULL, "%s",
          m ? "accepted" : err.msg);
    mbs_model_free(m);
    /* a lenient JSON file reports through mbs_model_load_warn */
    char tmp[] = "/tmp/mbs_test_urdf_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        snprintf(buf, sizeof buf, json, ", \"lenient_inertia\": true");
        fputs(buf, f);
        fclose(f);
        w.n = 0;
        w.text[0] = '\0';
        m = mbs_model_load_warn(tmp, collect, &w, &err);
        CHECK(m != NULL && w.n == 1 && strstr(w.text, "body rod: inertia violates the triangle inequality"),
              "%s", m ? w.text : err.msg);
        mbs_model_free(m);
        remove(tmp);
    }
}

/* ---------------------------------------------------------------- loading from text */

/* The whole file rel of the source tree, malloc'd (NULL if unreadable). */
static char *slurp(const char *rel)
{
    FILE *f = fopen(mbs_test_path(rel), "rb");
    if (!f) return NULL;
    char *text = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        text = n >= 0 ? malloc((size_t)n + 1) : NULL;
        rewind(f);
        if (text && fread(text, 1, (size_t)n, f) == (size_t)n) text[n] = '\0';
        else { free(text); text = NULL; }
    }
    fclose(f);
    return text;
}

/* mbs_model_load_urdf_string gives the model of the file (same JSON text),
 * its messages and warnings name the text's name; mbs_model_load_string_warn
 * reports the warnings of a JSON text. */
static void test_strings(void)
{
    mbs_error err = { 0, "" };
    char *xml = slurp("tests/urdf/small_robot.urdf");
    CHECK(xml != NULL, "read small_robot.urdf");
    mbs_model *mf = mbs_model_load_urdf(mbs_test_path("tests/urdf/small_robot.urdf"), NULL, &err);
    mbs_model *ms = xml ? mbs_model_load_urdf_string(xml, "robot.urdf", NULL, &err) : NULL;
    CHECK(mf && ms, "load: %s", err.msg);
    char *jf = mf ? mbs_model_to_json(mf, &err) : NULL, *js = ms ? mbs_model_to_json(ms, &err) : NULL;
    CHECK(jf && js && strcmp(jf, js) == 0, "file and text give the same model");
    free(jf);
    free(js);
    mbs_model_free(mf);
    mbs_model_free(ms);
    free(xml);

    xml = slurp("tests/urdf/malformed.urdf");
    ms = xml ? mbs_model_load_urdf_string(xml, "bad.urdf", NULL, &err) : NULL;
    CHECK(!ms && err.code == MBS_ERR_PARSE && strncmp(err.msg, "bad.urdf:7:10: XML error", 24) == 0, "%s", err.msg);
    mbs_model_free(ms);
    free(xml);
    ms = mbs_model_load_urdf_string("<robot/>", NULL, NULL, &err);
    CHECK(!ms && strstr(err.msg, "<string>:1: <robot> has no <link>") == err.msg, "%s", err.msg);
    ms = mbs_model_load_urdf_string(NULL, NULL, NULL, &err);
    CHECK(!ms && err.code == MBS_ERR_ARG, "NULL text: %s", err.msg);

    xml = slurp("tests/urdf/triangle.urdf");
    wlog w = { 0, "" };
    mbs_urdf_options o = { 0, 0, collect, &w, 0, MBS_VELOCITIES_EULER_RATES };
    ms = xml ? mbs_model_load_urdf_string(xml, "tri.urdf", &o, &err) : NULL;
    CHECK(ms && w.n == 1 && strstr(w.text, "tri.urdf:15: link rod: inertia violates") == w.text, "%s",
          ms ? w.text : err.msg);
    mbs_model_free(ms);
    free(xml);

    const char *json =
        "{\"bodies\": [{\"name\": \"rod\", \"mass\": 1, \"inertia\": [0.1, 0.1, 1, 0, 0, 0]}],"
        " \"joints\": [{\"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"rod\"}],"
        " \"lenient_inertia\": true}";
    w.n = 0;
    w.text[0] = '\0';
    ms = mbs_model_load_string_warn(json, "t.json", collect, &w, &err);
    CHECK(ms && w.n == 1 && strstr(w.text, "t.json") == w.text && strstr(w.text, "body rod: inertia violates"),
          "%s", ms ? w.text : err.msg);
    mbs_model_free(ms);
}

/* ---------------------------------------------------------------- the small robot */

static void rotz(double R[9], double t) { double c = cos(t), s = sin(t); double A[9] = { c, -s, 0, s, c, 0, 0, 0, 1 }; memcpy(R, A, sizeof A); }
static void roty(double R[9], double t) { double c = cos(t), s = sin(t); double A[9] = { c, 0, s, 0, 1, 0, -s, 0, c }; memcpy(R, A, sizeof A); }
static void rotx(double R[9], double t) { double c = cos(t), s = sin(t); double A[9] = { 1, 0, 0, 0, c, -s, 0, s, c }; memcpy(R, A, sizeof A); }
static void mul(double C[9], const double A[9], const double B[9])
{
    double T[9];
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) T[3 * r + k] = A[3 * r] * B[k] + A[3 * r + 1] * B[3 + k] + A[3 * r + 2] * B[6 + k];
    memcpy(C, T, sizeof T);
}
/* y = o + R x */
static void place(double y[3], const double o[3], const double R[9], double x0, double x1, double x2)
{
    for (int r = 0; r < 3; r++) y[r] = o[r] + R[3 * r] * x0 + R[3 * r + 1] * x1 + R[3 * r + 2] * x2;
}

static void check_pose(const mbs_model *m, const mbs_data *d, const char *body, const double Rexp[9],
                       const double oexp[3])
{
    int i = mbs_body_find(m, body);
    CHECK(i > 0, "body %s missing", body);
    if (i <= 0) return;
    double A[9], o[3];
    mbs_body_pose(d, i, A, o);
    /* poses through the tree: round-off of the model */
    const double ro = MBS_ROUNDOFF(mbs_model_nbodies(m));
    for (int k = 0; k < 9; k++) CHECK_CLOSE(A[k], Rexp[k], ro, "%s: A[%d]", body, k);
    for (int k = 0; k < 3; k++) CHECK_CLOSE(o[k], oexp[k], ro, "%s: origin[%d]", body, k);
}

static void check_point(const mbs_model *m, const mbs_data *d, const char *name, const double rexp[3])
{
    int k = mbs_point_find(m, name);
    CHECK(k >= 0, "point %s missing", name);
    if (k < 0) return;
    double r[3];
    mbs_point_kinematics(m, d, k, r, NULL, NULL);
    for (int c = 0; c < 3; c++)
        CHECK_CLOSE(r[c], rexp[c], MBS_ROUNDOFF(mbs_model_nbodies(m)), "point %s[%d]", name, c);
}

static int coord(const mbs_model *m, const char *name)
{
    for (int k = 0; k < mbs_model_nq(m); k++)
        if (strcmp(mbs_coord_name(m, k), name) == 0) return k;
    CHECK(0, "coordinate %s missing", name);
    return 0;
}

static void test_small_robot(void)
{
    mbs_error err = { 0, "" };
    wlog w = { 0, "" };
    mbs_urdf_options o = { 0, 0, collect, &w, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_model *m = mbs_model_load_urdf(mbs_test_path("tests/urdf/small_robot.urdf"), &o, &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    CHECK(w.n == 0, "unexpected warnings: %s", w.text);
    CHECK(strcmp(mbs_model_name(m), "small") == 0, "name %s", mbs_model_name(m));
    /* bodies: the moving links; base_frame is merged into the ground,
     * sensor into upper, weight into carriage */
    CHECK(mbs_model_nbodies(m) == 6, "nbodies %d", mbs_model_nbodies(m));
    CHECK(mbs_model_nq(m) == 14, "nq %d", mbs_model_nq(m));
    CHECK(mbs_model_ndof(m) == 13, "ndof %d", mbs_model_ndof(m));
    static const char *const bodies[] = { "upper", "fore", "carriage", "free_body", "puck", "flap" };
    for (int k = 0; k < 6; k++) CHECK(mbs_body_find(m, bodies[k]) > 0, "body %s missing", bodies[k]);
    CHECK(mbs_body_find(m, "sensor") < 0 && mbs_body_find(m, "weight") < 0 && mbs_body_find(m, "world") < 0,
          "merged links are not bodies");
    static const char *const coords[] = { "shoulder", "elbow", "slider", "float.x", "float.e0", "float.e3",
                                          "slide_plane.s1", "slide_plane.s2", "slide_plane.theta", "tilt" };
    for (int k = 0; k < 10; k++) (void)coord(m, coords[k]);
    int ishoulder = mbs_body_find(m, "upper"), icarr = mbs_body_find(m, "carriage");
    CHECK(mbs_joint_type_of(m, ishoulder) == MBS_JOINT_REVOLUTE, "shoulder type");
    CHECK(mbs_joint_type_of(m, mbs_body_find(m, "fore")) == MBS_JOINT_REVOLUTE, "continuous -> revolute");
    CHECK(mbs_joint_type_of(m, icarr) == MBS_JOINT_PRISMATIC, "prismatic");
    CHECK(mbs_joint_type_of(m, mbs_body_find(m, "free_body")) == MBS_JOINT_FLOATING, "floating");
    CHECK(mbs_joint_type_of(m, mbs_body_find(m, "puck")) == MBS_JOINT_PLANAR, "planar");
    CHECK(mbs_body_parent(m, mbs_body_find(m, "fore")) == ishoulder, "fore hangs from upper (through sensor)");

    /* limits and dynamics kept as data */
    const mbs_joint_info *js = &m->joint[ishoulder];
    CHECK(js->has_limit && js->lower == -1 && js->upper == 1 && js->effort == 10 && js->velocity == 2,
          "shoulder limits");
    CHECK(js->has_dynamics && js->damping == 0.5 && js->friction == 0.1, "shoulder dynamics");
    const mbs_joint_info *je = &m->joint[mbs_body_find(m, "fore")];
    CHECK(!je->has_limit && !je->has_dynamics && isnan(je->lower), "elbow: no limits");

    /* merged inertia of carriage + weight (0.5 kg at 0, 0.2 kg at z = 0.05); the inertias merged
     * and turned in the loader, against closed forms: round-off of two bodies */
    const double *x = m->x, ro2 = MBS_ROUNDOFF(2);
    const mbs_body_info *bc = &m->body[icarr];
    CHECK_CLOSE(x[bc->x_mass], 0.7, ro2, "carriage mass");
    CHECK_CLOSE(x[bc->x_com + 2], 0.2 * 0.05 / 0.7, ro2, "carriage com z");
    double red = 0.5 * 0.2 / 0.7 * 0.05 * 0.05;
    CHECK_CLOSE(x[bc->x_inertia + 0], 0.0011 + red, ro2, "carriage Ixx");
    CHECK_CLOSE(x[bc->x_inertia + 1], 0.0011 + red, ro2, "carriage Iyy");
    CHECK_CLOSE(x[bc->x_inertia + 2], 0.0011, ro2, "carriage Izz");
    /* fore: inertial frame turned by pitch 0.3: I = Ry diag Ry^T */
    const mbs_body_info *bf = &m->body[mbs_body_find(m, "fore")];
    double c3 = cos(0.3), s3 = sin(0.3);
    CHECK_CLOSE(x[bf->x_inertia + 0], 0.001 * c3 * c3 + 0.01 * s3 * s3, ro2, "fore Ixx");
    CHECK_CLOSE(x[bf->x_inertia + 2], 0.001 * s3 * s3 + 0.01 * c3 * c3, ro2, "fore Izz");
    CHECK_CLOSE(x[bf->x_inertia + 4], (0.01 - 0.001) * c3 * s3, ro2, "fore Ixz");
    CHECK_CLOSE(x[bf->x_com + 0], 0.15, ro2, "fore com");
    /* points and vectors of merged frames */
    CHECK(mbs_point_find(m, "upper.sensor") >= 0 && mbs_point_find(m, "carriage.weight") >= 0 &&
              mbs_point_find(m, "ground.base_frame") >= 0, "merged frames are named points");

    /* kinematics at a known q */
    mbs_data *d = mbs_data_create(m, &err);
    CHECK(d != NULL, "%s", err.msg);
    int nq = mbs_model_nq(m);
    double *q = calloc((size_t)nq, sizeof *q);
    const double t1 = 0.4, t2 = -0.7, s = 0.12, fx = 0.3, fy = -0.2, fz = 0.9, s1 = 0.25, s2 = -0.4, th = 1.1,
                 tt = 0.35;
    const double p[4] = { cos(0.3), sin(0.3) * 0.6, 0, sin(0.3) * 0.8 };   /* 0.6 rad about (0.6, 0, 0.8) */
    q[coord(m, "shoulder")] = t1;
    q[coord(m, "elbow")] = t2;
    q[coord(m, "slider")] = s;
    q[coord(m, "float.x")] = fx;
    q[coord(m, "float.y")] = fy;
    q[coord(m, "float.z")] = fz;
    for (int k = 0; k < 4; k++) {
        static const char *const e[4] = { "float.e0", "float.e1", "float.e2", "float.e3" };
        q[coord(m, e[k])] = p[k];
    }
    q[coord(m, "slide_plane.s1")] = s1;
    q[coord(m, "slide_plane.s2")] = s2;
    q[coord(m, "slide_plane.theta")] = th;
    q[coord(m, "tilt")] = tt;
    CHECK(mbs_kinematics(m, d, q, NULL, NULL) == MBS_OK, "kinematics");

    /* hand computation, link by link from the URDF */
    double R0[9], Rt[9], Ru[9], Rs[9], Rf[9], o0[3] = { 0, 0, 0.5 }, ou[3], os[3], of[3], oc[3], ow[3];
    rotz(R0, PI / 2);
    place(ou, o0, R0, 0.1, 0, 0);
    rotz(Rt, t1);
    mul(Ru, R0, Rt);
    place(os, ou, Ru, 0.4, 0, 0);
    rotx(Rt, PI / 2);
    mul(Rs, Ru, Rt);
    place(of, os, Rs, 0, 0, 0.1);
    roty(Rt, t2);
    mul(Rf, Rs, Rt);
    place(oc, of, Rf, 0.3 + s, 0, 0);
    place(ow, oc, Rf, 0, 0, 0.05);
    check_pose(m, d, "upper", Ru, ou);
    check_pose(m, d, "fore", Rf, of);
    check_pose(m, d, "carriage", Rf, oc);
    check_point(m, d, "upper.sensor", os);
    check_point(m, d, "carriage.weight", ow);
    check_point(m, d, "ground.base_frame", o0);
    /* the merged frame's axes: sensor z = Rs e_z */
    {
        int v = -1;
        for (int k = 0; k < mbs_model_nvectors(m); k++)
            if (strcmp(mbs_vector_name(m, k), "upper.sensor_z") == 0) v = k;
        CHECK(v >= 0, "vector upper.sensor_z missing");
        if (v >= 0) {
            double u[3];
            mbs_vector_kinematics(m, d, v, u, NULL, NULL);
            for (int k = 0; k < 3; k++)
                CHECK_CLOSE(u[k], Rs[3 * k + 2], MBS_ROUNDOFF(mbs_model_nbodies(m)), "sensor_z[%d]", k);
        }
    }
    /* floating: origin (1, 0, 0) + t, rotation A(p) (6 about (0.6, 0, 0.8)) */
    {
        double A[9], n[3] = { 0.6, 0, 0.8 }, c = cos(0.6), sn = sin(0.6), o[3] = { 1 + fx, fy, fz };
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) {
                double sk[9] = { 0, -n[2], n[1], n[2], 0, -n[0], -n[1], n[0], 0 };
                A[3 * r + k] = c * (r == k) + (1 - c) * n[r] * n[k] + sn * sk[3 * r + k];
            }
        check_pose(m, d, "free_body", A, o);
    }
    /* planar: s1 along x, s2 along y, theta about z; then tilt about x */
    {
        double Rp[9], Rfl[9], op[3] = { s1, 1 + s2, 0 }, ofl[3];
        rotz(Rp, th);
        check_pose(m, d, "puck", Rp, op);
        place(ofl, op, Rp, 0, 0, 0.02);
        rotx(Rt, tt);
        mul(Rfl, Rp, Rt);
        check_pose(m, d, "flap", Rfl, ofl);
    }

    /* analytical derivatives vs complex step, to round-off */
    mbs_test_check_derivatives(m, 3, 7, "small_robot");

    /* the model also loads through mbs_model_load */
    mbs_model *m2 = mbs_model_load(mbs_test_path("tests/urdf/small_robot.urdf"), &err);
    CHECK(m2 != NULL && mbs_model_nq(m2) == nq, "%s", m2 ? "" : err.msg);
    mbs_model_free(m2);

    /* JSON round trip */
    (void)mbs_test_json_round_trip(m, "small_robot.json", 5);
    /* limits and dynamics: public accessors, kept through JSON */
    {
        char *json = mbs_model_to_json(m, &err);
        mbs_model *mj = json ? mbs_model_load_string(json, "small.json", &err) : NULL;
        free(json);
        CHECK(mj != NULL, "%s", err.msg);
        const mbs_model *ms[2] = { m, mj };
        for (int k = 0; k < 2 && mj; k++) {
            double lim[4], dyn[2];
            int is = mbs_body_find(ms[k], "upper"), ie = mbs_body_find(ms[k], "fore");
            int ic = mbs_body_find(ms[k], "carriage");
            CHECK(mbs_joint_limit(ms[k], is, lim) == 1 && lim[0] == -1 && lim[1] == 1 && lim[2] == 10 &&
                      lim[3] == 2, "shoulder limit (%s)", k ? "JSON" : "URDF");
            CHECK(mbs_joint_dynamics(ms[k], is, dyn) == 1 && dyn[0] == 0.5 && dyn[1] == 0.1,
                  "shoulder dynamics (%s)", k ? "JSON" : "URDF");
            CHECK(mbs_joint_limit(ms[k], ie, lim) == 0 && isnan(lim[0]) && mbs_joint_dynamics(ms[k], ie, dyn) == 0,
                  "elbow has none (%s)", k ? "JSON" : "URDF");
            CHECK(mbs_joint_limit(ms[k], ic, lim) == 1 && lim[0] == 0 && lim[1] == 0.2 &&
                      mbs_joint_dynamics(ms[k], ic, dyn) == 0 && isnan(dyn[0]), "slider (%s)", k ? "JSON" : "URDF");
            CHECK(mbs_joint_limit(ms[k], 0, lim) == -1, "joint 0 is invalid");
        }
        mbs_model_free(mj);
        /* errors name the JSON path */
        const char *bad[][2] = {
            { "{\"lower\": \"x\"}", "joints[0].limit.lower: expected a number" },
            { "{\"min\": 1}", "joints[0].limit: unknown member \"min\"" },
            { "3", "joints[0].limit: expected an object" },
        };
        for (int k = 0; k < 3; k++) {
            char buf[1024];
            snprintf(buf, sizeof buf,
                     "{\"bodies\": [{\"name\": \"b\", \"mass\": 1, \"inertia\": [1, 1, 1, 0, 0, 0]}],"
                     " \"joints\": [{\"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\","
                     " \"child\": \"b\", \"limit\": %s}]}", bad[k][0]);
            mbs_model *mb = mbs_model_load_string(buf, "lim.json", &err);
            CHECK(mb == NULL && strstr(err.msg, bad[k][1]) != NULL, "%s", mb ? "accepted" : err.msg);
            mbs_model_free(mb);
        }
    }

    free(q);
    mbs_data_free(d);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- velocities */

/* mbs_urdf_options.velocities: the floating base and the URDF's floating and
 * spherical joints take the convention; tangent gives the model of
 * mbs_model_with_velocities on the Euler-rate load, field by field. */
static const char VEL_URDF[] =
    "<robot name='v'>"
    "<link name='base'><inertial><mass value='2'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>"
    "</inertial></link>"
    "<link name='a'><inertial><origin xyz='0 0 -0.5'/><mass value='1'/>"
    "<inertia ixx='0.1' iyy='0.2' izz='0.25' ixy='0' ixz='0' iyz='0'/></inertial></link>"
    "<link name='b'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/>"
    "</inertial></link>"
    "<link name='c'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/>"
    "</inertial></link>"
    "<joint name='ball' type='spherical'><parent link='base'/><child link='a'/><origin xyz='0 0 1' rpy='0.1 0.2 0.3'/>"
    "</joint>"
    "<joint name='free' type='floating'><parent link='a'/><child link='b'/><origin xyz='0.2 0 0'/></joint>"
    "<joint name='hinge' type='revolute'><parent link='b'/><child link='c'/><axis xyz='0 1 0'/>"
    "<limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"
    "</robot>";

static void test_velocities(void)
{
    char xml[sizeof VEL_URDF];
    for (size_t k = 0; k < sizeof xml; k++) xml[k] = VEL_URDF[k] == '\'' ? '"' : VEL_URDF[k];
    mbs_error err = { 0, "" };
    mbs_urdf_options o = { 1, 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
    mbs_model *mE = mbs_model_load_urdf_string(xml, "v.urdf", &o, &err);
    CHECK(mE != NULL, "Euler rates: %s", err.msg);
    o.velocities = MBS_VELOCITIES_TANGENT;
    mbs_model *mT = mbs_model_load_urdf_string(xml, "v.urdf", &o, &err);
    CHECK(mT != NULL, "tangent: %s", err.msg);
    mbs_model *mD = mbs_model_load_urdf_string(xml, "v.urdf", NULL, &err);   /* the default */
    CHECK(mD != NULL, "default: %s", err.msg);
    if (mE && mT && mD) {
        /* root_joint (7), ball (4), free (7), hinge (1) */
        CHECK(mbs_model_nq(mE) == 19 && mbs_model_nv(mE) == 19, "Euler rates: nq %d, nv %d", mbs_model_nq(mE),
              mbs_model_nv(mE));
        CHECK(mbs_model_nq(mT) == 19 && mbs_model_nv(mT) == 16, "tangent: nq %d, nv %d", mbs_model_nq(mT),
              mbs_model_nv(mT));
        CHECK(mbs_model_nq(mD) == 12 && mbs_model_nv(mD) == 12, "the default (fixed base) is Euler rates: nv %d",
              mbs_model_nv(mD));
        for (int j = 1; j <= mbs_model_nbodies(mT); j++) {
            const mbs_joint_type t = mbs_joint_type_of(mT, j);
            const int moving = t == MBS_JOINT_FLOATING || t == MBS_JOINT_SPHERICAL;
            CHECK(mbs_joint_velocities(mT, j) == (moving ? MBS_VELOCITIES_TANGENT : MBS_VELOCITIES_EULER_RATES),
                  "joint %d: velocities %d", j, mbs_joint_velocities(mT, j));
            CHECK(mbs_joint_velocities(mE, j) == MBS_VELOCITIES_EULER_RATES, "joint %d: Euler rates", j);
        }
        mbs_model *mW = mbs_model_with_velocities(mE, MBS_VELOCITIES_TANGENT, &err);
        CHECK(mW != NULL, "with_velocities: %s", err.msg);
        if (mW) CHECK(mbs_test_same_model(mT, mW, "URDF tangent vs mbs_model_with_velocities") == 0, "same model");
        mbs_model_free(mW);
    }
    mbs_model_free(mE);
    mbs_model_free(mT);
    mbs_model_free(mD);
}

int main(void)
{
    test_errors();
    test_velocities();
    test_warnings();
    test_strings();
    test_small_robot();
    return mbs_test_summary("test_urdf");
}
