# Sourced by the bench/*_device.sh scripts: puts each binary of the bundle in
# .scale (bench/scale.py bundle) on the PATH under its own name, run with the
# bundle's libraries and loader, since the borrowed machine has none of them
# installed (taskset only where the machine lacks its own). Sets $wrap, the
# folder to remove at the end.
bundle=$(cd "$(dirname "$0")/../.scale" && pwd)
wrap=$(mktemp -d)
for path in "$bundle"/bin/*; do
    b=$(basename "$path")
    [ "$b" = taskset ] && command -v taskset >/dev/null 2>&1 && continue
    printf '#!/bin/sh\nexec "%s/lib/ld-linux-x86-64.so.2" --library-path "%s/lib" "%s" "$@"\n' \
        "$bundle" "$bundle" "$path" > "$wrap/$b"
    chmod +x "$wrap/$b"
done
export PATH="$wrap:$PATH" PYTHONUNBUFFERED=1
