#!/usr/bin/env bash
# soak.sh runs the crash-and-drop matrices (TestCrashMatrix, around a
# submit, TestCrashMidReply, around a message's reply, and TestCrashMCP,
# around an MCP 2026-07-28 server's questions, in cmd/kindserver)
# with many more runs per cell than the default 10: KINDKIT_CRASH_RUNS
# (default here 100) concurrent conversations per cell. It starts the
# private PostgreSQL of scripts/postgres.sh first, as scripts/test.sh does.
# Extra arguments go to go test (for example -v, or -run
# 'TestCrashMatrix/sqlite' for one store).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# An assignment, not a bare substitution, so that a failed script stops
# here (set -e and pipefail see the status of an assignment's substitution).
pgenv=$(scripts/postgres.sh | tail -1)
eval "$pgenv"
export KINDKIT_CRASH_RUNS=${KINDKIT_CRASH_RUNS:-100}
go test -race -run 'TestCrash(Matrix|MidReply|MCP)$' -count=1 -timeout 60m "$@" ./cmd/kindserver
