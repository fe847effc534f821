#!/usr/bin/env bash
# Fetches the Debian source packages Peregrine builds from source rather than
# linking as shipped, and applies the project's own patches to them
# (docs/scripting.md "The interpreter"): Lua 5.1 (lua5.1), whose shipped build
# carries the script-reachable faults Redis fixed in its own copy.
#
#   tools/fetch_sources.sh <dest> [package ...]   (default: lua5.1; the
#   Makefile calls it with build/deps-src, and with build/redis-src redis
#   for Redis's own test suite, tests/redis_suite/)
#
# Debian's archive is asked with `apt-get source`; when this machine has no
# deb-src entry, one is added for the same archive and release as its deb
# entries (/etc/apt/sources.list.d/peregrine-src.sources). The downloads are
# kept in <dest>/dl, so re-applying changed patches needs no network. Each
# package ends up in <dest>/<package> with Debian's patches, then ours from
# patches/<package>/*.patch in name order; a patch that does not apply stops
# the set-up.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: fetch_sources.sh <dest> [package ...]}
shift
mkdir -p "$dest/dl"
dest=$(cd "$dest" && pwd)
if [ $# -gt 0 ]; then packages=("$@"); else packages=(lua5.1); fi

have_sources() { ls "$dest"/dl/"$1"_*.dsc >/dev/null 2>&1; }

missing=()
for p in "${packages[@]}"; do have_sources "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  command -v dpkg-source >/dev/null || { echo "fetch_sources: dpkg-source is missing (Debian's dpkg-dev)" >&2; exit 1; }
  if ! apt-get source --print-uris -qq "${missing[0]}" >/dev/null 2>&1; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?}")
    echo "fetch_sources: adding a deb-src entry for Debian $codename"
    cat > /etc/apt/sources.list.d/peregrine-src.sources <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq
  fi
  (cd "$dest/dl" && apt-get source --download-only -qq "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  for p in "${missing[@]}"; do have_sources "$p" || { echo "fetch_sources: could not download $p" >&2; exit 1; }; done
fi

for p in "${packages[@]}"; do
  dsc=$(ls "$dest"/dl/"$p"_*.dsc | sort -V | tail -n 1)
  rm -rf "$dest/$p" "$dest/$p.tmp"
  # dpkg-source unpacks and applies Debian's own patches (3.0 quilt).
  dpkg-source --no-check -q -x "$dsc" "$dest/$p.tmp" >/dev/null
  for patch in "$top"/patches/"$p"/*.patch; do
    [ -e "$patch" ] || continue
    if ! patch -d "$dest/$p.tmp" -p1 --batch --forward --quiet < "$patch"; then
      echo "fetch_sources: $(basename "$patch") does not apply to $(basename "$dsc")" >&2
      exit 1
    fi
  done
  if [ "$p" = lua5.1 ]; then
    # luaconf.h includes the header Debian's rules generate at build time
    # (override_dh_auto_configure); Debian's liblua5.1-0-dev ships it, but a
    # machine without that package needs it written here, the same way.
    arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
    printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' \
      "$arch" > "$dest/$p.tmp/src/lua5.1-deb-multiarch.h"
  fi
  mv "$dest/$p.tmp" "$dest/$p"
  rm -f "$dest"/*.orig.tar.* "$dest"/*.debian.tar.*  # (dpkg-source leaves links beside what it unpacks)
  echo "fetch_sources: $p from $(basename "$dsc") with $(ls "$top"/patches/"$p"/*.patch 2>/dev/null | wc -l) patches of ours"
done
