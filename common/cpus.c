/* cpus.c - the usable CPUs (see cpus.h): affinity mask and
 * cgroup v1/v2 CPU quota. The cgroup files are read from the paths the
 * kernel documents (Documentation/admin-guide/cgroup-v2.rst, "cpu.max";
 * cgroup-v1/cpu-acct and sched-bwc.rst, "cpu.cfs_quota_us"). */
#define _GNU_SOURCE
#include "common/cpus.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATH_CAP 4096
/* controller directories a v1 "cpu" hierarchy is mounted at */
static const char *const V1_DIRS[] = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};

int cpus_affinity(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Read the first line of a small file into buf; 0 ok, -1 missing. */
static int read_line(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

/* ceil(quota / period), or 0 for no limit (quota <= 0 or unreadable) */
static int quota_cpus(long long quota, long long period) {
    if (quota <= 0 || period <= 0) return 0;
    long long n = (quota + period - 1) / period;
    return n < 1 ? 1 : n > 1 << 20 ? 1 << 20 : (int)n;
}

/* the limit in directory `dir`: v2 cpu.max, else v1 cfs files; 0: none */
static int dir_limit(const char *dir, int v2) {
    char path[PATH_CAP + 32], line[128];
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (read_line(path, line, sizeof line)) return 0;
        long long quota, period = 100000;
        if (strncmp(line, "max", 3) == 0) return 0;
        if (sscanf(line, "%lld %lld", &quota, &period) < 1) return 0;
        return quota_cpus(quota, period);
    }
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (read_line(path, line, sizeof line)) return 0;
    long long quota = strtoll(line, NULL, 10);
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (read_line(path, line, sizeof line)) return 0;
    return quota_cpus(quota, strtoll(line, NULL, 10));
}

/* The smallest limit from `mount`/`cg` up to `mount`. A container sees its
 * own cgroup at the mount's top while /proc/self/cgroup may name the host's
 * path, which then does not exist below the mount: the walk up reaches the
 * top either way. */
static int walk_limit(const char *mount, const char *cg, int v2) {
    char dir[PATH_CAP];
    int best = 0;
    if (snprintf(dir, sizeof dir, "%s%s", mount, cg) >= (int)sizeof dir) return 0;
    size_t top = strlen(mount);
    for (;;) {
        size_t n = strlen(dir);
        while (n > top && dir[n - 1] == '/')
            dir[--n] = 0;
        int lim = dir_limit(dir, v2);
        if (lim && (!best || lim < best)) best = lim;
        if (n <= top) break;
        char *slash = strrchr(dir + top, '/');
        if (!slash) break;
        *slash = 0;
    }
    return best;
}

int cpus_cgroup_limit(const char *root) {
    char path[PATH_CAP], line[PATH_CAP], mount[PATH_CAP];
    int best = 0;
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    /* lines "ID:CONTROLLERS:PATH"; v2 is "0::PATH" */
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c1 = *c2 = 0;
        const char *ctrl = c1 + 1, *cg = c2 + 1;
        int lim = 0;
        if (strcmp(line, "0") == 0 && !*ctrl) {
            snprintf(mount, sizeof mount, "%s/sys/fs/cgroup", root);
            lim = walk_limit(mount, cg, 1);
        } else {
            /* is "cpu" one of the comma-separated controllers? */
            char list[256];
            snprintf(list, sizeof list, ",%s,", ctrl);
            if (!strstr(list, ",cpu,")) continue;
            for (size_t i = 0; i < sizeof V1_DIRS / sizeof *V1_DIRS && !lim; i++) {
                snprintf(mount, sizeof mount, "%s/sys/fs/cgroup/%s", root, V1_DIRS[i]);
                if (access(mount, F_OK) == 0) lim = walk_limit(mount, cg, 0);
            }
        }
        if (lim && (!best || lim < best)) best = lim;
    }
    fclose(f);
    return best;
}

int cpus_available(void) {
    int n = cpus_affinity();
    int lim = cpus_cgroup_limit("");
    return lim && lim < n ? lim : n;
}
