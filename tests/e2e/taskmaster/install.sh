#!/usr/bin/env bash
# Installs Task Master's CLI for tests/e2e/test_import_taskmaster.py, pinned by
# package-lock.json (Node 22 comes from tests/hosts/install.sh). Idempotent: a stamp holds
# the hash of the lock it installed.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.installed-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && "$(cat "$stamp")" == "$want" ]] && [[ -x node_modules/.bin/task-master ]]; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
