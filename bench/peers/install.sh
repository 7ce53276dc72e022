#!/usr/bin/env bash
# Install the peer MCP task servers (pinned) into a local npm prefix.
# Usage: bench/peers/install.sh        (PEERS_DIR overrides the install folder)
set -euo pipefail

SHRIMP_VERSION="1.0.21"
TASKMASTER_VERSION="0.43.1"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS_DIR="${PEERS_DIR:-$(cd "$HERE/.." && pwd)/.peers}"
mkdir -p "$PEERS_DIR"

install_one() {  # name version
  local name="$1" version="$2" dir="$PEERS_DIR/$1"
  local pkg="$dir/node_modules/$name/package.json"
  if [[ -f "$pkg" ]] && [[ "$(node -p "require('$pkg').version")" == "$version" ]]; then
    echo "[peers] $name@$version already installed" >&2
    return
  fi
  echo "[peers] installing $name@$version into $dir" >&2
  mkdir -p "$dir"
  [[ -f "$dir/package.json" ]] || echo '{"name":"peer-'"$name"'","private":true}' > "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "$name@$version" >&2)
}

install_one mcp-shrimp-task-manager "$SHRIMP_VERSION"
install_one task-master-ai "$TASKMASTER_VERSION"

echo "PEERS_DIR=$PEERS_DIR"
echo "shrimp: node $PEERS_DIR/mcp-shrimp-task-manager/node_modules/mcp-shrimp-task-manager/dist/index.js"
echo "task-master-ai: node $PEERS_DIR/task-master-ai/node_modules/task-master-ai/dist/mcp-server.js"
