#!/usr/bin/env bash
# Builds and compiles the library's packages for other languages with jsii-pacmak: each target package.json
# configures (python, java, go, dotnet) whose toolchain is on this machine, into dist/pacmak/ (or $1).
# pacmak compiles each against the real CDK packages (pip, Maven, the Go module proxy, NuGet), so this needs
# the network and, on a first run, minutes per target: it is not part of scripts/test.sh, whose
# test/app/jsii-targets.test.ts generates every target offline and checks what it can without them.
set -euo pipefail
cd "$(dirname "$0")/.."
outdir=${1:-dist/pacmak}

log() { printf '[jsii-targets] %s\n' "$*" >&2; }

targets=()
skipped=()
want() { # TARGET TOOL…: the target when every tool is on the PATH
  local target=$1 tool
  shift
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null; then
      skipped+=("$target (no $tool)")
      return
    fi
  done
  targets+=("$target")
}
want python python3
want java javac mvn
want go go
want dotnet dotnet
((${#skipped[@]} == 0)) || log "skipping ${skipped[*]}"
((${#targets[@]})) || {
  log 'no toolchain for any target on this machine'
  exit 1
}

bash scripts/build.sh >&2
# pacmak keeps its staging directories when a target fails: keep them in one place that goes at the end.
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/mountfleet-pacmak-XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
# Every target is tried, so one that cannot resolve its dependencies does not hide how the others fare.
failed=()
for target in "${targets[@]}"; do
  log "jsii-pacmak --targets ${target} (generate and compile) into ${outdir}"
  start=$SECONDS
  if node node_modules/jsii-pacmak/bin/jsii-pacmak --targets "$target" --outdir "$outdir"; then
    log "${target}: built in $((SECONDS - start)) s"
  else
    log "${target}: FAILED after $((SECONDS - start)) s (jsii-pacmak's message above)"
    failed+=("$target")
  fi
done
log "packages in ${outdir}: $(cd "$outdir" && find . -mindepth 2 -maxdepth 2 | sort | tr '\n' ' ')"
((${#failed[@]} == 0)) || {
  log "failed: ${failed[*]}"
  exit 1
}
