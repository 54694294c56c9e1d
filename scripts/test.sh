#!/usr/bin/env bash
# The test command of the README and of CI: it installs and starts what the
# tests need (a private PostgreSQL on 127.0.0.1:55432, Debian's chromium,
# the reference MCP server, the AG-UI client, axe-core and dependency-cruiser
# from npm), then runs every test with the race
# detector. Extra arguments go to go test
# (for example -run or -count).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
# Assignments, not bare substitutions, so that a failed script stops here
# (set -e and pipefail see the status of an assignment's substitution).
pgenv=$(scripts/postgres.sh | tail -1)
eval "$pgenv"
mcpenv=$(scripts/mcp.sh | tail -1)
eval "$mcpenv"
aguienv=$(scripts/agui.sh | tail -1)
eval "$aguienv"
axeenv=$(scripts/axe.sh | tail -1)
eval "$axeenv"
depenv=$(scripts/depcruise.sh | tail -1)
eval "$depenv"
CHROMIUM_PATH=$(scripts/chromium.sh | tail -1)
export CHROMIUM_PATH
# Each package binary gets 25 minutes, not go test's 10: cmd/kindgen's walkthrough
# builds a module from scratch and took 6 minutes alone on a loaded machine.
go test -race -timeout 25m "$@" ./...
