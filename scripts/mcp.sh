#!/usr/bin/env bash
# Installs the reference MCP server the MCP tests talk to
# (@modelcontextprotocol/server-everything, pinned) with npm into a cache
# outside the repository, and prints, as its last line, the export that
# points the tests at it.
set -euo pipefail
version=2026.8.31
dir=${KINDKIT_CACHE:-$HOME/.cache/kindkit}/mcp-everything-$version
main=$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js
if [ ! -f "$main" ]; then
  command -v npm >/dev/null || { echo "mcp.sh: npm is missing (Node.js 20 or newer)" >&2; exit 1; }
  mkdir -p "$dir"
  echo "mcp.sh: installing @modelcontextprotocol/server-everything@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/server-everything@$version" >&2 </dev/null
fi
echo "mcp.sh: $(node --version) $main" >&2
echo "export KINDKIT_TEST_MCP_EVERYTHING=$main"
