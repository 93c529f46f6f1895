/*
 * sweep_ledger.c - the finished cases of a sweep: the result table in
 * memory, the checkpoint file that lets --resume skip them, and the
 * CSV and JSON tables written at the end. A case's rows of the tables are
 * formatted when it is recorded, by the thread that computed it (or by
 * the rank that did, which sends them with its report), and the writer
 * copies them in case order.
 *
 * Checkpoint: a first line "mbsens sweep checkpoint HASH NCASES NCOLS"
 * (HASH of the spec and model texts), then one line per finished case,
 * "INDEX STATUS" and, for a case that succeeded, its NCOLS values in
 * hexadecimal floating point (%a: read back exactly), for a failed one a
 * tab and its message. Each line is flushed when written; a last line cut
 * short by a kill is dropped (and cut off the file) on resume.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "shortest.h"
#include "sweep.h"

enum { CASE_PENDING = 0, CASE_DONE, CASE_OUT };

static const char *case_msg(int status, const char *msg)
{
    return msg && msg[0] ? msg : mbs_status_string(status);
}

static void store(sweep_ledger *L, long i, int status, const double *row, const char *msg)
{
    size_t nc = (size_t)L->ncols;
    if (L->done[i] == CASE_PENDING)
        L->npending--;
    L->status[i] = status;
    if (status == MBS_OK)
        memcpy(L->rows + (size_t)i * nc, row, nc * sizeof *row);
    else
        L->msg[i] = strdup(case_msg(status, msg));
    L->done[i] = CASE_DONE;
    L->ndone++;
}

/* One checkpoint line (without its newline) into the ledger; -1 if malformed. */
static int read_line(sweep_ledger *L, char *line, double *row)
{
    char *p = line, *end;
    long i = strtol(p, &end, 10);
    if (end == p || i < 0 || i >= L->ncases)
        return -1;
    p = end;
    long st = strtol(p, &end, 10);
    if (end == p || st > 0 || st < -100)
        return -1;
    p = end;
    if (st != MBS_OK) {
        if (*p != '\t')
            return -1;
        if (L->done[i] != CASE_DONE)
            store(L, i, (int)st, NULL, p + 1);
        return 0;
    }
    for (int k = 0; k < L->ncols; k++) {
        row[k] = strtod(p, &end);
        if (end == p)
            return -1;
        p = end;
    }
    if (*p)
        return -1;
    if (L->done[i] != CASE_DONE)
        store(L, i, MBS_OK, row, NULL);
    return 0;
}

/* Read the finished cases of an existing checkpoint; the length of its
 * whole lines in *keep. */
static int read_checkpoint(sweep_ledger *L, const char *cmd, const char *path, FILE *f, long *keep)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long pos = 0, lineno = 0;
    double *row = malloc(((size_t)L->ncols + 1) * sizeof *row);
    int rc = row ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    while (rc == CLI_EXIT_OK && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n')
            break;   /* cut short: dropped */
        line[n - 1] = 0;
        if (lineno == 1) {
            char want[128];
            snprintf(want, sizeof want, "mbsens sweep checkpoint %016llx %ld %d", (unsigned long long)L->s->hash,
                     L->ncases, L->ncols);
            if (strcmp(line, want) != 0) {
                cli_error(cmd, "%s: a checkpoint of another sweep (the spec or the model changed)", path);
                rc = CLI_EXIT_FAIL;
            }
        } else if (read_line(L, line, row) != 0) {
            cli_error(cmd, "%s:%ld: malformed checkpoint line", path, lineno);
            rc = CLI_EXIT_FAIL;
        }
        pos += (long)n;
    }
    if (rc == CLI_EXIT_OK && lineno == 0) {
        cli_error(cmd, "%s: empty checkpoint file", path);
        rc = CLI_EXIT_FAIL;
    }
    free(line);
    free(row);
    *keep = pos;
    return rc;
}

static int open_checkpoint(sweep_ledger *L, const char *cmd, const char *path, int resume)
{
    FILE *f = fopen(path, resume ? "r+" : "wx");
    if (!f) {
        if (!resume && errno == EEXIST)
            cli_error(cmd, "--checkpoint %s exists: continue it with --resume, or remove it", path);
        else
            cli_error(cmd, "--checkpoint %s: %s", path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    long keep = 0;
    if (resume && read_checkpoint(L, cmd, path, f, &keep) != CLI_EXIT_OK) {
        fclose(f);
        return CLI_EXIT_FAIL;
    }
    if (resume && (fflush(f) != 0 || ftruncate(fileno(f), keep) != 0 || fseek(f, keep, SEEK_SET) != 0)) {
        cli_error(cmd, "--checkpoint %s: %s", path, strerror(errno));
        fclose(f);
        return CLI_EXIT_FAIL;
    }
    if (!resume)
        fprintf(f, "mbsens sweep checkpoint %016llx %ld %d\n", (unsigned long long)L->s->hash, L->ncases,
                L->ncols);
    if (fflush(f) != 0) {
        cli_error(cmd, "--checkpoint %s: %s", path, strerror(errno));
        fclose(f);
        return CLI_EXIT_FAIL;
    }
    L->ckpt = f;
    return CLI_EXIT_OK;
}

int cases_ledger_open(sweep_ledger *L, const char *cmd, long ncases, int ncols, cases_run_fn run, void *user)
{
    memset(L, 0, sizeof *L);
    L->ncases = ncases;
    L->npending = ncases;
    L->ncols = ncols;
    L->run = run;
    L->user = user;
    size_t n = (size_t)ncases;
    L->rows = malloc((n * (size_t)ncols + 1) * sizeof *L->rows);
    L->status = calloc(n + 1, sizeof *L->status);
    L->msg = calloc(n + 1, sizeof *L->msg);
    L->done = calloc(n + 1, 1);
    pthread_mutex_init(&L->lock, NULL);
    L->open = 1;
    if (!L->rows || !L->status || !L->msg || !L->done) {
        cli_error(cmd, "out of memory for %ld cases", ncases);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

unsigned sweep_tables(const char *csv, const char *json)
{
    return (csv || !json ? 1u : 0u) | (json ? 2u : 0u);
}

int sweep_ledger_open(sweep_ledger *L, const sweep *s, const char *cmd, const char *ckpt, int resume,
                      unsigned tables)
{
    int rc = cases_ledger_open(L, cmd, s->ncases, s->ncols, sweep_run_cases, NULL);
    L->s = s;
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++)
        if (tables >> k & 1 && !(L->text[k] = calloc((size_t)s->ncases + 1, sizeof *L->text[k]))) {
            cli_error(cmd, "out of memory for %ld cases", s->ncases);
            rc = CLI_EXIT_FAIL;
        }
    if (rc == CLI_EXIT_OK && ckpt)
        rc = open_checkpoint(L, cmd, ckpt, resume);
    return rc;
}

/* ---- a case's rows of the tables ---- */

static void csv_field(cli_buf *b, const char *s)
{
    cli_buf_puts(b, "\"");
    for (; *s; s++)
        if (*s == '"')
            cli_buf_puts(b, "\"\"");
        else
            cli_buf_printf(b, "%c", *s == '\n' ? ' ' : *s);
    cli_buf_puts(b, "\"");
}

/* ",x" with x as "%.17g" writes it (cli_g17: the same text, without printf). */
static void csv_num(cli_buf *b, double x)
{
    char num[CLI_SHORTEST_LEN + 1];
    num[0] = ',';
    cli_g17(x, num + 1);
    cli_buf_puts(b, num);
}

/* Case i's row of the CSV table (with its newline) into csv and its object
 * of the JSON table into json (either NULL: not wanted); x: nvar scratch. */
static void row_text(const sweep *s, long i, int status, const double *row, const char *msg, cli_buf *csv,
                     cli_buf *json, double *x)
{
    sweep_case_values(s, i, x);
    if (csv) {
        cli_buf_printf(csv, "%ld,", i);
        if (status == MBS_OK)
            cli_buf_puts(csv, "ok");
        else
            csv_field(csv, msg ? msg : "");
        for (int k = 0; k < s->nvar; k++)
            csv_num(csv, x[k]);
        for (int k = 0; k < s->ncols; k++)
            if (status == MBS_OK)
                csv_num(csv, row[k]);
            else
                cli_buf_puts(csv, ",");
        cli_buf_puts(csv, "\n");
    }
    if (json) {
        cli_buf_printf(json, "{\"case\": %ld, \"x\": ", i);
        cli_json_vec(json, x, s->nvar);
        if (status == MBS_OK) {
            cli_buf_puts(json, ", \"values\": ");
            cli_json_vec(json, row, s->ncols);
        } else {
            cli_buf_puts(json, ", \"error\": ");
            cli_json_str(json, msg ? msg : "");
        }
        cli_buf_puts(json, "}");
    }
}

/* Append case i to the checkpoint (under the lock). */
static void checkpoint_line(sweep_ledger *L, long i, int status, const double *row)
{
    FILE *f = L->ckpt;
    fprintf(f, "%ld %d", i, status);
    if (status == MBS_OK)
        for (int k = 0; k < L->ncols; k++)
            fprintf(f, " %a", row[k]);
    else
        fputc('\t', f);
    for (const char *p = status != MBS_OK && L->msg[i] ? L->msg[i] : ""; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
    fputc('\n', f);
    L->ckpt_failed |= fflush(f) != 0;
}

/* The rows' texts live in blocks of at least TEXT_BLOCK bytes: one
 * allocation per block rather than two per case, whose memory would stay
 * allocated to the end (a heap growing by a few kB at a time costs a
 * system call per growth in a thread's arena). */
enum { TEXT_BLOCK = 1 << 20 };
typedef struct text_block {
    struct text_block *next;
    size_t len, cap;
    char s[];
} text_block;

/* A copy of the n bytes at s, NUL-terminated, in L's blocks (under the
 * lock); NULL when out of memory. */
static char *text_keep(sweep_ledger *L, const char *s, size_t n)
{
    text_block *b = L->blocks;
    if (!b || b->cap - b->len < n + 1) {
        size_t cap = n + 1 > TEXT_BLOCK ? n + 1 : TEXT_BLOCK;
        if (!(b = malloc(sizeof *b + cap)))
            return NULL;
        *b = (text_block){L->blocks, 0, cap};
        L->blocks = b;
    }
    char *p = b->s + b->len;
    memcpy(p, s, n);
    p[n] = 0;
    b->len += n + 1;
    return p;
}

/* Record case i with the texts of its rows (len 0: none). */
static void record_rows(sweep_ledger *L, long i, int status, const double *row, const char *msg,
                        const char *const text[2], const size_t len[2])
{
    pthread_mutex_lock(&L->lock);
    if (L->done[i] != CASE_DONE) {
        store(L, i, status, row, msg);
        for (int k = 0; k < 2; k++)
            if (L->text[k] && len[k] > 0)
                L->text[k][i] = text_keep(L, text[k], len[k]);
        if (L->ckpt)
            checkpoint_line(L, i, status, row);
    }
    pthread_mutex_unlock(&L->lock);
}

void sweep_ledger_record(sweep_ledger *L, long i, int status, const double *row, const char *msg)
{
    cli_buf b[2] = {{0}};
    const char *text[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    double *x = L->s && (L->text[0] || L->text[1]) ? malloc(((size_t)L->s->nvar + 1) * sizeof *x) : NULL;
    if (x) {
        row_text(L->s, i, status, row, status == MBS_OK ? NULL : case_msg(status, msg), L->text[0] ? &b[0] : NULL,
                 L->text[1] ? &b[1] : NULL, x);
        for (int k = 0; k < 2; k++)
            if (!b[k].oom) {   /* else the writer formats it */
                text[k] = b[k].s;
                len[k] = b[k].len;
            }
    }
    free(x);
    record_rows(L, i, status, row, msg, text, len);
    cli_buf_free(&b[0]);
    cli_buf_free(&b[1]);
}

void sweep_ledger_record_text(sweep_ledger *L, long i, int status, const double *row, const char *msg,
                              const char *const text[2], const size_t len[2])
{
    record_rows(L, i, status, row, msg, text, len);
}

int sweep_ledger_done(sweep_ledger *L, long i)
{
    pthread_mutex_lock(&L->lock);
    int d = L->done[i] == CASE_DONE;
    pthread_mutex_unlock(&L->lock);
    return d;
}

int sweep_ledger_take(sweep_ledger *L, long *idx, int n, int again, int share)
{
    int got = 0;
    long nc = L->ncases;
    pthread_mutex_lock(&L->lock);
    if (share > 0 && n > (L->npending + share - 1) / share)
        n = (int)((L->npending + share - 1) / share);
    for (long k = 0; k < nc && got < n && L->npending > 0; k++) {
        long i = (L->next + k) % nc;
        if (L->done[i] == CASE_PENDING) {
            L->done[i] = CASE_OUT;
            L->npending--;
            idx[got++] = i;
        }
    }
    for (long k = 0; again && got == 0 && k < nc && L->ndone < nc; k++) {
        long i = (L->next + k) % nc;
        if (L->done[i] == CASE_OUT)
            idx[got++] = i;
    }
    if (got)
        L->next = (idx[got - 1] + 1) % nc;
    pthread_mutex_unlock(&L->lock);
    return got;
}

void sweep_ledger_report(const sweep_ledger *L, const char *cmd)
{
    long failed = 0;
    for (long i = 0; i < L->ncases; i++)
        failed += L->done[i] == CASE_DONE && L->status[i] != MBS_OK;
    if (failed)
        fprintf(stderr, "mbsens %s: %ld of %ld cases failed (their messages are in the table)\n", cmd, failed,
                L->ncases);
    if (L->ckpt_failed)
        cli_error(cmd, "the checkpoint could not be written completely (kept)");
}

void sweep_ledger_close(sweep_ledger *L)
{
    if (L->ckpt)
        fclose(L->ckpt);
    for (long i = 0; L->msg && i < L->ncases; i++)
        free(L->msg[i]);
    for (text_block *b = L->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(L->text[0]);
    free(L->text[1]);
    free(L->rows);
    free(L->status);
    free(L->msg);
    free(L->done);
    pthread_mutex_destroy(&L->lock);
    memset(L, 0, sizeof *L);
}

/* ---- the result tables ---- */

/* Case i's text in table k (0: CSV, 1: JSON) into b: as recorded, or
 * formatted now (cases read from a checkpoint, or not formatted when
 * recorded). */
static void put_row(const sweep_ledger *L, int k, long i, cli_buf *b, double *x)
{
    const char *text = L->text[k] ? L->text[k][i] : NULL;
    if (text)
        cli_buf_puts(b, text);
    else
        row_text(L->s, i, L->status[i], L->rows + (size_t)i * (size_t)L->ncols, L->msg[i], k ? NULL : b,
                 k ? b : NULL, x);
}

static void write_csv(const sweep_ledger *L, cli_buf *b, double *x)
{
    const sweep *s = L->s;
    cli_buf_puts(b, "case,status");
    for (int k = 0; k < s->nvar; k++)
        cli_buf_printf(b, ",%s", s->var[k].name);
    for (int k = 0; k < s->ncols; k++)
        cli_buf_printf(b, ",%s", s->cols[k]);
    cli_buf_puts(b, "\n");
    for (long i = 0; i < s->ncases; i++)
        put_row(L, 0, i, b, x);
}

static void write_json(const sweep_ledger *L, cli_buf *b, const char *spec, double *x)
{
    const sweep *s = L->s;
    cli_buf_puts(b, "{\n  \"spec\": ");
    cli_json_str(b, spec);
    cli_buf_puts(b, ",\n  \"model\": ");
    cli_json_str(b, mbs_model_name(s->m));
    cli_buf_puts(b, ",\n  \"variables\": [");
    for (int k = 0; k < s->nvar; k++) {
        cli_buf_puts(b, k ? ", " : "");
        cli_json_str(b, s->var[k].name);
    }
    cli_buf_puts(b, "],\n  \"columns\": [");
    for (int k = 0; k < s->ncols; k++) {
        cli_buf_puts(b, k ? ", " : "");
        cli_json_str(b, s->cols[k]);
    }
    cli_buf_puts(b, "],\n  \"cases\": [");
    for (long i = 0; i < s->ncases; i++) {
        cli_buf_puts(b, i ? ",\n    " : "\n    ");
        put_row(L, 1, i, b, x);
    }
    cli_buf_puts(b, "\n  ]\n}\n");
}

int sweep_ledger_write(const sweep_ledger *L, const char *cmd, const char *spec, const char *csv,
                       const char *json)
{
    double *x = malloc(((size_t)L->s->nvar + 1) * sizeof *x);
    if (!x) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_OK;
    for (int k = 0; k < 2 && rc == CLI_EXIT_OK; k++) {
        const char *path = k ? json : csv;
        if (!path && (k || json))
            continue;
        cli_buf b = {0};
        if (k)
            write_json(L, &b, spec, x);
        else
            write_csv(L, &b, x);
        if (b.oom) {
            cli_error(cmd, "out of memory");
            rc = CLI_EXIT_FAIL;
        } else if (!path) {
            rc = cli_buf_emit(&b, stdout, cmd);
        } else if (cli_write_atomic(cmd, k ? "--json" : "--csv", path, spec, b.s, b.len) != 0) {
            rc = CLI_EXIT_FAIL;
        }
        cli_buf_free(&b);
    }
    free(x);
    return rc;
}
