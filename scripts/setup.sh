#!/usr/bin/env bash
# Installs everything the demo and the tests need, on a fresh machine or an existing checkout.
# Idempotent and quick when nothing changed. Pinned versions live here and in package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

MOTO_VERSION=5.2.5
CFN_LINT_VERSION=1.58.0
# Validates rendered Kubernetes manifests offline: the package ships the JSON schemas.
KUBERNETES_VALIDATE_VERSION=1.37.0
# The S3 Connector for PyTorch's client (no torch needed): the peer bench/training-scenarios.ts reads with.
S3TORCHCONNECTORCLIENT_VERSION=1.5.0

log() { printf '[setup] %s\n' "$*" >&2; }
# shellcheck source=scripts/lib/apt.sh
source scripts/lib/apt.sh
# shellcheck source=scripts/lib/node.sh
source scripts/lib/node.sh

# apt packages: fuse3 (fusermount3 for the FUSE stand-ins and real mount tests), gnupg (signature checks),
# util-linux (setpriv/unshare), nftables and iproute2 (the Batch host's IMDS rules, tested in private network
# namespaces), python3-venv; libfuse3-dev pkg-config cmake libclang-dev build the Mountpoint test harness
# (scripts/build-harness.sh).
need_apt=()
command -v fusermount3 >/dev/null || need_apt+=(fuse3)
for pkg in libfuse3-dev pkg-config cmake libclang-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || need_apt+=("$pkg")
done
command -v gpg >/dev/null || need_apt+=(gnupg)
command -v setpriv >/dev/null || need_apt+=(util-linux)
command -v nft >/dev/null || need_apt+=(nftables)
command -v ip >/dev/null || need_apt+=(iproute2)
command -v systemd-analyze >/dev/null || need_apt+=(systemd)
if ((${#need_apt[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    log "apt-get install ${need_apt[*]}"
    apt_update
    apt_install "${need_apt[@]}"
  else
    log "missing ${need_apt[*]}: install them (tests that need them will fail)"
  fi
fi

# moto (the AWS emulator), cfn-lint, kubernetes-validate and s3torchconnectorclient in a project-local virtualenv. Built in the
# background while npm installs (both mostly wait on downloads and disk): a first run takes the longer of the two,
# not their sum. Its output and its exit status are waited for below.
# The stamp names every pin: a pin added or changed makes an existing virtualenv install what it lacks (pip keeps
# what is already there at the pinned version).
stamp=".venv/.mountfleet-${MOTO_VERSION}-${CFN_LINT_VERSION}-${KUBERNETES_VALIDATE_VERSION}-${S3TORCHCONNECTORCLIENT_VERSION}"
venv_pid=
if [[ -L .venv ]]; then
  [[ -f $stamp ]] || log ".venv is a link to a shared virtualenv without ${stamp#.venv/}: not rebuilding it here"
elif [[ ! -f $stamp ]]; then
  log "python venv .venv: moto[server]==${MOTO_VERSION} cfn-lint==${CFN_LINT_VERSION} kubernetes-validate==${KUBERNETES_VALIDATE_VERSION} s3torchconnectorclient==${S3TORCHCONNECTORCLIENT_VERSION} (in the background)"
  (
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "moto[server]==${MOTO_VERSION}" \
      "cfn-lint==${CFN_LINT_VERSION}" "kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}" \
      "s3torchconnectorclient==${S3TORCHCONNECTORCLIENT_VERSION}"
    rm -f .venv/.mountfleet-*
    touch "$stamp"
  ) &
  venv_pid=$!
  # A failure below (npm, Node) ends this script: the background install goes with it.
  trap '{ pkill -P "$venv_pid"; kill "$venv_pid"; } 2>/dev/null || true' EXIT
fi

# npm packages, exactly from the lockfile, when node_modules is missing or older than the lockfile.
# The lockfile lists every platform's optional binding of unrs-resolver (jest's resolver): npm 11 leaves the
# ones its registry cannot serve out of a lockfile it writes, and then its own `npm ci` refuses that file
# (npm/cli#9846). After `npm install <pkg>`, check with `npm ci --dry-run` before committing the lockfile.
# A linked node_modules is an install shared by several checkouts (git worktrees): `npm ci` would empty the
# shared directory under all of them, so it is left to whoever owns it.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  if [[ -L node_modules ]]; then
    log "node_modules links to a shared install that looks older than package-lock.json: not running npm ci here"
  else
    log "npm ci"
    npm ci --prefer-offline --no-audit --no-fund --loglevel=error
  fi
fi

# The Node.js the tests and the demo run on (scripts/lib/node.sh).
install_project_node

if [[ -n $venv_pid ]]; then
  trap - EXIT
  wait "$venv_pid" || {
    status=$?
    log "the python virtualenv .venv failed (pip's output above; exit ${status})"
    exit "$status"
  }
fi
