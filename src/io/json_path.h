/*
 * json_path.h - building the JSON paths and origins that the loaders put in
 * their messages ("model.json: bodies[2].points.tip") (internal).
 *
 * They are built for every member of a model, also when nothing fails, so
 * they are plain copies rather than snprintf, which costs about a hundred
 * times more and dominated the loading of large models.
 */
#ifndef MBS_JSON_PATH_H
#define MBS_JSON_PATH_H

#include <stddef.h>
#include <string.h>

/* dst = a b c, cut to n - 1 bytes like snprintf (n > 0). */
static inline void join3(char *dst, size_t n, const char *a, const char *b, const char *c)
{
    const char *part[3] = { a, b, c };
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(part[k]);
        if (len > n - 1 - at) len = n - 1 - at;
        memcpy(dst + at, part[k], len);
        at += len;
    }
    dst[at] = '\0';
}

/* dst = "a[i]", cut to n - 1 bytes (n > 0). */
static inline void index_path(char *dst, size_t n, const char *a, size_t i)
{
    char num[24], *p = num + sizeof num;
    *--p = '\0';
    *--p = ']';
    do {
        *--p = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    *--p = '[';
    join3(dst, n, a, p, "");
}

#endif
