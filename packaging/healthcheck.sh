#!/bin/bash
# The image's HEALTHCHECK: sends PING to the server in the container over
# bash's /dev/tcp (the image has no redis-cli) and succeeds on +PONG, or on
# -NOAUTH (up, with a password set). PEREGRINE_PORT names another port.
exec 3<>"/dev/tcp/127.0.0.1/${PEREGRINE_PORT:-6379}" || exit 1
printf 'PING\r\n' >&3
IFS= read -r -t 2 reply <&3 || exit 1
case "$reply" in
  +PONG*|-NOAUTH*) exit 0 ;;
  *) exit 1 ;;
esac
