/*
 * shortest.c - a double as the fewest significant digits, 15 to 17, that
 * read back to it (see shortest.h).
 *
 * The reference is printf: the first of "%.15g", "%.16g", "%.17g" that
 * strtod reads back exactly. The fast path gives the same text without
 * printf or strtod, in exact integer arithmetic. With x = m 2^e (m the
 * 53-bit significand) and k >= 0 chosen so that x 10^k lies in
 * [1e16, 1e17):
 *
 *   X = m 5^k   and   x 10^k = X / 2^s   with s = -(e + k) > 0,
 *
 * so N = X >> s is the integer part of x 10^k (17 digits) and the low s
 * bits of X its fraction f, exactly (X has up to 13 words of 64 bits:
 * 5^k from pow5_table.h). Rounding N + f to n digits, half to even as
 * printf does, gives the digits of "%.ng". A candidate D reads back to x
 * when |D - x| is below half the gap to the neighbouring double, 2^(e-1),
 * or equal to it with m even (strtod rounds half to even); the gap below
 * a power of two is half as wide. Scaled by 10^k 2^s this is
 * 2 |D 10^k 2^s - X| < 5^k. Zero, subnormals, non-finite numbers and
 * |x| >= 1e16 (k < 0) take the printf path.
 *
 * "%.17g" (cli_g17, the sweep's CSV) is the same path at n = 17 without
 * the check: N + f rounded to 17 digits.
 */
#include "shortest.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
#define HAVE_U128 1
#else
#define HAVE_U128 0
#endif

int cli_g17_printf(double x, char *buf)
{
    return snprintf(buf, CLI_SHORTEST_LEN, "%.17g", x);
}

int cli_shortest_printf(double x, char *buf)
{
    int n = snprintf(buf, CLI_SHORTEST_LEN, "%.15g", x);
    if (isfinite(x) && strtod(buf, NULL) != x) {
        n = snprintf(buf, CLI_SHORTEST_LEN, "%.16g", x);
        if (strtod(buf, NULL) != x) n = snprintf(buf, CLI_SHORTEST_LEN, "%.17g", x);
    }
    return n;
}

#if HAVE_U128
static const uint64_t pow10_u64[18] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
};

#include "pow5_table.h"

#define WORDS 15   /* m 5^330 < 2^53 2^767: 13 words, and room to shift */

typedef struct {
    int n;                 /* words in use */
    uint64_t w[WORDS];     /* lowest first */
} big;

/* bits [lo, lo + count) of a (count <= 64) */
static uint64_t big_bits(const big *a, int lo, int count)
{
    const int q = lo / 64, r = lo % 64;
    uint64_t v = q < a->n ? a->w[q] >> r : 0;
    if (r && q + 1 < a->n) v |= a->w[q + 1] << (64 - r);
    return count == 64 ? v : v & ((1ull << count) - 1);
}

/* are the bits [0, s) of a zero? */
static int big_low_zero(const big *a, int s)
{
    for (int q = 0; q < s / 64; q++)
        if (q < a->n && a->w[q]) return 0;
    return s % 64 == 0 || big_bits(a, s - s % 64, s % 64) == 0;
}

/* -1, 0, 1 as a <, =, > 5^k */
static int big_cmp_pow5(const big *a, int k)
{
    const int lo = pow5_offset[k], n = pow5_offset[k + 1] - lo;
    int na = a->n;
    while (na > 0 && a->w[na - 1] == 0) na--;
    if (na != n) return na < n ? -1 : 1;
    for (int q = n - 1; q >= 0; q--)
        if (a->w[q] != pow5_limbs[lo + q]) return a->w[q] < pow5_limbs[lo + q] ? -1 : 1;
    return 0;
}

/* c = 2^t (|D 10^k 2^s - X|) with D 10^k = N + delta, from the fraction
 * bits [0, s) of X: delta 2^s - f if delta >= 1, |delta| 2^s + f otherwise */
static void distance(const big *X, int s, int64_t delta, int t, big *c)
{
    memset(c, 0, sizeof *c);
    c->n = s / 64 + 2;
    for (int q = 0; q <= s / 64 && q < X->n; q++) c->w[q] = X->w[q];
    if (s % 64) c->w[s / 64] &= (1ull << (s % 64)) - 1;
    else c->w[s / 64] = 0;
    uint64_t high = (uint64_t)(delta >= 1 ? delta - 1 : -delta);
    if (delta >= 1) {   /* 2^s - f, within s bits, then (delta - 1) 2^s above */
        if (big_low_zero(c, s)) {
            high++;
        } else {
            uint64_t borrow = 1;   /* two's complement: ~f + 1 */
            for (int q = 0; q <= s / 64; q++) {
                uint64_t v = ~c->w[q] + borrow;
                borrow = borrow && v == 0;
                c->w[q] = v;
            }
            if (s % 64) c->w[s / 64] &= (1ull << (s % 64)) - 1;
            else c->w[s / 64] = 0;
        }
    }
    c->w[s / 64] |= high << (s % 64);
    if (s % 64) c->w[s / 64 + 1] |= high >> (64 - s % 64);
    for (int r = 0; r < t; r++) {   /* times 2^t */
        uint64_t carry = 0;
        for (int q = 0; q < c->n; q++) {
            uint64_t v = c->w[q];
            c->w[q] = v << 1 | carry;
            carry = v >> 63;
        }
        if (carry && c->n < WORDS) c->w[c->n++] = carry;
    }
}

/* The digits M (n of them, trailing zeros allowed) times 10^(E - n + 1) as
 * "%g" writes them at precision n: trailing zeros dropped, exponential
 * form when E < -4 or E >= n. Returns the length. */
static int format_g(char *buf, int neg, uint64_t M, int n, int E)
{
    char dig[20];
    for (int i = n - 1; i >= 0; i--) {
        dig[i] = (char)('0' + M % 10);
        M /= 10;
    }
    int nd = n;
    while (nd > 1 && dig[nd - 1] == '0') nd--;
    char *p = buf;
    if (neg) *p++ = '-';
    if (E < -4 || E >= n) {
        *p++ = dig[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, dig + 1, (size_t)(nd - 1));
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = E < 0 ? '-' : '+';
        int a = E < 0 ? -E : E;
        if (a >= 100) *p++ = (char)('0' + a / 100);
        *p++ = (char)('0' + a / 10 % 10);
        *p++ = (char)('0' + a % 10);
    } else if (E < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -E - 1; i++) *p++ = '0';
        memcpy(p, dig, (size_t)nd);
        p += nd;
    } else {
        int intd = E + 1;   /* digits before the point (<= n) */
        for (int i = 0; i < intd; i++) *p++ = i < nd ? dig[i] : '0';
        if (nd > intd) {
            *p++ = '.';
            memcpy(p, dig + intd, (size_t)(nd - intd));
            p += nd - intd;
        }
    }
    *p = '\0';
    return (int)(p - buf);
}

/* The text of the first of "%.ng", n = nmin .. 17, that reads back to x;
 * with nmin = 17 that of "%.17g", unchecked. */
static int shortest_from(double x, char *buf, int nmin)
{
    int (*slow)(double, char *) = nmin == 17 ? cli_g17_printf : cli_shortest_printf;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int neg = (int)(bits >> 63), bexp = (int)((bits >> 52) & 0x7ff);
    if (bexp == 0 || bexp == 0x7ff) return slow(x, buf);   /* zero, subnormal, inf, nan */
    const uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    const int e = bexp - 1075;
    /* k with x 10^k in [1e16, 1e17): from the binary exponent times
     * log10(2) ~ 78913 / 2^18 (off by at most one), corrected below */
    int k = 16 - (((bexp - 1023) * 78913) >> 18);
    big X;
    uint64_t N = 0;
    int s = 0;
    for (int tries = 0; tries < 3; tries++) {
        if (k < 0 || k > POW5_MAX_K) return slow(x, buf);
        s = -(e + k);
        if (s < 1) return slow(x, buf);
        const int lo = pow5_offset[k], n5 = pow5_offset[k + 1] - lo;
        uint64_t carry = 0;
        for (int q = 0; q < n5; q++) {
            const u128 v = (u128)pow5_limbs[lo + q] * m + carry;
            X.w[q] = (uint64_t)v;
            carry = (uint64_t)(v >> 64);
        }
        X.w[n5] = carry;
        X.n = n5 + 1;
        N = big_bits(&X, s, 64);
        if (s + 64 < 64 * X.n && big_bits(&X, s + 64, 64)) N = UINT64_MAX;   /* k too small */
        if (N >= pow10_u64[17]) k--;
        else if (N < pow10_u64[16]) k++;
        else break;
    }
    if (N < pow10_u64[16] || N >= pow10_u64[17]) return slow(x, buf);
    /* the fraction f = (bits [0, s) of X) / 2^s against 1/2 */
    const int f_zero = big_low_zero(&X, s);
    const int f_half_bit = (int)big_bits(&X, s - 1, 1);
    const int f_cmp_half = !f_half_bit ? -1 : (big_low_zero(&X, s - 1) ? 0 : 1);   /* f vs 1/2 */
    const int pow2 = m == (1ull << 52) && bexp > 1;
    /* f in double, to 53 bits (truncated) */
    const double f = s >= 53 ? (double)big_bits(&X, s - 53, 53) * 0x1p-53 : ldexp((double)big_bits(&X, 0, s), -s);
    for (int n = nmin; n <= 17; n++) {
        const uint64_t p = pow10_u64[17 - n];
        uint64_t M = N / p;
        const uint64_t r = N % p;
        /* round N + f to a multiple of p: compare 2 (r + f) with p */
        int up;
        if (2 * r + 2 <= p) up = 0;
        else if (2 * r >= p + 1) up = 1;
        else if (2 * r == p) up = f_zero ? (int)(M & 1) : 1;
        else up = f_cmp_half > 0 || (f_cmp_half == 0 && (M & 1));   /* 2 r + 1 == p (p = 1) */
        M += (uint64_t)up;
        /* does M p / 10^k read back to x? |M p - N - f| against half the
         * gap, (N + f) / (2 m) (a quarter below a power of two), first in
         * double with a margin far above its rounding, exactly near it */
        const int64_t delta = (int64_t)(M * p) - (int64_t)N;
        const int below = delta < 0 || (delta == 0 && !f_zero);
        const double dist = fabs((double)delta - f), gap = ((double)N + f) / (double)(below && pow2 ? 4 * m : 2 * m);
        int ok = n == 17 || dist < gap * (1 - 1e-12);   /* 17 digits always read back */
        if (!ok && dist <= gap * (1 + 1e-12)) {
            big c;
            distance(&X, s, delta, below && pow2 ? 2 : 1, &c);
            const int cmp = big_cmp_pow5(&c, k);
            ok = cmp < 0 || (cmp == 0 && !(m & 1));
        }
        if (ok) {
            int E = 16 - k;
            if (M == pow10_u64[n]) {   /* rounded up to 10^n */
                M = pow10_u64[n - 1];
                E++;
            }
            return format_g(buf, neg, M, n, E);
        }
    }
    return slow(x, buf);   /* not reached: n = 17 returns */
}

int cli_shortest(double x, char *buf)
{
    return shortest_from(x, buf, 15);
}

int cli_g17(double x, char *buf)
{
    return shortest_from(x, buf, 17);
}
#else
int cli_shortest(double x, char *buf)
{
    return cli_shortest_printf(x, buf);
}

int cli_g17(double x, char *buf)
{
    return cli_g17_printf(x, buf);
}
#endif

int cli_hexa_printf(double x, char *buf)
{
    return snprintf(buf, CLI_SHORTEST_LEN, "%a", x);
}

/* "%a" of a zero or normal x: "[-]0x1.HHHp+E" with the 52 fraction bits
 * as 13 hexadecimal digits less their trailing zeros (none: no point),
 * "[-]0x0p+0" for zero. Subnormal and non-finite numbers take printf. */
int cli_hexa(double x, char *buf)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)(b >> 52 & 0x7ff);
    uint64_t f = b & ((UINT64_C(1) << 52) - 1);
    if (e == 0x7ff || (e == 0 && f != 0))
        return cli_hexa_printf(x, buf);
    char *p = buf;
    if (b >> 63)
        *p++ = '-';
    *p++ = '0', *p++ = 'x', *p++ = e ? '1' : '0';
    if (f) {
        *p++ = '.';
        int last = 0;   /* the lowest non-zero digit's shift */
        while (!(f >> last & 0xf))
            last += 4;
        for (int k = 48; k >= last; k -= 4)
            *p++ = "0123456789abcdef"[f >> k & 0xf];
    }
    int E = e ? e - 1023 : 0;
    *p++ = 'p', *p++ = E < 0 ? '-' : '+';
    unsigned u = (unsigned)(E < 0 ? -E : E);
    char d[5];
    int n = 0;
    do
        d[n++] = (char)('0' + u % 10);
    while (u /= 10);
    while (n)
        *p++ = d[--n];
    *p = 0;
    return (int)(p - buf);
}
