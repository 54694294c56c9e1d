#!/usr/bin/env bash
# postgres.sh starts a private PostgreSQL cluster for kindkit's tests on
# 127.0.0.1:55432 (data under /tmp, trust auth on loopback), installing
# Debian's postgresql package first when no server binary is found.
#
# It is idempotent: a cluster that is already running is reused. The last
# line of stdout is the export for the tests; everything else goes to
# stderr, so callers can write
#
#	eval "$(scripts/postgres.sh | tail -1)"
#
# Environment: KINDKIT_PG_PORT (default 55432), KINDKIT_PG_DATA (default
# /tmp/kindkit-postgres-$port), KINDKIT_PG_SERVER=1 for a cluster set up as
# a server would be, to measure on (scripts/parks.sh): durable (fsync,
# synchronous commit, full-page writes, all off in a test cluster), with
# shared_buffers a quarter of RAM (KINDKIT_PG_SHARED_BUFFERS overrides) and
# effective_cache_size half of it, and wal_compression = zstd (lz4 when the
# server lacks zstd; docs/data.md).
# These apply when the cluster is made; pick a port of its own. Stop the
# cluster with
#	pg_ctl -D /tmp/kindkit-postgres-55432 stop
# (as the postgres user when running as root).
set -euo pipefail

exec 3>&1 1>&2 # fd 3 is the real stdout; echo goes to stderr
here=$(cd "$(dirname "$0")" && pwd)

port=${KINDKIT_PG_PORT:-55432}
data=${KINDKIT_PG_DATA:-/tmp/kindkit-postgres-$port}
url="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"

log() { echo "postgres.sh: $*"; }

# bindir prints the directory holding initdb, pg_ctl and postgres: the
# newest of Debian's /usr/lib/postgresql/*/bin, else the one on PATH.
bindir() {
	local d
	for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k5 -n -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl && -x $d/postgres ]]; then
			echo "$d"
			return 0
		fi
	done
	if d=$(command -v pg_ctl 2>/dev/null); then
		d=$(dirname "$(readlink -f "$d")")
		if [[ -x $d/initdb && -x $d/postgres ]]; then
			echo "$d"
			return 0
		fi
	fi
	return 1
}

if ! bin=$(bindir); then
	log "no PostgreSQL server found; installing Debian's postgresql package"
	# fd 3 closed: the package may start a server, which must not hold
	# the caller's pipe.
	"$here/apt-install.sh" postgresql 3>&-
	bin=$(bindir) || { log "postgresql installed but no server binary found"; exit 1; }
fi
log "using $bin"

# Postgres refuses to run as root: as root, the cluster belongs to the
# postgres OS user (which Debian's package creates).
as=()
if [[ $(id -u) -eq 0 ]]; then
	if ! id postgres >/dev/null 2>&1; then
		log "creating the postgres OS user"
		useradd --system --user-group --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi
	as=(runuser -u postgres --)
fi
cd / # the postgres user may not be able to read the caller's directory

# The server must not inherit fd 3: it is the caller's pipe (the
# "| tail -1" above), and a daemon holding it open would keep the caller
# waiting for end of file forever.
pgctl() { "${as[@]}" "$bin/pg_ctl" -D "$data" "$@" 3>&- </dev/null; }

ready() { "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -d postgres -U postgres; }

if [[ -f $data/PG_VERSION ]] && pgctl status >/dev/null 2>&1; then
	if ready; then
		log "reusing the cluster running in $data on port $port"
		echo "export KINDKIT_TEST_POSTGRES=$url" >&3
		exit 0
	fi
	log "cluster in $data is running but not ready on port $port; waiting"
	for _ in $(seq 1 30); do ready && break; sleep 1; done
	ready || { log "cluster in $data does not answer on 127.0.0.1:$port"; exit 1; }
	echo "export KINDKIT_TEST_POSTGRES=$url" >&3
	exit 0
fi

if ready; then
	log "something else already serves 127.0.0.1:$port (not the cluster in $data); set KINDKIT_PG_PORT"
	exit 1
fi

if [[ ! -f $data/PG_VERSION ]]; then
	# A missing or half-made data dir (an initdb that died) starts afresh.
	rm -rf "$data"
	mkdir -p "$data"
	if [[ ${#as[@]} -gt 0 ]]; then
		chown postgres:postgres "$data"
	fi
	chmod 700 "$data"
	log "initdb $data"
	"${as[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null ||
		"${as[@]}" "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
	# Listen on loopback only, with the socket in the data dir (no
	# /var/run needed).
	"${as[@]}" tee -a "$data/postgresql.conf" >/dev/null <<-EOF

		# kindkit test cluster (scripts/postgres.sh)
		listen_addresses = '127.0.0.1'
		port = $port
		unix_socket_directories = '$data'
		max_connections = 200
	EOF
	if [[ ${KINDKIT_PG_SERVER:-} == 1 ]]; then
		ram_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024))
		# zstd where the server was built with it (docs/data.md), else lz4.
		compression=zstd
		"${as[@]}" "$bin/postgres" -D "$data" -C wal_compression -c wal_compression=zstd >/dev/null 2>&1 3>&- || compression=lz4
		"${as[@]}" tee -a "$data/postgresql.conf" >/dev/null <<-EOF
			# as a server: durable, its cache sized to the machine, and the
			# full pages a checkpoint makes the next change write compressed
			shared_buffers = ${KINDKIT_PG_SHARED_BUFFERS:-$((ram_mb / 4))MB}
			effective_cache_size = $((ram_mb / 2))MB
			wal_compression = $compression
		EOF
	else
		# A throwaway test cluster: durability is traded for speed.
		"${as[@]}" tee -a "$data/postgresql.conf" >/dev/null <<-EOF
			fsync = off
			synchronous_commit = off
			full_page_writes = off
		EOF
	fi
fi

# The port lies in Linux's ephemeral range, so a busy client socket can
# hold it for a moment: retry the start a few times.
started=
for try in 1 2 3 4 5; do
	log "starting the cluster in $data on 127.0.0.1:$port (try $try)"
	if pgctl -l "$data/server.log" -w -t 60 start >/dev/null; then
		started=1
		break
	fi
	sleep 2
done
if [[ -z $started ]]; then
	log "pg_ctl start failed; the end of $data/server.log:"
	tail -20 "$data/server.log" || true
	exit 1
fi
ready || { log "cluster started but does not answer on 127.0.0.1:$port"; exit 1; }
log "ready"
echo "export KINDKIT_TEST_POSTGRES=$url" >&3
