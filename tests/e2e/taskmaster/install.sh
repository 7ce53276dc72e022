#!/usr/bin/env bash
# Installs Task Master's CLI and Node 22 for tests/e2e/test_import_taskmaster.py, pinned by
# package-lock.json (tests/support/npm_pinned.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/../../support/npm_pinned.sh" "$here" "Node 22 and Task Master's CLI" >/dev/null
