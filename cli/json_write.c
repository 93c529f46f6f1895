/*
 * json_write.c - a JSON document (jansson) as text meant for reading and
 * for diffs (see cli_util.h): numbers as the shortest text that reads back
 * (shortest.h; -0 as "-0.0"), members in their order, two spaces of indentation, and an
 * array of numbers, strings, booleans or nulls on one line when it fits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli_util.h"
#include "shortest.h"

#include <jansson.h>

#define LINE 100   /* an array of scalars on one line up to this width */

static void scalar(cli_buf *b, json_t *v)
{
    char num[CLI_SHORTEST_LEN];
    switch (json_typeof(v)) {
    case JSON_STRING: cli_json_str(b, json_string_value(v)); break;
    case JSON_INTEGER: cli_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); break;
    case JSON_REAL:
        if (json_real_value(v) == 0 && signbit(json_real_value(v))) {
            cli_buf_puts(b, "-0.0");   /* "-0" would read back as the integer 0 */
            break;
        }
        cli_shortest(json_real_value(v), num);   /* 1.0 as "1": the same number to a model loader */
        cli_buf_puts(b, num);
        break;
    case JSON_TRUE: cli_buf_puts(b, "true"); break;
    case JSON_FALSE: cli_buf_puts(b, "false"); break;
    default: cli_buf_puts(b, "null"); break;
    }
}

static int is_scalar(json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static void value(cli_buf *b, json_t *v, int indent, size_t col);

/* [a, b, c] on one line, if every item is a scalar and it fits */
static int flat_array(cli_buf *b, json_t *v, size_t col)
{
    size_t k;
    json_t *x;
    json_array_foreach(v, k, x) if (!is_scalar(x)) return 0;
    cli_buf t = { 0 };
    cli_buf_puts(&t, "[");
    json_array_foreach(v, k, x)
    {
        if (k) cli_buf_puts(&t, ", ");
        scalar(&t, x);
    }
    cli_buf_puts(&t, "]");
    int fits = !t.oom && col + t.len <= LINE;
    if (fits) cli_buf_puts(b, t.s);
    cli_buf_free(&t);
    return fits;
}

static void value(cli_buf *b, json_t *v, int indent, size_t col)
{
    if (is_scalar(v)) {
        scalar(b, v);
    } else if (json_is_array(v)) {
        if (json_array_size(v) == 0) {
            cli_buf_puts(b, "[]");
            return;
        }
        if (flat_array(b, v, col)) return;
        size_t k;
        json_t *x;
        cli_buf_puts(b, "[");
        json_array_foreach(v, k, x)
        {
            cli_buf_printf(b, "%s\n%*s", k ? "," : "", indent + 2, "");
            value(b, x, indent + 2, (size_t)indent + 2);
        }
        cli_buf_printf(b, "\n%*s]", indent, "");
    } else {
        if (json_object_size(v) == 0) {
            cli_buf_puts(b, "{}");
            return;
        }
        const char *key;
        json_t *x;
        int first = 1;
        cli_buf_puts(b, "{");
        json_object_foreach(v, key, x)
        {
            cli_buf_printf(b, "%s\n%*s", first ? "" : ",", indent + 2, "");
            size_t before = b->len;
            cli_json_str(b, key);
            cli_buf_puts(b, ": ");
            value(b, x, indent + 2, (size_t)indent + 2 + (b->len - before));
            first = 0;
        }
        cli_buf_printf(b, "\n%*s}", indent, "");
    }
}

void cli_json_write(cli_buf *b, void *doc)
{
    value(b, (json_t *)doc, 0, 0);
    cli_buf_puts(b, "\n");
}

int cli_model_json(const char *cmd, const char *what, const mbs_model *m, cli_buf *b)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    char *s = mbs_model_to_json(m, &err);
    if (!s) {
        cli_error(cmd, "%s%s", what, err.msg);
        return -1;
    }
    json_error_t je;
    json_t *doc = json_loads(s, 0, &je);
    free(s);
    if (!doc) {
        cli_error(cmd, "%sthe written model does not parse (%d:%d: %s)", what, je.line, je.column, je.text);
        return -1;
    }
    cli_json_write(b, doc);
    json_decref(doc);
    if (b->oom) {
        cli_error(cmd, "%sout of memory", what);
        return -1;
    }
    return 0;
}
