#!/usr/bin/env bash
# Runs every test from a fresh clone: installs what is needed (scripts/setup.sh), builds (type-check,
# lint, bundles, library; the Mountpoint test harness with scripts/build-harness.sh), then runs the whole
# Jest suite (unit, construct, emulator integration, end-to-end). Extra arguments go to Jest, e.g. `scripts/test.sh test/core`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/setup.sh
bash scripts/build.sh
bash scripts/build-harness.sh
npx jest --ci "$@"
