/*
 * cli_util.c - shared helpers of the mbsens command (see cli_util.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli_util.h"
#include "shortest.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- messages */

/* Messages held back (cli_hold_messages), or NULL: printed. */
static FILE *held;
static char *held_text;
static size_t held_len;

static void vmessage(const char *cmd, const char *fmt, va_list ap)
{
    FILE *out = held ? held : stderr;
    if (cmd)
        fprintf(out, "mbsens %s: error: ", cmd);
    else
        fputs("mbsens: error: ", out);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
}

void cli_hold_messages(void)
{
    if (!held)
        held = open_memstream(&held_text, &held_len);   /* NULL: printed as they come */
}

void cli_release_messages(int print)
{
    if (!held)
        return;
    fclose(held);
    held = NULL;
    if (print && held_text)
        fputs(held_text, stderr);
    free(held_text);
    held_text = NULL;
    held_len = 0;
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, fmt, ap);
    va_end(ap);
}

/* The first line of the usage text up to its first option, then
 * " [OPTIONS]" if it had options, and where the whole text is. */
void cli_usage_hint(const char *cmd, void (*usage)(FILE *))
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = usage ? open_memstream(&text, &size) : NULL;
    if (mem) {
        usage(mem);
        fclose(mem);
    }
    if (text) {
        size_t line = strcspn(text, "\n");
        text[line] = '\0';
        const char *opt = strstr(text, " [-");
        if (opt)
            fprintf(stderr, "%.*s [OPTIONS]\n", (int)(opt - text), text);
        else
            fprintf(stderr, "%s\n", text);
    }
    free(text);
    if (cmd)
        fprintf(stderr, "See 'mbsens %s --help'.\n", cmd);
    else
        fputs("See 'mbsens --help'.\n", stderr);
}

int cli_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage(cmd, fmt, ap);
    va_end(ap);
    cli_usage_hint(cmd, usage);
    return CLI_EXIT_USAGE;
}

/* Edits (insertion, deletion, substitution, swap of neighbours) from a[0..la)
 * to b[0..lb); names are short (at most 63 characters are compared). */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    enum { N = 64 };
    size_t d[3][N];   /* rows i-2, i-1, i of the table, cyclically */
    la = la < N - 1 ? la : N - 1;
    lb = lb < N - 1 ? lb : N - 1;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *r = d[i % 3], *p = d[(i + 2) % 3], *pp = d[(i + 1) % 3];
        r[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = p[j - 1] + cost;
            if (p[j] + 1 < v) v = p[j] + 1;
            if (r[j - 1] + 1 < v) v = r[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            r[j] = v;
        }
    }
    return d[la % 3][lb];
}

const char *cli_nearest(const char *word, size_t len, const char *const *names, int n)
{
    while (len && *word == '-') {
        word++;
        len--;
    }
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (int k = 0; k < n; k++) {
        const char *c = names[k];
        if (!c)
            continue;
        while (*c == '-')
            c++;
        size_t lc = strlen(c);
        /* a beginning of the name counts as one edit; otherwise about one
         * edit in four characters */
        size_t d = (len >= 2 && len < lc && strncmp(c, word, len) == 0) ? 1 : edit_distance(word, len, c, lc);
        size_t limit = (lc + 2) / 4 > 0 ? (lc + 2) / 4 : 1;
        if (d <= limit && d < best_d) {
            best = names[k];
            best_d = d;
        }
    }
    return best;
}

/* ---------------------------------------------------------- output buffer */

static int buf_reserve(cli_buf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void cli_buf_printf(cli_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (buf_reserve(b, (size_t)n) != 0)
        return;
    if ((size_t)n < sizeof small) {
        memcpy(b->s + b->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void cli_buf_puts(cli_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (buf_reserve(b, n) != 0)
        return;
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

static void buf_putc(cli_buf *b, char c)
{
    if (buf_reserve(b, 1) != 0)
        return;
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
}

void cli_buf_free(cli_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

int cli_buf_emit(cli_buf *b, FILE *out, const char *cmd)
{
    if (b->oom) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    if (b->len && fwrite(b->s, 1, b->len, out) != b->len) {
        cli_error(cmd, "cannot write output: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if (fflush(out) != 0 || ferror(out)) {
        cli_error(cmd, "cannot write output: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------ formatting */

void cli_json_str(cli_buf *b, const char *s)
{
    buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': cli_buf_puts(b, "\\\""); break;
        case '\\': cli_buf_puts(b, "\\\\"); break;
        case '\b': cli_buf_puts(b, "\\b"); break;
        case '\f': cli_buf_puts(b, "\\f"); break;
        case '\n': cli_buf_puts(b, "\\n"); break;
        case '\r': cli_buf_puts(b, "\\r"); break;
        case '\t': cli_buf_puts(b, "\\t"); break;
        default:
            if (*p < 0x20)
                cli_buf_printf(b, "\\u%04x", (unsigned)*p);
            else
                buf_putc(b, (char)*p);
        }
    }
    buf_putc(b, '"');
}

void cli_json_num(cli_buf *b, double x)
{
    char num[CLI_SHORTEST_LEN];
    if (isfinite(x)) {
        cli_shortest(x, num);
        cli_buf_puts(b, num);
    } else {
        cli_buf_puts(b, "null");
    }
}

void cli_json_vec(cli_buf *b, const double *x, int n)
{
    buf_putc(b, '[');
    for (int k = 0; k < n; k++) {
        if (k)
            cli_buf_puts(b, ", ");
        cli_json_num(b, x[k]);
    }
    buf_putc(b, ']');
}

void cli_json_mat3(cli_buf *b, const double A[9])
{
    buf_putc(b, '[');
    for (int i = 0; i < 3; i++) {
        if (i)
            cli_buf_puts(b, ", ");
        cli_json_vec(b, A + 3 * i, 3);
    }
    buf_putc(b, ']');
}

/* The names name(m, 0..n-1) as a JSON array. */
static void json_names(cli_buf *b, const mbs_model *m, int n, const char *(*name)(const mbs_model *, int))
{
    buf_putc(b, '[');
    for (int k = 0; k < n; k++) {
        if (k)
            cli_buf_puts(b, ", ");
        cli_json_str(b, name(m, k));
    }
    buf_putc(b, ']');
}

void cli_json_coord_names(cli_buf *b, const mbs_model *m)
{
    json_names(b, m, mbs_model_nq(m), mbs_coord_name);
}

void cli_json_vel_names(cli_buf *b, const mbs_model *m)
{
    json_names(b, m, mbs_model_nv(m), mbs_vel_name);
}

void cli_csv_name(cli_buf *b, const char *name)
{
    const size_t n = strlen(name);
    if (!strpbrk(name, ",\"\r\n") && !(n && (name[0] == ' ' || name[n - 1] == ' '))) {
        cli_buf_puts(b, name);
        return;
    }
    buf_putc(b, '"');
    for (const char *p = name; *p; p++) {
        if (*p == '"') buf_putc(b, '"');
        buf_putc(b, *p);
    }
    buf_putc(b, '"');
}

double cli_progress_delay(void)
{
    const char *e = getenv("MBS_PROGRESS_DELAY");
    char *end;
    double v = e ? strtod(e, &end) : NAN;
    return e && end != e && *end == '\0' && v >= 0 && isfinite(v) ? v : 2.0;
}

void cli_text_vec(cli_buf *b, const double *x, int n)
{
    buf_putc(b, '[');
    for (int k = 0; k < n; k++)
        cli_buf_printf(b, " % .6e", x[k]);
    cli_buf_puts(b, " ]");
}

/* ------------------------------------------------------------ value lists */

/* The names of the coordinates or of the velocities of m, on stderr. */
static void name_list(const mbs_model *m, cli_values_kind kind)
{
    const int vel = kind == CLI_VALUES_VELS, n = vel ? mbs_model_nv(m) : mbs_model_nq(m);
    fputs(vel ? "  velocities:" : "  coordinates:", stderr);
    for (int k = 0; k < n; k++)
        fprintf(stderr, "%s %s", k ? "," : "", vel ? mbs_vel_name(m, k) : mbs_coord_name(m, k));
    fputc('\n', stderr);
}

/* After a usage message printed by the caller: the hint, status 2. */
static int cli_usage_end(const char *cmd, void (*usage)(FILE *))
{
    cli_usage_hint(cmd, usage);
    return CLI_EXIT_USAGE;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int cli_parse_values(const char *cmd, const char *opt, const char *text, const mbs_model *m,
                     cli_values_kind kind, double *out, int n, void (*usage)(FILE *))
{
    int count = 0;
    const char *p = text;
    /* An empty (or blank) list has zero values. */
    while (is_space(*p))
        p++;
    if (*p != '\0') {
        for (;;) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            char tok[128];
            const char *t = p;
            size_t tl = len;
            while (tl && is_space(*t)) {
                t++;
                tl--;
            }
            while (tl && is_space(t[tl - 1]))
                tl--;
            if (tl == 0 || tl >= sizeof tok) {
                cli_error(cmd, "%s: invalid number '%.*s' (value %d)", opt,
                          (int)(tl < 60 ? tl : 60), t, count + 1);
                return cli_usage_end(cmd, usage);
            }
            memcpy(tok, t, tl);
            tok[tl] = '\0';
            char *stop;
            errno = 0;
            double x = strtod(tok, &stop);
            if (*stop != '\0' || stop == tok) {
                cli_error(cmd, "%s: invalid number '%s' (value %d)", opt, tok, count + 1);
                return cli_usage_end(cmd, usage);
            }
            if (!isfinite(x)) {
                cli_error(cmd, "%s: value %d '%s' is not a finite number", opt,
                          count + 1, tok);
                return cli_usage_end(cmd, usage);
            }
            if (count < n)
                out[count] = x;
            count++;
            if (!end)
                break;
            p = end + 1;
        }
    }
    if (count != n) {
        const char *per = kind == CLI_VALUES_COORDS ? " (one per coordinate)"
                          : kind == CLI_VALUES_VELS ? " (one per velocity)" : "";
        cli_error(cmd, "%s: expected %d value%s%s, got %d", opt, n, n == 1 ? "" : "s", per, count);
        if (m && kind != CLI_VALUES_PLAIN)
            name_list(m, kind);
        return cli_usage_end(cmd, usage);
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------ model, state */

/* Loader warnings (URDF inertias, JSON "lenient_inertia") on stderr. */
static void cli_load_warning(void *user, const char *msg)
{
    const char *cmd = user;
    if (cmd)
        fprintf(stderr, "mbsens %s: warning: %s\n", cmd, msg);
    else
        fprintf(stderr, "mbsens: warning: %s\n", msg);
}

int cli_velocities_from_name(const char *name)
{
    if (!strcmp(name, "tangent")) return MBS_VELOCITIES_TANGENT;
    if (!strcmp(name, "euler-rates") || !strcmp(name, "euler_rates")) return MBS_VELOCITIES_EULER_RATES;
    return -1;
}

mbs_model *cli_load_model(const char *cmd, const char *path)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *m = mbs_model_load_warn(path, cli_load_warning, (void *)cmd, &err);
    if (!m) {
        if (err.msg[0])
            cli_error(cmd, "%s", err.msg);
        else
            cli_error(cmd, "%s: cannot load model (%s)", path, mbs_status_string(err.code));
    }
    return m;
}

/* ---------------------------------------------------------------- output files */

/* The signals whose default action ends the process: the temporary file is
 * removed before it ends. */
enum { NSIGNALS = 5 };
static const int exit_signals[NSIGNALS] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

/* The open temporary files, for the signal handler (a command has at most
 * ATOMIC_OPEN of them open at once: a sweep's CSV and JSON tables), how
 * many are open, and the handlers the first one replaced. Only the main
 * thread opens and releases them. */
enum { ATOMIC_OPEN = 2 };
static char *volatile atomic_tmp_for_signal[ATOMIC_OPEN];
static int atomic_nopen;
static struct sigaction atomic_old_handlers[NSIGNALS];

static void atomic_on_signal(int sig)
{
    for (int k = 0; k < ATOMIC_OPEN; k++) {
        char *p = atomic_tmp_for_signal[k];
        if (p) unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Forget a->tmp in the signal handler's list; the old handlers back with
 * the last one. */
static void atomic_forget(cli_atomic *a)
{
    for (int k = 0; k < ATOMIC_OPEN; k++)
        if (atomic_tmp_for_signal[k] == a->tmp) atomic_tmp_for_signal[k] = NULL;
    if (--atomic_nopen == 0)
        for (int k = 0; k < NSIGNALS; k++) sigaction(exit_signals[k], &atomic_old_handlers[k], NULL);
}

static void atomic_release(cli_atomic *a)
{
    if (a->tmp) atomic_forget(a);
    free(a->tmp);
    free(a->target);
    a->tmp = a->target = NULL;
    a->f = NULL;
}

static const char *sep(const char *what) { return what && *what ? ": " : ""; }

/* The destination of a symbolic link, relative to the link's directory. */
static char *link_destination(const char *link)
{
    size_t cap = 256;
    for (;;) {
        char *buf = malloc(cap);
        if (!buf) return NULL;
        ssize_t n = readlink(link, buf, cap);
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            const char *slash = strrchr(link, '/');
            if (buf[0] == '/' || !slash) return buf;
            size_t dl = (size_t)(slash - link) + 1, bl = (size_t)n + 1;
            char *joined = malloc(dl + bl);
            if (joined) {
                memcpy(joined, link, dl);
                memcpy(joined + dl, buf, bl);
            }
            free(buf);
            return joined;
        }
        free(buf);
        cap *= 2;
    }
}

enum { OUT_NEW, OUT_REGULAR, OUT_THROUGH };

/* What writing a->path means, its symbolic links followed to the end: a
 * regular file to replace (or to create) atomically, or a device or FIFO
 * to write to as it is. a->target: that file. */
static int out_resolve(cli_atomic *a, const char *cmd, int *kind, struct stat *st)
{
    char *cur = strdup(a->path);
    int e = ENOMEM;
    for (int hop = 0; cur; hop++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0) {
            if (errno != ENOENT) {
                e = errno;
                break;
            }
            *kind = OUT_NEW;
            a->target = cur;
            return 0;
        }
        /* a link to a device or FIFO is written through (so are /proc magic
         * links, which stat() follows but whose destination is no path);
         * any other is followed one step */
        if (S_ISLNK(ls.st_mode) && (stat(cur, &ls) != 0 || S_ISREG(ls.st_mode) || S_ISDIR(ls.st_mode))) {
            if (hop >= 40) {
                e = ELOOP;
                break;
            }
            char *next = link_destination(cur);
            e = errno;
            free(cur);
            cur = next;
            continue;
        }
        if (!S_ISREG(ls.st_mode) && !S_ISCHR(ls.st_mode) && !S_ISBLK(ls.st_mode) && !S_ISFIFO(ls.st_mode)) {
            e = S_ISDIR(ls.st_mode) ? EISDIR : EINVAL;
            break;
        }
        *kind = S_ISREG(ls.st_mode) ? OUT_REGULAR : OUT_THROUGH;
        *st = ls;
        a->target = cur;
        return 0;
    }
    free(cur);
    cli_error(cmd, "cannot write '%s': %s", a->path,
              e == EINVAL ? "not a regular file, device or FIFO" : strerror(e));
    return -1;
}

/* The temporary file .BASE.XXXXXX next to a->target, with the mode of the
 * file it replaces (new files: 0666 & ~umask, as fopen) and, where
 * permitted, its owner. */
static int open_temporary(cli_atomic *a, const char *cmd, int kind, const struct stat *st)
{
    const char *slash = strrchr(a->target, '/');
    size_t dirlen = slash ? (size_t)(slash - a->target) + 1 : 0;
    const char *base = slash ? slash + 1 : a->target;
    if (*base == '\0') {
        cli_error(cmd, "cannot write '%s': not a file name", a->path);
        return -1;
    }
    size_t tlen = dirlen + strlen(base) + 16;
    a->tmp = malloc(tlen);
    if (!a->tmp) {
        cli_error(cmd, "out of memory");
        return -1;
    }
    snprintf(a->tmp, tlen, "%.*s.%s.XXXXXX", (int)dirlen, a->target, base);
    int slot = 0;
    while (slot < ATOMIC_OPEN && atomic_tmp_for_signal[slot]) slot++;
    if (slot == ATOMIC_OPEN) {
        cli_error(cmd, "cannot write '%s': too many output files open at once", a->path);
        free(a->tmp);
        a->tmp = NULL;
        return -1;
    }
    if (atomic_nopen++ == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = atomic_on_signal;
        sigemptyset(&sa.sa_mask);
        for (int k = 0; k < NSIGNALS; k++) {
            /* a signal ignored when the command started (nohup, a background job) stays ignored */
            sigaction(exit_signals[k], NULL, &atomic_old_handlers[k]);
            if (atomic_old_handlers[k].sa_handler != SIG_IGN) sigaction(exit_signals[k], &sa, NULL);
        }
    }
    /* the handler knows the name before the file exists: a signal may come
     * as soon as it does, and to any thread (OpenBLAS has its own), while
     * this one is not even running again (unlinking a name that is not
     * there yet, or never will be, does no harm) */
    atomic_tmp_for_signal[slot] = a->tmp;
    int fd = mkstemp(a->tmp);
    int e = errno;
    if (fd < 0) {
        if (strcmp(a->path, a->target) != 0)
            cli_error(cmd, "cannot create '%s' (the destination of the link '%s'): %s", a->target, a->path,
                      strerror(e));
        else
            cli_error(cmd, "cannot create '%s': %s", a->path, strerror(e));
        return -1;
    }
    mode_t mode;
    if (kind == OUT_REGULAR) {
        mode = st->st_mode & 07777;
        if ((st->st_uid != geteuid() || st->st_gid != getegid()) && fchown(fd, st->st_uid, st->st_gid) != 0) {
            /* not permitted: the new file is ours, like any file we create */
        }
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = (mode_t)(0666 & ~mask);
    }
    a->f = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
    if (!a->f) {
        cli_error(cmd, "cannot write '%s': %s", a->path, strerror(errno));
        close(fd);
        unlink(a->tmp);
        return -1;
    }
    return 0;
}

/* out_resolve, and not the input model */
static int out_check(cli_atomic *a, const char *cmd, const char *input, int *kind, struct stat *st)
{
    struct stat in;
    if (out_resolve(a, cmd, kind, st) != 0) return -1;
    if (*kind != OUT_NEW && input && stat(input, &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino) {
        cli_error(cmd, "cannot write '%s': it is the input model '%s'", a->path, input);
        return -1;
    }
    return 0;
}

int cli_output_check(const char *cmd, const char *path, const char *input)
{
    cli_atomic a;
    memset(&a, 0, sizeof a);
    a.path = path;
    int kind;
    struct stat st;
    int rc = out_check(&a, cmd, input, &kind, &st);
    atomic_release(&a);
    return rc;
}

int cli_atomic_open(cli_atomic *a, const char *cmd, const char *path, const char *input)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    int kind;
    struct stat st;
    if (out_check(a, cmd, input, &kind, &st) != 0) {
        atomic_release(a);
        return -1;
    }
    if (kind == OUT_THROUGH) {
        /* a device or FIFO: written as it is (no temporary file can replace it) */
        int fd = open(a->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        a->f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!a->f) {
            cli_error(cmd, "cannot write '%s': %s", path, strerror(errno));
            if (fd >= 0) close(fd);
            atomic_release(a);
            return -1;
        }
        return 0;
    }
    if (open_temporary(a, cmd, kind, &st) != 0) {
        atomic_release(a);
        return -1;
    }
    return 0;
}

int cli_atomic_commit(cli_atomic *a, const char *cmd, const char *what)
{
    errno = 0;
    int ok = fflush(a->f) == 0;
    ok = ok && (!a->tmp || fsync(fileno(a->f)) == 0);
    int e = errno;
    ok = (fclose(a->f) == 0) && ok;
    if (!e) e = errno;
    if (ok && a->tmp && rename(a->tmp, a->target) != 0) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        cli_error(cmd, "%s%scannot write '%s': %s", what ? what : "", sep(what), a->path,
                  strerror(e ? e : EIO));
        if (a->tmp) unlink(a->tmp);
    }
    atomic_release(a);
    return ok ? 0 : -1;
}

void cli_atomic_abort(cli_atomic *a)
{
    if (!a->f) return;
    fclose(a->f);
    if (a->tmp) unlink(a->tmp);
    atomic_release(a);
}

int cli_write_atomic(const char *cmd, const char *what, const char *path, const char *input, const char *text,
                     size_t len)
{
    cli_atomic a;
    if (cli_atomic_open(&a, cmd, path, input) != 0) return -1;
    if (fwrite(text, 1, len, a.f) != len) {
        int e = errno;
        cli_error(cmd, "%s%scannot write '%s': %s", what ? what : "", sep(what), path, strerror(e ? e : EIO));
        cli_atomic_abort(&a);
        return -1;
    }
    return cli_atomic_commit(&a, cmd, what);
}

/* ---------------------------------------------------------------- spooled output */

FILE *cli_spool_open(const char *cmd)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    size_t len = strlen(dir) + strlen(cmd) + 32;
    char *path = malloc(len);
    if (!path) {
        cli_error(cmd, "out of memory");
        return NULL;
    }
    snprintf(path, len, "%s/mbsens-%s.XXXXXX", dir, cmd);
    int fd = mkstemp(path);
    if (fd < 0) {
        cli_error(cmd, "cannot create a temporary file in '%s' (TMPDIR) for the output: %s", dir, strerror(errno));
        free(path);
        return NULL;
    }
    unlink(path);   /* unnamed from now on: nothing is left behind, whatever happens */
    free(path);
    FILE *f = fdopen(fd, "w+");
    if (!f) {
        cli_error(cmd, "cannot open a temporary file for the output: %s", strerror(errno));
        close(fd);
    }
    return f;
}

int cli_spool_emit(FILE *spool, FILE *out, const char *cmd)
{
    char buf[65536];
    int rc = CLI_EXIT_OK;
    if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0) {
        cli_error(cmd, "cannot read back the temporary output: %s", strerror(errno));
        rc = CLI_EXIT_FAIL;
    }
    size_t n;
    while (!rc && (n = fread(buf, 1, sizeof buf, spool)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            cli_error(cmd, "cannot write output: %s", strerror(errno));
            rc = CLI_EXIT_FAIL;
        }
    if (!rc && ferror(spool)) {
        cli_error(cmd, "cannot read back the temporary output: %s", strerror(errno));
        rc = CLI_EXIT_FAIL;
    }
    if (!rc && (fflush(out) != 0 || ferror(out))) {
        cli_error(cmd, "cannot write output: %s", strerror(errno));
        rc = CLI_EXIT_FAIL;
    }
    fclose(spool);
    return rc;
}

int cli_parse_long(const char *cmd, void (*usage)(FILE *), const char *opt, const char *text, long lo, long hi,
                   long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi)
        return cli_usage_error(cmd, usage, "%s: expected an integer from %ld to %ld, got '%s'", opt, lo, hi, text);
    *out = v;
    return CLI_EXIT_OK;
}
