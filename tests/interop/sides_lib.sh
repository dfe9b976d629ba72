# sides_lib.sh: running the "sides" of a coupled job (a unikernel job under qemu/ukrun, a
# LAM or Open MPI job, ...) side by side, and the daemons between them (sourced, bash).
# Used by tests/interop/uk-with-lam.sh and tests/waitio/uk-with-linux.sh.
#
# The caller sets, before use:
#   WORK         a work directory ($WORK/<side>.pid, .rc; $WORK/log/<daemon>.log{,.out})
#   SIDES        the side names
#   SIDES_NAME   the prefix of this library's messages (the calling script's name)
# and may set GRACE_S (after one side failed, how long the others may take to notice)
# and STOP_WAIT_S (after SIGTERM to a side, how long until SIGKILL).
# It appends to PIDS (every background pid, for the caller's cleanup) and fills
# DAEMON_NAMES/DAEMON_PIDS through sides_daemon.
: "${GRACE_S:=15}" "${STOP_WAIT_S:=10}"
DAEMON_NAMES=() DAEMON_PIDS=() SIDES_STOPPED=()

# SIGTERM to side $1's whole process group (it runs in a session of its own, see
# sides_launch), SIGKILL to what is left after STOP_WAIT_S.
sides_stop() {
    local pid i
    pid=$(cat "$WORK/$1.pid" 2>/dev/null) || return 0
    [ -n "$pid" ] || return 0
    kill -TERM -- "-$pid" 2>/dev/null || return 0
    for i in $(seq $((STOP_WAIT_S * 10))); do
        kill -0 -- "-$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null
}

# For an EXIT trap: stops every side still running.
sides_stop_all() {
    local s
    [ -n "${WORK:-}" ] || return 0
    for s in "${SIDES[@]}"; do [ -e "$WORK/$s.rc" ] || sides_stop "$s"; done
}

# Runs "$@" as side $1 in a session of its own (its process group can be stopped whole),
# its output prefixed "[$1] " on our stdout; its pid lands in $WORK/$1.pid, its exit code
# in $WORK/$1.rc when it ends.
sides_launch() {
    local side=$1
    shift
    (
        setsid -w bash -c 'echo $$ >"$0"; exec "$@"' "$WORK/$side.pid" "$@" </dev/null 2>&1
        echo $? >"$WORK/$side.rc.tmp" && mv "$WORK/$side.rc.tmp" "$WORK/$side.rc"
    ) 2>&1 | sed -u "s/^/[$side] /" &
    PIDS+=($!)
}

# Starts daemon $1 (a name for the report): start_daemon's arguments (impi_lib.sh: a
# namespace, a log, the command). Exits the script if it does not start.
sides_daemon() {
    local name=$1
    shift
    start_daemon "$@" || exit 1
    DAEMON_NAMES+=("$name")
    DAEMON_PIDS+=("$DAEMON_PID")
}

# Waits for every side to end. When one fails, the others get GRACE_S to end on their own
# (they may have a message to say), then are stopped; after $1 seconds (a last resort above
# the sides' own timeouts) every side still running is stopped. Fills SIDES_STOPPED.
sides_supervise() {
    local timeout=$1 deadline stop_at= s now running
    deadline=$(($(date +%s) + timeout + 2 * STOP_WAIT_S))
    while :; do
        running=()
        for s in "${SIDES[@]}"; do
            if [ -e "$WORK/$s.rc" ]; then
                [ "$(cat "$WORK/$s.rc")" = 0 ] || [ -n "$stop_at" ] || stop_at=$(($(date +%s) + GRACE_S))
            else
                running+=("$s")
            fi
        done
        [ ${#running[@]} = 0 ] && return 0
        now=$(date +%s)
        if { [ -n "$stop_at" ] && [ "$now" -ge "$stop_at" ]; } || [ "$now" -ge "$deadline" ]; then
            for s in "${running[@]}"; do
                echo "$SIDES_NAME: stopping the $s side: $([ "$now" -ge "$deadline" ] && echo "still running after ${timeout}s" || echo "the other side failed")"
                sides_stop "$s"
                SIDES_STOPPED+=("$s")
            done
            for s in "${running[@]}"; do
                for _ in $(seq 50); do [ -e "$WORK/$s.rc" ] && break; sleep 0.1; done
            done
            return 0
        fi
        sleep 0.5
    done
}

# Waits (up to STOP_WAIT_S each) for the background pids that are not daemons: the output
# prefixers, which end when their side's output ends.
sides_drain() {
    local p
    for p in "${PIDS[@]}"; do
        [[ " ${DAEMON_PIDS[*]} " != *" $p "* ]] || continue
        for _ in $(seq $((STOP_WAIT_S * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
}

# How side $1 ended: its exit code, or "stopped" (by us: hung, or another side failed).
sides_end() {
    if [[ " ${SIDES_STOPPED[*]} " == *" $1 "* ]]; then echo stopped; else cat "$WORK/$1.rc" 2>/dev/null || echo none; fi
}

# 1 if a side did not end with 0, else 0.
sides_failed() {
    local s
    for s in "${SIDES[@]}"; do [ "$(sides_end "$s")" = 0 ] || { echo 1; return; }; done
    echo 0
}

# Ends the daemons (they exit by themselves after a clean job; a moment's grace, then
# SIGTERM), appends ", NAME exit RC" for each to the variable SUMMARY, prints what each
# printed after its first line prefixed "[NAME] ", and sets DAEMONS_FAILED to 1 if one did
# not exit 0. A daemon named in SIDES_SERVICES runs until stopped: it gets SIGTERM at once,
# and ending by it (143, through timeout) is its clean end ("stopped").
sides_end_daemons() {
    local i p rc service
    DAEMONS_FAILED=0
    for i in "${!DAEMON_PIDS[@]}"; do
        p=${DAEMON_PIDS[$i]}
        service=0
        [[ " ${SIDES_SERVICES[*]:-} " != *" ${DAEMON_NAMES[$i]} "* ]] || service=1
        [ "$service" = 1 ] || for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill "$p" 2>/dev/null
        wait_rc "$p" rc
        [ "$service" = 0 ] || [ "$rc" != 143 ] || rc=stopped
        SUMMARY+=", ${DAEMON_NAMES[$i]} exit $rc"
        [ "$rc" = 0 ] || [ "$rc" = stopped ] || DAEMONS_FAILED=1
        tail -n +2 "$WORK/log/${DAEMON_NAMES[$i]}.log.out" | sed "s/^/[${DAEMON_NAMES[$i]}] /"
    done
}

# Prints the last 20 lines of every daemon's log.
sides_daemon_logs() {
    local n
    for n in "${DAEMON_NAMES[@]}"; do
        echo "$SIDES_NAME: $n's log (last 20 lines):"
        tail -n 20 "$WORK/log/$n.log" | sed "s/^/[$n] /"
    done
}

# Namespace $1 (mkns, impi_lib.sh) with a TAP device $2 at $3 (A.B.C.D/LEN) for the hub of
# a qemu/ukrun job to join (--hub-tap, --hub-netns). Exits the script if it cannot.
sides_tap_ns() {
    mkns "$1"
    { ip -n "$1" tuntap add dev "$2" mode tap && ip -n "$1" addr add "$3" dev "$2" &&
        ip -n "$1" link set "$2" up; } ||
        { echo "$SIDES_NAME: cannot make TAP $2 in namespace $1 (needs root and /dev/net/tun)"; exit 1; }
}
