/*
 * test_manifold.c - the exponential maps of SO(3) and SE(3) on unit
 * quaternions (joints/manifold.h) and the joint types' manifold operations
 * (joints/joint.h).
 *
 *   - the coefficients: exact limits at z = 0; series and closed form
 *     continuous at the switch; both against long-double closed forms;
 *   - exp/log round trips: (q (+) d) (-) ... = d, q0 (+) (q0 (-) q1) = q1,
 *     log near pi and beyond it (the shortest rotation), exp of large
 *     angles against Rodrigues' formula;
 *   - every Jacobian (d(q (+) d)/dq = Ad^-1, d(q (+) d)/dd = J_r,
 *     d(q0 (-) q1)/dq1 = J_r^-1, d(q0 (-) q1)/dq0 = -J_r^-1 Ad^-1) against
 *     the complex step along the manifold and against central differences;
 *   - the complexified quaternion keeps p.p = 1 (bilinear);
 *   - the truncated dexp^-1 against J_r^-1 within the series' remainder;
 *   - the additive joints' operations (every table today).
 * Every tolerance is derived next to its check.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "mbs_testing.h"

#define NSAMPLES 500
static const double EPS = DBL_EPSILON;
static const double H = 1e-20;   /* complex step: h^2 far below round-off */
static const double PI = 3.14159265358979323846;

typedef double complex cx;

/* One Lie group in both builds: q has nq numbers, tangents nv. */
typedef struct {
    const char *name;
    int nq, nv;
    void (*integrate)(const double *, const double *, double *);
    void (*difference)(const double *, const double *, double *);
    void (*jr)(const double *, double *);
    void (*jr_inv)(const double *, double *);
    void (*ad_inv)(const double *, double *);
    void (*integrate_cs)(const cx *, const cx *, cx *);
    void (*difference_cs)(const cx *, const cx *, cx *);
} group;

static const group SO3 = { "SO(3)", 4, 3, mbs_so3_integrate, mbs_so3_difference, mbs_so3_jr, mbs_so3_jr_inv,
                           mbs_so3_ad_inv, mbs_so3_integrate_cs, mbs_so3_difference_cs };
static const group SE3 = { "SE(3)", 7, 6, mbs_se3_integrate, mbs_se3_difference, mbs_se3_jr, mbs_se3_jr_inv,
                           mbs_se3_ad_inv, mbs_se3_integrate_cs, mbs_se3_difference_cs };

static double norm(const double *a, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += a[k] * a[k];
    return sqrt(s);
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double e = 0;
    for (int k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k]));
    return e;
}

/* a random vector of n entries with norm r, uniform direction */
static void random_vec(mbs_rng *g, double *a, int n, double r)
{
    double s;
    do {
        for (int k = 0; k < n; k++) a[k] = mbs_rng_uniform(g, -1, 1);
        s = norm(a, n);
    } while (s < 0.1 || s > 1);
    for (int k = 0; k < n; k++) a[k] *= r / s;
}

/* a random configuration: unit quaternion (SO(3)) or [t; p], |t_k| <= 1 */
static void random_config(mbs_rng *g, const group *G, double *q)
{
    int o = G->nq - 4;
    for (int k = 0; k < o; k++) q[k] = mbs_rng_uniform(g, -1, 1);
    random_vec(g, q + o, 4, 1);
}

/* a random tangent: rotation part of norm <= wmax, linear part |nu_k| <= 1 */
static void random_tangent(mbs_rng *g, const group *G, double *d, double wmax)
{
    int o = G->nv - 3;
    for (int k = 0; k < o; k++) d[k] = mbs_rng_uniform(g, -1, 1);
    random_vec(g, d + o, 3, mbs_rng_uniform(g, 0, wmax));
}

static void to_cx(cx *a, const double *b, int n)
{
    for (int k = 0; k < n; k++) a[k] = b[k];
}

/* ------------------------------------------------------------ coefficients */

/* the coefficients in closed form in long double */
static void coeffs_ld(long double z, long double *c)
{
    long double th = sqrtl(z), s = sinl(th), co = cosl(th), hs = sinl(th / 2), hc = cosl(th / 2);
    c[MBS_SO3_COS] = co;
    c[MBS_SO3_SINC] = s / th;
    c[MBS_SO3_C1] = 2 * hs * hs / z;
    c[MBS_SO3_S1] = (th - s) / (z * th);
    c[MBS_SO3_C2] = (z + 2 * co - 2) / (2 * z * z);
    c[MBS_SO3_S2] = (2 * th - 3 * s + th * co) / (2 * z * z * th);
    c[MBS_SO3_DJ] = 1 / z - hc / (2 * th * hs);
    c[MBS_SO3_HCOS] = hc;
    c[MBS_SO3_HSINC] = hs / th;
}

static void test_coefficients(void)
{
    /* z = 0: the series' first terms, exactly (Horner from 1 with z = 0,
     * then one correctly rounded division) */
    static const double lim[MBS_SO3_NCOEF] = { 1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 12, 1, 1.0 / 2 };
    double c[MBS_SO3_NCOEF], a[MBS_SO3_NCOEF], b[MBS_SO3_NCOEF];
    mbs_so3_coeffs(0, c);
    CHECK(memcmp(c, lim, sizeof c) == 0, "coefficients at z = 0");

    /* The switch at z = 1 (th = 1). The closed forms subtract terms of
     * size <= 6 (s2: 2 th + 3 sin th + th cos th = 5.1) with <= 8 roundings
     * of at most eps/2 relative to them, then divide by >= 2: <= 12 eps;
     * the series add <= 12 roundings of terms <= 1 (<= 6 eps): the branches
     * differ by <= 18 eps in absolute value on each side of the switch,
     * and so do the complexified ones (the same operations). */
    double worst = 0;
    for (int side = -1; side <= 1; side++) {
        double z = MBS_SO3_SERIES_MAX * (1 + 1e-3 * side);
        mbs_so3_coeffs_series(z, a);
        mbs_so3_coeffs_closed(z, b);
        worst = fmax(worst, max_abs_diff(a, b, MBS_SO3_NCOEF));
        cx za = z + I * 1e-3, ca[MBS_SO3_NCOEF], cb[MBS_SO3_NCOEF];
        mbs_so3_coeffs_series_cs(za, ca);
        mbs_so3_coeffs_closed_cs(za, cb);
        for (int k = 0; k < MBS_SO3_NCOEF; k++) worst = fmax(worst, cabs(ca[k] - cb[k]));
    }
    CHECK(worst <= 18 * EPS, "series and closed form at the switch differ by %.3g = %.1f eps", worst, worst / EPS);
    printf("switch: series - closed form %.3g (%.1f eps)\n", worst, worst / EPS);

    /* Each branch on its side against long-double closed forms (64-bit
     * mantissa: their own error, the same <= 12 roundings, is 2^11 times
     * smaller): the branch's bound above, 12 eps. */
    if (LDBL_MANT_DIG >= 64) {
        static const double zs[] = { 0.25, 0.5, 0.75, 1, 1.5, 2, 5, 10, 20, 30 };
        double ws = 0, wc = 0;
        for (size_t i = 0; i < sizeof zs / sizeof *zs; i++) {
            long double r[MBS_SO3_NCOEF];
            coeffs_ld(zs[i], r);
            mbs_so3_coeffs(zs[i], c);
            for (int k = 0; k < MBS_SO3_NCOEF; k++) {
                double e = (double)fabsl((long double)c[k] - r[k]);
                if (zs[i] <= MBS_SO3_SERIES_MAX) ws = fmax(ws, e);
                else wc = fmax(wc, e);
            }
        }
        CHECK(ws <= 12 * EPS && wc <= 12 * EPS, "against long double: series %.3g, closed %.3g", ws, wc);
        printf("against long double: series %.3g (%.1f eps), closed form %.3g (%.1f eps)\n", ws, ws / EPS, wc,
               wc / EPS);
    }
}

/* ------------------------------------------------------------ round trips */

/* q0 (+) (q0 (-) q1) = q1 up to the sign of the quaternion */
static double config_diff(const group *G, const double *a, const double *b)
{
    int o = G->nq - 4;
    double e = max_abs_diff(a, b, o), neg[4];
    for (int k = 0; k < 4; k++) neg[k] = -b[o + k];
    return fmax(e, fmin(max_abs_diff(a + o, b + o, 4), max_abs_diff(a + o, neg, 4)));
}

/* Round-off of a round trip. exp: entries within 12 eps (the coefficients)
 * times |w| <= pi, so <= 38 eps; the quaternion product: sums of 4
 * products of unit entries, <= 4 eps; log: atan to 1 ulp and a product,
 * conditioned by th / sin(th/2) <= pi / sin(1.5) = 3.15 across the
 * rotation and 2 along it: <= 3.15 (38 + 4) eps + 4 eps |w| <= 150 eps.
 * SE(3) adds the translation: V nu (3 products of entries <= 1 + |w|),
 * the rotation of the quaternion and back (<= 12 eps relative each) and
 * V^-1 (norm <= 1 + th/2 + dj th^2 <= 3.5 for th <= 3): <= 150 eps times
 * (1 + |t| + |nu|) <= 7. */
static void test_round_trips(const group *G)
{
    mbs_rng g;
    mbs_rng_seed(&g, 2101);
    double worst = 0;
    for (int s = 0; s < NSAMPLES; s++) {
        double q[7], q1[7], q2[7], d[6], d1[6], r[7];
        random_config(&g, G, q);
        random_config(&g, G, r);
        random_tangent(&g, G, d, 3);
        double scale = G->nv == 6 ? 7 : 1;
        G->integrate(q, d, q1);
        G->difference(q, q1, d1);
        double e1 = max_abs_diff(d, d1, G->nv);
        G->difference(q, r, d1);
        G->integrate(q, d1, q2);
        double e2 = config_diff(G, q2, r);
        worst = fmax(worst, fmax(e1, e2) / scale);
        CHECK(e1 <= 150 * scale * EPS && e2 <= 150 * scale * EPS, "%s round trip %d: %.3g %.3g", G->name, s, e1, e2);
    }
    printf("%s round trips: %.3g (%.1f eps, scaled)\n", G->name, worst, worst / EPS);
}

/* log near pi and beyond it; exp of large angles against Rodrigues */
static void test_large_angles(void)
{
    mbs_rng g;
    mbs_rng_seed(&g, 2102);
    double worst_log = 0, worst_exp = 0;
    for (int s = 0; s < NSAMPLES; s++) {
        double u[3], w[3], p[4], w1[3], R[9], Rq[9], Rr[9];
        random_vec(&g, u, 3, 1);
        /* |w| = pi - 1e-3 .. pi - 1e-9: the shortest rotation is w itself;
         * |w| = pi + 1e-3: the shortest is w - 2 pi u (150 eps as above) */
        double th = s % 3 == 0 ? PI - 1e-3 : s % 3 == 1 ? PI - 1e-9 : PI + 1e-3;
        double sh = th > PI ? th - 2 * PI : th;
        for (int k = 0; k < 3; k++) w[k] = th * u[k];
        mbs_so3_exp(w, p);
        mbs_so3_log(p, w1);
        double e = 0;
        for (int k = 0; k < 3; k++) e = fmax(e, fabs(w1[k] - sh * u[k]));
        worst_log = fmax(worst_log, e);
        /* exp of |w| up to 20: the rotation of exp(w), the matrix exp and
         * Rodrigues' formula; each entry a sum of <= 3 products of terms
         * <= 1 whose inputs (cos th, sin th / th * th, th^2 c1) are within
         * 12 eps (1 + th) of their values: <= 12 eps (1 + th) * 3 */
        th = mbs_rng_uniform(&g, 0, 20);
        for (int k = 0; k < 3; k++) w[k] = th * u[k];
        mbs_so3_exp(w, p);
        mbs_quat_rotation(p, Rq);
        mbs_so3_exp_matrix(w, R);
        double c = cos(th), sn = sin(th);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                Rr[3 * i + j] = (i == j ? c : 0) + (1 - c) * u[i] * u[j];
        Rr[1] -= sn * u[2]; Rr[2] += sn * u[1]; Rr[3] += sn * u[2];
        Rr[5] -= sn * u[0]; Rr[6] -= sn * u[1]; Rr[7] += sn * u[0];
        double ex = fmax(max_abs_diff(R, Rr, 9), max_abs_diff(Rq, Rr, 9));
        worst_exp = fmax(worst_exp, ex / (1 + th));
        CHECK(e <= 150 * EPS && ex <= 36 * EPS * (1 + th), "large angles %d: log %.3g exp %.3g", s, e, ex);
    }
    printf("log near pi: %.3g (%.1f eps); exp of large angles: %.3g (%.1f eps per unit angle)\n", worst_log,
           worst_log / EPS, worst_exp, worst_exp / EPS);
}

/* ------------------------------------------------------------ Jacobians */

enum { J_INT_Q, J_INT_D, J_DIF_Q1, J_DIF_Q0, NJAC };
static const char *jac_name[NJAC] = { "d(q+d)/dq", "d(q+d)/dd", "d(q0-q1)/dq1", "d(q0-q1)/dq0" };

/* the four Jacobians from manifold.h at (q, d), q1 = q (+) d */
static void analytic(const group *G, const double *d, double J[NJAC][36])
{
    int n = G->nv;
    double A[36], Ji[36];
    G->ad_inv(d, J[J_INT_Q]);
    G->jr(d, J[J_INT_D]);
    G->jr_inv(d, J[J_DIF_Q1]);
    G->ad_inv(d, A);
    G->jr_inv(d, Ji);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += Ji[n * i + k] * A[n * k + j];
            J[J_DIF_Q0][n * i + j] = -s;
        }
}

/* Column c of Jacobian j by the complex step: the tangent direction e_c
 * taken as i h e_c, the result read as Im / h. */
static void cs_column(const group *G, int j, const double *q, const double *d, int c, double *col)
{
    cx cq[7], cd[6], e[6] = { 0 }, x0[7], a[7], b[7], r[6];
    int n = G->nv;
    to_cx(cq, q, G->nq);
    to_cx(cd, d, n);
    e[c] = I * H;
    G->integrate_cs(cq, cd, x0);
    switch (j) {
    case J_INT_Q:
        G->integrate_cs(cq, e, a);
        G->integrate_cs(a, cd, b);
        G->difference_cs(x0, b, r);
        break;
    case J_INT_D:
        for (int k = 0; k < n; k++) e[k] += cd[k];
        G->integrate_cs(cq, e, b);
        G->difference_cs(x0, b, r);
        break;
    case J_DIF_Q1:
        G->integrate_cs(x0, e, b);
        G->difference_cs(cq, b, r);
        break;
    default:
        G->integrate_cs(cq, e, a);
        G->difference_cs(a, x0, r);
        break;
    }
    for (int k = 0; k < n; k++) col[k] = cimag(r[k]) / H;
}

/* Column c of Jacobian j by central differences with step h (double build) */
static void fd_column(const group *G, int j, const double *q, const double *d, int c, double h, double *col)
{
    double x0[7], a[7], b[7], r[2][6];
    int n = G->nv;
    G->integrate(q, d, x0);
    for (int s = 0; s < 2; s++) {
        double e[6] = { 0 };
        e[c] = s ? -h : h;
        switch (j) {
        case J_INT_Q:
            G->integrate(q, e, a);
            G->integrate(a, d, b);
            G->difference(x0, b, r[s]);
            break;
        case J_INT_D:
            for (int k = 0; k < n; k++) e[k] += d[k];
            G->integrate(q, e, b);
            G->difference(x0, b, r[s]);
            break;
        case J_DIF_Q1:
            G->integrate(x0, e, b);
            G->difference(q, b, r[s]);
            break;
        default:
            G->integrate(q, e, a);
            G->difference(a, x0, r[s]);
            break;
        }
    }
    for (int k = 0; k < n; k++) col[k] = (r[0][k] - r[1][k]) / (2 * h);
}

/* Complex step: no subtraction of nearby values, so its error is the
 * round-off of evaluating the derivative itself, of the order of the
 * round trips' (<= 150 eps, times 7 on SE(3)) relative to the entries
 * (<= 3.5: J_r^-1 at th <= 3, Ad^-1's S(t) with |t| <= 2): <= 150 eps * 3.5
 * (SO(3)), * 7 * 3.5 (SE(3)).
 * Central differences with h = 1e-5: truncation h^2/6 |f'''| estimated by
 * Richardson, |D(2h) - D(h)| / 3 (the bound takes it once more, for the
 * estimate's own error), plus the round-off of the two evaluations, each
 * within the round trips' bound of the true function: 2 * 150 eps * scale / (2 h). */
static void test_jacobians(const group *G)
{
    mbs_rng g;
    mbs_rng_seed(&g, 2103);
    int n = G->nv;
    double scale = n == 6 ? 7 : 1, tol_cs = 150 * EPS * 3.5 * scale, worst_cs = 0, worst_fd = 0;
    const double h = 1e-5;
    for (int s = 0; s < NSAMPLES; s++) {
        double q[7], d[6], J[NJAC][36];
        random_config(&g, G, q);
        random_tangent(&g, G, d, 3);
        analytic(G, d, J);
        for (int j = 0; j < NJAC; j++)
            for (int c = 0; c < n; c++) {
                double col[6], f1[6], f2[6], ecs = 0, efd = 0, tol_fd = 0;
                cs_column(G, j, q, d, c, col);
                fd_column(G, j, q, d, c, h, f1);
                fd_column(G, j, q, d, c, 2 * h, f2);
                for (int k = 0; k < n; k++) {
                    double a = J[j][n * k + c];
                    ecs = fmax(ecs, fabs(col[k] - a));
                    efd = fmax(efd, fabs(f1[k] - a));
                    tol_fd = fmax(tol_fd, fabs(f2[k] - f1[k]) * 2 / 3);
                }
                tol_fd += 150 * EPS * scale / h;
                worst_cs = fmax(worst_cs, ecs);
                worst_fd = fmax(worst_fd, efd / tol_fd);
                CHECK(ecs <= tol_cs, "%s %s column %d sample %d: complex step off by %.3g", G->name, jac_name[j], c,
                      s, ecs);
                CHECK(efd <= tol_fd, "%s %s column %d sample %d: differences off by %.3g (tol %.3g)", G->name,
                      jac_name[j], c, s, efd, tol_fd);
            }
    }
    printf("%s Jacobians: complex step %.3g (%.1f eps; bound %.3g), differences at most %.2f of their bound\n",
           G->name, worst_cs, worst_cs / EPS, tol_cs, worst_fd);
}

/* ------------------------------------------------------------ |p| = 1 */

/* The complexified quaternion of exp(w + i h u) and of p (x) exp(w + i h u):
 * p.p (bilinear) = cos^2 + sin^2 = 1 as analytic functions, so its real
 * part is 1 and its imaginary part 0 to round-off: entries within
 * 12 eps * (1 + th/2) <= 31 eps of their values (coefficients as above,
 * th <= 3), p.p within 2 * 31 eps + 4 roundings <= 66 eps; the product
 * with a unit p adds 4 eps per entry: <= 80 eps. The imaginary part is h
 * times the derivative of p.p, computed with the same bounds: <= 80 eps h. */
static void test_unit_quaternion(void)
{
    mbs_rng g;
    mbs_rng_seed(&g, 2104);
    double worst_re = 0, worst_im = 0;
    for (int s = 0; s < NSAMPLES; s++) {
        double w[3], u[3], p0[4];
        random_vec(&g, w, 3, mbs_rng_uniform(&g, 0, 3));
        random_vec(&g, u, 3, 1);
        random_vec(&g, p0, 4, 1);
        cx cw[3], cp0[4], p[4], p1[4];
        for (int k = 0; k < 3; k++) cw[k] = w[k] + I * H * u[k];
        to_cx(cp0, p0, 4);
        mbs_so3_exp_cs(cw, p);
        mbs_so3_integrate_cs(cp0, cw, p1);
        cx a = 0, b = 0;
        for (int k = 0; k < 4; k++) {
            a += p[k] * p[k];
            b += p1[k] * p1[k];
        }
        double re = fmax(fabs(creal(a) - 1), fabs(creal(b) - 1)), im = fmax(fabs(cimag(a)), fabs(cimag(b))) / H;
        worst_re = fmax(worst_re, re);
        worst_im = fmax(worst_im, im);
        CHECK(re <= 80 * EPS && im <= 80 * EPS, "complexified |p| sample %d: %.3g %.3g", s, re, im);
    }
    printf("complexified p.p - 1: real %.3g (%.1f eps), imaginary / h %.3g\n", worst_re, worst_re / EPS, worst_im);
}

/* ------------------------------------------------------------ dexp^-1 */

/* J_r(z)^-1 = sum_k B_k / k! (-ad_z)^k (B_1 = -1/2, odd B_k = 0 beyond):
 * the truncation after ad^2 leaves sum_{k >= 4 even} |B_k| / k! |ad|^k |v|
 * <= |ad|^4 / 720 / (1 - |ad|^2 / (4 pi^2)) |v| (the even terms' ratio is
 * below |ad|^2 / (4 pi^2)), with |ad| = |w| on SO(3) and <= |w| + |nu| on
 * SE(3); plus the round-off of both sides, 150 eps * 3.5 |v| (as above). */
static void test_dexpinv(void)
{
    mbs_rng g;
    mbs_rng_seed(&g, 2105);
    double worst = 0;
    for (int s = 0; s < NSAMPLES; s++) {
        const group *G = s % 2 ? &SE3 : &SO3;
        int n = G->nv;
        double z[6], v[6], r[6], Ji[36], e = 0, ad;
        for (int k = 0; k < n; k++) v[k] = mbs_rng_uniform(&g, -1, 1);
        random_vec(&g, z, n, mbs_rng_uniform(&g, 0.01, 0.5));
        if (n == 3) {
            mbs_so3_dexpinv(z, v, r);
            ad = norm(z, 3);
        } else {
            mbs_se3_dexpinv(z, v, r);
            ad = norm(z, 3) + norm(z + 3, 3);
        }
        G->jr_inv(z, Ji);
        for (int i = 0; i < n; i++) {
            double x = 0;
            for (int k = 0; k < n; k++) x += Ji[n * i + k] * v[k];
            e = fmax(e, fabs(x - r[i]));
        }
        double bound = pow(ad, 4) / 720 / (1 - ad * ad / (4 * PI * PI)) * norm(v, n) + 150 * EPS * 3.5 * norm(v, n);
        worst = fmax(worst, e / bound);
        CHECK(e <= bound, "%s dexp^-1 sample %d: %.3g > %.3g", G->name, s, e, bound);
    }
    printf("truncated dexp^-1: at most %.2f of the remainder bound\n", worst);
}

/* ------------------------------------------------------------ joints */

/* Every Euler-rate joint table: velocities are coordinate rates (nv = nq,
 * the quaternion where the Euler parameters are), and the operations are
 * the additive ones, exactly. */
static void test_joint_ops(void)
{
    mbs_rng g;
    mbs_rng_seed(&g, 2106);
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++) {
        const mbs_joint_ops *o = mbs_joint_ops_of_cs(t, MBS_VELOCITIES_EULER_RATES);
        CHECK(o && o->nv == o->nq && o->quat == o->euler && o->tangent == 0, "%s: sizes", o ? o->name : "?");
        if (!o) continue;
        int n = o->nq, bad = 0;
        cx q[7], dq[7], q1[7], d1[7], Jq[49], Jd[49], T[49];
        for (int k = 0; k < n; k++) {
            q[k] = mbs_rng_uniform(&g, -1, 1);
            dq[k] = mbs_rng_uniform(&g, -1, 1);
        }
        o->integrate(q, dq, q1);
        o->difference(q, q1, d1);
        o->integrate_jacobians(q, dq, Jq, Jd);
        o->velocity_map(q, T);
        for (int k = 0; k < n; k++) bad += q1[k] != q[k] + dq[k] || d1[k] != q1[k] - q[k];
        for (int k = 0; k < n * n; k++) {
            cx id = k % (n + 1) == 0;
            bad += Jq[k] != id || Jd[k] != id || T[k] != id;
        }
        CHECK(bad == 0, "%s: %d entries not additive", o->name, bad);
    }
}

/* The tangent tables of spherical and floating joints against the complex
 * step along their own manifold (h = 1e-20, q (+) i h d by the table's
 * integrate): motion_d and subspace_d along d, subspace_dot along v (the
 * tangent of q(t) is v), subspace_dot_d along (d, dv), and the velocity
 * map T v. One complex evaluation of closed forms of entries <= 1 per
 * unit direction: round-off, 1e-13 absolute (docs/tangent-space.md §13). */
static void test_tangent_ops(void)
{
    const double h = 1e-20;
    mbs_rng g;
    mbs_rng_seed(&g, 2107);
    double worst = 0;
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++) {
        const mbs_joint_ops *o = mbs_joint_ops_of_cs(t, MBS_VELOCITIES_TANGENT);
        if (!o->tangent) continue;
        CHECK(o->nv == o->ndof && o->euler == -1 && o->quat == o->nq - 4, "%s: sizes", o->name);
        const int nq = o->nq, nv = o->nv;
        for (int s = 0; s < 200; s++) {
            cx q[7], d[6], v[6], dv[6], qe[7], hd[6], ve[6];
            double p2 = 0;
            for (int k = 0; k < nq; k++) q[k] = mbs_rng_uniform(&g, -1, 1);
            for (int k = nq - 4; k < nq; k++) p2 += creal(q[k] * q[k]);
            for (int k = nq - 4; k < nq; k++) q[k] /= sqrt(p2);
            for (int k = 0; k < nv; k++) {
                d[k] = mbs_rng_uniform(&g, -1, 1);
                v[k] = mbs_rng_uniform(&g, -1, 1);
                dv[k] = mbs_rng_uniform(&g, -1, 1);
                hd[k] = I * h * d[k];
            }
            o->integrate(q, hd, qe);
            cx R[9], tt[3], Re[9], te[3], dR[9], dt[3], S[36], Se[36], dS[36], Sd[36], Sde[36], dSd[36];
            o->motion(q, R, tt);
            o->motion(qe, Re, te);
            o->motion_d(q, d, dR, dt);
            for (int k = 0; k < 9; k++) worst = fmax(worst, cabs(cimag(Re[k]) / h - dR[k]));
            for (int k = 0; k < 3; k++) worst = fmax(worst, cabs(cimag(te[k]) / h - dt[k]));
            o->subspace(qe, Se);
            o->subspace_d(q, d, dS);
            for (int k = 0; k < 6 * nv; k++) worst = fmax(worst, cabs(cimag(Se[k]) / h - dS[k]));
            /* dS/dt along v: S at q (+) i h v */
            for (int k = 0; k < nv; k++) hd[k] = I * h * v[k];
            o->integrate(q, hd, qe);
            o->subspace(qe, Se);
            o->subspace_dot(q, v, Sd);
            for (int k = 0; k < 6 * nv; k++) worst = fmax(worst, cabs(cimag(Se[k]) / h - Sd[k]));
            /* the velocity map: q (+) i h v moves q along T v */
            cx T[42];
            o->velocity_map(q, T);
            for (int r = 0; r < nq; r++) {
                cx tv = 0;
                for (int k = 0; k < nv; k++) tv += T[r * nv + k] * v[k];
                worst = fmax(worst, cabs(cimag(qe[r]) / h - tv));
            }
            /* d(dS/dt) along (d, dv) */
            for (int k = 0; k < nv; k++) {
                hd[k] = I * h * d[k];
                ve[k] = v[k] + I * h * dv[k];
            }
            o->integrate(q, hd, qe);
            o->subspace_dot(qe, ve, Sde);
            o->subspace_dot_d(q, v, d, dv, dSd);
            for (int k = 0; k < 6 * nv; k++) worst = fmax(worst, cabs(cimag(Sde[k]) / h - dSd[k]));
            (void)R; (void)tt; (void)S;
        }
    }
    printf("tangent joint tables against the complex step: worst %.3g\n", worst);
    CHECK(worst <= 1e-13, "tangent tables: %g", worst);
}

int main(void)
{
    test_coefficients();
    test_round_trips(&SO3);
    test_round_trips(&SE3);
    test_large_angles();
    test_jacobians(&SO3);
    test_jacobians(&SE3);
    test_unit_quaternion();
    test_dexpinv();
    test_joint_ops();
    test_tangent_ops();
    return mbs_test_summary("test_manifold");
}
