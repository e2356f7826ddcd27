/* cpus.h - how many CPUs this process may use: the default thread count.
 *
 * On a shared machine, a cluster node or in a container the online CPUs
 * (sysconf) overstate what a process gets. Two limits count here:
 *   - CPU affinity (sched_getaffinity): taskset, numactl, Slurm's and
 *     Kubernetes' cpusets;
 *   - the cgroup CPU bandwidth quota (docker --cpus, Kubernetes CPU limits,
 *     systemd CPUQuota): v2 cpu.max "QUOTA PERIOD", v1 cpu.cfs_quota_us and
 *     cpu.cfs_period_us, QUOTA/PERIOD CPUs rounded up, of the process's own
 *     cgroup and every cgroup above it (the smallest limit wins).
 *
 *   int n = cpus_available();   // e.g. 1 under `taskset -c 0`
 */
#ifndef WB_CPUS_H
#define WB_CPUS_H

/* CPUs allowed by this process's affinity mask (at least 1); the online
 * CPUs when the mask cannot be read. */
int cpus_affinity(void);

/* The cgroup CPU quota of this process in whole CPUs (rounded up, at least
 * 1), or 0 when there is none. `root` is prepended to /proc/self/cgroup and
 * /sys/fs/cgroup ("" for the real system; tests point it at a directory
 * holding copies of those files). Unreadable or malformed files count as no
 * limit. */
int cpus_cgroup_limit(const char *root);

/* min(cpus_affinity(), cpus_cgroup_limit("")) when the latter is set. */
int cpus_available(void);

#endif
