#!/usr/bin/env bash
# Builds the project's Mountpoint test harness (test/support/mountpoint-harness) from the published
# Mountpoint crates, into a cargo target directory outside the clone so later runs only relink it.
# Without a Rust toolchain (rustc >= 1.95) or the native build packages it says why the real-Mountpoint
# suites will skip and exits 0; a failing build with the toolchain present fails. Either way the reason is
# left in <target>/skip-reason, which the tests and the sandbox quote (test/support/real-mountpoint.ts).
# `--background`: a first build runs in the background instead (the demo does not wait for it).
set -euo pipefail
cd "$(dirname "$0")/.."

MIN_RUST=1.95
target="${MOUNTFLEET_HARNESS_TARGET:-$HOME/.cache/mountfleet/harness-target}"
mkdir -p "$target"
# Written whole, then renamed: a reader never sees half a reason.
record_reason() {
  printf '%s\n' "$*" >"$target/skip-reason.$$"
  mv -f "$target/skip-reason.$$" "$target/skip-reason"
}
skip() {
  printf '[build-harness] real-Mountpoint suites will skip: %s\n' "$*" >&2
  record_reason "$*"
  exit 0
}

cargo=$(command -v cargo || true)
[[ -z $cargo && -x $HOME/.cargo/bin/cargo ]] && cargo=$HOME/.cargo/bin/cargo
[[ -n $cargo ]] || skip "no cargo on PATH or in ~/.cargo/bin (install Rust >= ${MIN_RUST} with rustup)"
export PATH="$(dirname "$cargo"):$PATH"
rust=$(rustc --version 2>/dev/null | awk '{print $2}')
[[ -n $rust ]] || skip "cargo found but no rustc"
if [[ $(printf '%s\n%s\n' "$MIN_RUST" "$rust" | sort -V | head -1) != "$MIN_RUST" ]]; then
  skip "rustc ${rust} is older than ${MIN_RUST} (rustup update)"
fi
missing=()
# Package names are Debian's; elsewhere the build itself says what is missing.
if command -v dpkg-query >/dev/null; then
  for pkg in libfuse3-dev pkg-config cmake libclang-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
  done
fi
((${#missing[@]} == 0)) || skip "missing apt packages ${missing[*]} (scripts/setup.sh installs them as root)"

binary="$target/release/mount-s3-harness"
# --background (the demo): a first build (about 5 min on 2 cores, most of it the AWS CRT's C libraries) goes on in the background, one at a time,
# and whoever looks for the harness meanwhile is told so (skip-reason); the next run finds it built.
if [[ ${1:-} == --background && ! -x $binary ]]; then
  log="$target/build.log"
  if ! flock -n "$target/build.lock" true; then
    printf '[build-harness] the first build of the Mountpoint harness is still going on in the background (log: %s)\n' "$log" >&2
    exit 0
  fi
  record_reason "it is being built in the background (started $(date -u +%Y-%m-%dT%H:%M:%SZ), about 5 min on 2 cores; log: ${log}): a run after that uses it"
  setsid nohup flock -n "$target/build.lock" bash "$0" >"$log" 2>&1 </dev/null &
  printf '[build-harness] first build of the Mountpoint harness started in the background (about 5 min on 2 cores; log: %s); this run uses the stand-in, the next one the harness\n' "$log" >&2
  exit 0
fi
if [[ -x $binary ]]; then
  printf '[build-harness] cargo build --locked --release into %s (up to date: seconds)\n' "$target" >&2
else
  # The first build compiles a few hundred crates: minutes on a small machine. cargo's per-crate lines are
  # the progress (a progress bar where stderr is a terminal).
  printf '[build-harness] first build of the Mountpoint harness into %s: a few hundred crates, about 5 min on 2 cores; later runs take seconds\n' "$target" >&2
fi
status=0
CARGO_TARGET_DIR="$target" cargo build --locked --release \
  --manifest-path test/support/mountpoint-harness/Cargo.toml || status=$?
if ((status != 0)); then
  record_reason "scripts/build-harness.sh failed: cargo build exited ${status} (its output is above that line)"
  exit "$status"
fi
rm -f "$target/skip-reason"
