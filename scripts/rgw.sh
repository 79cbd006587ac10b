#!/usr/bin/env bash
# A throwaway Ceph cluster with radosgw on 127.0.0.1: the real S3 server the S3 suites run against.
#
#   scripts/rgw.sh start  [workdir]   start (stopping leftovers in workdir first), print the endpoint
#   scripts/rgw.sh stop   [workdir]   kill the recorded process groups, remove workdir
#   scripts/rgw.sh status [workdir]   exit 0 when every daemon runs and S3 answers
#
# One monitor, one memstore OSD (RAM only, so every start is clean), radosgw (beast), auth none,
# pools of size 1, and a user `test` with access key `test` and secret `test`. Debian bookworm's
# Ceph 16 has no standalone (dbstore) radosgw backend, hence the tiny cluster (see
# /work/shared/rgw-notes.md for what was measured).
#
# Environment:
#   MEMVAULT_RGW_PORT       S3 port (default 7480)
#   MEMVAULT_RGW_MON_PORT   monitor port (default 6789)
#   MEMVAULT_RGW_DIR        workdir when none is given (default ${TMPDIR:-/tmp}/memvault-rgw)
#   MEMVAULT_RGW_TIMEOUT    seconds to wait for each daemon (default 90)
#
# Files in workdir: endpoint (the S3 URL), pids (name pgid per line), log/*.log and log/*.out.
set -euo pipefail

ACTION="${1:-}"
WORKDIR="${2:-${MEMVAULT_RGW_DIR:-${TMPDIR:-/tmp}/memvault-rgw}}"
RGW_PORT="${MEMVAULT_RGW_PORT:-7480}"
MON_PORT="${MEMVAULT_RGW_MON_PORT:-6789}"
WAIT_SECONDS="${MEMVAULT_RGW_TIMEOUT:-90}"
HOST=127.0.0.1
# Written into the workdir so that `stop` never removes a folder this script did not create.
OWNER_MARK=.memvault-rgw

log() { printf 'rgw.sh: %s\n' "$*" >&2; }

usage() {
  echo "usage: $0 start|stop|status [workdir]" >&2
  exit 2
}

[[ -n "$ACTION" ]] || usage
case "$WORKDIR" in /*) ;; *) WORKDIR="$PWD/$WORKDIR" ;; esac
CONF="$WORKDIR/ceph.conf"

need() {
  local missing=()
  for bin in "$@"; do command -v "$bin" >/dev/null 2>&1 || missing+=("$bin"); done
  if ((${#missing[@]})); then
    log "missing: ${missing[*]} (install with: apt-get install -y radosgw ceph-mon ceph-osd)"
    exit 3
  fi
}

# The ceph CLI with a bounded wait: without it a command hangs forever while the monitor is down.
ceph_cli() { timeout 20 ceph -c "$CONF" --connect-timeout 10 "$@"; }

# A group is "ours" while its leader still runs a ceph binary; guards against a recycled pid.
group_alive() {
  local pgid="$1" comm
  [[ -r "/proc/$pgid/comm" ]] || return 1
  comm="$(cat "/proc/$pgid/comm" 2>/dev/null || true)"
  [[ "$comm" == ceph-mon || "$comm" == ceph-osd || "$comm" == radosgw || "$comm" == setsid ]]
}

kill_groups() {
  local pidfile="$WORKDIR/pids" name pgid
  [[ -f "$pidfile" ]] || return 0
  # Reverse start order: radosgw, then the OSD, then the monitor.
  local -a lines
  mapfile -t lines < <(tac "$pidfile")
  for line in "${lines[@]}"; do
    read -r name pgid <<<"$line"
    [[ -n "${pgid:-}" ]] || continue
    if group_alive "$pgid"; then
      kill -TERM -- "-$pgid" 2>/dev/null || true
    fi
  done
  local deadline=$((SECONDS + 15))
  for line in "${lines[@]}"; do
    read -r name pgid <<<"$line"
    [[ -n "${pgid:-}" ]] || continue
    while group_alive "$pgid" && ((SECONDS < deadline)); do sleep 0.2; done
    if group_alive "$pgid"; then
      log "$name (group $pgid) ignored SIGTERM; sending SIGKILL"
      kill -KILL -- "-$pgid" 2>/dev/null || true
    fi
  done
  rm -f "$pidfile"
}

show_logs() {
  local f
  for f in "$WORKDIR"/log/*; do
    [[ -f "$f" ]] || continue
    echo "----- tail of $f -----" >&2
    tail -n 25 "$f" >&2 || true
  done
}

fail() {
  log "FAILED: $*"
  show_logs
  log "stopping what was started"
  kill_groups
  exit 1
}

# Run a daemon in the foreground of its own process group (setsid), so that `stop` can kill it and
# every thread or child it has with one signal. The background child of a non-interactive shell is
# not a group leader, so setsid execs in place and the recorded pid is the group id.
spawn() {
  local name="$1"
  shift
  setsid "$@" >"$WORKDIR/log/$name.out" 2>&1 </dev/null &
  local pid=$!
  echo "$name $pid" >>"$WORKDIR/pids"
}

wait_for() {
  local what="$1" daemon="$2"
  shift 2
  local deadline=$((SECONDS + WAIT_SECONDS)) pgid
  pgid="$(awk -v n="$daemon" '$1 == n { print $2 }' "$WORKDIR/pids")"
  until "$@" >/dev/null 2>&1; do
    if [[ -n "$pgid" ]] && ! kill -0 "$pgid" 2>/dev/null; then fail "$daemon exited while waiting for $what"; fi
    if ((SECONDS >= deadline)); then fail "timed out after ${WAIT_SECONDS}s waiting for $what"; fi
    sleep 0.5
  done
}

# Like wait_for, but keeps the command's output (log/last-command.out) and names the command.
retry_for() {
  local what="$1" daemon="$2"
  shift 2
  local deadline=$((SECONDS + WAIT_SECONDS)) pgid
  pgid="$(awk -v n="$daemon" '$1 == n { print $2 }' "$WORKDIR/pids")"
  until "$@" >"$WORKDIR/log/last-command.out" 2>"$WORKDIR/log/last-command.err"; do
    if [[ -n "$pgid" ]] && ! kill -0 "$pgid" 2>/dev/null; then fail "$daemon exited during $what"; fi
    if ((SECONDS >= deadline)); then fail "$what kept failing for ${WAIT_SECONDS}s"; fi
    sleep 0.5
  done
}

port_busy() {
  if command -v ss >/dev/null 2>&1; then
    [[ "$(ss -Hltn "sport = :$1" 2>/dev/null | wc -l)" -gt 0 ]]
  else
    # No iproute2 (slim CI images): a successful connect means something listens.
    timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$HOST" "$1" 2>/dev/null
  fi
}

# HTTP check without curl (not every CI image has it): an anonymous GET / answers 200 on RGW.
http_up() {
  timeout 5 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "GET / HTTP/1.0\r\nHost: %s\r\n\r\n" "$0" >&3
    IFS= read -r status <&3 || exit 1
    [[ "$status" == HTTP/1.?\ 200* ]]' "$HOST" "$RGW_PORT"
}

osd_up() { ceph_cli osd stat 2>/dev/null | grep -q ' 1 up'; }

write_conf() {
  local fsid
  fsid="$(cat /proc/sys/kernel/random/uuid)"
  cat >"$CONF" <<EOF
[global]
fsid = $fsid
mon host = v1:$HOST:$MON_PORT
public addr = $HOST
cluster addr = $HOST
auth cluster required = none
auth service required = none
auth client required = none
keyring = $WORKDIR/keyring
run dir = $WORKDIR/run
admin socket = $WORKDIR/run/\$name.asok
pid file = $WORKDIR/run/\$name.pid
log file = $WORKDIR/log/\$name.log
osd objectstore = memstore
memstore device bytes = 1073741824
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
# The OSD is placed in the CRUSH map by this script; left on, the OSD's own start-up commands
# sometimes reach the monitor before its monmap (fsid 0) and it exits with 'wrong fsid'.
osd crush update on start = false
osd class update on start = false
mon data avail warn = 1
mon data avail crit = 0

[mon.a]
mon data = $WORKDIR/mon.a

[osd.0]
osd data = $WORKDIR/osd.0

[client.rgw]
# tcp_nodelay: without it beast's header and body writes meet the client's delayed ACK and every
# GET with a body waits ~40 ms (measured: 45 ms -> 4 ms per 4 KiB GET).
rgw frontends = beast endpoint=$HOST:$RGW_PORT tcp_nodelay=1
rgw data = $WORKDIR/rgw
EOF
}

start() {
  need ceph ceph-mon ceph-osd radosgw radosgw-admin monmaptool setsid timeout awk tac
  if [[ -d "$WORKDIR" ]]; then
    if [[ -f "$WORKDIR/$OWNER_MARK" ]]; then
      log "stopping leftovers in $WORKDIR"
      kill_groups
      rm -rf "$WORKDIR"
    elif [[ -n "$(ls -A "$WORKDIR")" ]]; then
      log "$WORKDIR exists, is not empty and was not made by this script; refusing to use it"
      exit 1
    fi
  fi
  for port in "$MON_PORT" "$RGW_PORT"; do
    if port_busy "$port"; then
      log "port $port on this machine is already in use (another cluster? set MEMVAULT_RGW_PORT / MEMVAULT_RGW_MON_PORT)"
      exit 1
    fi
  done

  local started=$SECONDS
  mkdir -p "$WORKDIR"/{run,log,mon.a,osd.0,rgw}
  touch "$WORKDIR/$OWNER_MARK" "$WORKDIR/keyring"
  : >"$WORKDIR/pids"
  write_conf

  monmaptool --create --fsid "$(awk '$1 == "fsid" { print $3 }' "$CONF")" --add a "v1:$HOST:$MON_PORT" \
    "$WORKDIR/monmap" >"$WORKDIR/log/monmaptool.out" 2>&1 || fail "monmaptool"
  ceph-mon -c "$CONF" -i a --mkfs --monmap "$WORKDIR/monmap" >"$WORKDIR/log/mon-mkfs.out" 2>&1 ||
    fail "ceph-mon --mkfs"
  spawn mon.a ceph-mon -c "$CONF" -i a -f
  wait_for "the monitor (ceph -s)" mon.a ceph_cli -s

  # A monitor that just answered `ceph -s` can still refuse a first command (seen once, on a
  # loaded machine): these two are idempotent, so retry them until the deadline.
  # With a fixed uuid `osd create` is idempotent: a retry returns the same id.
  local id="" osd_uuid
  osd_uuid="$(cat /proc/sys/kernel/random/uuid)"
  retry_for "ceph osd create" mon.a ceph_cli osd create "$osd_uuid"
  id="$(cat "$WORKDIR/log/last-command.out")"
  [[ "$id" == 0 ]] || fail "expected osd id 0, got '$id'"
  ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$WORKDIR/log/osd-mkfs.out" 2>&1 || fail "ceph-osd --mkfs"
  retry_for "ceph osd crush add" mon.a ceph_cli osd crush add osd.0 1.0 host=localhost root=default
  spawn osd.0 ceph-osd -c "$CONF" -i 0 -f
  wait_for "'1 up' in ceph osd stat" osd.0 osd_up

  spawn client.rgw radosgw -c "$CONF" -n client.rgw -f
  wait_for "HTTP on $HOST:$RGW_PORT" client.rgw http_up

  # Idempotent: a second start on a live cluster, or a retried start, keeps the same keys.
  if ! timeout 30 radosgw-admin -c "$CONF" user info --uid=test >/dev/null 2>&1; then
    timeout 30 radosgw-admin -c "$CONF" user create --uid=test --display-name=test \
      --access-key=test --secret-key=test >"$WORKDIR/log/user-create.out" 2>&1 || fail "radosgw-admin user create"
  fi

  local endpoint="http://$HOST:$RGW_PORT"
  echo "$endpoint" >"$WORKDIR/endpoint"
  log "ready in $((SECONDS - started))s: $endpoint (access key test, secret test); workdir $WORKDIR"
  echo "MEMVAULT_S3_ENDPOINT=$endpoint"
}

stop() {
  if [[ ! -d "$WORKDIR" ]]; then
    log "nothing to stop in $WORKDIR"
    return 0
  fi
  if [[ ! -f "$WORKDIR/$OWNER_MARK" ]]; then
    log "$WORKDIR was not made by this script; leaving it alone"
    exit 1
  fi
  kill_groups
  rm -rf "$WORKDIR"
  log "stopped; removed $WORKDIR"
}

status() {
  local pidfile="$WORKDIR/pids" ok=0 name pgid
  if [[ ! -f "$pidfile" ]]; then
    echo "not running ($WORKDIR has no pids)"
    exit 3
  fi
  while read -r name pgid; do
    if group_alive "$pgid"; then echo "$name: running (group $pgid)"; else echo "$name: NOT running"; ok=1; fi
  done <"$pidfile"
  if [[ -f "$WORKDIR/endpoint" ]]; then
    local endpoint
    endpoint="$(cat "$WORKDIR/endpoint")"
    RGW_PORT="${endpoint##*:}"
    if http_up; then echo "s3: $(cat "$WORKDIR/endpoint") answers"; else echo "s3: $(cat "$WORKDIR/endpoint") does NOT answer"; ok=1; fi
  else
    echo "s3: not ready (no endpoint recorded)"
    ok=1
  fi
  exit "$ok"
}

case "$ACTION" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
