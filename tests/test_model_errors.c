/*
 * test_model_errors.c - every kind of bad model input is rejected with the
 * right status and a one-line message that names the offending item.
 *
 * JSON texts are written with single quotes for readability; q() turns
 * them into double quotes before loading.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbs_testing.h"

/* single quotes -> double quotes (static buffer) */
static const char *q(const char *s)
{
    static char buf[8192];
    size_t n = strlen(s);
    if (n >= sizeof buf) n = sizeof buf - 1;
    for (size_t k = 0; k < n; k++) buf[k] = s[k] == '\'' ? '"' : s[k];
    buf[n] = '\0';
    return buf;
}

/* Check a failed load: NULL model, status, one line starting with the
 * input name, and every needle present. */
static void check_failure(int line, mbs_model *m, const mbs_error *err, int code, const char *prefix,
                          const char *const *needles)
{
    if (getenv("MBS_TEST_VERBOSE")) printf("line %3d: %s\n", line, err->msg);
    CHECK(m == NULL, "case at line %d: the model was accepted", line);
    mbs_model_free(m);
    CHECK(err->code == code, "case at line %d: status %d (%s), expected %d (%s): %s", line, err->code,
          mbs_status_string(err->code), code, mbs_status_string(code), err->msg);
    CHECK(strncmp(err->msg, prefix, strlen(prefix)) == 0, "case at line %d: message does not start with \"%s\": %s",
          line, prefix, err->msg);
    CHECK(strchr(err->msg, '\n') == NULL, "case at line %d: message is not one line", line);
    for (const char *const *n = needles; *n; n++)
        CHECK(strstr(err->msg, *n) != NULL, "case at line %d: message lacks \"%s\": %s", line, *n, err->msg);
}

static void expect_string(int line, const char *json, int code, const char *const *needles)
{
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_string(q(json), "case.json", &err);
    check_failure(line, m, &err, code, "case.json", needles);
}

static void expect_file(int line, const char *rel, int code, const char *const *needles)
{
    mbs_error err = { 0, "" };
    const char *path = mbs_test_path(rel);
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s", path);
    mbs_model *m = mbs_model_load(path, &err);
    check_failure(line, m, &err, code, prefix, needles);
}

#define EXPECT(json, code, ...) expect_string(__LINE__, json, code, (const char *const[]){ __VA_ARGS__, NULL })
#define EXPECT_FILE(rel, code, ...) expect_file(__LINE__, rel, code, (const char *const[]){ __VA_ARGS__, NULL })

/* building blocks */
#define BODY(n) "{ 'name': '" n "', 'mass': 1, 'inertia': [1, 1, 1, 0, 0, 0] }"
#define BODYP(n) "{ 'name': '" n "', 'mass': 1, 'inertia': [1, 1, 1, 0, 0, 0], 'points': { 'tip': [1, 0, 0] } }"
#define JOINT(n, type, parent, child) \
    "{ 'name': '" n "', 'type': '" type "', 'parent': '" parent "', 'child': '" child "' }"
#define ONE_BODY(body_json) "{ 'bodies': [ " body_json " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a") " ] }"
#define ONE_JOINT(joint_json) "{ 'bodies': [ " BODYP("a") " ], 'joints': [ " joint_json " ] }"
#define WITH_PARAMS(params) \
    "{ 'bodies': [ " BODYP("a") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a") " ], 'parameters': [ " \
    params " ] }"

static void test_syntax(void)
{
    /* file: the real name and line:column */
    EXPECT_FILE("tests/models/bad_syntax.json", MBS_ERR_PARSE, "bad_syntax.json:5:");
    /* string: the given name stands for the file */
    EXPECT("{ 'bodies': [ }", MBS_ERR_PARSE, "case.json:1:");
    EXPECT("{ 'bodies': [],\n  'joints': [ 1, ]\n}", MBS_ERR_PARSE, "case.json:2:");
    /* duplicate keys */
    EXPECT("{ 'bodies': [ { 'name': 'a', 'mass': 1, 'mass': 2 } ], 'joints': [] }", MBS_ERR_PARSE, "case.json:1:",
           "duplicate");
    /* numbers that overflow a double */
    EXPECT("{ 'bodies': [ { 'name': 'a',\n 'mass': 1e999 } ], 'joints': [] }", MBS_ERR_PARSE, "case.json:2:",
           "overflow");
    EXPECT("{ 'gravity': [0, 0, -1e400], 'bodies': [], 'joints': [] }", MBS_ERR_PARSE, "case.json:1:", "overflow");
    /* missing file */
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load("/nonexistent/dir/model.json", &err);
    check_failure(__LINE__, m, &err, MBS_ERR_IO, "/nonexistent/dir/model.json", (const char *const[]){ "cannot", NULL });
    m = mbs_model_load_string(NULL, "x", &err);
    CHECK(m == NULL && err.code == MBS_ERR_ARG, "NULL text");
}

static void test_structure(void)
{
    EXPECT("[1, 2]", MBS_ERR_MODEL, "must be a JSON object");
    EXPECT("{ 'joints': [] }", MBS_ERR_MODEL, "missing required member", "bodies");
    EXPECT("{ 'bodies': [ " BODY("a") " ] }", MBS_ERR_MODEL, "missing required member", "joints");
    EXPECT("{ 'bodies': [], 'joints': [] }", MBS_ERR_MODEL, "bodies", "non-empty");
    EXPECT("{ 'bodies': {}, 'joints': [] }", MBS_ERR_MODEL, "bodies", "expected an array");
    EXPECT("{ 'bodies': [ " BODY("a") " ], 'joints': 'none' }", MBS_ERR_MODEL, "joints", "expected an array");
    /* unknown members: top level, body, joint, parameter, dh, target object */
    EXPECT("{ 'bodys': [], 'bodies': [ " BODY("a") " ], 'joints': [] }", MBS_ERR_MODEL, "unknown member",
           "bodys", "allowed: name, description, gravity, bodies, joints, parameters");
    EXPECT(ONE_BODY("{ 'name': 'a', 'masss': 1, 'mass': 1 }"), MBS_ERR_MODEL, "bodies[0]", "unknown member",
           "\"masss\"", "allowed: name, mass, com, inertia, points, vectors");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', 'axes': [0, 0, 1] }"),
           MBS_ERR_MODEL, "joints[0]", "\"axes\"", "allowed:");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': ['a.mass'], 'units': 'kg' }"), MBS_ERR_MODEL,
           "parameters[0]", "\"units\"");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': [ { 'target': 'a.mass', 'factor': 2 } ] }"),
           MBS_ERR_MODEL, "parameters[0].sets[0]", "\"factor\"", "target, scale, offset");
    /* missing required members */
    EXPECT(ONE_BODY("{ 'name': 'a', 'inertia': [1, 1, 1, 0, 0, 0] }"), MBS_ERR_MODEL, "bodies[0]",
           "missing required member \"mass\"");
    EXPECT(ONE_BODY("{ 'mass': 1 }"), MBS_ERR_MODEL, "bodies[0]", "missing required member \"name\"");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground' }"), MBS_ERR_MODEL, "joints[0]",
           "missing required member \"child\"");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'parent': 'ground', 'child': 'a' }"), MBS_ERR_MODEL, "joints[0]",
           "missing required member \"type\"");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'sets': ['a.mass'] }"), MBS_ERR_MODEL, "parameters[0]", "\"value\"");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1 }"), MBS_ERR_MODEL, "parameters[0]", "\"sets\"");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': [] }"), MBS_ERR_MODEL, "parameters[0].sets",
           "non-empty", "got an empty array");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': [ { 'scale': 2 } ] }"), MBS_ERR_MODEL,
           "parameters[0].sets[0]", "\"target\"");
}

static void test_types_and_lengths(void)
{
    /* wrong types */
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 'heavy' }"), MBS_ERR_MODEL, "bodies[0].mass", "expected a number",
           "a string");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': true }"), MBS_ERR_MODEL, "bodies[0].mass", "a boolean");
    EXPECT(ONE_BODY("{ 'name': 7, 'mass': 1 }"), MBS_ERR_MODEL, "bodies[0].name", "expected a string");
    EXPECT("{ 'bodies': [ 'a' ], 'joints': [] }", MBS_ERR_MODEL, "bodies[0]", "expected an object");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'points': [1, 0, 0] }"), MBS_ERR_MODEL, "bodies[0].points",
           "expected an object");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'com': [0, 'x', 0] }"), MBS_ERR_MODEL, "bodies[0].com",
           "element 1 is a string");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', 'parent_point': 5 }"),
           MBS_ERR_MODEL, "joints[0].parent_point", "or a point name");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': [ 3 ] }"), MBS_ERR_MODEL, "parameters[0].sets[0]",
           "expected a target name");
    EXPECT("{ 'description': 5, 'bodies': [ " BODY("a") " ], 'joints': [] }", MBS_ERR_MODEL, "description");
    /* wrong array lengths */
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'com': [1, 2] }"), MBS_ERR_MODEL, "bodies[0].com",
           "expected an array of 3 numbers, got 2 elements");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'inertia': [1, 1, 1] }"), MBS_ERR_MODEL, "bodies[0].inertia",
           "expected an array of 6 numbers or a 3x3 array, got an array of 3 elements");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'inertia': [[1, 0, 0], [0, 1], [0, 0, 1]] }"), MBS_ERR_MODEL,
           "bodies[0].inertia", "row 1");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'points': { 'tip': [1, 0] } }"), MBS_ERR_MODEL,
           "bodies[0].points.tip", "3 numbers");
    EXPECT("{ 'gravity': [0, -9.81], 'bodies': [ " BODY("a") " ], 'joints': [] }", MBS_ERR_MODEL, "gravity",
           "3 numbers");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', 'axis': [0, 1] }"),
           MBS_ERR_MODEL, "joints[0].axis", "3 numbers");
    /* q0 / qd0 of the wrong length */
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', 'q0': [0, 1] }"),
           MBS_ERR_MODEL, "joints[0].q0", "expected 1 value", "revolute");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'spherical', 'parent': 'ground', 'child': 'a', 'qd0': [0, 0, 0] }"),
           MBS_ERR_MODEL, "joints[0].qd0", "expected 4 values", "spherical");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'floating', 'parent': 'ground', 'child': 'a', 'q0': 1 }"),
           MBS_ERR_MODEL, "joints[0].q0", "expected an array");
}

static void test_joints(void)
{
    EXPECT(ONE_JOINT(JOINT("j1", "hinge", "ground", "a")), MBS_ERR_MODEL, "joints[0].type",
           "unknown joint type \"hinge\"", "fixed, revolute, prismatic, cylindrical, cardan, spherical, planar, floating");
    EXPECT(ONE_JOINT(JOINT("j1", "revolute", "ground", "lnk")), MBS_ERR_MODEL, "joints[0].child",
           "unknown body \"lnk\"");
    EXPECT(ONE_JOINT(JOINT("j1", "revolute", "grond", "a")), MBS_ERR_MODEL, "joints[0].parent",
           "unknown body \"grond\"");
    EXPECT("{ 'bodies': [ " BODYP("a") ", " BODY("b") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a")
           ", { 'name': 'j2', 'type': 'revolute', 'parent': 'a', 'child': 'b', 'parent_point': 'tpi' } ] }",
           MBS_ERR_MODEL, "joints[1].parent_point", "unknown point \"tpi\"", "body a");
    EXPECT("{ 'bodies': [ " BODYP("a") ", " BODY("b") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a")
           ", { 'name': 'j2', 'type': 'revolute', 'parent': 'a', 'child': 'b', 'child_point': 'a.tip' } ] }",
           MBS_ERR_MODEL, "joints[1].child_point", "\"a.tip\"", "body b");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', 'axis': [0, 0, 0] }"),
           MBS_ERR_MODEL, "joints[0]", "joint j1", "axis is zero");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'cardan', 'parent': 'ground', 'child': 'a', "
                     "'axis': [0, 0, 1], 'child_axis': [0, 0, 0] }"),
           MBS_ERR_MODEL, "joints[0]", "child axis is zero");
    EXPECT(ONE_JOINT(JOINT("j1", "revolute", "a", "ground")), MBS_ERR_MODEL, "joints[0]", "j1",
           "child cannot be the ground");
    EXPECT(ONE_JOINT(JOINT("j1", "revolute", "a", "a")), MBS_ERR_MODEL, "joints[0]", "j1", "same body");
    EXPECT("{ 'bodies': [ " BODY("a") ", " BODY("b") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a") ", "
           JOINT("j1", "revolute", "a", "b") " ] }",
           MBS_ERR_MODEL, "joints[1]", "duplicate joint name \"j1\"", "joints[0]");
    /* Euler parameters */
    EXPECT(ONE_JOINT("{ 'name': 'js', 'type': 'spherical', 'parent': 'ground', 'child': 'a', 'q0': [1, 1, 0, 0] }"),
           MBS_ERR_MODEL, "joints[0]", "joint js", "not normalized", "|p| = 1.414");
    EXPECT(ONE_JOINT("{ 'name': 'jf', 'type': 'floating', 'parent': 'ground', 'child': 'a', "
                     "'q0': [0, 0, 0, 0, 0, 0, 0] }"),
           MBS_ERR_MODEL, "joints[0]", "joint jf", "not normalized", "|p| = 0");
    EXPECT(ONE_JOINT("{ 'name': 'js', 'type': 'spherical', 'parent': 'ground', 'child': 'a', "
                     "'q0': [1, 0, 0, 0], 'qd0': [0.5, 0, 0, 0] }"),
           MBS_ERR_MODEL, "joints[0]", "joint js", "p.pdot = 0.5");
    /* DH placement */
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', "
                     "'dh': { 'a': 1, 'alpha': 0, 'd': 0, 'theta': 0 }, 'axis': [0, 0, 1] }"),
           MBS_ERR_MODEL, "joints[0].dh", "excludes \"axis\"");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', "
                     "'dh': { 'a': 1, 'alpha': 0, 'd': 0, 'theta': 0 }, 'child_point': 'tip' }"),
           MBS_ERR_MODEL, "joints[0].dh", "excludes \"child_point\"");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'spherical', 'parent': 'ground', 'child': 'a', "
                     "'dh': { 'a': 1, 'alpha': 0, 'd': 0, 'theta': 0 } }"),
           MBS_ERR_MODEL, "joints[0].dh", "only for revolute and prismatic");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', "
                     "'dh': { 'a': 1, 'd': 0, 'theta': 0 } }"),
           MBS_ERR_MODEL, "joints[0].dh", "missing required member \"alpha\"");
    EXPECT(ONE_JOINT("{ 'name': 'j1', 'type': 'revolute', 'parent': 'ground', 'child': 'a', "
                     "'dh': { 'a': 1, 'alpha': 0, 'd': 0, 'theta': 0, 'offset': 1 } }"),
           MBS_ERR_MODEL, "joints[0].dh", "\"offset\"", "a, alpha, d, theta");
}

static void test_topology(void)
{
    /* cycle in the parent graph: b -> c -> b, never reaching the ground
     * (closed loops that do reach it are valid: tests/test_constraints.c) */
    EXPECT("{ 'bodies': [ " BODY("a") ", " BODY("b") ", " BODY("c") " ], 'joints': [ "
           JOINT("j1", "revolute", "ground", "a") ", " JOINT("j2", "revolute", "b", "c") ", "
           JOINT("j3", "revolute", "c", "b") " ] }",
           MBS_ERR_MODEL, "bodies[1]", "body b is not connected to the ground");
    /* a body with two parent joints, the only one reaching the ground cut by the user */
    EXPECT("{ 'bodies': [ " BODY("a") ", " BODY("b") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a") ", "
           "{ 'name': 'j2', 'type': 'revolute', 'parent': 'ground', 'child': 'b', 'cut': true }, "
           JOINT("j3", "revolute", "b", "a") " ] }",
           MBS_ERR_MODEL, "bodies[1]", "body b is not connected to the ground once joint j2 is cut");
    /* a body without a joint */
    EXPECT("{ 'bodies': [ " BODY("a") ", " BODY("b") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a")
           " ] }",
           MBS_ERR_MODEL, "bodies[1]", "body b is not connected to the ground", "floating");
    /* duplicate body names, reserved name */
    EXPECT("{ 'bodies': [ " BODY("a") ", " BODY("a") " ], 'joints': [ " JOINT("j1", "revolute", "ground", "a")
           " ] }",
           MBS_ERR_MODEL, "bodies[1]", "duplicate body name \"a\"", "bodies[0]");
    EXPECT(ONE_BODY(BODY("ground")), MBS_ERR_MODEL, "bodies[0]", "reserved");
}

static void test_physics(void)
{
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': -1 }"), MBS_ERR_MODEL, "bodies[0]", "body a", "mass must be >= 0",
           "-1");
    EXPECT_FILE("tests/models/bad_inertia.json", MBS_ERR_MODEL, "bad_inertia.json: bodies[1]", "body rod",
                "inertia not positive definite: principal moments -0.5, 1, 2");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'inertia': [1, 1, 3, 0, 0, 0] }"), MBS_ERR_MODEL, "bodies[0]",
           "body a", "triangle inequality", "1, 1, 3");
    /* the triangle inequality on principal moments, not on the diagonal */
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'inertia': [1, 1, 1.5, 0.9, 0, 0] }"), MBS_ERR_MODEL, "bodies[0]",
           "triangle inequality");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'inertia': [[1, 0.2, 0], [0.1, 1, 0], [0, 0, 1]] }"),
           MBS_ERR_MODEL, "bodies[0].inertia", "not symmetric", "0.2", "0.1");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 0, 'inertia': [1, 1, 1, 0, 0, 0] }"), MBS_ERR_MODEL, "bodies[0]",
           "zero mass must have zero inertia");
    EXPECT(ONE_BODY("{ 'name': 'a', 'mass': 1, 'vectors': { 'u': [0, 0, 0] } }"), MBS_ERR_MODEL,
           "bodies[0].vectors.u", "zero");
}

static void test_parameters(void)
{
    EXPECT(WITH_PARAMS("{ 'name': 'L', 'value': 3, 'lower': 0.5, 'upper': 2, 'sets': ['a.tip[0]'] }"),
           MBS_ERR_MODEL, "parameters[0]", "parameter L", "value 3 is outside its bounds [0.5, 2]");
    EXPECT(WITH_PARAMS("{ 'name': 'L', 'value': 1, 'lower': 2, 'upper': 0.5, 'sets': ['a.tip[0]'] }"),
           MBS_ERR_MODEL, "parameters[0]", "lower bound 2 is above upper bound 0.5");
    EXPECT(WITH_PARAMS("{ 'name': 'm', 'value': 1, 'sets': ['link9.mass'] }"), MBS_ERR_MODEL,
           "parameters[0].sets[0]", "unknown parameter target \"link9.mass\"", "no body named \"link9\"",
           "valid forms", "BODY.POINT[k]", "gravity[k]");
    EXPECT(WITH_PARAMS("{ 'name': 'L', 'value': 1, 'sets': ['a.mass', { 'target': 'a.tipp[0]' }] }"), MBS_ERR_MODEL,
           "parameters[0].sets[1]", "\"a.tipp[0]\"", "body a has no point named \"tipp\"");
    EXPECT(WITH_PARAMS("{ 'name': 'c', 'value': 1, 'sets': ['a.com[3]'] }"), MBS_ERR_MODEL, "parameters[0].sets[0]",
           "\"a.com[3]\"", "[0], [1] or [2]");
    EXPECT(WITH_PARAMS("{ 'name': 'i', 'value': 1, 'sets': ['a.inertia.xw'] }"), MBS_ERR_MODEL,
           "parameters[0].sets[0]", "a.inertia.xw", ".xx .yy .zz .xy .xz .yz");
    EXPECT(WITH_PARAMS("{ 'name': 'g', 'value': 1, 'sets': ['gravity'] }"), MBS_ERR_MODEL, "parameters[0].sets[0]",
           "gravity");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': ['a.tip'] }"), MBS_ERR_MODEL, "parameters[0].sets[0]",
           "needs an index");
    EXPECT(WITH_PARAMS("{ 'name': 'p', 'value': 1, 'sets': ['a.mass'] }, { 'name': 'p', 'value': 2, "
                       "'sets': ['a.com[0]'] }"),
           MBS_ERR_MODEL, "parameters[1]", "duplicate parameter name \"p\"", "parameters[0]");
    EXPECT(WITH_PARAMS("{ 'name': 'm1', 'value': 1, 'sets': ['a.mass'] }, { 'name': 'm2', 'value': 2, "
                       "'sets': ['a.com[0]', 'a.mass'] }"),
           MBS_ERR_MODEL, "parameters[1].sets[1]", "a.mass is already set by parameter m1");
    EXPECT(WITH_PARAMS("{ 'name': 'm1', 'value': 1, 'sets': ['a.tip[1]', 'a.tip[1]'] }"), MBS_ERR_MODEL,
           "parameters[0].sets[1]", "a.tip[1] is already set by parameter m1");
    /* physical checks see the parameter values */
    EXPECT(WITH_PARAMS("{ 'name': 'm', 'value': -2, 'sets': ['a.mass'] }"), MBS_ERR_MODEL, "bodies[0]", "body a",
           "mass must be >= 0, got -2");
    EXPECT(WITH_PARAMS("{ 'name': 'I', 'value': 5, 'sets': ['a.inertia.zz'] }"), MBS_ERR_MODEL, "bodies[0]",
           "triangle inequality");
    /* a parameter value that overflows after scaling */
    EXPECT(WITH_PARAMS("{ 'name': 'x', 'value': 1e300, 'sets': [ { 'target': 'a.tip[0]', 'scale': 1e300 } ] }"),
           MBS_ERR_MODEL, "parameters[0].sets[0]", "parameter x sets a.tip[0] to inf");
}

/* Every section is supported now; the objectives' own errors name their
 * JSON path (the full set is in tests/test_sensitivity.c's models and
 * src/io/load_objectives.c). */
static void test_unsupported(void)
{
    static const char *const cases[][3] = {
        { "[ { 'name': 'o', 'integral': [ { 'point': 'a.nowhere' } ] } ]", "objectives[0].integral[0].point",
          "unknown point" },
        { "[ { 'name': 'o' } ]", "objectives[0]", "needs at least one" },
        { "[ { 'name': 'o', 'integral': [ { 'coordinate': 'j1', 'quantity': 'jerk' } ] } ]",
          "objectives[0].integral[0].quantity", "unknown quantity" },
        { "[ { 'name': 'o', 'integral': [ { 'coordinate': 'j1', 'point': 'a.tip' } ] } ]",
          "objectives[0].integral[0]", "exactly one of" },
        { "[ { 'name': 'o', 'terminal': [ { 'point': 'a.tip', 'reference': [1, 2] } ] } ]",
          "objectives[0].terminal[0].reference", "expected 3 components" },
        { "[ { 'name': 'o', 'integral': [ { 'coordinate': 'j1', 'reference': 'nofunc' } ] } ]",
          "objectives[0].integral[0].reference", "unknown function" },
        { "[ { 'name': 'o', 'integral': [ { 'point': 'a.tip', 'squared': false } ] } ]", "objectives[0].integral[0]",
          "needs a scalar quantity" },
        { "[ { 'name': 'o', 'integral': [ { 'energy': 'kinetic' } ] }, { 'name': 'o', 'integral': [ { 'energy': 'kinetic' } ] } ]",
          "objectives[1]", "duplicate objective name" },
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof *cases); k++) {
        char json[1024];
        snprintf(json, sizeof json, "{ 'bodies': [ " BODYP("a") " ], 'joints': [ " JOINT("j1", "revolute", "ground",
                                                                                        "a") " ], 'objectives': %s }",
                 cases[k][0]);
        EXPECT(json, MBS_ERR_MODEL, cases[k][1], cases[k][2]);
    }
}

/* The builder API directly: checks that JSON cannot reach. */
static void test_builder(void)
{
    mbs_error err = { 0, "" };
    mbs_builder *b = mbs_builder_new("b", "builder");
    CHECK(b != NULL, "builder");
    if (!b) return;
    double inertia[6] = { 1, 1, 1, 0, 0, 0 }, z3[3] = { 0, 0, 0 };
    int rc = mbs_builder_add_body(b, "nan", NAN, NULL, inertia, "where-nan", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "where-nan: body nan: mass is not finite"), "NaN mass: %s",
          err.msg);
    double Iinf[6] = { 1, INFINITY, 1, 0, 0, 0 };
    rc = mbs_builder_add_body(b, "inf", 1, NULL, Iinf, "where-inf", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "where-inf") && strstr(err.msg, "inertia is not finite"),
          "Inf inertia: %s", err.msg);
    int a = mbs_builder_add_body(b, "a", 1, NULL, inertia, "where-a", &err);
    int c = mbs_builder_add_body(b, "c", 1, NULL, inertia, "where-c", &err);
    CHECK(a == 1 && c == 2, "body handles %d %d", a, c);
    CHECK(mbs_builder_find_body(b, "ground") == 0 && mbs_builder_find_body(b, "c") == 2 &&
              mbs_builder_find_body(b, "zz") == -1, "find body");
    int p = mbs_builder_add_point(b, a, "tip", (double[3]){ 1, 0, 0 }, "where-tip", &err);
    CHECK(p >= 0 && mbs_builder_find_point(b, a, "tip") == p && mbs_builder_find_point(b, c, "tip") == -1,
          "find point");
    rc = mbs_builder_add_point(b, a, "tip", z3, "where-tip2", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "where-tip2") && strstr(err.msg, "duplicate point name \"tip\""),
          "duplicate point: %s", err.msg);
    rc = mbs_builder_add_point(b, a, "bad", (double[3]){ 0, NAN, 0 }, "where-bad", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "where-bad") && strstr(err.msg, "not finite"), "NaN point: %s",
          err.msg);
    rc = mbs_builder_add_vector(b, a, "u", (double[3]){ 0, 0, 2 }, "where-u", &err);
    CHECK(rc == 0, "vector: %s", err.msg);
    rc = mbs_builder_add_vector(b, a, "u", (double[3]){ 0, 1, 0 }, "where-u2", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "duplicate vector name"), "duplicate vector: %s", err.msg);
    /* the parent point must belong to the parent body */
    mbs_joint_side ps = { p, { 0, 0, 1 }, { 0, 0, 0 }, 0 }, cs = { -1, { 0, 0, 1 }, { 0, 0, 0 }, 0 };
    rc = mbs_builder_add_joint(b, "j", MBS_JOINT_REVOLUTE, 0, a, &ps, &cs, NULL, 0, NULL, 0, "where-j", &err);
    CHECK(rc == MBS_ERR_ARG && strstr(err.msg, "where-j") && strstr(err.msg, "not a point of body ground"),
          "wrong point body: %s", err.msg);
    rc = mbs_builder_add_joint(b, "j", MBS_JOINT_REVOLUTE, 0, a, NULL, NULL, (double[1]){ NAN }, 1, NULL, 0,
                               "where-jnan", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "where-jnan") && strstr(err.msg, "not finite"), "NaN q0: %s",
          err.msg);
    rc = mbs_builder_add_joint(b, "j", MBS_JOINT_TYPE_COUNT, 0, a, NULL, NULL, NULL, 0, NULL, 0, "where-jt", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "invalid joint type"), "bad type: %s", err.msg);
    rc = mbs_builder_add_joint(b, "ja", MBS_JOINT_REVOLUTE, 0, a, NULL, NULL, NULL, 0, NULL, 0, "where-ja", &err);
    CHECK(rc >= 0, "joint ja: %s", err.msg);
    /* a NaN parameter value, and c left without a joint */
    rc = mbs_builder_add_param(b, "pn", NAN, -INFINITY, INFINITY, "where-pn", &err);
    CHECK(rc == MBS_ERR_MODEL && strstr(err.msg, "where-pn") && strstr(err.msg, "not finite"), "NaN param: %s",
          err.msg);
    mbs_model *m = mbs_builder_finish(b, &err);
    CHECK(m == NULL && err.code == MBS_ERR_MODEL && strstr(err.msg, "where-c: body c is not connected"),
          "unconnected: %s", err.msg);
    mbs_model_free(m);
    /* non-finite gravity */
    rc = mbs_builder_add_joint(b, "jc", MBS_JOINT_FLOATING, a, c, NULL, NULL, NULL, 0, NULL, 0, "where-jc", &err);
    CHECK(rc >= 0, "joint jc: %s", err.msg);
    mbs_builder_set_gravity(b, (double[3]){ 0, INFINITY, 0 });
    m = mbs_builder_finish(b, &err);
    CHECK(m == NULL && strstr(err.msg, "builder: gravity is not finite"), "gravity: %s", err.msg);
    mbs_model_free(m);
    mbs_builder_set_gravity(b, (double[3]){ 0, 0, -9.81 });
    m = mbs_builder_finish(b, &err);
    CHECK(m != NULL, "finish: %s", err.msg);
    if (m) {
        CHECK(mbs_model_nq(m) == 8 && mbs_model_npoints(m) == 1 && mbs_model_nvectors(m) == 1, "sizes");
        mbs_model_free(m);
    }
    mbs_builder_free(b);

    /* an empty builder */
    b = mbs_builder_new("empty", NULL);
    m = mbs_builder_finish(b, &err);
    CHECK(m == NULL && strstr(err.msg, "no moving body"), "empty: %s", err.msg);
    mbs_builder_free(b);
}

/* mbs_model_with_params re-validates */
static void test_with_params(void)
{
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_string(q(WITH_PARAMS("{ 'name': 'I', 'value': 1, 'lower': 0, "
                                                       "'sets': ['a.inertia.zz'] }")), "wp.json", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    double v = 2.5;
    mbs_model *m2 = mbs_model_with_params(m, &v, &err);
    check_failure(__LINE__, m2, &err, MBS_ERR_MODEL, "wp.json: bodies[0]",
                  (const char *const[]){ "body a", "triangle inequality", NULL });
    v = -1;
    m2 = mbs_model_with_params(m, &v, &err);
    check_failure(__LINE__, m2, &err, MBS_ERR_ARG, "wp.json", (const char *const[]){ "parameter I", "outside", NULL });
    v = 0;   /* zero zz: not positive definite */
    m2 = mbs_model_with_params(m, &v, &err);
    check_failure(__LINE__, m2, &err, MBS_ERR_MODEL, "wp.json: bodies[0]",
                  (const char *const[]){ "not positive definite", NULL });
    mbs_model_free(m);
}

/* Velocity conventions (docs/model-format.md, "Velocities of spherical and
 * floating joints"). */
#define FREE_T(extra) "{ 'name': 'jf', 'type': 'floating', 'parent': 'ground', 'child': 'a', " \
                      "'velocities': 'tangent'" extra " }"
static void test_velocities(void)
{
    EXPECT("{ 'velocities': 'angular', 'bodies': [ " BODYP("a") " ], 'joints': [ " FREE_T("") " ] }",
           MBS_ERR_MODEL, "case.json: velocities", "unknown velocities \"angular\"", "tangent, euler_rates");
    EXPECT(ONE_JOINT("{ 'name': 'jf', 'type': 'floating', 'parent': 'ground', 'child': 'a', 'velocities': 3 }"),
           MBS_ERR_MODEL, "joints[0].velocities", "expected \"tangent\" or \"euler_rates\"");
    EXPECT(ONE_JOINT("{ 'name': 'jr', 'type': 'revolute', 'parent': 'ground', 'child': 'a', "
                     "'velocities': 'tangent' }"),
           MBS_ERR_MODEL, "joints[0].velocities", "joint jr is revolute", "only for spherical and floating");
    EXPECT(ONE_JOINT(FREE_T(", 'v0': [1, 2, 3, 4, 5, 6, 7]")), MBS_ERR_MODEL, "joints[0]", "joint jf",
           "v0 has 7 values", "6 velocities (tangent)");
    EXPECT(ONE_JOINT(FREE_T(", 'v0': [1, 2, 3], 'qd0': [0, 0, 0, 0, 0, 0, 0]")), MBS_ERR_MODEL, "joints[0].v0",
           "either v0");
    EXPECT(ONE_JOINT(FREE_T(", 'q0': [0, 0, 0, 1, 0, 0, 0], 'qd0': [0, 0, 0, 1e-9, 1, 0, 0]")), MBS_ERR_MODEL,
           "joints[0]", "joint jf", "qd0 of a joint with tangent velocities", "p.pdot = 1e-09");
#define FREE_MODEL(extra) "{ 'bodies': [ " BODYP("a") " ], 'joints': [ " FREE_T("") " ]" extra " }"
    EXPECT(FREE_MODEL(", 'forces': [ { 'name': 'k', 'type': 'joint_spring', 'joint': 'jf', 'coordinate': 'x', "
                      "'stiffness': 1 } ]"),
           MBS_ERR_MODEL, "forces[0]", "joint_spring k", "coordinate jf.x of joint jf, whose velocities are tangent");
    EXPECT(FREE_MODEL(", 'forces': [ { 'name': 'f', 'type': 'joint_force', 'joint': 'jf', 'coordinate': 'z', "
                      "'value': 1 } ]"),
           MBS_ERR_MODEL, "forces[0]", "joint_force f", "coordinate jf.z of joint jf");
    EXPECT(FREE_MODEL(", 'constraints': [ { 'name': 'd', 'type': 'coordinate', 'joint': 'jf', 'coordinate': 'x', "
                      "'value': 0 } ]"),
           MBS_ERR_MODEL, "constraints[0]", "constraint d drives coordinate jf.x of joint jf",
           "whose velocities are tangent");
    EXPECT(FREE_MODEL(", 'assembly': { 'fixed': ['jf.x'] }"), MBS_ERR_MODEL, "assembly.fixed",
           "holds joint jf, whose velocities are tangent");
#undef FREE_MODEL
    /* URDF: an option value that is no convention */
    mbs_urdf_options o = { 0, 0, NULL, NULL, 0, (mbs_velocities)7 };
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_urdf(mbs_test_path("tests/urdf/small_robot.urdf"), &o, &err);
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s", mbs_test_path("tests/urdf/small_robot.urdf"));
    check_failure(__LINE__, m, &err, MBS_ERR_ARG, prefix,
                  (const char *const[]){ "mbs_urdf_options.velocities: 7 is not a velocity convention", NULL });
}
#undef FREE_T

int main(void)
{
    test_syntax();
    test_structure();
    test_types_and_lengths();
    test_joints();
    test_topology();
    test_physics();
    test_parameters();
    test_unsupported();
    test_builder();
    test_with_params();
    test_velocities();
    return mbs_test_summary("test_model_errors");
}
