/* test_cpus.c - the cgroup CPU quota parser on trees of files written in a
 * temp dir (v2 cpu.max, v1 cfs files, nesting, containers, malformed). */
#include "tests/test.h"
#include "common/cpus.h"

#include <sys/stat.h>
#include <unistd.h>

static char root[256];

/* write `text` to root/rel, creating the directories on the way */
static void put(const char *rel, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = 0;
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* a fresh tree for each case */
static void fresh(void) {
    char cmd[512];
    if (*root) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0) exit(1);
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/test_cpus.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        exit(1);
    }
}

static void test_v2(void) {
    fresh();
    test_cond("no files: no limit", cpus_cgroup_limit(root) == 0);
    put("proc/self/cgroup", "0::/user.slice/job\n");
    test_cond("no cpu.max: no limit", cpus_cgroup_limit(root) == 0);
    put("sys/fs/cgroup/user.slice/job/cpu.max", "max 100000\n");
    test_cond("max: no limit", cpus_cgroup_limit(root) == 0);
    put("sys/fs/cgroup/user.slice/job/cpu.max", "200000 100000\n");
    test_cond("2 CPUs", cpus_cgroup_limit(root) == 2);
    put("sys/fs/cgroup/user.slice/job/cpu.max", "150000 100000\n");
    test_cond("1.5 rounds up to 2", cpus_cgroup_limit(root) == 2);
    put("sys/fs/cgroup/user.slice/job/cpu.max", "1000 100000\n");
    test_cond("0.01 CPU: at least 1", cpus_cgroup_limit(root) == 1);
    put("sys/fs/cgroup/user.slice/cpu.max", "300000 100000\n");
    put("sys/fs/cgroup/user.slice/job/cpu.max", "800000 100000\n");
    test_cond("a parent's smaller limit wins", cpus_cgroup_limit(root) == 3);
    put("sys/fs/cgroup/user.slice/job/cpu.max", "garbage\n");
    test_cond("malformed child: the parent's", cpus_cgroup_limit(root) == 3);
}

static void test_container(void) {
    /* the host's path in /proc/self/cgroup, the container's own cgroup
     * mounted at the top */
    fresh();
    put("proc/self/cgroup", "0::/kubepods/burstable/pod1/abc\n");
    put("sys/fs/cgroup/cpu.max", "400000 100000\n");
    test_cond("v2 container: the top's limit", cpus_cgroup_limit(root) == 4);
    fresh();
    put("proc/self/cgroup", "0::/\n");
    put("sys/fs/cgroup/cpu.max", "50000 100000\n");
    test_cond("v2 at the root: half a CPU is 1", cpus_cgroup_limit(root) == 1);
}

static void test_v1(void) {
    fresh();
    put("proc/self/cgroup", "12:memory:/docker/abc\n"
                            "4:cpu,cpuacct:/docker/abc\n"
                            "3:cpuset:/docker/abc\n");
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    test_cond("v1 quota -1: no limit", cpus_cgroup_limit(root) == 0);
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
    test_cond("v1 2.5 CPUs: 3", cpus_cgroup_limit(root) == 3);
    put("sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "0\n");
    test_cond("v1 period 0: no limit", cpus_cgroup_limit(root) == 0);
    fresh();
    put("proc/self/cgroup", "5:cpuacct,cpu:/slurm/uid_1/job_7\n");
    put("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "600000\n");
    put("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    test_cond("v1 mounted at cpu/, limit at the top", cpus_cgroup_limit(root) == 6);
    fresh();
    put("proc/self/cgroup", "5:cpuset:/a\n");
    put("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "600000\n");
    put("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    test_cond("v1 without a cpu controller line: no limit", cpus_cgroup_limit(root) == 0);
}

static void test_available(void) {
    int a = cpus_affinity(), n = cpus_available();
    test_cond("affinity at least 1", a >= 1);
    test_cond("available in [1, affinity]", n >= 1 && n <= a);
}

int main(void) {
    test_v2();
    test_container();
    test_v1();
    test_available();
    fresh(); /* leaves an empty directory: remove it */
    rmdir(root);
    return test_report();
}
