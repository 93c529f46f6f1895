/*
 * large_models.c - large generated models, as text (large_models.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "large_models.h"

/* ---------------------------------------------------------------- text buffer */

typedef struct tbuf {
    char *s;
    size_t len, cap;
} tbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void tb_printf(tbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) abort();
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = 2 * b->cap + (size_t)n + 1;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
}

static void tb_init(tbuf *b)
{
    b->cap = 1 << 16;
    b->len = 0;
    b->s = malloc(b->cap);
    if (!b->s) abort();
    b->s[0] = '\0';
}

/* ---------------------------------------------------------------- generators */

char *mbs_large_chain_json(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "{\n\"name\": \"load_chain\",\n\"gravity\": [0, 0, -9.81],\n\"bodies\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b,
                  "{\"name\": \"link%d\", \"mass\": %.4f, \"com\": [0.15, 0.005, -0.003], "
                  "\"inertia\": [0.000378614887290953, 0.00781888154646382, 0.00794683689957856, "
                  "-0.000927098271185006, 0.000596421464294338, 7.0429816357282e-5], "
                  "\"points\": {\"base\": [0, 0, 0], \"tip\": [0.3, 0, 0]}}%s\n",
                  k, 0.8 + 0.4 * (k % 7) / 7.0, k < n ? "," : "");
    tb_printf(&b, "],\n\"joints\": [\n");
    for (int k = 1; k <= n; k++) {
        char parent[32];
        if (k == 1) snprintf(parent, sizeof parent, "ground");
        else snprintf(parent, sizeof parent, "link%d", k - 1);
        tb_printf(&b,
                  "{\"name\": \"j%d\", \"type\": \"revolute\", \"parent\": \"%s\", \"child\": \"link%d\", "
                  "\"parent_point\": %s, \"child_point\": \"base\", \"axis\": [0, %d, %d], "
                  "\"q0\": [%.15g], \"qd0\": [%.15g]}%s\n",
                  k, parent, k, k == 1 ? "[0, 0, 0]" : "\"tip\"", k % 2 == 0, k % 2, 0.25 * sin(k),
                  0.1 * cos(k), k < n ? "," : "");
    }
    tb_printf(&b, "],\n\"parameters\": [\n"
                  "{\"name\": \"m1\", \"value\": 1, \"lower\": 0.1, \"upper\": 10, \"sets\": [\"link1.mass\"]},\n"
                  "{\"name\": \"L1\", \"value\": 0.3, \"lower\": 0.1, \"upper\": 1, "
                  "\"sets\": [\"link1.tip[0]\", {\"target\": \"link1.com[0]\", \"scale\": 0.5}]}\n]\n}\n");
    return b.s;
}

char *mbs_large_full_json(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "{\n\"name\": \"load_chain\",\n\"bodies\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b,
                  "{\"name\": \"link%d\", \"mass\": %.3f, \"com\": [0.15, 0.002, 0], "
                  "\"inertia\": [0.0001, 0.0075, 0.0075, 0, 0, 0], "
                  "\"points\": {\"base\": [0, 0, 0], \"tip\": [0.3, 0, 0], \"mid\": [0.15, 0, 0], "
                  "\"side\": [0.15, 0.02, 0]}, \"vectors\": {\"u\": [1, 0, 0]}}%s\n",
                  k, 0.8 + 0.4 * (k % 7) / 7.0, k < n ? "," : "");
    tb_printf(&b, "],\n\"joints\": [\n");
    for (int k = 1; k <= n; k++) {
        if (k == 1)
            tb_printf(&b, "{\"name\": \"j1\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"link1\", "
                          "\"child_point\": \"base\", \"axis\": [0, 0, 1]},\n");
        else
            tb_printf(&b,
                      "{\"name\": \"j%d\", \"type\": \"revolute\", \"parent\": \"link%d\", \"child\": \"link%d\", "
                      "\"parent_point\": \"tip\", \"child_point\": \"base\", \"axis\": [0, %d, %d], "
                      "\"q0\": [0.01]}%s\n",
                      k, k - 1, k, k % 2 == 0, k % 2, k < n ? "," : "");
    }
    tb_printf(&b, "],\n\"forces\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"name\": \"s%d\", \"type\": \"joint_spring\", \"joint\": \"j%d\", \"stiffness\": 1, "
                      "\"damping\": 0.01},\n", k, k);
    for (int k = 1; k < n; k++)
        tb_printf(&b, "{\"name\": \"sd%d\", \"type\": \"spring_damper\", \"point1\": \"link%d.side\", "
                      "\"point2\": \"link%d.side\", \"stiffness\": 10}%s\n", k, k, k + 1, k + 1 < n ? "," : "");
    tb_printf(&b, "],\n\"parameters\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"name\": \"m%d\", \"value\": 1, \"lower\": 0.1, \"upper\": 10, "
                      "\"sets\": [\"link%d.mass\"]}%s\n", k, k, k < n ? "," : "");
    tb_printf(&b, "],\n\"outputs\": [\n");
    for (int k = 1; k <= n; k++) tb_printf(&b, "{\"point\": \"link%d.tip\"}%s\n", k, k < n ? "," : "");
    tb_printf(&b, "],\n\"objectives\": [{\"name\": \"psi\", \"integral\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"point\": \"link%d.tip\", \"component\": 2}, {\"coordinate\": \"j%d\"}%s\n", k, k,
                  k < n ? "," : "");
    tb_printf(&b, "]}]\n}\n");
    return b.s;
}

char *mbs_large_chain_urdf(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "<?xml version=\"1.0\"?>\n<robot name=\"load_chain\">\n<link name=\"base\"/>\n");
    for (int k = 1; k <= n; k++) {
        tb_printf(&b,
                  "<link name=\"link%d\"><inertial><origin xyz=\"0.15 0.002 0\" rpy=\"0 0 0\"/>"
                  "<mass value=\"%.3f\"/><inertia ixx=\"0.0001\" iyy=\"0.0075\" izz=\"0.0075\" ixy=\"0\" "
                  "ixz=\"0\" iyz=\"0\"/></inertial></link>\n",
                  k, 0.8 + 0.4 * (k % 7) / 7.0);
        char parent[32];
        if (k == 1) snprintf(parent, sizeof parent, "base");
        else snprintf(parent, sizeof parent, "link%d", k - 1);
        tb_printf(&b,
                  "<joint name=\"j%d\" type=\"revolute\"><parent link=\"%s\"/><child link=\"link%d\"/>"
                  "<origin xyz=\"%s 0 0\" rpy=\"0 0 0\"/><axis xyz=\"0 %d %d\"/>"
                  "<limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"2\"/></joint>\n",
                  k, parent, k, k == 1 ? "0" : "0.3", k % 2 == 0, k % 2);
        if (k % 10 == 0)
            tb_printf(&b,
                      "<link name=\"sensor%d\"><inertial><mass value=\"0.01\"/><inertia ixx=\"1e-6\" "
                      "iyy=\"1e-6\" izz=\"1e-6\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
                      "<joint name=\"fix%d\" type=\"fixed\"><parent link=\"link%d\"/><child link=\"sensor%d\"/>"
                      "<origin xyz=\"0.2 0 0.01\" rpy=\"0 0 0.5\"/></joint>\n",
                      k, k, k, k);
    }
    tb_printf(&b, "</robot>\n");
    return b.s;
}

char *mbs_large_ladder_json(int n)
{
    tbuf b;
    tb_init(&b);
    tb_printf(&b, "{\n\"name\": \"ladder\",\n\"bodies\": [\n");
    for (int k = 1; k <= n; k++)
        tb_printf(&b, "{\"name\": \"b%d\", \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [0.01, 0.1, 0.1, 0, 0, 0], "
                      "\"points\": {\"a\": [0, 0, 0], \"t\": [1, 0, 0]}}%s\n", k, k < n ? "," : "");
    tb_printf(&b, "],\n\"joints\": [\n");
    for (int k = 1; k <= n; k++) {
        char parent[32];
        if (k == 1) snprintf(parent, sizeof parent, "ground");
        else snprintf(parent, sizeof parent, "b%d", k - 1);
        tb_printf(&b, "{\"name\": \"j%d\", \"type\": \"revolute\", \"parent\": \"%s\", \"child\": \"b%d\", "
                      "\"parent_point\": %s, \"child_point\": \"a\"},\n", k, parent, k, k == 1 ? "[0, 0, 0]" : "\"t\"");
    }
    for (int k = 3; k <= n; k++)
        tb_printf(&b, "{\"name\": \"r%d\", \"type\": \"%s\", \"parent\": \"b%d\", \"child\": \"b%d\", "
                      "\"parent_point\": \"a\", \"child_point\": [-1, 0, 0]}%s\n",
                  k, k % 2 ? "revolute" : "spherical", k - 2, k, k < n ? "," : "");
    tb_printf(&b, "]\n}\n");
    return b.s;
}
