#!/usr/bin/env bash
# The main job, the local sandbox: installs what is needed, bundles, then deploys the bundled app into a
# local AWS emulator with the real CDK CLI and exercises it (scripts/sandbox/main.ts). `--json` for machines.
set -euo pipefail
cd "$(dirname "$0")/.."
export CDK_DISABLE_CLI_TELEMETRY=true
bash scripts/setup.sh >&2
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh
use_project_node
# The sandbox runs the agent and Lambda bundles (seconds with esbuild); type-check, lint and the jsii library
# build are the test command's.
node scripts/bundle.mjs >&2
# The real Mountpoint file system where it can be built (Rust >= 1.95). A first build takes about 5 min: it
# goes on in the background and this run uses the stand-in (its report says which Mountpoint and why); otherwise,
# or if the build fails, the sandbox runs on the stand-in and its report says why.
bash scripts/build-harness.sh --background >&2 || printf '[demo] the Mountpoint harness did not build (above): the sandbox runs on the stand-in\n' >&2
exec npx tsx scripts/sandbox/main.ts "$@"
