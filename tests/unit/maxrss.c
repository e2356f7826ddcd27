/* maxrss.c - test driver: run a command and report its peak memory.
 *
 *   build/tests/maxrss OUT CMD [ARG...]
 *   build/tests/maxrss "$T/rss" bin/sent_split --max-line-bytes 1M <long.txt
 *
 * Runs CMD with this process's stdin, stdout and stderr, waits for it, and
 * writes its peak resident set size in KiB (wait4's ru_maxrss, Linux's unit)
 * to the file OUT, one number and a newline. Exits with CMD's status: 128 + N
 * when signal N ended it, 127 when it could not be run. The CLI tests check
 * memory bounds with it, so they need no /usr/bin/time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: maxrss OUT CMD [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("maxrss: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "maxrss: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("maxrss: wait4");
            return 127;
        }
    FILE *out = fopen(argv[1], "w");
    if (!out || fprintf(out, "%ld\n", ru.ru_maxrss) < 0 || fclose(out) != 0) {
        perror(argv[1]);
        return 127;
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
