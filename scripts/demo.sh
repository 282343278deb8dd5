#!/usr/bin/env bash
# The main job, the local sandbox: installs what is needed, builds, then deploys the bundled app into a
# local AWS emulator with the real CDK CLI and exercises it (scripts/sandbox/main.ts). `--json` for machines.
set -euo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/setup.sh >&2
npm run --silent build >&2
exec npx tsx scripts/sandbox/main.ts "$@"
