# Sourced by scripts/setup.sh: apt-get that waits, within a bound, for another package manager to finish.
# On a fresh EC2 or Ubuntu host cloud-init and unattended-upgrades hold apt's locks for the first minutes;
# failing at once there (`E: Could not get lock …`, exit 100) is the wrong answer.
# MOUNTFLEET_APT_LOCK_WAIT: how many seconds in all to wait for the locks [600].

apt_lock_deadline=$((SECONDS + ${MOUNTFLEET_APT_LOCK_WAIT:-600}))

apt_log() { printf '[setup] %s\n' "$*" >&2; }

# `apt-get update`. apt 2.x waits for the dpkg lock when given DPkg::Lock::Timeout, but not for the lists
# lock that update takes, so update is retried while apt says the lock is held, until the deadline.
apt_update() {
  local out holder last_holder=''
  until out=$(apt-get update -qq 2>&1); do
    holder=$(grep -o 'It is held by process [0-9]* ([^)]*)' <<<"$out" | head -1 || true)
    if ! grep -q 'Could not get lock' <<<"$out"; then
      printf '%s\n' "$out" >&2
      apt_log "apt-get update failed (above); fix apt's sources or network and run scripts/setup.sh again"
      return 1
    fi
    if ((SECONDS >= apt_lock_deadline)); then
      printf '%s\n' "$out" >&2
      apt_log "gave up waiting for apt's lock after ${MOUNTFLEET_APT_LOCK_WAIT:-600} s (${holder:-holder unknown}): let it finish, or raise MOUNTFLEET_APT_LOCK_WAIT, and run scripts/setup.sh again"
      return 1
    fi
    if [[ $holder != "$last_holder" ]]; then
      apt_log "waiting for apt's lock, another package manager is running (${holder:-holder unknown}; on a fresh host cloud-init or unattended-upgrades); up to $((apt_lock_deadline - SECONDS)) s more"
      last_holder=$holder
    fi
    sleep 2
  done
}

# `apt-get install PACKAGE…`, waiting for the dpkg lock until the same deadline.
apt_install() {
  local wait=$((apt_lock_deadline - SECONDS))
  ((wait > 0)) || wait=1
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o "DPkg::Lock::Timeout=${wait}" "$@" >/dev/null; then
    apt_log "apt-get install $* failed (apt's message above): if another package manager held its lock, let it finish or raise MOUNTFLEET_APT_LOCK_WAIT, then run scripts/setup.sh again"
    return 1
  fi
}
