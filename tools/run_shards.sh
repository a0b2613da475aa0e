#!/usr/bin/env bash
# tools/run_shards.sh N: every spec in N busted processes side by side (the
# lists from tools/spec_shards.lua), each one's output printed when all have
# ended, in order; exit status 0 only if every process passed. $LUA and
# $BUSTED (and LUA_PATH, LUA_CPATH, LUACUDA_BUILD) come from make test.
set -u
n=${1:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t shards < <($LUA tools/spec_shards.lua "$n")
[ "${#shards[@]}" -gt 0 ] || { echo "run_shards.sh: no spec lists"; exit 1; }
for i in "${!shards[@]}"; do
  # shellcheck disable=SC2086  # $LUA may carry env settings; the lists are words
  ( $LUA $BUSTED ${shards[$i]} >"$tmp/$i.log" 2>&1; echo $? >"$tmp/$i.rc" ) &
done
wait
status=0
for i in "${!shards[@]}"; do
  echo "== busted process $((i + 1)) of ${#shards[@]}"
  cat "$tmp/$i.log"
  [ "$(cat "$tmp/$i.rc" 2>/dev/null)" = 0 ] || status=1
done
exit $status
