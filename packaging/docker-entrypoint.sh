#!/bin/bash
# The container image's entrypoint, on the official redis image's
# conventions: flags alone (or a .conf file first) run the server with
# them; started as root, it gives /data to the `peregrine` user and runs
# the server as that user; $PEREGRINE_EXTRA_FLAGS is appended to the
# server's arguments. Any other command runs as given (`sh`, `peregrine
# --version`). Written for the bash the image carries (docs/shipping.md).
set -e

# `docker run IMAGE --maxmemory 1gb` or `... IMAGE /etc/peregrine.conf`.
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
  set -- peregrine "$@"
fi

# The binary's other jobs (version, help, the check tools) run as given.
case "${2:-}" in
  -v | --version | -h | --help | --check-rdb | --check-aof) exec "$@" ;;
esac

if [ "$1" = peregrine ] || [ "$1" = /usr/bin/peregrine ]; then
  if [ "$EUID" = 0 ]; then
    # Root: hand the working directory (the /data volume) to the server's
    # user, then come back through this script as that user.
    chown -R peregrine:peregrine . 2>/dev/null || true
    exec setpriv --reuid=peregrine --regid=peregrine --clear-groups --inh-caps=-all -- "$0" "$@"
  fi
  shift
  # The image's server listens on every interface with protected mode off,
  # as the redis image's does: a container's port is reached through the
  # container network, never from "localhost". A config file given first
  # keeps its own bind and protected-mode (flags after it would override
  # them). Flags given here still override these defaults.
  if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then
    set -- --bind 0.0.0.0 -:: --protected-mode no "$@"
  fi
  # Files the server creates are its own alone.
  umask 0077
  # shellcheck disable=SC2086  # several flags in one variable, split on purpose
  exec /usr/bin/peregrine "$@" $PEREGRINE_EXTRA_FLAGS
fi

exec "$@"
