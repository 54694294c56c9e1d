#!/usr/bin/env bash
# Installs axe-core (pinned), the accessibility engine the web tests run in
# the page, with npm into a cache outside the repository, and prints, as its
# last line, the export that points the tests at it.
set -euo pipefail
version=4.14.1
dir=${KINDKIT_CACHE:-$HOME/.cache/kindkit}/axe-core-$version
main=$dir/node_modules/axe-core/axe.min.js
if [ ! -f "$main" ]; then
  command -v npm >/dev/null || { echo "axe.sh: npm is missing (Node.js 20 or newer)" >&2; exit 1; }
  mkdir -p "$dir"
  echo "axe.sh: installing axe-core@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "axe-core@$version" >&2 </dev/null
fi
echo "axe.sh: axe-core $version $main" >&2
echo "export KINDKIT_TEST_AXE=$main"
