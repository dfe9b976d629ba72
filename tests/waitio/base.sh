#!/usr/bin/env bash
# The WaitIO base API on Linux (issue 14): PBs as separate Open MPI jobs (mpirun) on
# loopback, built from tests/waitio/progs/ against build/waitio (headers, -lwaitio).
#  - pingpong.c, 1+1 and 2+2 processes: 0 B .. 16 MiB there and back, bursts of several
#    messages outstanding, pairs inside and across PBs, every byte checked; the 1+1 run
#    finds its master through waitio-serv.
#  - waitio-serv: publish, look up, wait for a late entry, time out clearly.
#  - bad input at a real process from a fake PB (wio-inject): garbage, a truncated header,
#    a wrong sequence number, a peer killed mid-rendezvous. Each must give its named error,
#    fail only the receive from the fake, and leave the two real processes talking.
#  - start-up failures: a master that never answers, no master, a PB that never registers,
#    an unsupported WAITIO_COMM_TYPE: waitio_init fails on every process, in time, with a
#    one-line reason.
# Every job runs under timeout. One line per test; closing line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/waitio/wio_lib.sh
B=${B:-build}
W=$B/waitio
T=$W/test
work=$(mktemp -d)
injector=
trap '[ -n "$injector" ] && kill "$injector" 2>/dev/null; rm -rf "$work"' EXIT
pass=0 fail=0
JOB_S=${WIO_JOB_S:-60} # seconds any one job may take

export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export WAITIO_MASTER_HOST=127.0.0.1 WAITIO_NPB=2 WAITIO_SERV_DIR=$work/serv
unset WAITIO_COMM_TYPE
mpirun_flags=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)

ok() {
    echo "PASS waitio-base $1"
    pass=$((pass + 1))
}
bad() {
    echo "FAIL waitio-base $1: $2"
    [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 20 "$3" | sed 's/^/    /'
    fail=$((fail + 1))
}

# A free TCP port on loopback for the master.

# job NAME PBID NP PROG ARGS...: one PB as an mpirun job in the background, output in
# $work/NAME.log; its pid in $job_pid.
job() {
    local name=$1 pbid=$2 np=$3
    shift 3
    WAITIO_PBID=$pbid timeout -k 5 "$JOB_S" mpirun "${mpirun_flags[@]}" -np "$np" "$@" \
        >"$work/$name.log" 2>&1 &
    job_pid=$!
}

# has LOG TEXT COUNT: LOG holds TEXT (fixed string) exactly COUNT times (default: at least once).
has() {
    local n
    n=$(grep -cF -- "$2" "$1")
    if [ -n "${3:-}" ]; then [ "$n" = "$3" ]; else [ "$n" -ge 1 ]; fi
}

# --- 1. ping-pong, 1+1 through waitio-serv and 2+2 ------------------------------------
pingpong() {
    local np=$1 name="pingpong $1+$1 processes, 0 B..16 MiB, bursts, inside and across PBs"
    export WAITIO_MASTER_PORT
    WAITIO_MASTER_PORT=$(tests/free_port)
    local host=127.0.0.1
    if [ "$np" = 1 ]; then # PB 0's job publishes the master host, PB 1's job looks it up
        "$W/bin/waitio-serv" -d -m 127.0.0.1 -j "pp$$" || { bad "$name" "waitio-serv -m failed"; return; }
        host=$("$W/bin/waitio-serv" -c -t 5 -j "pp$$") || { bad "$name" "waitio-serv -c failed"; return; }
        name="$name, master host from waitio-serv"
    fi
    WAITIO_MASTER_HOST=$host job pp0 0 "$np" "$T/pingpong"
    local p0=$job_pid
    WAITIO_MASTER_HOST=$host job pp1 1 "$np" "$T/pingpong"
    local p1=$job_pid
    wait $p0
    local rc0=$?
    wait $p1
    local rc1=$?
    cat "$work/pp0.log" "$work/pp1.log" >"$work/pp.log"
    if [ $rc0 = 0 ] && [ $rc1 = 0 ] && has "$work/pp.log" "pingpong: PASS" $((2 * np)) &&
        ! has "$work/pp.log" "FAIL"; then
        ok "$name"
    else
        bad "$name" "exit codes $rc0/$rc1" "$work/pp.log"
    fi
}
pingpong 1
pingpong 2

# --- 2. waitio-serv ---------------------------------------------------------------------
serv=$W/bin/waitio-serv
(sleep 1 && "$serv" -d -m late-host.example -j "late$$") &
start=$(date +%s)
got=$("$serv" -c -t 10 -j "late$$")
if [ "$got" = late-host.example ] && [ $(($(date +%s) - start)) -lt 5 ]; then
    ok "waitio-serv -c waits for a late -m and prints the host"
else
    bad "waitio-serv -c waits for a late -m and prints the host" "got '$got'"
fi
"$serv" -r -j "late$$"
if ! out=$("$serv" -c -t 1 -j "none$$" 2>&1) && [[ $out == *"no master host published at"*"within 1 s"* ]]; then
    ok "waitio-serv -c without an entry fails after its timeout with a clear message"
else
    bad "waitio-serv -c without an entry fails after its timeout with a clear message" "$out"
fi

# --- 3. bad input from a fake PB ---------------------------------------------------------
# badinput MODE DESCRIPTION EXPECTED-ERROR [RECEIVES-OK-FIRST]
badinput() {
    local mode=$1 name="bad input: $2" want=$3 first_ok=${4:-0}
    export WAITIO_MASTER_PORT
    WAITIO_MASTER_PORT=$(tests/free_port)
    "$T/wio-inject" "$mode" "$WAITIO_MASTER_PORT" 127.0.0.1 "$JOB_S" >"$work/inject.log" 2>&1 &
    injector=$!
    if ! until_line "$work/inject.log" "wio-inject: listening on port" "$injector" "$JOB_S"; then
        bad "$name" "the fake PB did not start listening" "$work/inject.log"
        kill "$injector" 2>/dev/null
        injector=
        return
    fi
    job bad 0 2 "$T/badpeer"
    wait "$job_pid"
    local rc=$?
    kill "$injector" 2>/dev/null
    wait "$injector" 2>/dev/null
    injector=
    local log=$work/bad.log
    if [ $rc = 0 ] && has "$log" "$want" 1 && has "$log" "badpeer: receive $first_ok from the fake failed" 1 &&
        has "$log" "PASS others unaffected" 2 &&
        { [ "$first_ok" = 0 ] || has "$log" "badpeer: receive 0 from the fake ok" 1; }; then
        ok "$name"
    else
        bad "$name" "exit code $rc, expected '$want'" "$log"
    fi
}
peer='waitio: peer 2 (PB 1 rank 0, 127.0.0.1:'
badinput garbage "garbage instead of a header" "$peer"
badinput garbage "garbage: the error names the field" "): bad magic: not a WaitIO header of version 1 [at PB 0 rank 0]"
badinput truncated "a truncated header, then the connection closed" \
    "): connection lost: the peer closed the connection (cut 30 bytes into a header)"
badinput seq "a wrong sequence number after a good message" \
    "): wrong sequence number: EAGER header seq 5, expected 1" 1
# (bash's "Killed" report of the injector's SIGKILL goes to /dev/null, not into the output)
badinput midrdv "the peer killed (SIGKILL) mid-rendezvous" \
    "): connection lost: the peer closed the connection (during a rendezvous)" 2>/dev/null

# --- 4. start-up failures ----------------------------------------------------------------
# initfail NAME EXPECTED-REASON NP SECONDS-AT-MOST PBID [setup: silent]
initfail() {
    local name=$1 want=$2 np=$3 most=$4 pbid=$5 setup=${6:-}
    export WAITIO_MASTER_PORT
    WAITIO_MASTER_PORT=$(tests/free_port)
    if [ "$setup" = silent ]; then
        "$T/wio-inject" silent-master "$WAITIO_MASTER_PORT" >"$work/inject.log" 2>&1 &
        injector=$!
        # Listening before the job starts: otherwise the job meets no master at all.
        if ! until_line "$work/inject.log" "wio-inject: listening on port" "$injector" "$JOB_S"; then
            bad "$name" "the silent master did not start listening" "$work/inject.log"
            kill "$injector" 2>/dev/null
            injector=
            return
        fi
    fi
    local start end rc
    start=$(date +%s)
    job init "$pbid" "$np" "$T/pingpong" 1000 2
    wait "$job_pid"
    rc=$?
    end=$(date +%s)
    [ -n "$injector" ] && { kill "$injector" 2>/dev/null; wait "$injector" 2>/dev/null; injector=; }
    local log=$work/init.log
    if [ $rc != 0 ] && [ $rc != 124 ] && has "$log" "waitio_init: $want" 1 &&
        has "$log" "pingpong: waitio_init failed" "$np" && [ $((end - start)) -le "$most" ]; then
        ok "$name"
    else
        bad "$name" "exit code $rc after $((end - start)) s, expected '$want' once" "$log"
    fi
}
initfail "a master that accepts and never answers: waitio_init(2) fails on both processes" \
    "the master at 127.0.0.1:" 2 15 1 silent
if has "$work/init.log" "did not answer within 2 s" 1; then
    ok "a master that never answers: the reason says so"
else
    bad "a master that never answers: the reason says so" "no 'did not answer within 2 s'" "$work/init.log"
fi
initfail "no master listening: waitio_init(2) fails on both processes" \
    "no answer from the master at 127.0.0.1:" 2 15 1
initfail "the master waits for a PB that never registers: waitio_init(2) fails" \
    "only 1 of 2 PBs registered with the master in time" 2 15 0
export WAITIO_COMM_TYPE=file
initfail "WAITIO_COMM_TYPE=file is refused clearly" "WAITIO_COMM_TYPE=file is not supported" 1 15 0
unset WAITIO_COMM_TYPE

# --- 5. a master connection that closes before its answer --------------------------------
# PB 1 reaches PB 0's master through a proxy that closes its first connection at once (as
# waitio-gw does when it cannot reach the master yet): PB 1's rank 0 must try again.
{ read -r real && read -r front; } < <(tests/free_port 2) # two distinct ports
python3 - "$front" "$real" >"$work/proxy.log" 2>&1 <<'PY' &
import socket, sys, threading
front, real = int(sys.argv[1]), int(sys.argv[2])
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", front)); l.listen(4)
print("listening", flush=True)
c, _ = l.accept(); c.close()  # the first one: closed before any answer
print("closed the first connection", flush=True)
def pipe(a, b):
    while True:
        d = a.recv(65536)
        if not d:
            b.shutdown(socket.SHUT_WR); return
        b.sendall(d)
while True:  # then a forwarder, which closes what it cannot forward (the master is late)
    c, _ = l.accept()
    try:
        m = socket.create_connection(("127.0.0.1", real))
    except OSError:
        c.close()
        continue
    threading.Thread(target=pipe, args=(c, m), daemon=True).start()
    threading.Thread(target=pipe, args=(m, c), daemon=True).start()
PY
injector=$!
until_line "$work/proxy.log" listening "$injector" "$JOB_S" || echo "waitio-base: the proxy did not start"
WAITIO_MASTER_PORT=$front job retry1 1 1 "$T/pingpong" 65536
p1=$job_pid
# PB 0's master listens only after PB 1 has met the closing proxy.
until_line "$work/proxy.log" "closed the first connection" "$injector" "$JOB_S" ||
    echo "waitio-base: PB 1 never reached the proxy"
WAITIO_MASTER_PORT=$real job retry0 0 1 "$T/pingpong" 65536
wait "$job_pid"
rc0=$?
wait "$p1"
rc1=$?
kill "$injector" 2>/dev/null
wait "$injector" 2>/dev/null
injector=
name="a master connection closed before the answer: rank 0 registers again"
if [ $rc0 = 0 ] && [ $rc1 = 0 ] && has "$work/proxy.log" "closed the first connection" 1 &&
    has "$work/retry1.log" "pingpong: PASS" 1; then
    ok "$name"
else
    bad "$name" "exit codes $rc0 (PB 0) and $rc1 (PB 1)" "$work/retry1.log"
fi

echo "waitio-base: $pass passed, $fail failed"
[ $fail = 0 ]
