/*
 * alloc_count.h - allocation counting for the tests that check that
 * stepping does not allocate: malloc, calloc, realloc and free interposed,
 * forwarding to glibc's __libc_* functions, counted in mbs_alloc_count
 * while mbs_alloc_counting is set. Include in exactly one file of a test
 * program (it defines the interposers).
 *
 * Under AddressSanitizer, which owns malloc itself, interposition is not
 * possible: MBS_COUNT_ALLOC is 0 and nothing is counted. MBS_SANITIZED says
 * whether AddressSanitizer is on (tests shorten their runs there).
 */
#ifndef MBS_TEST_ALLOC_COUNT_H
#define MBS_TEST_ALLOC_COUNT_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define MBS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MBS_SANITIZED 1
#endif
#endif
#ifndef MBS_SANITIZED
#define MBS_SANITIZED 0
#endif

#if !MBS_SANITIZED && (defined(__GLIBC__) || defined(__linux__))
#define MBS_COUNT_ALLOC 1
#else
#define MBS_COUNT_ALLOC 0
#endif

static long mbs_alloc_count;     /* allocations while counting */
static int mbs_alloc_counting;

#if MBS_COUNT_ALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

void *malloc(size_t n)
{
    if (mbs_alloc_counting) mbs_alloc_count++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    if (mbs_alloc_counting) mbs_alloc_count++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    if (mbs_alloc_counting) mbs_alloc_count++;
    return __libc_realloc(p, n);
}
void free(void *p)
{
    if (mbs_alloc_counting && p) mbs_alloc_count++;
    __libc_free(p);
}
#endif

#endif
