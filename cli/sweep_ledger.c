/*
 * sweep_ledger.c - the finished cases of a sweep: the result table in
 * memory and the checkpoint file that lets --resume skip them. A case's
 * rows of the CSV and JSON tables are formatted when it is recorded, by
 * the thread that computed it (or by the rank that did, which sends them
 * with its report), and kept until the tables' writer (sweep_table.c) has
 * copied them or the rank has sent them.
 *
 * Checkpoint: a first line "mbsens sweep checkpoint HASH NCASES NCOLS"
 * (HASH of the spec and model texts), then one line per finished case,
 * "INDEX STATUS" and, for a case that succeeded, its NCOLS values in
 * hexadecimal floating point (%a: read back exactly), for a failed one a
 * tab and its message. A case's line is formatted with its rows, by the
 * thread (and the rank) that computed it; rank 0 appends it and flushes it
 * at once, or, for the cases of a report from another rank, flushes the
 * report's lines together (one write). A last line cut short by a kill is
 * dropped (and cut off the file) on resume.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "shortest.h"
#include "sweep.h"

/* The checkpoint stream's buffer: the lines of a report in one write. */
enum { CKPT_BUF = 1 << 18 };

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
    if (status != MBS_OK)
        L->msg[i] = strdup(case_msg(status, msg));
    else if (row)   /* else kept with the case's texts */
        memcpy(L->rows + (size_t)i * nc, row, nc * sizeof *row);
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
    if (f && (!(L->ckpt_buf = malloc(CKPT_BUF)) || setvbuf(f, L->ckpt_buf, _IOFBF, CKPT_BUF) != 0)) {
        fclose(f);
        if (!resume)
            remove(path);
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
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
    if (ckpt)
        tables &= ~(unsigned)SWEEP_CKPT_LINE;   /* appended to the file here, not kept */
    for (int k = 0; k < 3 && rc == CLI_EXIT_OK; k++)
        if (tables >> k & 1 && (!(L->text[k] = calloc((size_t)s->ncases + 1, sizeof *L->text[k]))
                                || !(L->tlen[k] = calloc((size_t)s->ncases + 1, sizeof *L->tlen[k])))) {
            cli_error(cmd, "out of memory for %ld cases", s->ncases);
            rc = CLI_EXIT_FAIL;
        }
    if (rc == CLI_EXIT_OK && tables && (!(L->tblock = calloc((size_t)s->ncases + 1, sizeof *L->tblock))
                                        || !(L->rowp = calloc((size_t)s->ncases + 1, sizeof *L->rowp)))) {
        cli_error(cmd, "out of memory for %ld cases", s->ncases);
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK && ckpt)
        rc = open_checkpoint(L, cmd, ckpt, resume);
    return rc;
}

/* Case i's checkpoint line, with its newline, into b. */
static void checkpoint_text(const sweep_ledger *L, long i, int status, const double *row, const char *msg,
                            cli_buf *b)
{
    char num[CLI_SHORTEST_LEN + 1];
    cli_buf_printf(b, "%ld %d", i, status);
    if (status == MBS_OK)
        for (int k = 0; k < L->ncols; k++) {
            num[0] = ' ';
            cli_hexa(row[k], num + 1);
            cli_buf_puts(b, num);
        }
    else {
        cli_buf_puts(b, "\t");
        size_t at = b->len;
        cli_buf_puts(b, case_msg(status, msg));
        for (size_t k = at; !b->oom && k < b->len; k++)
            if (b->s[k] == '\n' || b->s[k] == '\r')
                b->s[k] = ' ';
    }
    cli_buf_puts(b, "\n");
}

/* Append case i's checkpoint line (text of len bytes; len 0: formatted
 * here) to the file, and flush it if flush (under the lock). */
static void checkpoint_line(sweep_ledger *L, long i, int status, const double *row, const char *text, size_t len,
                            int flush)
{
    cli_buf b = {0};
    if (len == 0) {
        checkpoint_text(L, i, status, row, L->msg[i], &b);
        text = b.s, len = b.oom ? 0 : b.len;
        L->ckpt_failed |= b.oom;
    }
    L->ckpt_failed |= fwrite(text, 1, len, L->ckpt) != len;
    if (flush)
        L->ckpt_failed |= fflush(L->ckpt) != 0;
    cli_buf_free(&b);
}

void sweep_ledger_checkpoint_flush(sweep_ledger *L)
{
    if (!L->ckpt)
        return;
    pthread_mutex_lock(&L->lock);
    L->ckpt_failed |= fflush(L->ckpt) != 0;
    pthread_mutex_unlock(&L->lock);
}

/* The rows' texts live in blocks of at least TEXT_BLOCK bytes: one
 * allocation per block rather than two per case. A block counts the cases
 * whose texts it holds and are not yet released (written to the tables, or
 * sent to rank 0); a block with none is kept for reuse (L->spare), so that
 * a long sweep keeps using the same memory rather than touching fresh
 * pages, each of which costs a page fault. The blocks are small (tens of
 * rows) so that a block is released soon after its last case is written:
 * when rank 0 holds other ranks' rows until the cases before them are in,
 * the memory in use follows the rows held rather than growing by a large
 * block at a time. */
enum { TEXT_BLOCK = 1 << 16 };
typedef struct text_block {
    struct text_block *next;
    size_t len, cap;
    long live;                /* cases with texts here, not released */
    char s[];
} text_block;

/* A block with room for need bytes, made the one being filled (under the
 * lock); NULL when out of memory. */
static text_block *text_room(sweep_ledger *L, size_t need)
{
    text_block *b = L->blocks;
    if (b && b->cap - b->len >= need)
        return b;
    if (L->spare && L->spare->cap >= need) {
        b = L->spare;
        L->spare = b->next;
    } else {
        size_t cap = need > TEXT_BLOCK ? need : TEXT_BLOCK;
        if (!(b = malloc(sizeof *b + cap)))
            return NULL;
        b->cap = cap;
    }
    b->len = 0;
    b->live = 0;
    b->next = L->blocks;
    L->blocks = b;
    return b;
}

/* Copies of case i's row (row: NULL or a failed case's, none) and texts
 * (len[k] bytes at text[k]; 0: none), each NUL-terminated, in one block
 * (under the lock): the row's memory is then reused once the texts are
 * released, rather than a fresh part of L->rows per case (a page fault
 * per page). None when out of memory (the table's writer then formats the
 * row from L->rows). 1 if the row is kept. */
static int text_keep(sweep_ledger *L, long i, const double *row, const char *const text[3], const size_t len[3])
{
    size_t rowb = row ? (size_t)L->ncols * sizeof *row : 0;
    size_t need = rowb ? rowb + sizeof(double) - 1 : 0;   /* the row aligned */
    for (int k = 0; k < 3; k++)
        need += L->text[k] && len[k] > 0 ? len[k] + 1 : 0;
    text_block *b = need ? text_room(L, need) : NULL;
    if (!b)
        return 0;
    if (rowb) {
        size_t at = (b->len + sizeof(double) - 1) / sizeof(double) * sizeof(double);
        L->rowp[i] = (double *)(void *)(b->s + at);
        memcpy(L->rowp[i], row, rowb);
        b->len = at + rowb;
    }
    for (int k = 0; k < 3; k++)
        if (L->text[k] && len[k] > 0) {
            char *p = b->s + b->len;
            memcpy(p, text[k], len[k]);
            p[len[k]] = 0;
            b->len += len[k] + 1;
            L->text[k][i] = p;
            L->tlen[k][i] = (unsigned)len[k];
        }
    b->live++;
    L->tblock[i] = b;
    return rowb > 0;
}

/* Release case i's texts: its block may be filled again (under the lock). */
static void text_release(sweep_ledger *L, long i)
{
    text_block *b = L->tblock[i];
    if (!b)
        return;
    L->tblock[i] = NULL;
    L->rowp[i] = NULL;
    for (int k = 0; k < 3; k++)
        if (L->text[k])
            L->text[k][i] = NULL;
    if (--b->live > 0)
        return;
    if (b == L->blocks) {   /* the block being filled: filled again from its start */
        b->len = 0;
        return;
    }
    text_block **p = &L->blocks;
    while (*p != b)
        p = &(*p)->next;
    *p = b->next;
    b->next = L->spare;
    L->spare = b;
}

void sweep_ledger_release(sweep_ledger *L, const long *idx, long first, long n)
{
    if (!L->tblock)
        return;
    pthread_mutex_lock(&L->lock);
    for (long k = 0; k < n; k++)
        text_release(L, idx ? idx[k] : first + k);
    pthread_mutex_unlock(&L->lock);
}

/* Record case i with the texts of its rows and its checkpoint line (len
 * 0: none); the line is flushed to the file if flush. */
static void record_rows(sweep_ledger *L, long i, int status, const double *row, const char *msg,
                        const char *const text[3], const size_t len[3], int flush)
{
    pthread_mutex_lock(&L->lock);
    if (L->done[i] != CASE_DONE) {
        int kept = L->tblock && text_keep(L, i, status == MBS_OK ? row : NULL, text, len);
        store(L, i, status, kept ? NULL : row, msg);
        if (L->ckpt)
            checkpoint_line(L, i, status, row, text[2], len[2], flush);
    }
    pthread_mutex_unlock(&L->lock);
}

void sweep_ledger_record(sweep_ledger *L, long i, int status, const double *row, const char *msg)
{
    cli_buf b[3] = {{0}};
    const char *text[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0};
    double *x = L->s && (L->text[0] || L->text[1]) ? malloc(((size_t)L->s->nvar + 1) * sizeof *x) : NULL;
    if (x)
        sweep_row_text(L->s, i, status, row, status == MBS_OK ? NULL : case_msg(status, msg),
                       L->text[0] ? &b[0] : NULL, L->text[1] ? &b[1] : NULL, x);
    free(x);
    if (L->s && (L->text[2] || L->ckpt))
        checkpoint_text(L, i, status, row, msg, &b[2]);
    for (int k = 0; k < 3; k++)
        if (b[k].s && !b[k].oom) {   /* else the writer formats it */
            text[k] = b[k].s;
            len[k] = b[k].len;
        }
    record_rows(L, i, status, row, msg, text, len, 1);
    for (int k = 0; k < 3; k++)
        cli_buf_free(&b[k]);
}

void sweep_ledger_record_text(sweep_ledger *L, long i, int status, const double *row, const char *msg,
                              const char *const text[3], const size_t len[3])
{
    record_rows(L, i, status, row, msg, text, len, 0);
}

const double *sweep_ledger_row(const sweep_ledger *L, long i)
{
    return L->rowp && L->rowp[i] ? L->rowp[i] : L->rows + (size_t)i * (size_t)L->ncols;
}

int sweep_ledger_done(sweep_ledger *L, long i)
{
    pthread_mutex_lock(&L->lock);
    int d = L->done[i] == CASE_DONE;
    pthread_mutex_unlock(&L->lock);
    return d;
}

long sweep_ledger_prefix(sweep_ledger *L, long from)
{
    pthread_mutex_lock(&L->lock);
    while (from < L->ncases && L->done[from] == CASE_DONE)
        from++;
    pthread_mutex_unlock(&L->lock);
    return from;
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
    for (int k = 0; k < 2; k++)
        for (text_block *b = k ? L->spare : L->blocks, *next; b; b = next) {
            next = b->next;
            free(b);
        }
    free(L->tblock);
    free(L->rowp);
    for (int k = 0; k < 3; k++) {
        free(L->text[k]);
        free(L->tlen[k]);
    }
    free(L->ckpt_buf);
    free(L->rows);
    free(L->status);
    free(L->msg);
    free(L->done);
    pthread_mutex_destroy(&L->lock);
    memset(L, 0, sizeof *L);
}
