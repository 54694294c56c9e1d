#!/usr/bin/env bash
# The test command of the README and of CI: every test, with the race
# detector. Extra arguments go to go test (for example -run or -count).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
go test -race "$@" ./...
