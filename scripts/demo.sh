#!/usr/bin/env bash
# The main job: installs what is needed, builds, and synthesizes the bundled app offline.
set -euo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/setup.sh
npm run --silent build
npx cdk synth --no-lookups --quiet "$@"
echo "synthesized into cdk.out/" >&2
