#!/usr/bin/env bash
# Load figures for kindkit next to their floor: builds kindserver and
# kindload, starts kindserver (demo model) and kindload's canned server
# (the same frames, no logic) on loopback, runs kindload's cycle mode at
# c=1, 50 and 200 and its hold mode against each, and prints the two side
# by side with the ratio kindkit / floor. Both servers are stopped on exit.
#
# Environment: N1, N50, N200 (cycles per run), HOLD (parks), KINDKIT_ADDR,
# FLOOR_ADDR, and LOAD_OUT (a directory to keep each run's JSON in).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

N1=${N1:-6000}
N50=${N50:-20000}
N200=${N200:-20000}
HOLD=${HOLD:-5000}
KINDKIT_ADDR=${KINDKIT_ADDR:-127.0.0.1:18787}
FLOOR_ADDR=${FLOOR_ADDR:-127.0.0.1:18788}
for a in "$KINDKIT_ADDR" "$FLOOR_ADDR"; do
  case $a in
    127.*|localhost:*|\[::1\]:*) ;;
    *) echo "load.sh: $a is not a loopback address" >&2; exit 2 ;;
  esac
done

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "${LOAD_OUT:-}" ]; then
    mkdir -p "$LOAD_OUT" && cp "$tmp"/*.json "$tmp"/*.log "$LOAD_OUT"/ 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "--- building"
go build -o "$tmp/kindserver" ./cmd/kindserver
go build -o "$tmp/kindload" ./cmd/kindload
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

"$tmp/kindserver" -addr "$KINDKIT_ADDR" -debug-stats >"$tmp/kindserver.log" 2>&1 &
kindserver_pid=$!
pids+=("$kindserver_pid")
"$tmp/kindload" -canned "$FLOOR_ADDR" >"$tmp/floor.log" 2>&1 &
floor_pid=$!
pids+=("$floor_pid")

# up HOST:PORT waits until the port accepts connections.
up() {
  local host=${1%:*} port=${1##*:}
  host=${host#[}; host=${host%]}
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "load.sh: nothing listens on $1" >&2
  return 1
}
up "$KINDKIT_ADDR"
up "$FLOOR_ADDR"
echo "kindserver pid $kindserver_pid on $KINDKIT_ADDR, canned floor pid $floor_pid on $FLOOR_ADDR, $(nproc) cores"

failures=0

# measure NAME ARGS...: runs kindload against kindkit, then the floor.
measure() {
  local name=$1; shift
  local who addr pid
  for who in kindkit floor; do
    if [ "$who" = kindkit ]; then addr=$KINDKIT_ADDR pid=$kindserver_pid; else addr=$FLOOR_ADDR pid=$floor_pid; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "load.sh: the $who server (pid $pid) is gone" >&2
      : >"$tmp/$who-$name.json"
      failures=$((failures + 1))
      continue
    fi
    echo "--- $name against $who: kindload -addr $addr $*"
    local code=0
    "$tmp/kindload" -addr "$addr" -json "$@" >"$tmp/$who-$name.json" 2>"$tmp/$who-$name.err" || code=$?
    if [ "$code" -ne 0 ]; then
      echo "    kindload exited $code" >&2
      cat "$tmp/$who-$name.err" >&2
      failures=$((failures + 1))
    fi
  done
}

# get FILE KEY prints a number of a run's flat JSON, or "-".
get() {
  local v
  v=$(grep -o "\"$2\":[-0-9.e+]*" "$1" 2>/dev/null | head -1 | cut -d: -f2)
  echo "${v:--}"
}

# row LABEL NAME KEY [SCALE]: kindkit, floor and the ratio; SCALE divides.
row() {
  local label=$1 name=$2 key=$3 scale=${4:-1}
  local a b
  a=$(get "$tmp/kindkit-$name.json" "$key")
  b=$(get "$tmp/floor-$name.json" "$key")
  awk -v l="$label" -v a="$a" -v b="$b" -v s="$scale" 'BEGIN {
    fa = (a == "-") ? "-" : sprintf("%.3f", a / s)
    fb = (b == "-") ? "-" : sprintf("%.3f", b / s)
    r = (a == "-" || b == "-" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b)
    sub(/\.000$/, "", fa); sub(/\.000$/, "", fb)
    printf "  %-44s %14s %14s %8s\n", l, fa, fb, r
  }'
}

header() {
  echo
  echo "== $1"
  printf "  %-44s %14s %14s %8s\n" "" kindkit floor ratio
}

samples() {
  local who f
  for who in kindkit floor; do
    f="$tmp/$who-$1.json"
    if grep -q '"errorSamples"\|"violationSamples"' "$f" 2>/dev/null; then
      echo "  $who: $(grep -o '"errorSamples":{[^}]*}' "$f") $(grep -o '"violationSamples":{[^}]*}' "$f")"
    fi
  done
}

measure c1 -c 1 -n "$N1"
measure c50 -c 50 -n "$N50"
measure c200 -c 200 -n "$N200"
measure hold -hold "$HOLD"

for run in "c1 1 $N1" "c50 50 $N50" "c200 200 $N200"; do
  set -- $run
  header "cycle mode, c=$2, $3 cycles (each on a fresh socket)"
  row "cycles/s" "$1" cyclesPerSec
  row "errors" "$1" errors
  row "order violations" "$1" orderViolations
  row "send→interaction_required p50 (ms)" "$1" parkP50Ms
  row "send→interaction_required p99 (ms)" "$1" parkP99Ms
  row "send→interaction_required max (ms)" "$1" parkMaxMs
  row "submit→eventual_response p50 (ms)" "$1" resumeP50Ms
  row "submit→eventual_response p99 (ms)" "$1" resumeP99Ms
  row "submit→eventual_response max (ms)" "$1" resumeMaxMs
  row "server CPU per cycle (ms)" "$1" serverCpuMsPerCycle
  row "kindload CPU per cycle (ms)" "$1" clientCpuMsPerCycle
  samples "$1"
done

header "hold mode, $HOLD parks (each on its own open socket)"
row "parked" hold parked
row "errors" hold errors
row "order violations" hold orderViolations
row "heap+stack per parked interaction (KiB)" hold bytesPerPark 1024
row "RSS per parked interaction (KiB)" hold rssPerPark 1024
row "goroutines per parked interaction" hold goroutinesPerPark
row "server CPU per park (ms)" hold serverCpuMsPerPark
row "server CPU per resume (ms)" hold serverCpuMsPerResume
row "send→interaction_required p50 (ms)" hold parkP50Ms
row "send→interaction_required p99 (ms)" hold parkP99Ms
row "submit→eventual_response p50 (ms)" hold resumeP50Ms
row "submit→eventual_response p99 (ms)" hold resumeP99Ms
row "heap+stack before (MiB)" hold memBefore 1048576
row "heap+stack all parked (MiB)" hold memParked 1048576
row "heap+stack after the sessions ended (MiB)" hold memAfter 1048576
row "RSS before (MiB)" hold rssBefore 1048576
row "RSS all parked (MiB)" hold rssParked 1048576
row "RSS after the sessions ended (MiB)" hold rssAfter 1048576
row "kept after: heap+stack per park (KiB)" hold residualBytesPerPark 1024
row "kept after: RSS per park (KiB)" hold residualRssPerPark 1024
row "kept after: goroutines" hold residualGoroutines
row "settle wait (s)" hold settleSeconds
samples hold

echo
warn=$(grep -c 'level=WARN\|level=ERROR' "$tmp/kindserver.log" || true)
echo "kindserver logged $warn warnings or errors"
grep 'level=WARN\|level=ERROR' "$tmp/kindserver.log" | sed 's/^time=[^ ]* //' | sort | uniq -c | sort -rn | head -5 || true
if [ "$failures" -gt 0 ]; then
  echo "load.sh: $failures runs had errors or order violations, or did not run" >&2
  exit 1
fi
