# Shared by the bench scripts (study.sh, blog.sh): servers run as leaders of their own
# process groups, recorded in the caller's associative arrays pid_of[name], port_of[name] and not_run[name]; CPU time is
# read from /proc with bash builtins only. Source it after `declare -A pid_of`.

# ---- process bookkeeping: each server is the leader of its own process group ----------
stop_server() {  # name: TERM the group, wait up to 15 s, then KILL the group
  local name=$1 pid=${pid_of[$1]:-}
  [[ -n $pid ]] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "pid_of[$name]"
}
# await_server NAME PID PORT PATH LOG: records the server started as PID (a process-group
# leader) and waits until GET PATH answers 200; on failure sets not_run[NAME] and stops it.
await_server() {
  local name=$1 pid=$2 port=$3 path=$4 log=$5
  pid_of[$name]=$pid
  port_of[$name]=$port
  for _ in $(seq $((STARTUP_TIMEOUT * 5))); do
    if ! kill -0 "$pid" 2>/dev/null; then
      not_run[$name]="exited at start: $(tail -1 "$log" | cut -c1-160)"
      stop_server "$name"; return 1
    fi
    if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port$path" 2>/dev/null) == 200 ]]; then
      return 0
    fi
    sleep 0.2
  done
  not_run[$name]="did not answer GET $path within ${STARTUP_TIMEOUT}s"
  stop_server "$name"
  return 1
}

stop_all_servers() {
  local s
  for s in "${!pid_of[@]}"; do stop_server "$s"; done
}

# tree_stats PID: sets TREE_TICKS (utime+stime, plus cutime+cstime of reaped children, over
# PID and all its descendants), its two parts TREE_USER_TICKS (utime+cutime) and
# TREE_SYS_TICKS (stime+cstime), and TREE_RSS_KB. Bash builtins only: no process is started.
tree_stats() {
  local root_pid=$1 f line rest pid changed p
  local -A parent ticks uticks
  for f in /proc/[0-9]*/stat; do
    read -r line 2>/dev/null <"$f" || continue
    [[ $line == *") "* ]] || continue  # (a process that ended while it was read)
    pid=${line%% *}
    rest=${line##*) }
    # shellcheck disable=SC2086
    set -- $rest   # state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
    (($# >= 15)) || continue
    parent[$pid]=$2
    ticks[$pid]=$((${12} + ${13} + ${14} + ${15}))
    uticks[$pid]=$((${12} + ${14}))
  done
  local -A tree=([$root_pid]=1)
  changed=1
  while ((changed)); do
    changed=0
    for p in "${!parent[@]}"; do
      if [[ -z ${tree[$p]:-} && -n ${tree[${parent[$p]}]:-} ]]; then tree[$p]=1; changed=1; fi
    done
  done
  TREE_TICKS=0 TREE_USER_TICKS=0 TREE_RSS_KB=0
  for p in "${!tree[@]}"; do
    TREE_TICKS=$((TREE_TICKS + ${ticks[$p]:-0}))
    TREE_USER_TICKS=$((TREE_USER_TICKS + ${uticks[$p]:-0}))
    while read -r line 2>/dev/null; do
      [[ $line == VmRSS:* ]] && { set -- $line; TREE_RSS_KB=$((TREE_RSS_KB + $2)); break; }
    done 2>/dev/null <"/proc/$p/status" || true
  done
  TREE_SYS_TICKS=$((TREE_TICKS - TREE_USER_TICKS))
}

# self_child_ticks: sets CHILD_TICKS to this shell's cutime+cstime (CPU of reaped children).
self_child_ticks() {
  local line rest
  read -r line <"/proc/$BASHPID/stat"
  rest=${line##*) }
  # shellcheck disable=SC2086
  set -- $rest
  CHILD_TICKS=$((${14} + ${15}))
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
