#!/usr/bin/env bash
# Writes what users see of mountfleet into DIR, so that a change meant to alter none of it (a refactoring) can
# be checked: `scripts/surface.sh /tmp/before` on the old tree, `scripts/surface.sh /tmp/after` on the new,
# then `diff -r /tmp/before /tmp/after`. Needs a build (scripts/build.sh). It writes:
#   templates/  the synthesized templates of the zero-config app, the example config (two stacks), the sandbox
#               config and the consumer example (examples/consumer-app against the packed package), asset hashes
#               replaced by HASH;
#   cli/        every command's --help, and scripted runs that need no AWS account (offline tuning and
#               planning, the usage errors of each command): stdout, stderr and exit status of each.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/surface.sh DIR}
rm -rf "$out"
mkdir -p "$out/templates" "$out/cli"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
cdk=$PWD/node_modules/.bin/cdk
trap 'rm -rf "$work"' EXIT
export CDK_DISABLE_CLI_TELEMETRY=true AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN MOUNTFLEET_CONFIG || true

# Asset hashes (64 hex digits) change with any byte of a bundle; everything else must not.
normalize() { sed -E 's/[0-9a-f]{64}/HASH/g' "$1"; }

synth() { # NAME [cdk args...]
  local name=$1
  shift
  "$cdk" synth --no-lookups --quiet -o "$work/$name" "$@" >/dev/null 2>&1
  for t in "$work/$name"/*.template.json; do normalize "$t" >"$out/templates/$name-$(basename "$t")"; done
}
synth zero-config
synth example -c mountfleetConfig=examples/mountfleet.config.json
synth sandbox -c mountfleetConfig=examples/sandbox.config.json

# The consumer example as a user builds it: against the packed package (see test/app/consumer.test.ts).
consumer=$work/consumer
mkdir -p "$consumer/node_modules/mountfleet"
tarball=$(npm pack --silent --pack-destination "$consumer" | tail -1)
tar -xzf "$consumer/$tarball" -C "$consumer/node_modules/mountfleet" --strip-components=1
for dep in aws-cdk-lib constructs aws-cdk tsx typescript; do ln -s "$PWD/node_modules/$dep" "$consumer/node_modules/$dep"; done
cp examples/consumer-app/{app.ts,cdk.json,tsconfig.json,package.json} "$consumer/"
(cd "$consumer" && "$cdk" synth --no-lookups --quiet >/dev/null 2>&1)
for t in "$consumer"/cdk.out/*.template.json; do normalize "$t" >"$out/templates/consumer-$(basename "$t")"; done

# The CLI, as the bundle runs it.
cli() { # FILE ARGS...
  local file=$1
  shift
  local status=0
  (cd "$work" && MOUNTFLEET_RUN_DIR="$work/run" AWS_REGION=us-east-1 node "$OLDPWD/dist/agent/mountfleet.js" "$@") \
    >"$out/cli/$file.stdout" 2>"$out/cli/$file.stderr" || status=$?
  sed -i "s#$work#WORK#g" "$out/cli/$file.stdout" "$out/cli/$file.stderr"
  echo "$status" >"$out/cli/$file.status"
}

# Every command's --help, found from the help itself.
commands_of() { # ARGS... → the subcommands `mountfleet ARGS --help` lists
  node dist/agent/mountfleet.js "$@" --help | awk '/^Commands:/{c=1;next} c && /^  [a-z]/{print $1}' | grep -v '^help$' || true
}
help_of() { # ARGS...
  local name=${*:-mountfleet}
  cli "help-${name// /-}" "$@" --help
  for sub in $(commands_of "$@"); do help_of "$@" "$sub"; done
}
help_of

# Runs that need no AWS account: results and the usage errors of each command.
cli tune-offline tune --instance-type m6i.large --offline
cli tune-offline-json tune --instance-type p5.48xlarge --offline --json
cli tune-unknown tune --instance-type c7gn.9xlarge --offline
cli tune-csi tune --csi --instance-type g6.12xlarge --offline --bucket training-data --prefix imagenet/
cli plan-preset plan --preset encode-ladder --input-size 30.12GiB --duration 30m --run-time 54m59s
cli plan-json plan --preset encode-ladder --input-size 30.12GiB --bitrate 147Mbps --json
cli plan-bad plan --input-size lots
cli status-none status --json
cli down-none down
cli up-no-config up --no-install --config /nonexistent.json
cli scratch-run-no-command scratch run
cli scratch-run-bad-path scratch run --path relative -- true
cli scratch-run-bad-grace scratch run --teardown-grace x -- true
cli scratch-list-no-fleet scratch list
cli scratch-delete-no-fleet scratch delete fs-12345678
cli scratch-run-bad-config scratch run --config /nonexistent.json -- true
cli reap-no-fleet reap
cli bench-latency-no-bucket bench latency
cli bench-read-missing bench read --path /nonexistent
cli bench-train-missing bench train --path /nonexistent
cli warm-missing warm --path /nonexistent
cli shard-no-flags shard
cli unknown-command frobnicate
echo "surface written to $out" >&2
