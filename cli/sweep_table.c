/*
 * sweep_table.c - the result tables of `mbsens sweep`: one row per case
 * in case order, as CSV and JSON. A case's rows are formatted when it is
 * recorded (sweep_row_text, on the thread and the rank that computed it);
 * the writer copies them into the tables as soon as every case before
 * them is recorded, so that at the end of a sweep only the last rows, the
 * sync and the rename are left. Each file is a temporary file until it is
 * complete (cli_atomic): a sweep that fails or is interrupted leaves no
 * half-written table.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "shortest.h"
#include "sweep.h"

/* The streams' buffers: a write system call per IOBUF bytes of table.
 * Every WRITEBACK bytes the kernel is asked to start writing the file
 * out, so that the sync at the end has little left to wait for. */
enum { IOBUF = 1 << 18, WRITEBACK = 1 << 21 };

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

void sweep_row_text(const sweep *s, long i, int status, const double *row, const char *msg, cli_buf *csv,
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

static void put(sweep_table *t, int k, const char *s, size_t n)
{
    if (!t->err && fwrite(s, 1, n, t->f[k]) != n) {
        t->err = errno ? errno : EIO;
        t->err_k = k;
    }
    t->unsynced[k] += n;
}

/* Start the write-back of what table k's file holds (a temporary file:
 * not the spool): on Linux, POSIX_FADV_DONTNEED writes the range's dirty
 * pages out without waiting for them (and drops the clean ones, which
 * nothing reads again). */
static void writeback(sweep_table *t, int k)
{
    if (t->unsynced[k] < WRITEBACK || !t->out[k].tmp)
        return;
    t->unsynced[k] = 0;
    if (!t->err && fflush(t->f[k]) != 0) {
        t->err = errno ? errno : EIO;
        t->err_k = k;
    }
    if (!t->err)
        posix_fadvise(fileno(t->f[k]), 0, 0, POSIX_FADV_DONTNEED);
}

static void puts_k(sweep_table *t, int k, const char *s)
{
    put(t, k, s, strlen(s));
}

static void put_buf(sweep_table *t, int k, const cli_buf *b)
{
    if (b->oom) {
        t->err = ENOMEM;
        t->err_k = k;
    } else
        put(t, k, b->s, b->len);
}

static void csv_head(sweep_table *t, const sweep *s)
{
    cli_buf b = {0};
    cli_buf_puts(&b, "case,status");
    for (int k = 0; k < s->nvar; k++)
        cli_buf_printf(&b, ",%s", s->var[k].name);
    for (int k = 0; k < s->ncols; k++)
        cli_buf_printf(&b, ",%s", s->cols[k]);
    cli_buf_puts(&b, "\n");
    put_buf(t, 0, &b);
    cli_buf_free(&b);
}

static void json_head(sweep_table *t, const sweep *s)
{
    cli_buf b = {0};
    cli_buf_puts(&b, "{\n  \"spec\": ");
    cli_json_str(&b, t->spec);
    cli_buf_puts(&b, ",\n  \"model\": ");
    cli_json_str(&b, mbs_model_name(s->m));
    cli_buf_puts(&b, ",\n  \"variables\": [");
    for (int k = 0; k < s->nvar; k++) {
        cli_buf_puts(&b, k ? ", " : "");
        cli_json_str(&b, s->var[k].name);
    }
    cli_buf_puts(&b, "],\n  \"columns\": [");
    for (int k = 0; k < s->ncols; k++) {
        cli_buf_puts(&b, k ? ", " : "");
        cli_json_str(&b, s->cols[k]);
    }
    cli_buf_puts(&b, "],\n  \"cases\": [");
    put_buf(t, 1, &b);
    cli_buf_free(&b);
}

/* A stream with a buffer of IOBUF bytes (the default is a few kB: a
 * system call per few rows). */
static int stream_buffer(sweep_table *t, int k)
{
    t->iobuf[k] = malloc(IOBUF);
    return t->iobuf[k] && setvbuf(t->f[k], t->iobuf[k], _IOFBF, IOBUF) == 0 ? 0 : -1;
}

int sweep_table_open(sweep_table *t, const sweep_ledger *L, const char *cmd, const char *spec, const char *csv,
                     const char *json)
{
    memset(t, 0, sizeof *t);
    t->cmd = cmd;
    t->spec = spec;
    t->open = 1;
    if (!(t->x = malloc(((size_t)L->s->nvar + 1) * sizeof *t->x))) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAIL;
    }
    if (!csv && !json) {
        if (!(t->f[0] = t->spool = cli_spool_open(cmd)))
            return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < 2; k++) {
        const char *path = k ? json : csv;
        if (path && cli_atomic_open(&t->out[k], cmd, path, spec) != 0)
            return CLI_EXIT_FAIL;
        if (path)
            t->f[k] = t->out[k].f;
        if (t->f[k] && stream_buffer(t, k) != 0) {
            cli_error(cmd, "out of memory");
            return CLI_EXIT_FAIL;
        }
    }
    if (t->f[0])
        csv_head(t, L->s);
    if (t->f[1])
        json_head(t, L->s);
    return CLI_EXIT_OK;
}

/* Case i's text in table k: as recorded, or formatted now (a case read
 * from a checkpoint, or one whose text could not be kept). */
static void put_row(sweep_table *t, const sweep_ledger *L, int k, long i)
{
    const char *text = L->text[k] ? L->text[k][i] : NULL;
    if (k == 1)
        puts_k(t, 1, i ? ",\n    " : "\n    ");
    if (text) {
        put(t, k, text, L->tlen[k][i]);
        return;
    }
    t->row.len = 0;
    if (t->row.s)
        t->row.s[0] = 0;
    sweep_row_text(L->s, i, L->status[i], sweep_ledger_row(L, i), L->msg[i], k ? NULL : &t->row,
                   k ? &t->row : NULL, t->x);
    put_buf(t, k, &t->row);
}

void sweep_table_flush(sweep_table *t, sweep_ledger *L)
{
    long end = sweep_ledger_prefix(L, t->next);
    if (end == t->next)
        return;
    for (long i = t->next; i < end; i++)
        for (int k = 0; k < 2; k++)
            if (t->f[k])
                put_row(t, L, k, i);
    sweep_ledger_release(L, NULL, t->next, end - t->next);
    t->next = end;
    for (int k = 0; k < 2; k++)
        if (t->f[k])
            writeback(t, k);
}

/* Close the files: committed (each put in place, or the spool emitted),
 * else removed. */
static int table_finish(sweep_table *t, int commit)
{
    int rc = CLI_EXIT_OK;
    if (commit && t->err) {
        int k = t->err_k;
        cli_error(t->cmd, "%s: cannot write '%s': %s", k ? "--json" : "--csv",
                  t->out[k].path ? t->out[k].path : "standard output", strerror(t->err));
        rc = CLI_EXIT_FAIL;
    }
    for (int k = 0; k < 2; k++) {
        if (!t->out[k].f)
            continue;
        if (commit && rc == CLI_EXIT_OK)
            rc = cli_atomic_commit(&t->out[k], t->cmd, k ? "--json" : "--csv") == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        else
            cli_atomic_abort(&t->out[k]);
    }
    if (t->spool && commit && rc == CLI_EXIT_OK)
        rc = cli_spool_emit(t->spool, stdout, t->cmd);   /* closes it */
    else if (t->spool)
        fclose(t->spool);
    return rc;
}

int sweep_table_close(sweep_table *t, sweep_ledger *L, int commit)
{
    if (!t->open)
        return CLI_EXIT_OK;
    if (commit) {
        sweep_table_flush(t, L);
        if (t->next < L->ncases && !t->err)
            t->err = EINVAL;   /* not reached: the caller commits once every case is recorded */
        if (t->f[1])
            puts_k(t, 1, "\n  ]\n}\n");
    }
    int rc = table_finish(t, commit);
    free(t->iobuf[0]);
    free(t->iobuf[1]);
    free(t->x);
    cli_buf_free(&t->row);
    memset(t, 0, sizeof *t);
    return rc;
}
