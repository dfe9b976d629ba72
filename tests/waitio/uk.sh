#!/usr/bin/env bash
# The WaitIO library in the unikernel (issue 14): the published-style programs of
# tests/waitio/progs/ built unchanged with `ukmpicc ... -lwaitio` (and -lwaitio_mpi), run as
# unikernel PBs (qemu/ukrun, 2 nodes x 2 ranks):
#  - uk-only: one PB of 4 ranks, the master in the unikernel (WAITIO_NPB=1), ping-pong
#    0 B .. 16 MiB inside and across nodes;
#  - coupled with Linux through waitio-gw (tests/waitio/uk-with-linux.sh: the unikernel on
#    a private hub, Open MPI jobs on a "global" namespace): ping-pong 0 B .. 16 MiB with
#    1 Linux PB, WaitIO-MPI point-to-point (test_mpi), and the King collectives from every
#    root across 3 PBs (king universe), every byte and value checked by the programs.
# Needs root (namespaces, TAP) and `make all`. One line per test; closing line
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/waitio/wio_lib.sh
B=${B:-build}
out=$B/waitio/uk-tests
T=${UK_WAITIO_TIMEOUT:-300} # safety net per run only
pass=0 fail=0
mkdir -p "$out"
# Namespaces and the TAP of the bad-input cases (sourced first: they define helpers named
# like ours, which the definitions below replace).
LAM_TIMEOUT=$T
# shellcheck source=tests/interop/impi_lib.sh
. tests/interop/impi_lib.sh
SIDES_NAME=waitio-uk
# shellcheck source=tests/interop/sides_lib.sh
. tests/interop/sides_lib.sh

ok() {
    echo "PASS waitio-uk $1"
    pass=$((pass + 1))
}
bad() {
    echo "FAIL waitio-uk $1: $2"
    [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 25 "$3" | sed 's/^/    /'
    fail=$((fail + 1))
}
finish() {
    echo "waitio-uk: $pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}
[ "$(id -u)" = 0 ] || { bad setup "needs root (network namespaces, TAP)"; finish; }

# Each program twice from the same source: for the unikernel and for Open MPI.
for p in pingpong test_mpi king badpeer; do
    libs=(-lwaitio)
    [ "$p" = pingpong ] || [ "$p" = badpeer ] || libs=(-lwaitio_mpi -lwaitio)
    if ! mpi/bin/ukmpicc -O2 -Itests/waitio/progs "tests/waitio/progs/$p.c" -o "$out/$p.uk" \
        "${libs[@]}" >"$out/$p.build.log" 2>&1 ||
        ! mpicc -O2 -Impi/waitio/include -Itests/waitio/progs "tests/waitio/progs/$p.c" \
            -o "$out/$p.linux" -L"$B/waitio/lib" "${libs[@]}" >>"$out/$p.build.log" 2>&1; then
        bad "build-$p" "did not build" "$out/$p.build.log"
        finish
    fi
done

# count LOG REGEX: how many lines of LOG match.
count() { grep -Ec "$2" "$1"; }

# A unikernel-only instance: PB 0 of 1, the master on node 0.
log=$out/uk-only.log
timeout $((T + 30)) qemu/ukrun -n 4 --nodes 2 --timeout "$T" --env WAITIO_MASTER_HOST=10.0.0.1 \
    --env WAITIO_MASTER_PORT=7100 --env WAITIO_PBID=0 --env WAITIO_NPB=1 "$out/pingpong.uk" \
    >"$log" 2>&1
rc=$?
n=$(count "$log" 'pingpong: PASS rank [0-3] of 4')
if [ $rc = 0 ] && [ "$n" = 4 ]; then ok "uk-only-2x2 (master in the unikernel, 4 of 4 ranks)"; else
    bad uk-only-2x2 "exit $rc, $n of 4 ranks passed" "$log"; fi

# coupled NAME EXPECTED_PASS_LINES REGEX [HARNESS OPTIONS] -- PROG [ARGS]
coupled() {
    local name=$1 want=$2 re=$3
    shift 3
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    local prog=$1
    shift
    log=$out/$name.log
    tests/waitio/uk-with-linux.sh --timeout "$T" "${opts[@]}" "$out/$prog.uk" "$out/$prog.linux" \
        "$@" >"$log" 2>&1
    rc=$?
    n=$(count "$log" "$re")
    if [ $rc = 0 ] && [ "$n" = "$want" ]; then ok "$name ($n of $want processes, through waitio-gw)"
    else bad "$name" "exit $rc, $n of $want processes passed" "$log"; fi
}
coupled pingpong-uk2x2-linux2 6 'pingpong: PASS rank' -- pingpong
coupled test_mpi-uk2x2-linux2 6 'RESULT test_mpi .* fail=0$' -- test_mpi
coupled king-linux2-uk2x2-linux2 8 'RESULT universe .* fail=0$' --linux-pbs 2 -- king universe

# Bad input: the unikernel job is PB 0 (2 nodes x 1 rank, the master on node 0), the fake
# PB 1 registers from the TAP's namespace and misbehaves once rank 0 connects to it.
WORK=$(mktemp -d /tmp/waitio-uk.XXXXXX)
trap impi_cleanup EXIT
ns=${NSP}B
sides_tap_ns "$ns" uktap0 10.0.0.254/24
# badinput MODE DESCRIPTION EXPECTED-ERROR [RECEIVES-OK-FIRST]
# The order: the fake listens (its line), then the job starts. The fake's address reaches
# the job only in the master's table, after the fake registered, so rank 0 never connects
# before the fake accepts. The fake reaches the master only once the job's hub has attached
# the TAP, node 0 has booted and the master listens; it retries until then (up to T s), as
# a PB's rank 0 does, and the master waits for it inside waitio_init.
badinput() {
    local mode=$1 name="bad-input-$1" want=$3 first_ok=${4:-0} inj ilog
    log=$out/$name.log ilog=$out/$name.inject.log
    ip netns exec "$ns" timeout $((T + 30)) "$B/waitio/test/wio-inject" "$mode" 7100 10.0.0.1 "$T" \
        >"$ilog" 2>&1 &
    inj=$!
    if ! until_line "$ilog" "wio-inject: listening on port" "$inj" "$T"; then
        kill "$inj" 2>/dev/null
        wait "$inj" 2>/dev/null
        bad "$name" "the fake PB did not start listening" "$ilog"
        return
    fi
    timeout $((T + 30)) qemu/ukrun -n 2 --nodes 2 --timeout "$T" --hub-tap uktap0 --hub-netns "$ns" \
        --env WAITIO_MASTER_HOST=10.0.0.1 --env WAITIO_MASTER_PORT=7100 --env WAITIO_PBID=0 \
        --env WAITIO_NPB=2 "$out/badpeer.uk" 60 >"$log" 2>&1
    rc=$?
    kill "$inj" 2>/dev/null
    wait "$inj" 2>/dev/null
    if ! grep -qF "wio-inject: registered as process" "$ilog"; then
        bad "$name" "exit $rc: the fake PB never registered with the master" "$ilog"
        tail -n 10 "$log" | sed 's/^/    /'
    elif [ "$mode" = lostsyn ] && ! grep -qF "a SYN of the real process was dropped" "$ilog"; then
        bad "$name" "exit $rc: no SYN of rank 0 was dropped" "$ilog"
    elif [ $rc = 0 ] && grep -qF "$want" "$log" && grep -qF "badpeer: receive $first_ok from the fake failed" "$log" &&
        [ "$(grep -c 'PASS others unaffected' "$log")" = 2 ] &&
        { [ "$first_ok" = 0 ] || grep -qF "badpeer: receive 0 from the fake ok" "$log"; }; then
        ok "$name ($2)"
    else
        bad "$name" "exit $rc, expected '$want'" "$log"
    fi
}
badinput garbage "garbage instead of a header" "): bad magic: not a WaitIO header of version 1"
badinput lostsyn "rank 0's first SYN to the fake dropped: its connect retransmits, then garbage" \
    "): bad magic: not a WaitIO header of version 1"
badinput truncated "a truncated header, then the connection closed" \
    "): connection lost: the peer closed the connection (cut 30 bytes into a header)"
badinput seq "a wrong sequence number after a good message" \
    "): wrong sequence number: EAGER header seq 5, expected 1" 1
badinput midrdv "the peer killed (SIGKILL) mid-rendezvous" \
    "): connection lost: the peer closed the connection (during a rendezvous)" 2>/dev/null
finish
