#!/usr/bin/env bash
# The layers of src/, lowest first (docs/architecture.md): a file may include
# headers of its own layer and of the layers below it, never of one above.
# The build runs this before compiling anything (CMake's layer_check target),
# so an include that points upward stops the build with the line at fault.
# Unit tests (*_test.cc, *_bench.cc) are exempt: their binaries link every
# layer, and a test may assemble the whole server (server/acl_test.cc checks
# the ACL rules against every registered command).
#
#   tools/check_layers.sh [SRC_DIR]   (default: src beside this script)
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../src" && pwd)}
layers=(core protocol net persist scripting server cluster commands)
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done; echo -1; }

bad=0
for ((l = 0; l < ${#layers[@]}; l++)); do
  layer=${layers[$l]}
  [ -d "$src/$layer" ] || { echo "check_layers: no $src/$layer" >&2; exit 1; }
  while IFS=: read -r file line text; do
    case "$file" in *_test.cc|*_bench.cc) continue ;; esac
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([a-z_]+)\/.*/\1/' <<<"$text")
    r=$(rank "$target")
    if [ "$r" -gt "$l" ]; then
      echo "$file:$line: $layer/ includes $target/, a layer above it: $text" >&2
      bad=1
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/' "$src/$layer" || true)
done
exit $bad
