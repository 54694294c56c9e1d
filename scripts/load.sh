#!/usr/bin/env bash
# Load figures for kindkit next to their floor, per store. Builds
# kindserver and kindload, starts kindload's canned server (the same frames
# as kindkit's demo model, no logic: the floor) and, one after the other,
# kindserver (demo model) on each store, all on loopback:
#
#   memory   (-store memory -memory-retention 5s): cycle mode at c=1, 50
#            and 200 and hold mode, each beside the floor (hold measures
#            what is kept after the retention), and -reconnect;
#   sqlite   (-store sqlite:$tmp/load.db): cycle mode at c=1 and c=50,
#            hold mode and -reconnect;
#   postgres (a fresh database in scripts/postgres.sh's cluster): cycle mode
#            at c=50 and -reconnect.
#
# Each store's cycle runs come right after a run of the floor's, and their
# ratios are to that run: this machine's speed drifts from minute to minute.
# It prints one table per run, with ratios to the floor, SQLite's and
# PostgreSQL's cycles/s as a fraction of memory's, and the reconnect runs
# side by side. Every server it started is stopped on exit, its database is
# dropped, and a PostgreSQL cluster it had to start is stopped.
#
# Environment: D1, D50, D200 (how long each cycle run starts cycles) and
# N1, N50, N200 (a bound on its cycles), HOLD (parks), RECONNECT (sessions),
# KINDKIT_ADDR, DEBUG_ADDR (kindserver's -debug-addr, where kindload reads
# its /debug/stats), FLOOR_ADDR, SQLITE_QUERY (the SQLite DSN's query, as
# in parks.sh), KINDKIT_TEST_POSTGRES (a cluster to use
# instead of scripts/postgres.sh's), and LOAD_OUT (a directory to keep each
# run's JSON and the server logs in). Exit status 1 when a run failed, broke
# the event order or did not run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

D1=${D1:-6s}
N1=${N1:-6000}
D50=${D50:-15s}
N50=${N50:-10000}
D200=${D200:-10s}
N200=${N200:-20000}
HOLD=${HOLD:-5000}
RECONNECT=${RECONNECT:-1000}
RETENTION=5s  # the memory store's; hold waits past it (-after) before measuring what was kept
AFTER=8s      # retention + its sweep interval (retention/4) + slack
KINDKIT_ADDR=${KINDKIT_ADDR:-127.0.0.1:18787}
FLOOR_ADDR=${FLOOR_ADDR:-127.0.0.1:18788}
DEBUG_ADDR=${DEBUG_ADDR:-127.0.0.1:18789}
for a in "$KINDKIT_ADDR" "$FLOOR_ADDR" "$DEBUG_ADDR"; do
  case $a in
    127.*|localhost:*|\[::1\]:*) ;;
    *) echo "load.sh: $a is not a loopback address" >&2; exit 2 ;;
  esac
done

tmp=$(mktemp -d)
pids=()        # every process this script started and has not stopped yet
pg_url=        # the cluster's admin URL, once a database was made
pg_db=         # the database this script made
pg_stop=       # the data directory of a cluster this script started
cleanup() {
  set +e
  # Newest first: a running kindload before the servers it talks to. A
  # server that has not drained in 5s is killed.
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ -n "$pg_db" ]; then
    psql -q "$pg_url" -c "DROP DATABASE IF EXISTS $pg_db" >/dev/null 2>&1 ||
      echo "load.sh: could not drop database $pg_db" >&2
  fi
  if [ -n "$pg_stop" ]; then
    stop_cluster "$pg_stop"
  fi
  if [ -n "${LOAD_OUT:-}" ]; then
    mkdir -p "$LOAD_OUT" && cp "$tmp"/*.json "$tmp"/*.log "$LOAD_OUT"/ 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# stop_cluster DATADIR stops the PostgreSQL cluster scripts/postgres.sh
# started (as the postgres user when running as root, as it does).
stop_cluster() {
  local bin as=()
  bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5 -n -r | head -1)
  [ -x "$bin/pg_ctl" ] || bin=$(dirname "$(command -v pg_ctl)")
  [ "$(id -u)" -eq 0 ] && as=(runuser -u postgres --)
  (cd / && "${as[@]}" "$bin/pg_ctl" -D "$1" -m fast -w stop >/dev/null) ||
    echo "load.sh: could not stop the PostgreSQL cluster in $1" >&2
}

started=$(date +%s)
echo "--- building"
go build -o "$tmp/kindserver" ./cmd/kindserver
go build -o "$tmp/kindload" ./cmd/kindload
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

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

"$tmp/kindload" -canned "$FLOOR_ADDR" >"$tmp/floor.log" 2>&1 &
floor_pid=$!
pids+=("$floor_pid")
up "$FLOOR_ADDR"

kindserver_pid=
# start_kindserver STORE-NAME ARGS...: starts kindserver on KINDKIT_ADDR. All
# of kindload's sockets come from one address, so the per-client bounds are
# off (the per-connection ones stay).
start_kindserver() {
  local name=$1; shift
  "$tmp/kindserver" -addr "$KINDKIT_ADDR" -debug-addr "$DEBUG_ADDR" -client-frame-rate -1 -conversation-rate -1 "$@" >"$tmp/kindserver-$name.log" 2>&1 &
  kindserver_pid=$!
  pids+=("$kindserver_pid")
  up "$KINDKIT_ADDR"
  up "$DEBUG_ADDR"
  echo "--- kindserver $* (pid $kindserver_pid) on $KINDKIT_ADDR; canned floor pid $floor_pid on $FLOOR_ADDR; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# forget PID drops a process that has ended from pids.
forget() {
  local keep=() pid
  for pid in "${pids[@]}"; do
    [ "$pid" = "$1" ] || keep+=("$pid")
  done
  pids=("${keep[@]}")
}

# stop_kindserver stops the running kindserver (SIGTERM: it drains).
stop_kindserver() {
  kill "$kindserver_pid" 2>/dev/null || true
  wait "$kindserver_pid" 2>/dev/null || true
  forget "$kindserver_pid"
  kindserver_pid=
}

failures=0
failed_runs=()

# measure WHO NAME ARGS...: runs kindload against WHO (a store's kindserver,
# or the floor: floor, or floor.STORE for the run beside STORE's) into
# $tmp/WHO-NAME.json.
measure() {
  local who=$1 name=$2; shift 2
  local addr=$KINDKIT_ADDR stats=$DEBUG_ADDR pid=$kindserver_pid
  case $who in floor*) addr=$FLOOR_ADDR stats=$FLOOR_ADDR pid=$floor_pid ;; esac
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "load.sh: the $who server is gone; $name not run" >&2
    : >"$tmp/$who-$name.json"
    failures=$((failures + 1)); failed_runs+=("$who/$name (not run)")
    return
  fi
  echo "--- $name against $who: kindload -addr $addr -stats-addr $stats $*"
  local code=0 cpu0 cpu1
  cpu0=$(head -1 /proc/stat)
  # In the background, so that a signal to this script stops it at once.
  "$tmp/kindload" -addr "$addr" -stats-addr "$stats" -json "$@" >"$tmp/$who-$name.json" 2>"$tmp/$who-$name.err" &
  local kl=$!
  pids+=("$kl")
  wait "$kl" || code=$?
  forget "$kl"
  cpu1=$(head -1 /proc/stat)
  machine "$cpu0" "$cpu1" "$tmp/$who-$name.json" >"$tmp/$who-$name.machine.json"
  if [ "$code" -ne 0 ]; then
    echo "    kindload exited $code" >&2
    cat "$tmp/$who-$name.err" >&2
    failures=$((failures + 1)); failed_runs+=("$who/$name")
  fi
}

# machine CPU0 CPU1 RUN-JSON writes how busy the machine was between two
# /proc/stat "cpu" lines, in cores, and for a cycle run the part of it
# that was neither the server's nor kindload's (other tenants, PostgreSQL),
# as a flat JSON object.
machine() {
  awk -v a="$1" -v b="$2" -v n="$(nproc)" -v cyc="$(get "$3" cycles)" -v secs="$(get "$3" seconds)" \
    -v srv="$(get "$3" serverCpuMsPerCycle)" -v cli="$(get "$3" clientCpuMsPerCycle)" 'BEGIN {
    split(a, x); split(b, y)
    for (i = 2; i <= 11; i++) { t += y[i] - x[i] }
    idle = (y[5] - x[5]) + (y[6] - x[6])
    busy = (t > 0) ? (t - idle) / t * n : 0
    printf "{\"busyCores\":%.2f", busy
    if (cyc != "-" && secs != "-" && srv != "-" && cli != "-" && secs + 0 > 0)
      printf ",\"otherCores\":%.2f", busy - (srv + cli) * cyc / 1000 / secs
    print "}"
  }'
}

# PostgreSQL CPU: the backends serving our database (their command line
# names it), per pid, so that a backend's time is counted once.
pg_ticks() {
  local p
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q "^postgres: .* $pg_db "; then
      echo "${p#/proc/} $(sed 's/.*) //' "$p/stat" 2>/dev/null | awk '{print $12 + $13}')"
    fi
  done
}
# pg_cpu_ms BEFORE AFTER CYCLES-JSON prints the backends' CPU ms per cycle.
pg_cpu_ms() {
  local cycles
  cycles=$(get "$3" cycles)
  awk -v n="$cycles" -v tick="$(getconf CLK_TCK)" '
    FNR == NR { before[$1] = $2; next }
    { sum += $2 - (($1 in before) ? before[$1] : 0) }
    END { if (n == "-" || n + 0 == 0) print "-"; else printf "%.3f\n", sum * 1000 / tick / n }' "$1" "$2"
}

# get FILE KEY prints a number of a run's flat JSON, or "-".
get() {
  local v
  v=$(grep -o "\"$2\":[-0-9.e+]*" "$1" 2>/dev/null | head -1 | cut -d: -f2)
  echo "${v:--}"
}

# ---- runs

# The PostgreSQL cluster and its database first: a cluster started after
# the other runs could find its port taken as the local port of one of
# their thousands of client sockets ("Address already in use").
pg_note=
if [ -z "${KINDKIT_TEST_POSTGRES:-}" ]; then
  if ! (exec 3<>"/dev/tcp/127.0.0.1/${KINDKIT_PG_PORT:-55432}") 2>/dev/null; then
    pg_stop=${KINDKIT_PG_DATA:-/tmp/kindkit-postgres-${KINDKIT_PG_PORT:-55432}}
  fi
  if line=$(scripts/postgres.sh 2>"$tmp/postgres.log" | tail -1) && [ -n "$line" ]; then
    eval "$line"
  else
    pg_note="scripts/postgres.sh failed: $(tail -3 "$tmp/postgres.log" | tr '\n' ' ')"
  fi
fi
if [ -z "$pg_note" ]; then
  pg_url=$KINDKIT_TEST_POSTGRES
  db=kk_load_$(date +%s)_$$
  if psql -q "$pg_url" -c "CREATE DATABASE $db" >"$tmp/psql.log" 2>&1; then
    pg_db=$db
    case $pg_url in
      *127.0.0.1*|*localhost*|*'[::1]'*) ;;
      *) pg_note="$pg_url is not on loopback" ;;
    esac
  else
    pg_note="CREATE DATABASE failed: $(cat "$tmp/psql.log")"
  fi
fi

# Hold first, on a fresh server: its "before" is then the bare process,
# not the conversations of earlier runs that the retention still keeps.
start_kindserver memory -store memory -memory-retention "$RETENTION"
measure memory hold -hold "$HOLD" -after "$AFTER"
measure floor hold -hold "$HOLD"
for who in floor memory; do measure "$who" c1 -c 1 -n "$N1" -d "$D1"; done
for who in floor memory; do measure "$who" c50 -c 50 -n "$N50" -d "$D50"; done
for who in floor memory; do measure "$who" c200 -c 200 -n "$N200" -d "$D200"; done
measure memory reconnect -reconnect "$RECONNECT"
stop_kindserver

start_kindserver sqlite -store "sqlite:$tmp/load.db${SQLITE_QUERY:+?$SQLITE_QUERY}"
for who in floor.sqlite sqlite; do measure "$who" c1 -c 1 -n "$N1" -d "$D1"; done
for who in floor.sqlite sqlite; do measure "$who" c50 -c 50 -n "$N50" -d "$D50"; done
measure sqlite reconnect -reconnect "$RECONNECT"
measure sqlite hold -hold "$HOLD"
stop_kindserver

if [ -z "$pg_note" ]; then
  # The cluster's URL with our database in place of the path's.
  pg_dsn=$(echo "$pg_url" | sed -E "s#^(postgres(ql)?://[^/]*)/[^?]*#\\1/$pg_db#")
  start_kindserver postgres -store "$pg_dsn"
  measure floor.postgres c50 -c 50 -n "$N50" -d "$D50"
  pg_ticks >"$tmp/pg0.ticks"
  measure postgres c50 -c 50 -n "$N50" -d "$D50"
  pg_ticks >"$tmp/pg1.ticks"
  measure postgres reconnect -reconnect "$RECONNECT"
  stop_kindserver
else
  echo "load.sh: PostgreSQL runs skipped: $pg_note" >&2
  : >"$tmp/postgres-c50.json"; : >"$tmp/postgres-reconnect.json"
  failures=$((failures + 1)); failed_runs+=("postgres (not run)")
fi

# ---- tables

W=42 # label width
# cells prints a row: LABEL then each value right-aligned.
cells() {
  local LC_ALL=C.UTF-8 # so that ${#label} counts characters, not bytes
  local label=$1; shift
  printf "  %s%*s" "$label" $((W - ${#label})) ""
  printf " %12s" "$@"
  echo
}

# num FILE KEY [SCALE]: a value, divided by SCALE, trimmed.
num() {
  awk -v a="$(get "$1" "$2")" -v s="${3:-1}" 'BEGIN {
    if (a == "-") { print "-"; exit }
    v = sprintf("%.3f", a / s); sub(/\.000$/, "", v); print v }'
}

# div A B: A/B to two places, or "-".
div() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# row LABEL RUN KEY SCALE WHO...: the value of KEY in each WHO's RUN.
row() {
  local label=$1 run=$2 key=$3 scale=$4; shift 4
  local vals=() who
  for who in "$@"; do
    if [ "$who" = "" ]; then vals+=(""); continue; fi
    vals+=("$(num "$tmp/$who-$run.json" "$key" "$scale")")
  done
  cells "$label" "${vals[@]}"
}

# ratio LABEL RUN KEY DENOM WHO...: each WHO's KEY over DENOM's.
ratio() {
  local label=$1 run=$2 key=$3 denom=$4; shift 4
  local vals=() who d
  d=$(get "$tmp/$denom-$run.json" "$key")
  for who in "$@"; do
    if [ "$who" = "" ]; then vals+=(""); continue; fi
    vals+=("$(div "$(get "$tmp/$who-$run.json" "$key")" "$d")")
  done
  cells "$label" "${vals[@]}"
}

# beside LABEL RUN KEY WHO...: each store's KEY over the floor run's beside
# it; blank for a floor.
beside() {
  local label=$1 run=$2 key=$3; shift 3
  local vals=() who f
  for who in "$@"; do
    case $who in
      floor*) vals+=(""); continue ;;
      memory) f=floor ;;
      *) f=floor.$who ;;
    esac
    vals+=("$(div "$(get "$tmp/$who-$run.json" "$key")" "$(get "$tmp/$f-$run.json" "$key")")")
  done
  cells "$label" "${vals[@]}"
}

# samples RUN WHO...: what went wrong, when something did.
samples() {
  local run=$1 who f; shift
  for who in "$@"; do
    f="$tmp/$who-$run.json"
    if grep -q '"errorSamples"\|"violationSamples"' "$f" 2>/dev/null; then
      echo "  $who: $(grep -o '"errorSamples":{[^}]*}' "$f") $(grep -o '"violationSamples":{[^}]*}' "$f")"
      grep -o '"failureExamples":{.*}' "$f" | sed 's/^/    /' || true
    fi
  done
}

cycle_rows() { # RUN WHO...
  local run=$1; shift
  row "errors" "$run" errors 1 "$@"
  row "order violations" "$run" orderViolations 1 "$@"
  row "cycles" "$run" cycles 1 "$@"
  row "send→interaction_required p50 (ms)" "$run" parkP50Ms 1 "$@"
  row "send→interaction_required p99 (ms)" "$run" parkP99Ms 1 "$@"
  row "send→interaction_required max (ms)" "$run" parkMaxMs 1 "$@"
  row "submit→eventual_response p50 (ms)" "$run" resumeP50Ms 1 "$@"
  row "submit→eventual_response p99 (ms)" "$run" resumeP99Ms 1 "$@"
  row "submit→eventual_response max (ms)" "$run" resumeMaxMs 1 "$@"
  row "kindload CPU per cycle (ms)" "$run" clientCpuMsPerCycle 1 "$@"
  row "machine busy during the run (cores)" "$run.machine" busyCores 1 "$@"
  row "… not this server or kindload (cores)" "$run.machine" otherCores 1 "$@"
}

echo
echo "===== results ($(nproc) cores; load average now $(cut -d' ' -f1-3 /proc/loadavg); $(( $(date +%s) - started ))s so far)"

echo
echo "== stores: cycle mode, c=50, each cycle on a fresh socket (-d $D50, at most $N50 cycles); each store beside the floor's run before it"
c50=(memory floor sqlite floor.sqlite postgres floor.postgres)
cells "" memory floor sqlite floor postgres floor
row "cycles/s" c50 cyclesPerSec 1 "${c50[@]}"
beside "cycles/s ÷ its floor's" c50 cyclesPerSec "${c50[@]}"
ratio "cycles/s ÷ memory's" c50 cyclesPerSec memory memory "" sqlite "" postgres ""
row "server CPU per cycle (ms)" c50 serverCpuMsPerCycle 1 "${c50[@]}"
beside "server CPU per cycle ÷ its floor's" c50 serverCpuMsPerCycle "${c50[@]}"
pgc=-
if [ -n "$pg_db" ] && [ -s "$tmp/pg1.ticks" ]; then pgc=$(pg_cpu_ms "$tmp/pg0.ticks" "$tmp/pg1.ticks" "$tmp/postgres-c50.json"); fi
cells "+ its PostgreSQL backends' CPU (ms)" "" "" "" "" "$pgc" ""
cycle_rows c50 "${c50[@]}"
samples c50 "${c50[@]}"

echo
echo "== reconnect: $RECONNECT sessions parked, every socket dropped, each resumed on a new socket (kindkit only)"
cells "" memory sqlite postgres
row "parked" reconnect parked 1 memory sqlite postgres
row "resumed (every step right)" reconnect resumed 1 memory sqlite postgres
row "failed" reconnect failed 1 memory sqlite postgres
row "order violations" reconnect orderViolations 1 memory sqlite postgres
row "resumes/s (reconnect to eventual_response)" reconnect resumesPerSec 1 memory sqlite postgres
row "reconnect→interaction_required p50 (ms)" reconnect cardP50Ms 1 memory sqlite postgres
row "reconnect→interaction_required p99 (ms)" reconnect cardP99Ms 1 memory sqlite postgres
row "submit→eventual_response p50 (ms)" reconnect resumeP50Ms 1 memory sqlite postgres
row "submit→eventual_response p99 (ms)" reconnect resumeP99Ms 1 memory sqlite postgres
row "send→interaction_required p50 (ms)" reconnect parkP50Ms 1 memory sqlite postgres
row "server CPU per park (ms)" reconnect serverCpuMsPerPark 1 memory sqlite postgres
row "server CPU per drop+reconnect+resume (ms)" reconnect serverCpuMsPerResume 1 memory sqlite postgres
row "machine busy during the run (cores)" reconnect.machine busyCores 1 memory sqlite postgres
samples reconnect memory sqlite postgres

echo
echo "== cycle mode, c=1, each cycle on a fresh socket (-d $D1, at most $N1 cycles); each store beside the floor's run before it"
c1=(memory floor sqlite floor.sqlite)
cells "" memory floor sqlite floor
row "cycles/s" c1 cyclesPerSec 1 "${c1[@]}"
beside "cycles/s ÷ its floor's" c1 cyclesPerSec "${c1[@]}"
row "server CPU per cycle (ms)" c1 serverCpuMsPerCycle 1 "${c1[@]}"
beside "server CPU per cycle ÷ its floor's" c1 serverCpuMsPerCycle "${c1[@]}"
cycle_rows c1 "${c1[@]}"
samples c1 "${c1[@]}"

run="c200 200 $D200 $N200"
set -- $run
echo
echo "== cycle mode, c=$2, each cycle on a fresh socket (-d $3, at most $4 cycles), memory store"
cells "" kindkit floor ratio
cells "cycles/s" "$(num "$tmp/memory-$1.json" cyclesPerSec)" "$(num "$tmp/floor-$1.json" cyclesPerSec)" \
  "$(div "$(get "$tmp/memory-$1.json" cyclesPerSec)" "$(get "$tmp/floor-$1.json" cyclesPerSec)")"
cells "server CPU per cycle (ms)" "$(num "$tmp/memory-$1.json" serverCpuMsPerCycle)" "$(num "$tmp/floor-$1.json" serverCpuMsPerCycle)" \
  "$(div "$(get "$tmp/memory-$1.json" serverCpuMsPerCycle)" "$(get "$tmp/floor-$1.json" serverCpuMsPerCycle)")"
cycle_rows "$1" memory floor
samples "$1" memory floor

echo
echo "== hold mode, $HOLD parks, each on its own open socket (memory: measured after $AFTER, past its ${RETENTION} retention)"
cells "" memory sqlite floor "mem/floor" "sqlite/floor"
hold_row() { # LABEL KEY SCALE [RUN]: with no ratios when SCALE is "1-"
  local m s f rm=-- rs=-- scale=${3%-} run=${4:-hold}
  m=$(get "$tmp/memory-$run.json" "$2"); s=$(get "$tmp/sqlite-$run.json" "$2"); f=$(get "$tmp/floor-$run.json" "$2")
  if [ "$scale" = "$3" ]; then rm=$(div "$m" "$f"); rs=$(div "$s" "$f"); else rm=; rs=; fi
  cells "$1" "$(num "$tmp/memory-$run.json" "$2" "$scale")" "$(num "$tmp/sqlite-$run.json" "$2" "$scale")" \
    "$(num "$tmp/floor-$run.json" "$2" "$scale")" "$rm" "$rs"
}
hold_row "parked" parked 1-
hold_row "resumed" resumed 1-
hold_row "errors" errors 1-
hold_row "order violations" orderViolations 1-
hold_row "heap+stack per parked interaction (KiB)" bytesPerPark 1024
hold_row "RSS per parked interaction (KiB)" rssPerPark 1024
hold_row "goroutines per parked interaction" goroutinesPerPark 1
hold_row "server CPU per park (ms)" serverCpuMsPerPark 1
hold_row "server CPU per resume (ms)" serverCpuMsPerResume 1
hold_row "send→interaction_required p50 (ms)" parkP50Ms 1
hold_row "send→interaction_required p99 (ms)" parkP99Ms 1
hold_row "submit→eventual_response p50 (ms)" resumeP50Ms 1
hold_row "submit→eventual_response p99 (ms)" resumeP99Ms 1
hold_row "heap+stack before (MiB)" memBefore 1048576
hold_row "heap+stack all parked (MiB)" memParked 1048576
hold_row "heap+stack after the sessions ended (MiB)" memAfter 1048576
hold_row "RSS before (MiB)" rssBefore 1048576
hold_row "RSS all parked (MiB)" rssParked 1048576
hold_row "RSS after the sessions ended (MiB)" rssAfter 1048576
hold_row "kept after: heap+stack per park (KiB)" residualBytesPerPark 1024-
hold_row "kept after: RSS per park (KiB)" residualRssPerPark 1024-
hold_row "kept after: goroutines" residualGoroutines 1-
hold_row "wait before measuring what was kept (s)" settleSeconds 1-
hold_row "machine busy during the run (cores)" busyCores 1- hold.machine
samples hold memory sqlite floor

echo
for name in memory sqlite postgres; do
  log="$tmp/kindserver-$name.log"
  [ -f "$log" ] || continue
  warn=$(grep -c 'level=WARN\|level=ERROR' "$log" || true)
  echo "kindserver ($name) logged $warn warnings or errors"
  grep 'level=WARN\|level=ERROR' "$log" | sed 's/^time=[^ ]* //' | sort | uniq -c | sort -rn | head -5 || true
done
echo "load.sh took $(( $(date +%s) - started ))s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$failures" -gt 0 ]; then
  echo "load.sh: $failures runs had errors or order violations, or did not run: ${failed_runs[*]}" >&2
  exit 1
fi
