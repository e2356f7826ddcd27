# Every C, CUDA and header file of the tree is formatted as .clang-format
# says (make format rewrites them): one check per file, with Debian 12's
# clang-format 14 (another major version formats differently, so it does
# not run then, and says so, counting nothing).
. "$TESTS/cli/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
if ! command -v clang-format >/dev/null 2>&1; then
  echo "not run: clang-format is not installed (apt-get install clang-format)"
elif ! clang-format --version | grep -q 'version 14\.'; then
  echo "not run: $(clang-format --version) is not clang-format 14, whose format the tree keeps"
else
  cd "$ROOT" || exit 1
  while IFS= read -r f; do
    ok "$f is formatted (make format)" clang-format --dry-run -Werror "$f"
  done < <(mk/format-files.sh)
fi
done_testing
