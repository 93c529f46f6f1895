/*
 * test_json_writer.c - mbs_model_to_json writes the whole model: loading
 * the text gives the same model (mbs_test_json_round_trip: every size,
 * name and number bit for bit, the same text when written again, and the
 * same ID, M and FD bit for bit) for
 *   - every model in models/ and tests/models/ that loads (all_sections.json
 *     has every section, member kind, joint, force, function, constraint
 *     and objective type of the format), and every URDF in tests/urdf/ that
 *     loads, fixed and on a floating base;
 *   - the generated chains (every joint kind, floating base) and the spline
 *     body of mbs_generate_spline_body_json;
 *   - random trees (every joint type, parameters of every kind) and random
 *     closed loops (every cut type, drivers, assembly.fixed, force elements,
 *     a spline and parameters), built through the builder in an order that
 *     is not the file's order;
 * and the text is readable: the shortest round-trip numbers (0.042, not
 * 0.042000000000000003), short numeric arrays on one line, -0 kept as
 * -0.0, names with quotes, backslashes and control characters escaped.
 * Also the number formatter itself (src/base/format_double.c): every result
 * reads back exactly, and no shorter %g precision would.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "mbs_testing.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* every file of dir (relative to the source tree) ending in ext that loads */
static void files_round_trip(const char *dir, const char *ext, int *count)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", mbs_test_path(dir));
    DIR *d = opendir(path);
    CHECK(d != NULL, "cannot list %s", path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ext)) continue;
        char file[1400];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        for (int floating = 0; floating < (ends_with(ext, ".urdf") ? 2 : 1); floating++) {
            mbs_error err;
            mbs_urdf_options o = { floating, 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
            mbs_model *m = ends_with(ext, ".urdf") ? mbs_model_load_urdf(file, &o, &err) : mbs_model_load(file, &err);
            if (!m) continue;   /* the files of bad input */
            (void)mbs_test_json_round_trip(m, file, 1);
            (*count)++;
            mbs_model_free(m);
        }
    }
    closedir(d);
}

static void generated_round_trip(void)
{
    static const mbs_joint_type kinds[3] = { MBS_JOINT_REVOLUTE, MBS_JOINT_CARDAN, MBS_JOINT_SPHERICAL };
    for (int k = 0; k < 3; k++)
        for (int floating = 0; floating < 2; floating++) {
            mbs_error err;
            char *json = mbs_generate_chain_json(7 + 13 * k, kinds[k], floating, &err);
            mbs_model *m = json ? mbs_model_load_string(json, "chain", &err) : NULL;
            CHECK(m != NULL, "chain %d %d: %s", k, floating, err.msg);
            if (m) (void)mbs_test_json_round_trip(m, "generated chain", 2);
            mbs_model_free(m);
            free(json);
        }
    mbs_error err;
    char *json = mbs_generate_spline_body_json(17, 2.0, &err);
    mbs_model *m = json ? mbs_model_load_string(json, "spline_body", &err) : NULL;
    CHECK(m != NULL, "spline body: %s", err.msg);
    if (m) (void)mbs_test_json_round_trip(m, "spline body", 3);
    mbs_model_free(m);
    free(json);
}

static void random_round_trip(void)
{
    mbs_rng r;
    mbs_rng_seed(&r, 14);
    for (int k = 0; k < 24; k++) {
        mbs_model *m = mbs_test_random_tree_p(&r, 1 + k % 12, 0, 1);
        CHECK(m != NULL, "random tree %d", k);
        char label[64];
        snprintf(label, sizeof label, "random tree %d", k);
        if (m) (void)mbs_test_json_round_trip(m, label, 10 + (unsigned long)k);
        mbs_model_free(m);
    }
    static const int cut_types[][3] = {
        { MBS_JOINT_REVOLUTE, MBS_JOINT_SPHERICAL, MBS_JOINT_CARDAN },
        { MBS_JOINT_PRISMATIC, MBS_JOINT_CYLINDRICAL, MBS_JOINT_FIXED },
        { MBS_JOINT_PLANAR, MBS_JOINT_FLOATING, MBS_JOINT_REVOLUTE },
    };
    for (int k = 0; k < 12; k++) {
        mbs_test_loops_options o = { k % 2, 1, k % 3 != 0, 2.0, k % 4 == 1 };
        double *qc = NULL;
        mbs_model *m = mbs_test_random_loops_ex(&r, 3 + k % 5, 1 + k % 3, cut_types[k % 3], &o, &qc);
        CHECK(m != NULL, "random loops %d", k);
        char label[64];
        snprintf(label, sizeof label, "random loops %d", k);
        if (m) (void)mbs_test_json_round_trip(m, label, 40 + (unsigned long)k);
        mbs_model_free(m);
        free(qc);
    }
}

/* the text: shortest numbers, arrays on a line, -0, escaped names */
static void text_form(void)
{
    const char *src =
        "{\"name\": \"tab\\there \\\"q\\\" back\\\\slash\", \"gravity\": [0, 0, -9.81],"
        " \"bodies\": [{\"name\": \"b\\u0001\", \"mass\": 0.042, \"com\": [-0.0, 0.1, 0.30000000000000004],"
        " \"inertia\": [0.1, 0.1, 0.1, 0, 0, 0]}],"
        " \"joints\": [{\"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"b\\u0001\"}]}";
    mbs_error err;
    mbs_model *m = mbs_model_load_string(src, "text.json", &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    char *json = mbs_model_to_json(m, &err);
    CHECK(json != NULL, "%s", err.msg);
    if (json) {
        CHECK(strstr(json, "\"mass\": 0.042,\n") != NULL, "0.042 is written as 0.042:\n%s", json);
        CHECK(strstr(json, "\"com\": [-0.0, 0.1, 0.30000000000000004],\n") != NULL, "com on one line:\n%s", json);
        CHECK(strstr(json, "\"gravity\": [0, 0, -9.81],\n") != NULL, "gravity on one line:\n%s", json);
        CHECK(strstr(json, "\"name\": \"tab\\there \\\"q\\\" back\\\\slash\"") != NULL, "escapes:\n%s", json);
        CHECK(strstr(json, "\"b\\u0001\"") != NULL, "control character:\n%s", json);
        CHECK(strstr(json, "00000000001") == NULL && strstr(json, "99999999999") == NULL, "no digit noise:\n%s",
              json);
        free(json);
    }
    (void)mbs_test_json_round_trip(m, "text form", 4);
    mbs_model_free(m);
}

/* mbs_format_double: reads back exactly, with the fewest digits among
 * %.15g, %.16g, %.17g (below 15 digits %g drops trailing zeros itself) */
static void formatter(void)
{
    static const double special[] = { 0.0, -0.0, 1, -1, 0.1, 0.042, 1.0 / 3, 0.1 + 0.2, 1e-300, -1e300,
                                      DBL_MIN, DBL_MIN / 1024, DBL_MAX, -DBL_MAX, DBL_EPSILON, 9007199254740993.0,
                                      123456789012345678.0, 5e-324 };
    char b[MBS_DOUBLE_CHARS], c[40];
    for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
        double x = special[k];
        int n = mbs_format_double(b, x);
        CHECK(n == (int)strlen(b) && strtod(b, NULL) == x && signbit(strtod(b, NULL)) == signbit(x),
              "%.17g -> %s", x, b);
    }
    mbs_format_double(b, 0.042);
    CHECK(strcmp(b, "0.042") == 0, "0.042 -> %s", b);
    mbs_format_double(b, 0.1 + 0.2);
    CHECK(strcmp(b, "0.30000000000000004") == 0, "0.1 + 0.2 -> %s", b);
    mbs_format_double(b, -0.0);
    CHECK(strcmp(b, "-0") == 0, "-0 -> %s", b);
    mbs_format_double(b, INFINITY);
    CHECK(strcmp(b, "inf") == 0, "inf -> %s", b);
    /* random bit patterns: exact, and one digit fewer would not do */
    mbs_rng r;
    mbs_rng_seed(&r, 1414);
    int bad = 0;
    for (int k = 0; k < 200000; k++) {
        uint64_t bits = 0;
        for (int j = 0; j < 4; j++) bits = bits << 16 | (uint64_t)mbs_rng_int(&r, 65536);
        double x;
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) continue;
        int n = mbs_format_double(b, x);
        if (strtod(b, NULL) != x || n >= MBS_DOUBLE_CHARS) bad++;
        int digits = 0, lead = 1;   /* significant digits: from the first non-zero one */
        for (const char *p = b; *p && *p != 'e'; p++) {
            if (*p >= '1' && *p <= '9') lead = 0;
            digits += !lead && *p >= '0' && *p <= '9';
        }
        if (digits > 15) {   /* then %.(digits-1)g must not read back */
            snprintf(c, sizeof c, digits == 16 ? "%.15g" : "%.16g", x);
            if (strtod(c, NULL) == x) bad++;
        }
    }
    CHECK(bad == 0, "%d random doubles not formatted shortest and exact", bad);
}

int main(void)
{
    int count = 0;
    files_round_trip("models", ".json", &count);
    files_round_trip("tests/models", ".json", &count);
    files_round_trip("tests/urdf", ".urdf", &count);
    CHECK(count >= 18, "only %d model files round-tripped", count);   /* 9 + 7 JSON files, 2 URDF loads */
    generated_round_trip();
    random_round_trip();
    text_form();
    formatter();
    return mbs_test_summary("test_json_writer");
}
