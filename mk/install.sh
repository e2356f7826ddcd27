#!/usr/bin/env bash
# mk/install.sh - install or remove the programs, their data and man pages,
# as `make install` / `make uninstall` do:
#
#   DESTDIR/PREFIX/bin/PROG                   the programs
#   DESTDIR/PREFIX/share/wikibert/            data/ (vocabulary, abbreviations,
#                                             language model; the programs find
#                                             it from their own path)
#   DESTDIR/PREFIX/share/man/man1/PROG.1      from PROG --help (help2man)
#   DESTDIR/PREFIX/share/doc/wikibert/        LICENSE, README.md
#
#   mk/install.sh install BIN DESTDIR PREFIX PROG...
#   mk/install.sh uninstall BIN DESTDIR PREFIX PROG...
#
# Man pages need help2man: when it is missing it is installed if run as
# root (apt-get; not with WIKIBERT_NO_INSTALL=1), otherwise the apt-get line
# is printed and the rest is installed without man pages. NO_MAN=1 skips them.
set -eu -o pipefail
[ $# -ge 4 ] || { echo "usage: mk/install.sh install|uninstall BIN DESTDIR PREFIX PROG..." >&2; exit 2; }
what=$1 bin=$2 destdir=$3 prefix=$4
shift 4
root=$(cd "$(dirname "$0")/.." && pwd)
case "$prefix" in /*) ;; *) echo "install: PREFIX must be an absolute path (got '$prefix')" >&2; exit 2 ;; esac
top=$destdir$prefix
share=$top/share/wikibert man1=$top/share/man/man1 doc=$top/share/doc/wikibert

if [ "$what" = uninstall ]; then
  for p in "$@"; do rm -f "$top/bin/$p" "$man1/$p.1"; done
  rm -rf "$share" "$doc"
  echo "uninstalled from $top"
  exit 0
fi
[ "$what" = install ] || { echo "install: unknown action '$what'" >&2; exit 2; }

have_help2man() {
  command -v help2man >/dev/null 2>&1 && return 0
  [ "${NO_MAN:-0}" = 1 ] && return 1
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ "${WIKIBERT_NO_INSTALL:-0}" != 1 ]; then
    echo "install: installing help2man (for the man pages)" >&2
    { DEBIAN_FRONTEND=noninteractive timeout 600 apt-get -o DPkg::Lock::Timeout=300 install -y -qq help2man ||
      { timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 \
        apt-get -o DPkg::Lock::Timeout=300 install -y -qq help2man; }; } >/dev/null 2>&1
    command -v help2man >/dev/null 2>&1 && return 0
  fi
  echo "install: no man pages: help2man is missing. Run as root:" >&2
  echo "  apt-get update && apt-get install -y help2man" >&2
  return 1
}

# NAME line of a man page: the --help text's first sentence after Usage
# (a long one up to its first parenthesis)
describe() { # PROG
  "$1" --help | awk 'NR == 1 { next } /^$/ { exit } { printf "%s%s", sep, $0; sep = " " }' |
    sed -E 's/([.:])( .*|$)//' | awk '{ if (length($0) > 72) sub(/ \(.*/, ""); print }'
}

install -d "$top/bin" "$share" "$doc"
for p in "$@"; do install -m 755 "$bin/$p" "$top/bin/$p"; done
(cd "$root/data" && find . -type f) | while read -r f; do
  install -D -m 644 "$root/data/$f" "$share/${f#./}"
done
install -m 644 "$root/LICENSE" "$root/README.md" "$doc/"

if [ "${NO_MAN:-0}" != 1 ] && have_help2man; then
  install -d "$man1"
  for p in "$@"; do
    # the help as an installed program prints it: data under PREFIX, and no
    # "N here" of the machine that built the page
    WIKIBERT_DATA=$prefix/share/wikibert help2man --no-info --no-discard-stderr \
      --name "$(WIKIBERT_DATA=$prefix/share/wikibert describe "$top/bin/$p")" \
      --output "$man1/$p.1" "$top/bin/$p"
    sed -i -E 's/, [0-9]+ here\)/)/' "$man1/$p.1"
    chmod 644 "$man1/$p.1"
  done
fi
echo "installed into $top"
