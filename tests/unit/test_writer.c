/* test_writer.c - common/io.c's Writer side: the final rename never
 * replaces a file that appeared meanwhile (without force), outputs never
 * replace inputs (by any name) nor each other, nameless outputs and links
 * to nowhere are refused, signals inherited as ignored stay ignored, and
 * an output directory takes one process at a time (a second is told the
 * first one's pid). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test.h"
#include "common/io.h"

static char dir[] = "/tmp/test_writer.XXXXXX";

static const char *at(const char *name) {
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static int holds(const char *path, const char *text) {
    char b[256] = "";
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(b, 1, sizeof b - 1, f);
    fclose(f);
    b[n] = '\0';
    return !strcmp(b, text);
}

static void test_no_replace(void) {
    Writer w;
    Err err;
    const char *out = at("out.txt");
    test_cond("open", writer_open(&w, out, 0, &err) == 0);
    fputs("new\n", w.fp);
    put(out, "precious\n"); /* another process creates OUT meanwhile */
    test_cond("close refuses to replace what appeared",
              writer_close(&w, &err) == -1 && strstr(err.msg, "created by another process"));
    test_cond("... which is kept", holds(out, "precious\n"));
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    test_cond("... and the temp file removed", access(tmp, F_OK) != 0);
    test_cond("with force: open", writer_open(&w, out, 1, &err) == 0);
    fputs("new\n", w.fp);
    test_cond("with force: replaced", writer_close(&w, &err) == 0 && holds(out, "new\n"));
    /* rename_output itself, both ways */
    put(at("t1"), "a\n");
    test_cond("rename_output: no replace", rename_output(at("t1"), out, 0, &err) == -1 &&
                                               holds(out, "new\n") && access(at("t1"), F_OK) == 0);
    test_cond("rename_output: free name",
              rename_output(at("t1"), at("fresh"), 0, &err) == 0 && holds(at("fresh"), "a\n"));
    put(at("t1"), "b\n");
    test_cond("rename_output: force",
              rename_output(at("t1"), out, 1, &err) == 0 && holds(out, "b\n"));
}

static void test_inputs(void) {
    Writer w;
    Err err;
    const char *in = at("in.txt");
    put(in, "input\n");
    test_cond("note an input", input_note(in, &err) == 0);
    test_cond("an output on it is refused",
              writer_open(&w, in, 0, &err) == -1 && strstr(err.msg, "the same file as the input"));
    test_cond("... with force too", writer_open(&w, in, 1, &err) == -1);
    test_cond("... for a named output too", writer_open_name(&w, in, 1, &err) == -1);
    symlink("in.txt", at("link"));
    link(in, at("hard"));
    test_cond("... through a symbolic link", writer_open(&w, at("link"), 1, &err) == -1);
    test_cond("... through a hard link", writer_open(&w, at("hard"), 1, &err) == -1);
    test_cond("output_not_input", output_not_input(at("hard"), &err) == -1);
    test_cond("the input is unchanged", holds(in, "input\n"));
    /* an input opened after the output: refused when it is noted */
    const char *late = at("late.txt");
    put(late, "late\n");
    test_cond("open over a file", writer_open(&w, late, 1, &err) == 0);
    test_cond("that file read afterwards: refused",
              xfopen_read(late, &err) == NULL && strstr(err.msg, "the same file as the input"));
    writer_abort(&w);
    test_cond("... still intact", holds(late, "late\n"));
}

static void test_names(void) {
    Writer w, w2;
    Err err;
    test_cond("'' refused", writer_open(&w, "", 1, &err) == -1 && strstr(err.msg, "empty name"));
    test_cond("DIR/ refused",
              writer_open(&w, at("sub/"), 1, &err) == -1 && strstr(err.msg, "ends with '/'"));
    test_cond("'..' refused", output_name_check("a/..", "-o", &err) == -1);
    symlink("nowhere", at("dangling"));
    symlink("loop", at("loop"));
    test_cond("a link to nowhere counts as existing",
              writer_open(&w, at("dangling"), 0, &err) == -1 && strstr(err.msg, "missing file"));
    test_cond("a link loop too",
              writer_open(&w, at("loop"), 0, &err) == -1 && strstr(err.msg, "link loop"));
    test_cond("the same name twice: the second open is refused",
              writer_open(&w, at("one"), 0, &err) == 0 &&
                  writer_open(&w2, at("./one"), 0, &err) == -1 &&
                  strstr(err.msg, "two outputs of this run"));
    writer_abort(&w);
    const char *twice[] = {at("p.vocab"), at("x/../p.vocab")};
    mkdir(at("x"), 0777);
    test_cond("outputs_check: one file by two names",
              outputs_check(twice, 2, &err) == -1 && strstr(err.msg, "two outputs"));
    const char *fine[] = {at("p.model"), at("p.vocab"), "-", NULL};
    test_cond("outputs_check: distinct names pass", outputs_check(fine, 4, &err) == 0);
}

static void test_signals(void) {
    struct sigaction ign = {0}, hup, term, old_hup, old_term;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGHUP, &ign, &old_hup);
    sigaction(SIGTERM, NULL, &old_term);
    Writer w;
    Err err;
    test_cond("open", writer_open(&w, at("sig.txt"), 1, &err) == 0);
    sigaction(SIGHUP, NULL, &hup);
    sigaction(SIGTERM, NULL, &term);
    test_cond("SIGHUP inherited as ignored stays ignored", hup.sa_handler == SIG_IGN);
    test_cond("SIGTERM gets the cleanup handler",
              term.sa_handler != SIG_DFL && term.sa_handler != SIG_IGN);
    writer_abort(&w);
    sigaction(SIGHUP, &old_hup, NULL);
    sigaction(SIGTERM, &old_term, NULL);
}

static void test_dir_lock(void) {
    Err err;
    const char *d = at("locked/deeper");
    test_cond("lock (creating the directory)", output_dir_lock(d, 0, &err) == 0);
    pid_t child = fork();
    if (child == 0) {
        Err e2;
        char want[64];
        snprintf(want, sizeof want, "(process %ld, still running)", (long)getppid());
        int refused = output_dir_lock(d, 0, &e2) == -1 && strstr(e2.msg, "in use by another run") &&
                      strstr(e2.msg, want);
        int shared_refused = output_dir_lock(d, 1, &e2) == -1;
        _exit(refused && shared_refused ? 0 : 1);
    }
    int st = 1;
    waitpid(child, &st, 0);
    test_cond("a second process is refused, told the first one's pid",
              WIFEXITED(st) && WEXITSTATUS(st) == 0);
    const char *s = at("shared");
    test_cond("shared lock", output_dir_lock(s, 1, &err) == 0);
    child = fork();
    if (child == 0) {
        Err e2;
        _exit(output_dir_lock(s, 1, &e2) == 0 && output_dir_lock(s, 0, &e2) == -1 ? 0 : 1);
    }
    waitpid(child, &st, 0);
    test_cond("shared holders coexist, an exclusive one is refused",
              WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_ours(void) {
    Err err;
    test_cond("nothing there: ours to write", output_is_ours(at("id"), "MAGIC", 5, "an id", &err));
    put(at("id"), "MAGIC and more");
    test_cond("a file with the magic: ours", output_is_ours(at("id"), "MAGIC", 5, "an id", &err));
    put(at("id"), "precious");
    test_cond("another file: not ours", !output_is_ours(at("id"), "MAGIC", 5, "an id", &err) &&
                                            strstr(err.msg, "exists and is not an id"));
}

int main(void) {
    if (!mkdtemp(dir)) {
        test_cond("mkdtemp", 0);
        return test_report();
    }
    test_no_replace();
    test_inputs();
    test_names();
    test_signals();
    test_dir_lock();
    test_ours();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    test_cond("cleanup", system(cmd) == 0);
    return test_report();
}
