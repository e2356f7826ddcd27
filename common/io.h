/* io.h - buffered line reader over a list of inputs, and the atomic writer.
 *
 * Reader: reads "-" (stdin) or files one after another with fread into one
 * growing buffer and hands out lines as (ptr, len) without the '\n', so NUL
 * bytes inside lines are kept. It tracks file name and line number for
 * messages ("prog: pages.jsonl:12: ..."). An input whose first bytes are
 * UTF-16 or UTF-32 text is refused (utf8_refuse_wide). No line may be
 * longer than io_max_line() (--max-line-bytes, 64 MiB by default), so a
 * Reader holds at most that plus one read chunk, whatever the input: a
 * longer line is an error naming the file, the line and the option.
 *
 * Writer: stdout, or `-o FILE` written to FILE.tmp.<pid> and renamed into
 * place only by writer_close() after every byte was flushed and checked. On
 * die(), SIGINT, SIGTERM, SIGHUP or SIGPIPE the temp file is removed (the
 * signal is then re-raised so that make sees the interruption; a signal the
 * process inherited as ignored, as under nohup, stays ignored). Without
 * force an existing FILE is never replaced, not even one that appears while
 * the program runs: the final rename refuses to replace (rename_output). A
 * program whose records are complete units (pages) sets keep_partial: a
 * data error then leaves FILE.partial with every record finished before the
 * error (none when nothing was written), and never FILE itself.
 * The Writer must not move in memory while open (the die hook points at it).
 *
 * Outputs never replace inputs: every file the run reads is noted
 * (input_note; input_check, xfopen_read, read_file and the Reader do it),
 * and an output that is the same file (device and inode, so through
 * symbolic and hard links too) is refused, with -f or without. Two open
 * outputs with the same name are refused too, and so are names that are
 * no file name ("", "DIR/").
 *
 * Streams: stdio_init() (cli_init calls it first in every program) puts
 * /dev/null on any of fds 0-2 that is closed, so that no output file gets
 * fd 2, and checks at exit that everything written to stdout got there:
 * a full disk, a closed stdout or a failed close give a message and exit
 * status 1.
 *
 *   Writer w;
 *   if (writer_open(&w, opt_out, opt_force, &err)) die("%s", err.msg);
 *   fwrite(..., w.fp);
 *   if (writer_close(&w, &err)) die("%s", err.msg);
 */
#ifndef WB_IO_H
#define WB_IO_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/common.h"
#include "common/pagecache.h"

/* ---- the longest line (--max-line-bytes) ---- */

/* The default longest line: 64 MiB, 32 times the largest page that
 * MediaWiki stores (2 MiB of wikitext), and more than any line our own
 * stages write from such a page. */
#define IO_MAX_LINE_DEFAULT ((size_t)64 << 20)

/* The longest line (bytes, without its '\n') that every Reader,
 * read_text_file() and the document readers built on them accept, for the
 * whole process: --max-line-bytes of every program sets it (cli.c) before
 * any reading starts. 0 restores the default. */
void io_set_max_line(size_t n);
size_t io_max_line(void);

/* n as a short size for messages: "64 MiB", "512 KiB" or "1000 bytes". */
const char *io_size_str(size_t n, char buf[32]);

/* Fill err with "NAME:LINE: WHAT longer than N (--max-line-bytes raises the
 * limit)", e.g. WHAT "line" or "document". Returns -1. */
int io_err_too_long(Err *err, const char *name, uint64_t line, const char *what);

typedef struct Reader {
    char **inputs; /* names; "-" is stdin */
    int ninputs;
    int cur; /* index of the open input, -1 before the first */
    FILE *fp;
    const char *name; /* name of the open input, for messages */
    char *buf;
    size_t cap, start, end;
    int eof;         /* current input fully read into buf */
    uint64_t line;   /* 1-based number of the last line returned */
    uint64_t bytes;  /* bytes consumed from all inputs so far */
    size_t max_line; /* longest line accepted: io_max_line() at reader_init */
    int nocache;     /* set after reader_init: drop each input file from the
                      * page cache as it is read (pagecache.h) */
    PageCache pc;    /* the open input's */
} Reader;

/* Prepare to read `n` inputs (n == 0 means stdin). The names are borrowed
 * and must outlive the reader. Returns 0; files are opened lazily, so a
 * missing file is reported by reader_next_line. Pair with reader_free(). */
int reader_init(Reader *r, char **inputs, int n);

/* Next line without its '\n' (a final line without '\n' counts). The
 * pointer stays valid until the next call. Returns 1 with a line, 0 when
 * all inputs are exhausted, -1 on an I/O error, a UTF-16/UTF-32 input or a
 * line longer than r->max_line (err names the file, and the line where
 * there is one: "FILE:LINE: line longer than 64 MiB (--max-line-bytes
 * raises the limit)"). */
int reader_next_line(Reader *r, const char **line, size_t *len, Err *err);

/* Close the open input and free the buffer. */
void reader_free(Reader *r);

typedef struct Writer {
    FILE *fp;
    char *path;       /* final name, NULL for stdout */
    char *tmp;        /* temp name while open */
    int keep_partial; /* on die(): keep what was written as FILE.partial */
    int named;        /* writer_open_name: the caller writes tmp itself */
    int force;        /* -f: the final rename may replace an existing FILE */
    char *key;        /* the output's canonical name, for the collision check */
} Writer;

/* Open stdout (path NULL or "-") or a temp file beside `path`. Refuses an
 * existing file unless force (a symbolic link to nowhere or a link loop
 * counts as existing), a directory, a name that is no file name
 * (output_name_check), the name of another open Writer, and, with force or
 * without, a file this run reads (input_note), stdout included. An
 * existing device or FIFO (/dev/null, a named pipe) is written directly,
 * never replaced. Up to 64 writers may be open at once, each cleaned up on
 * a signal or die(). Returns 0, or -1 with err filled. */
int writer_open(Writer *w, const char *path, int force, Err *err);

/* For outputs that a library creates by name (HDF5): the same checks as
 * writer_open for `path` (which must be a file name, not stdout, and not a
 * device), then reserve the temp name w->tmp (PATH.tmp.<pid>) without
 * opening it (w->fp stays NULL) and arm the cleanup. The caller creates and
 * closes w->tmp; writer_close renames it into place, writer_abort removes
 * it. Up to 64 writers may be open at once; safe to call from several
 * threads. Returns 0, or -1 with err filled. */
int writer_open_name(Writer *w, const char *path, int force, Err *err);

/* Remove the temp files PATH.tmp.<pid> that earlier runs writing PATH left
 * behind when they were killed (kill -9, a power cut): those whose process
 * no longer exists on this machine. A temp file of a live process (another
 * run writing the same output right now) is never touched. writer_open and
 * writer_open_name call it; programs that name their own temp files in the
 * same pattern call it for each output. Returns the number removed. */
int remove_dead_temps(const char *path);

/* The output's name for messages: its path, or "standard output". */
const char *writer_name(const Writer *w);

/* Write p[0..n) to the open output. Returns 0, or -1 with err "NAME: write
 * error: REASON" (NAME from writer_name); a failed write also clears
 * keep_partial, since a record cut short is not worth keeping. */
int writer_write(Writer *w, const void *p, size_t n, Err *err);

/* Flush, check for write errors, close, and rename the temp file into
 * place (rename_output: without force, a file that appeared at the name
 * meanwhile is kept and this output dropped, with an error). On failure the
 * temp file is removed and -1 returned. For stdout: flush and check; the
 * close is stdio_init's check at exit. */
int writer_close(Writer *w, Err *err);

/* Drop the output: close and remove the temp file (no-op for stdout). */
void writer_abort(Writer *w);

/* Remove every open Writer's temp file, touching nothing else (no locks,
 * no allocation): for a process about to _exit() from another thread or a
 * signal handler. */
void writer_unlink_temps(void);

/* Install handler for SIGINT, SIGTERM, SIGHUP and SIGPIPE, except for a
 * signal this process inherited as ignored (nohup, a background job of a
 * script): that one stays ignored. old (NULL, or room for 4) receives the
 * previous actions for signals_restore. */
void signals_catch(void (*handler)(int), struct sigaction *old);

/* Put back the 4 actions signals_catch saved in old. */
void signals_restore(const struct sigaction *old);

/* Rename the finished temp file tmp to path. With force an existing path
 * is replaced (rename(2)); without, never, not even one created a moment
 * ago: renameat2(RENAME_NOREPLACE), or link(2) and unlink(2) on a file
 * system without it, or, with neither, a last look just before rename(2).
 * Returns 0, or -1 with err ("PATH: appeared while this run wrote it ...";
 * tmp is then left for the caller to remove). */
int rename_output(const char *tmp, const char *path, int force, Err *err);

/* Refuse a name that is no file name: "" (a hidden ".tmp.<pid>" would be
 * written), one ending in '/' or naming "." or "..". what: how the
 * program calls it in messages ("-o", "--wordpiece"). Returns 0 or -1. */
int output_name_check(const char *path, const char *what, Err *err);

/* The checks writer_open makes across outputs, for a program to make up
 * front, before its work, for all n outputs it will write (NULL entries
 * and "-" are skipped): each a file name, no two the same file, none an
 * input noted so far. Returns 0, or -1 with err naming both. */
int outputs_check(const char *const *paths, int n, Err *err);

/* Note that this run reads path ("-": stdin) so that no output replaces
 * it (only regular files count). Returns 0, or -1 with err when path is
 * the file an open Writer will replace, or stdout while stdout is an
 * output. input_check, xfopen_read, read_file and the Reader call it;
 * code that opens inputs otherwise (HDF5, mmap) calls it itself. */
int input_note(const char *path, Err *err);

/* -1 with err when the existing file at path (an output about to be
 * replaced) is one this run reads; else 0. */
int output_not_input(const char *path, Err *err);

/* Lock output directory dir (created with its parents when missing) for
 * this process until it exits: a second run writing into it is refused,
 * naming the directory and the process that holds it (flock(2) on the
 * directory: kill -9 frees it too, and nothing is left in it). shared: a
 * lock that other shared holders may hold at once (the parts of one batch
 * job), never beside an exclusive one. A file system without flock on
 * directories (NFS) is written without the lock (said at -v). When the
 * run created dir and fails (die) leaving it empty, it is removed at exit.
 * Returns 0, or -1 with err. */
int output_dir_lock(const char *dir, int shared, Err *err);

/* Whether path may be replaced by a program whose own files start with
 * magic[0..n) (n <= 64): 1 when nothing is there or a regular file that
 * starts with it; else 0 with err "PATH: exists and is not WHAT: refusing
 * to replace it ..." (another program's file, a directory, a symbolic
 * link). */
int output_is_ours(const char *path, const void *magic, size_t n, const char *what, Err *err);

/* Once at the start of every program (cli_init): open /dev/null on any of
 * fds 0-2 that is closed (0 and 2 for writing, 1 for reading: reading a
 * closed stdin and writing a closed stdout still fail, with EBADF, while
 * no file the program opens can take their numbers), and register the
 * check at exit that flushes and closes stdout: a write or close error
 * there is reported ("standard output: write error: ...") and the exit
 * status becomes 1. */
void stdio_init(void);

/* Refuse binary output to a terminal. Returns -1 with err if fp is a tty. */
int writer_refuse_tty(Writer *w, Err *err);

/* Check, before any work, that input `path` can be read: it exists, is not
 * a directory, and its permissions allow reading. It is never opened here:
 * a named pipe or /dev/fd/N can be opened only once (a probe that opened
 * and closed it would lose the writer), so the one real open comes later.
 * "-" always passes. Returns 0, or -1 with err ("PATH: No such file or
 * directory", "PATH: Is a directory", "PATH: Permission denied"). */
int input_check(const char *path, Err *err);

/* input_check() for each of paths[0..n): the first failure is returned
 * (-1, err set), so that a program can refuse a missing input before it
 * opens its output. */
int inputs_check(char *const *paths, int n, Err *err);

/* Open a file for reading; "-" is stdin. Returns NULL with err filled
 * ("name: No such file or directory"). */
FILE *xfopen_read(const char *path, Err *err);

/* Append all of `path` ("-": stdin) to out. Returns 0, or -1 with err set
 * ("path: No such file or directory", "path: read error: ..."). It holds
 * whatever the file holds: a binary format whose size is known (a
 * checkpoint) only; text goes through read_text_file, and formats of a
 * bounded size through read_file_max. */
int read_file(const char *path, Buf *out, Err *err);

/* read_file for a text file read whole (a vocabulary, a JSON config): no
 * line may be longer than io_max_line(), so an input without newlines
 * (/dev/zero) stops there. Returns 0, or -1 with err set ("path:LINE: line
 * longer than ..." besides read_file's errors). */
int read_text_file(const char *path, Buf *out, Err *err);

/* read_file for a binary format of bounded size (a SentencePiece .model, a
 * language model): more than `max` bytes is an error, "path: larger than
 * N, too large for WHAT", found after reading at most max + 64 KiB. */
int read_file_max(const char *path, Buf *out, size_t max, const char *what, Err *err);

/* Size of a regular file, or 0 if unknown (pipe, stdin). */
uint64_t file_size_of(FILE *fp);

/* Sum of the sizes of the regular files among paths[0..n) ("-" and pipes
 * count 0): the total a progress meter measures against. */
uint64_t inputs_total_size(char *const *paths, int n);

/* The folder of path, owned by the caller: "." for a name without a
 * slash, "/" for one right under the root. */
char *path_dir(const char *path);

/* An empty temporary file in dir, open for reading and writing and
 * unlinked at once (O_TMPFILE where the file system has it, else mkstemp
 * and unlink), so it goes away when closed however the process ends.
 * Returns its descriptor, or -1 with errno set. */
int temp_fd(const char *dir);

/* Where temporary files go: $TMPDIR when set and not empty, else
 * fallback (the environment's string or fallback, not a copy). */
const char *tmp_dir_or(const char *fallback);

/* mkdir -p: create dir and its missing parents. Returns 0 when dir is a
 * directory afterwards, or -1 with err ("PATH: cannot create: ...",
 * "DIR: not a directory"). */
int make_dirs(const char *dir, Err *err);

#endif
