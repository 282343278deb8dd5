#!/usr/bin/env bash
# `npm run build` (type-check, lint, bundles, jsii) unless nothing it reads changed since the last build that
# passed: scripts/demo.sh and scripts/test.sh call this, so a re-run does not repeat a minute or more of work.
# What it reads: every file git sees in the checkout (tracked, and untracked unless ignored), the installed
# packages (node_modules/.package-lock.json) and the Node version. `--force`, or removing dist/, rebuilds.
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=dist/.build-inputs.sha256
outputs=(dist/agent/mountfleet.js dist/lib/index.js .jsii)

inputs_digest() {
  {
    node --version
    [[ -f node_modules/.package-lock.json ]] && sha256sum node_modules/.package-lock.json
    # Regular files only: node_modules and .venv may be links to a shared install (git worktrees).
    git ls-files -z --cached --others --exclude-standard |
      xargs -0 -r sh -c 'for f; do [ -f "$f" ] && [ ! -L "$f" ] && printf "%s\0" "$f"; done' sh |
      xargs -0 -r sha256sum
  } | sha256sum | cut -d' ' -f1
}

digest=$(inputs_digest)
if [[ ${1:-} != --force && -f $stamp && $(<"$stamp") == "$digest" ]]; then
  all_there=true
  for f in "${outputs[@]}"; do [[ -f $f ]] || all_there=false; done
  if $all_there; then
    printf '[build] nothing changed since the last build (%s): skipping type-check, lint, bundles and jsii\n' "$stamp" >&2
    exit 0
  fi
fi
# A build that fails may leave half its outputs: no stamp may vouch for them meanwhile.
rm -f "$stamp"
npm run --silent build
# Only a build that passed leaves a stamp; written whole, then renamed.
printf '%s\n' "$digest" >"$stamp.$$"
mv -f "$stamp.$$" "$stamp"
