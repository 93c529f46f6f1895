/*
 * fuzz_load.c - libFuzzer target over the model loaders (make fuzz,
 * docs/testing.md "Fuzzing").
 *
 * An input that starts with '<' (after white space) is a URDF document
 * (mbs_model_load_urdf_string; on a floating base when its length is odd),
 * anything else a JSON model (mbs_model_load_string). A load either fails
 * with a message or gives a model; every model is written back to JSON
 * (mbs_model_to_json), and that text must load again and give the same
 * model (tests/model_compare.c: every size, name and number bit for bit)
 * and the same text when written again. Anything else aborts, and so do
 * the sanitizers (address, undefined behaviour) and libFuzzer's own
 * time-out and memory checks.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "model_compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *msg, const char *text)
{
    fprintf(stderr, "fuzz_load: %s: %s\n", what, msg);
    if (text) fprintf(stderr, "--- the JSON written:\n%s\n---\n", text);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    const char *p = s;
    while (*p && isspace((unsigned char)*p)) p++;
    mbs_error err;
    mbs_model *m;
    if (*p == '<') {
        mbs_urdf_options o = { (int)(size % 2), 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
        m = mbs_model_load_urdf_string(s, "fuzz.urdf", &o, &err);
    } else {
        m = mbs_model_load_string(s, "fuzz.json", &err);
    }
    free(s);
    if (!m) {
        if (!err.msg[0]) fail("a load failed without a message", "", NULL);
        return 0;
    }
    char *json = mbs_model_to_json(m, &err);
    if (!json) fail("mbs_model_to_json", err.msg, NULL);
    mbs_model *m2 = mbs_model_load_string(json, "fuzz-written.json", &err);
    if (!m2) fail("the JSON written does not load", err.msg, json);
    if (mbs_test_same_model(m, m2, "fuzz") != 0) fail("the JSON written loads as another model", "", json);
    char *json2 = mbs_model_to_json(m2, &err);
    if (!json2 || strcmp(json, json2) != 0) fail("the reloaded model is written differently", "", json);
    free(json2);
    free(json);
    mbs_model_free(m2);
    mbs_model_free(m);
    return 0;
}
