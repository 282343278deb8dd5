#!/usr/bin/env bash
# Installs everything the demo and the tests need, on a fresh machine or an existing checkout.
# Idempotent and quick when nothing changed. Pinned versions live here and in package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

MOTO_VERSION=5.2.5
CFN_LINT_VERSION=1.58.0

log() { printf '[setup] %s\n' "$*" >&2; }

# apt packages: fuse3 (fusermount3 for the FUSE stand-ins and real mount tests), gnupg (signature checks),
# util-linux (setpriv/unshare), python3-venv; libfuse3-dev pkg-config cmake libclang-dev build the
# Mountpoint test harness (scripts/build-harness.sh).
need_apt=()
command -v fusermount3 >/dev/null || need_apt+=(fuse3)
for pkg in libfuse3-dev pkg-config cmake libclang-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || need_apt+=("$pkg")
done
command -v gpg >/dev/null || need_apt+=(gnupg)
command -v setpriv >/dev/null || need_apt+=(util-linux)
command -v systemd-analyze >/dev/null || need_apt+=(systemd)
if ((${#need_apt[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    log "apt-get install ${need_apt[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    log "missing ${need_apt[*]}: install them (tests that need them will fail)"
  fi
fi

# npm packages, from the lockfile, when node_modules is missing or older than the lockfile.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "npm ci"
  if ! npm ci --no-audit --no-fund --loglevel=error 2>/tmp/mountfleet-npm-ci.log; then
    # npm 11 leaves other platforms' optional packages out of the lockfile it writes and then refuses
    # that lockfile in `npm ci` ("Missing: …-darwin-x64@ from lock file"). `npm install` installs the
    # same locked versions and only adds the missing optional entries.
    grep -q 'EUSAGE' /tmp/mountfleet-npm-ci.log || { cat /tmp/mountfleet-npm-ci.log >&2; exit 1; }
    log "npm ci refused the lockfile (npm 11 optional-platform quirk): npm install from the lockfile"
    npm install --no-audit --no-fund --loglevel=error
  fi
fi

# moto (the AWS emulator) and cfn-lint in a project-local virtualenv.
stamp=".venv/.mountfleet-${MOTO_VERSION}-${CFN_LINT_VERSION}"
if [[ ! -f $stamp ]]; then
  log "python venv .venv: moto[server]==${MOTO_VERSION} cfn-lint==${CFN_LINT_VERSION}"
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check "moto[server]==${MOTO_VERSION}" "cfn-lint==${CFN_LINT_VERSION}"
  touch "$stamp"
fi
