#!/usr/bin/env bash
# Installs the AG-UI client the AG-UI tests drive kindserver with
# (@ag-ui/client and @ag-ui/core, pinned) with npm into a cache outside the
# repository, and prints, as its last line, the export that points the
# tests at it.
set -euo pipefail
version=1.0.0
dir=${KINDKIT_CACHE:-$HOME/.cache/kindkit}/ag-ui-$version
main=$dir/node_modules/@ag-ui/client/dist/index.js
if [ ! -f "$main" ] || [ ! -f "$dir/node_modules/@ag-ui/core/dist/index.js" ]; then
  command -v npm >/dev/null || { echo "agui.sh: npm is missing (Node.js 20 or newer)" >&2; exit 1; }
  mkdir -p "$dir"
  echo "agui.sh: installing @ag-ui/client@$version and @ag-ui/core@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
    "@ag-ui/client@$version" "@ag-ui/core@$version" >&2 </dev/null
fi
for pkg in client core; do
  got=$(node -p "require('$dir/node_modules/@ag-ui/$pkg/package.json').version")
  [ "$got" = "$version" ] || { echo "agui.sh: @ag-ui/$pkg is $got, want $version" >&2; exit 1; }
done
echo "agui.sh: $(node --version) @ag-ui/client and @ag-ui/core $version in $dir" >&2
echo "export KINDKIT_TEST_AGUI=$dir"
