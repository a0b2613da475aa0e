#!/usr/bin/env bash
# tools/run_shards.sh N [JOBS]: the specs in N busted processes, JOBS of them
# at a time (default N: all side by side), each one's output printed when
# all have ended, in order, under a line "== busted process I of N" (CI
# counts those lines to expect one busted summary each); exit status 0 only
# if every process passed. The lists come from tools/spec_shards.lua. Why
# several processes even one at a time: busted loads every spec file before
# it runs the first, and spec/helper.lua's full collection after each test
# costs in proportion to that heap (a third of a run under valgrind with
# all files in one process).
# $LUA and $BUSTED (and LUA_PATH, LUA_CPATH, LUACUDA_BUILD) come from make;
# $BUSTED_ARGS: its spec files choose the specs (default: every spec), its
# --exclude-pattern=P options leave files out, and its options go to every
# process; $SHARD_LUA runs tools/spec_shards.lua (default lua5.4: $LUA may
# be valgrind's).
set -u
n=${1:-2}
jobs=${2:-$n}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
opts=()
# shellcheck disable=SC2086  # BUSTED_ARGS is a list of words
for w in ${BUSTED_ARGS:-}; do
  case $w in
    *.lua) ;;
    *) opts+=("$w") ;;
  esac
done
# shellcheck disable=SC2086
mapfile -t shards < <(${SHARD_LUA:-lua5.4} tools/spec_shards.lua "$n" ${BUSTED_ARGS:-})
[ "${#shards[@]}" -gt 0 ] || { echo "run_shards.sh: no spec lists"; exit 1; }
running=0
for i in "${!shards[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  # shellcheck disable=SC2086  # $LUA may carry env settings; the lists are words
  ( $LUA $BUSTED "${opts[@]}" ${shards[$i]} >"$tmp/$i.log" 2>&1; echo $? >"$tmp/$i.rc" ) &
  running=$((running + 1))
done
wait
status=0
for i in "${!shards[@]}"; do
  echo "== busted process $((i + 1)) of ${#shards[@]}"
  cat "$tmp/$i.log"
  [ "$(cat "$tmp/$i.rc" 2>/dev/null)" = 0 ] || status=1
done
exit $status
