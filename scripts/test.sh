#!/usr/bin/env bash
# Runs every test from a fresh clone, on the pinned Node.js 22 (scripts/lib/node.sh): installs what is needed
# (scripts/setup.sh), builds (type-check,
# lint, bundles, library; the Mountpoint test harness with scripts/build-harness.sh), then runs the whole
# Jest suite (unit, construct, emulator integration, end-to-end). Extra arguments go to Jest, e.g. `scripts/test.sh test/core`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true
bash scripts/setup.sh
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
use_project_node
bash scripts/build.sh
bash scripts/build-harness.sh
npx jest --ci "$@"
