#!/usr/bin/env bash
# waitio-gw on loopback (127.0.0.1 public, 127.0.0.2 private; no root):
#   1-2. tests/waitio/gw_check.py: a scripted master and scripted processes around the
#        gateway: REGISTER/TABLE rewriting byte for byte, bytes both ways, 32 MiB to a slow
#        reader with the gateway's RSS and buffer counters bounded, bad first headers, a
#        side killed or reset mid-stream, each next to a healthy connection that must
#        keep working.
#   3.   two real Linux PBs (Open MPI jobs of tests/waitio/progs/pingpong.c) whose PB 1 is
#        "private": its WAITIO_MASTER_HOST is the gateway's private leg, and the
#        gateway's counters show the traffic went through it.
# One line per check, closing line "N passed, N failed". GW_BIN overrides the gateway;
# GW_TEST_BUF sets its --buf (a huge one shows the back-pressure checks failing).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/waitio/wio_lib.sh
B=${B:-build}
GW=${GW_BIN:-$B/waitio/bin/waitio-gw}
WORK=$(mktemp -d /tmp/ukmpi-wgw.XXXXXX)
pass=0 fail=0
PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "PASS: $*"; pass=$((pass + 1)); }
ko() { echo "FAIL: $*"; fail=$((fail + 1)); }

[ -x "$GW" ] || make -s "$GW" >/dev/null || { ko "build $GW"; echo "$pass passed, $fail failed"; exit 1; }

# Option mistakes end the gateway at once with status 2 and the option named.
for bad in "--buf 12" "--public 0.0.0.0" "--master nosuchhost.invalid:1"; do
    # shellcheck disable=SC2086 # $bad is several words on purpose
    timeout 10 "$GW" --private 127.0.0.2:0 --public 127.0.0.1:0 --master 127.0.0.1:1 $bad \
        >/dev/null 2>"$WORK/opt.err"
    rc=$?
    opt=${bad%% *}
    if [ "$rc" = 2 ] && grep -q -- "$opt" "$WORK/opt.err"; then ok "option mistake '$bad': exit 2, named"
    else ko "option mistake '$bad': exit $rc, $(head -c 200 "$WORK/opt.err")"; fi
done

# 1-2: the scripted checks print PASS/FAIL lines; a crash counts as one failure.
timeout 180 python3 tests/waitio/gw_check.py "$GW" "$WORK/gw.log" ${GW_TEST_BUF:+"$GW_TEST_BUF"} \
    >"$WORK/check.out" 2>&1
rc=$?
cat "$WORK/check.out"
p=$(grep -c '^PASS: ' "$WORK/check.out")
f=$(grep -c '^FAIL: ' "$WORK/check.out")
pass=$((pass + p)) fail=$((fail + f))
if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
    ko "scripted checks ended with status $rc; the gateway's log:"
    tail -n 20 "$WORK/gw.log"
fi
[ "$f" = 0 ] || { echo "--- the gateway's log:"; tail -n 30 "$WORK/gw.log"; }

# 3: two real PBs, PB 1 behind the gateway. PB 0 (with the master) is on the public side;
# PB 1's WAITIO_MASTER_HOST/PORT name the gateway's private leg, so every address PB 1
# gets for PB 0 is the gateway's, and PB 0 gets the gateway's for PB 1.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none WAITIO_NPB=2
unset WAITIO_COMM_TYPE
mpirun_flags=(--oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)
PP=$B/waitio/test/pingpong
PP_MAX=$((16 << 20)) # the largest message, both ways across the gateway
JOB_S=90
# waitio_init's start-up limit (s): PB 0's mpirun once took over the default 10 s to
# bring up the master on a loaded host, and PB 1 gave up (a failure of the test's timing,
# not of the gateway)
PP_INIT_S=60


# gw_idle PID LOG: 0 once the gateway under `timeout` PID reports no live connection
# (SIGUSR1, sent to timeout's child: timeout itself would die of it, appends its totals to
# LOG), so every close is in LOG; 1 if it ended or JOB_S seconds passed.
gw_idle() {
    local end=$((SECONDS + JOB_S)) n gw
    gw=$(pgrep -P "$1") || return 1
    set -- "$gw" "$2"
    while [ $SECONDS -lt $end ]; do
        n=$(grep -c 'totals: ' "$2")
        kill -USR1 "$1" 2>/dev/null || return 1
        while [ "$(grep -c 'totals: ' "$2")" = "$n" ]; do
            kill -0 "$1" 2>/dev/null && [ $SECONDS -lt $end ] || return 1
            sleep 0.05
        done
        grep 'totals: ' "$2" | tail -n 1 | grep -q 'totals: 0 live' && return 0
        sleep 0.1
    done
    return 1
}

# real_pbs NP: NP+NP processes of pingpong through a fresh gateway.
real_pbs() {
    local np=$1 name="real PBs $1+$1 (pingpong 0 B..16 MiB), PB 1 behind the gateway"
    local mport log=$WORK/real$1 gpid line gpriv gport rc0 rc1 p1
    mport=$(tests/free_port)
    timeout 300 "$GW" --private 127.0.0.2:0 --public 127.0.0.1:0 --master "127.0.0.1:$mport" \
        >"$log.gw.out" 2>"$log.gw" &
    gpid=$!
    PIDS+=("$gpid")
    until_line "$log.gw.out" "private " "$gpid" "$JOB_S"
    line=$(head -n1 "$log.gw.out")
    gpriv=$(sed -E 's/^private ([0-9.]+):([0-9]+) .*/\1/' <<<"$line")
    gport=$(sed -E 's/^private ([0-9.]+):([0-9]+) .*/\2/' <<<"$line")
    [ -n "$gport" ] || { ko "$name: the gateway did not start"; return; }
    # PB 0, whose rank 0 is the master, starts once PB 1's REGISTER has reached the
    # gateway: the gateway must keep trying the master, as rank 0 itself would.
    WAITIO_PBID=1 WAITIO_MASTER_HOST=$gpriv WAITIO_MASTER_PORT=$gport timeout -k 5 $JOB_S \
        mpirun "${mpirun_flags[@]}" -np "$np" "$PP" "$PP_MAX" "$PP_INIT_S" >"$log.pb1" 2>&1 &
    p1=$!
    until_line "$log.gw" "PB 1 of 2 ($np processes) registers" "$p1" "$JOB_S" ||
        ko "$name: PB 1's REGISTER did not reach the gateway before the master started"
    WAITIO_PBID=0 WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$mport timeout -k 5 $JOB_S \
        mpirun "${mpirun_flags[@]}" -np "$np" "$PP" "$PP_MAX" "$PP_INIT_S" >"$log.pb0" 2>&1
    rc0=$?
    wait $p1
    rc1=$?
    gw_idle "$gpid" "$log.gw" || ko "$name: the gateway still had live connections"
    kill -TERM "$gpid" 2>/dev/null
    wait "$gpid" 2>/dev/null
    cat "$log.pb0" "$log.pb1" >"$log.pb"
    if [ $rc0 = 0 ] && [ $rc1 = 0 ] && [ "$(grep -c 'pingpong: PASS' "$log.pb")" = $((2 * np)) ] &&
        ! grep -q FAIL "$log.pb"; then
        ok "$name: every process PASS"
    else
        ko "$name: exit codes $rc0/$rc1"
        tail -n 15 "$log.pb" | sed 's/^/    /'
    fi
    if grep -q "PB 1 of 2 ($np processes) registers" "$log.gw" &&
        grep -q "TABLE for PB 1: 2 PBs, $((2 * np)) processes" "$log.gw"; then
        ok "$name: start-up went through the gateway"
    else
        ko "$name: no registration/TABLE in the gateway's log"
        tail -n 10 "$log.gw" | sed 's/^/    /'
    fi
    # Every cross-PB pair moved at least PP_MAX bytes each way through a HELLO'd
    # connection; no data connection ended on an error.
    local conns bytes errs
    conns=$(grep -c -- '-> dst [0-9]* at .*: closed: ' "$log.gw")
    bytes=$(sed -nE 's/.*-> dst [0-9]+ at .*: closed: .*; ([0-9]+) B forwarded, ([0-9]+) B back.*/\1 \2/p' \
        "$log.gw" | awk '{f += $1; b += $2} END {print f + 0, b + 0}')
    errs=$(grep -- '-> dst [0-9]* at .*: closed: ' "$log.gw" | grep -cE 'closed: (read from|write to|connect to)')
    read -r fwd back <<<"$bytes"
    if [ "$conns" -ge 1 ] && [ "$fwd" -ge "$PP_MAX" ] && [ "$back" -ge "$PP_MAX" ] && [ "$errs" = 0 ]; then
        ok "$name: traffic through the gateway ($conns connections, $fwd B + $back B)"
    else
        ko "$name: gateway counters: $conns connections, $fwd B forwarded, $back B back, $errs errors"
        grep -- '-> dst' "$log.gw" | tail -n 5 | sed 's/^/    /'
    fi
}
if [ -x "$PP" ] || make -s "$PP" >/dev/null 2>&1; then
    real_pbs 1
    real_pbs 2
else
    ko "real PBs: cannot build $PP"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
