#!/usr/bin/env bash
# How kindserver behaves with many parked cards in its store. Builds
# kindserver and kindload and runs kindload's parks mode on a SQLite file
# and on a fresh database in scripts/postgres.sh's PostgreSQL cluster: the
# store is filled directly (no server) up to each count of PARKS pending
# parks in turn, and at each count kindload times the due-parks query,
# starts kindserver on the store (its start time up to /healthz, its RSS),
# resumes RESUMES parks picked at random on new sockets (p50/p99 from
# create_conversation_session to the card again, and from the submit to
# the eventual_response), reads the server's due-parks time per sweep tick
# from /metrics, and stops it. It prints one table per store.
#
# Environment: PARKS (default 0,1000,100000,1000000), RESUMES (default
# 500), DIAL_C (resumes at once, default 10), KINDKIT_ADDR (kindserver's
# address, loopback), KINDKIT_TEST_POSTGRES (a cluster to use instead of
# scripts/postgres.sh's), STORES (default "sqlite postgres"), FILL_IDS (the
# filled rows' ids: v7, the default, as kindkit makes them; v4, random, as
# a store made by kindkit before its keys were time-ordered), SQLITE_QUERY
# (the SQLite DSN's query, e.g. cache=2000KiB&read_cache=2000KiB&mmap=0 for
# SQLite's own defaults; empty: kindkit's). The SQLite file
# (about 3 KB a park) is in a temporary directory, removed on exit; the
# PostgreSQL database is dropped on exit. Exit status 1 when a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

PARKS=${PARKS:-0,1000,100000,1000000}
RESUMES=${RESUMES:-500}
DIAL_C=${DIAL_C:-10}
FILL_IDS=${FILL_IDS:-v7}
STORES=${STORES:-sqlite postgres}
KINDKIT_ADDR=${KINDKIT_ADDR:-127.0.0.1:18797}
case $KINDKIT_ADDR in
  127.*|localhost:*|\[::1\]:*) ;;
  *) echo "parks.sh: $KINDKIT_ADDR is not a loopback address" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
kl=         # the running kindload
pg_url=     # the cluster's admin URL, once a database was made
pg_db=      # the database this script made
cleanup() {
  set +e
  if [ -n "$kl" ]; then
    kill "$kl" 2>/dev/null # kindload stops the kindserver it started
    wait "$kl" 2>/dev/null
  fi
  if [ -n "$pg_db" ]; then
    psql -q "$pg_url" -c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" >/dev/null 2>&1 ||
      echo "parks.sh: could not drop database $pg_db" >&2
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

started=$(date +%s)
echo "--- building"
go build -o "$tmp/kindserver" ./cmd/kindserver
go build -o "$tmp/kindload" ./cmd/kindload

failures=0
# parks NAME DSN runs kindload's parks mode on the store DSN.
parks() {
  echo
  echo "== $1: kindload -parks $PARKS -resumes $RESUMES -dial-c $DIAL_C -fill-ids $FILL_IDS ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
  local code=0
  "$tmp/kindload" -parks "$PARKS" -resumes "$RESUMES" -dial-c "$DIAL_C" -fill-ids "$FILL_IDS" -store "$2" -server "$tmp/kindserver" -addr "$KINDKIT_ADDR" &
  kl=$!
  wait "$kl" || code=$?
  kl=
  if [ "$code" -ne 0 ]; then
    echo "parks.sh: kindload on $1 exited $code" >&2
    failures=$((failures + 1))
  fi
}

for s in $STORES; do
  case $s in
    sqlite)
      parks "sqlite${SQLITE_QUERY:+ ?$SQLITE_QUERY}" "sqlite:$tmp/parks.db${SQLITE_QUERY:+?$SQLITE_QUERY}"
      rm -f "$tmp"/parks.db*
      ;;
    postgres)
      if [ -z "${KINDKIT_TEST_POSTGRES:-}" ]; then
        line=$(scripts/postgres.sh 2>"$tmp/postgres.log" | tail -1) || true
        [ -n "$line" ] && eval "$line"
      fi
      if [ -z "${KINDKIT_TEST_POSTGRES:-}" ]; then
        echo "parks.sh: no PostgreSQL: $(tail -3 "$tmp/postgres.log" | tr '\n' ' ')" >&2
        failures=$((failures + 1))
        continue
      fi
      pg_url=$KINDKIT_TEST_POSTGRES
      db=kk_parks_$(date +%s)_$$
      psql -q "$pg_url" -c "CREATE DATABASE $db"
      pg_db=$db
      # The cluster's URL with our database in place of the path's.
      parks postgres "$(echo "$pg_url" | sed -E "s#^(postgres(ql)?://[^/]*)/[^?]*#\\1/$pg_db#")"
      psql -q "$pg_url" -c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" && pg_db=
      ;;
    *) echo "parks.sh: unknown store $s (want sqlite or postgres)" >&2; exit 2 ;;
  esac
done

echo
echo "columns: fill s = seconds to write that step's parks; start s = kindserver start to /healthz 200;"
echo "RSS MiB = its VmRSS then, +resumes = after the resumes; card = resume to interaction_required again,"
echo "resume = submit to eventual_response (ms); due0/due100 = the due-parks query (batch 100) with none"
echo "due and with all due, timed by kindload; tick ms = the server's own due-parks time per sweep tick."
echo "parks.sh took $(( $(date +%s) - started ))s"
[ "$failures" -eq 0 ]
