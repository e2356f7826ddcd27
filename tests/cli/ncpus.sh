# The default thread count: every -j default (common/cpus.c) and make's
# JOBS default (mk/ncpus.sh) follow the CPU affinity mask and the cgroup
# CPU quota. The quota is read from a tree of files in the temp dir.
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
if command -v taskset >/dev/null 2>&1 && taskset -c 0 true 2>/dev/null; then
  run taskset -c 0 "$BIN/wp_tokenize" --help
  expect_rc "wp_tokenize --help under taskset -c 0" 0
  ok "-j default is 1 under taskset -c 0" grep -q "1 here" "$out"
  run taskset -c 0 "$ROOT/mk/ncpus.sh"
  ok "mk/ncpus.sh under taskset -c 0 says 1 ($(cat "$out"))" [ "$(cat "$out")" = 1 ]
else
  echo "not run: taskset (util-linux) is missing or not allowed here"
fi
run "$ROOT/mk/ncpus.sh"
n=$(cat "$out")
ok "mk/ncpus.sh says 1 to nproc ($n)" [ "$n" -ge 1 -a "$n" -le "$(nproc)" ]

# a fake root: /proc/self/cgroup and /sys/fs/cgroup under $T/r
R=$T/r
mkdir -p "$R/proc/self" "$R/sys/fs/cgroup/job/step"
echo "0::/job/step" >"$R/proc/self/cgroup"
run "$ROOT/mk/ncpus.sh" "$R"
ok "no cpu.max: nproc" [ "$(cat "$out")" = "$(nproc)" ]
echo "50000 100000" >"$R/sys/fs/cgroup/job/cpu.max"
run "$ROOT/mk/ncpus.sh" "$R"
ok "v2 half a CPU in a parent cgroup: 1" [ "$(cat "$out")" = 1 ]
echo "max 100000" >"$R/sys/fs/cgroup/job/cpu.max"
run "$ROOT/mk/ncpus.sh" "$R"
ok "v2 max: nproc" [ "$(cat "$out")" = "$(nproc)" ]
rm -rf "$R" && mkdir -p "$R/proc/self" "$R/sys/fs/cgroup/cpu,cpuacct"
printf '4:cpu,cpuacct:/docker/abc\n3:cpuset:/docker/abc\n' >"$R/proc/self/cgroup"
echo 90000 >"$R/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"
echo 100000 >"$R/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us"
run "$ROOT/mk/ncpus.sh" "$R"
ok "v1 container, 0.9 CPU at the mount's top: 1" [ "$(cat "$out")" = 1 ]
echo -1 >"$R/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"
run "$ROOT/mk/ncpus.sh" "$R"
ok "v1 quota -1: nproc" [ "$(cat "$out")" = "$(nproc)" ]
done_testing
