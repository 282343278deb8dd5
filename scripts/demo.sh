#!/usr/bin/env bash
# The main job, the local sandbox: installs what is needed, builds, then deploys the bundled app into a
# local AWS emulator with the real CDK CLI and exercises it (scripts/sandbox/main.ts). `--json` for machines.
set -euo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/setup.sh >&2
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
use_project_node
bash scripts/build.sh >&2
# The real Mountpoint file system where it can be built (Rust >= 1.95); otherwise, or if the build fails, the
# sandbox runs on the stand-in and its report says why (the reason build-harness.sh recorded).
bash scripts/build-harness.sh >&2 || printf '[demo] the Mountpoint harness did not build (above): the sandbox runs on the stand-in\n' >&2
exec npx tsx scripts/sandbox/main.ts "$@"
