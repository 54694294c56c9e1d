#!/usr/bin/env bash
# Installs dependency-cruiser (pinned), which checks that the page's
# modules import one way (web/depcruise.json), with npm into a cache
# outside the repository, and prints, as its last line, the export that
# points web's TestModuleLayers at it. 17.4.3 is the newest release that
# runs on Node.js 20, the machines' version (18.x needs 22).
set -euo pipefail
version=17.4.3
dir=${KINDKIT_CACHE:-$HOME/.cache/kindkit}/dependency-cruiser-$version
main=$dir/node_modules/dependency-cruiser/bin/dependency-cruise.mjs
if [ ! -f "$main" ]; then
  command -v npm >/dev/null || { echo "depcruise.sh: npm is missing (Node.js 20 or newer)" >&2; exit 1; }
  mkdir -p "$dir"
  echo "depcruise.sh: installing dependency-cruiser@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "dependency-cruiser@$version" >&2 </dev/null
fi
echo "depcruise.sh: dependency-cruiser $version $main" >&2
echo "export KINDKIT_TEST_DEPCRUISE=$main"
