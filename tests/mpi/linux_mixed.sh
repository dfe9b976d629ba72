#!/usr/bin/env bash
# tests/mpi/linux_mixed.sh [PROG...]: mixed jobs: one unikernel node (QEMU, on the hub of
# qemu/uknodes) and one Linux process (the library's Linux build, mpi/linux/) in a network
# namespace whose TAP device is a port of the same hub, running one MPI program of
# tests/mpi/progs/ as the two nodes of one job, speaking the native protocol. Each program
# (default: MIXED_PROGS) runs twice: the unikernel as node 0 and Linux as node 1, then the
# other way round. A test: both sides exit 0 and rank 0's lines equal Open MPI's output
# on 2 ranks (build/mpi-ref/PROG.2.out, made by `MPI_NP=2 tests/mpi/run.sh --ref-only`
# when missing).
#
# How the job is made of one VM and one process with today's tools: qemu/uknodes boots
# both nodes of a 2-node job and the VM of the Linux node is killed (--kill) at its first
# console line, long before its network is up; the kernel command line's peers= (appended
# to both nodes) puts the Linux node at TAP_ADDR, and the Linux process gets the same
# layout through UKMPI_NODE/UKMPI_NODES/UKMPI_PEERS (mpi/linux/mlx_env.c).
# Needs root (network namespace, TAP). Closing line: "mpi-mixed: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
babs=$(mkdir -p "$B" && cd "$B" && pwd)
export UKMPI_BUILD=${UKMPI_BUILD:-$babs}
MIXED_PROGS=${MIXED_PROGS:-p2p_basic p2p_large p2p_nonblocking colls icolls comms}
TIMEOUT=${MIXED_TIMEOUT:-120}
readonly SUBNET=10.0.0 TAP_ADDR=10.0.0.100 TAP_IF=lxtap0 MPE_PORT=7101
KILL_RE='^ukmpi unikernel' # the kernel's first console line
out=$B/mpi-mixed ref=$B/mpi-ref
ns=ukmlx$$
pass=0 fail=0
ok() {
    echo "PASS $1"
    pass=$((pass + 1))
}
bad() { # NAME REASON [LOG]
    echo "FAIL $1: $2"
    [ $# -ge 3 ] && [ -s "$3" ] && tail -n 15 "$3" | sed 's/^/    | /'
    fail=$((fail + 1))
}
finish() {
    echo "mpi-mixed: $pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}
[ $# -gt 0 ] && MIXED_PROGS=$*
if [ "$(id -u)" != 0 ]; then
    bad setup "needs root (a network namespace with a TAP device)"
    finish
fi
mkdir -p "$out"
trap 'ip netns del "$ns" 2>/dev/null' EXIT
if ! { ip netns add "$ns" && ip -n "$ns" link set lo up &&
    ip -n "$ns" tuntap add dev "$TAP_IF" mode tap &&
    ip -n "$ns" addr add "$TAP_ADDR/24" dev "$TAP_IF" && ip -n "$ns" link set "$TAP_IF" up; }; then
    bad setup "cannot make TAP $TAP_IF in namespace $ns"
    finish
fi

# job DIR PROG LINUX-NODE [ARGS...]: one mixed job of DIR/PROG (the unikernel image) and
# DIR/PROG.linux; the unikernel is the other node of 2. Sets ukrc and lxrc; the logs are
# DIR/uk.LINUX-NODE.log and DIR/linux.LINUX-NODE.log.
job() {
    local w=$1 p=$2 lx=$3 peers a
    shift 3
    peers=$([ "$lx" = 0 ] && echo "$TAP_ADDR,$SUBNET.2" || echo "$SUBNET.1,$TAP_ADDR")
    {
        printf 'image=%s\nsize=2\nnodes=2\n' "$p"
        for a in "$@"; do echo "arg=$a"; done
    } >"$w/job.conf"
    (cd "$w" && printf '%s\n' job.conf "$p" | cpio -o -H newc --quiet >initrd.cpio)
    timeout -k 10 $((TIMEOUT + 30)) qemu/uknodes --nodes 2 --timeout "$TIMEOUT" --tap "$TAP_IF" \
        --netns "$ns" --kill "$lx:$KILL_RE" --append "peers=$peers" --initrd "$w/initrd.cpio" \
        "$babs/uk/ukernel.elf" >"$w/uk.$lx.log" 2>&1 &
    local ukpid=$!
    ip netns exec "$ns" env UKMPI_NODE="$lx" UKMPI_NODES=2 \
        UKMPI_PEERS="${peers/,/:$MPE_PORT,}:$MPE_PORT" timeout -k 5 "$TIMEOUT" "$w/$p.linux" "$@" \
        >"$w/linux.$lx.log" 2>&1
    lxrc=$?
    wait "$ukpid"
    ukrc=$?
}

# run PROG LINUX-NODE: a conformance program as a mixed job.
run() {
    local p=$1 lx=$2 uk=$((1 - $2)) name="$1.linux-node$2" w=$out/$1
    job "$w" "$p" "$lx"
    # Rank 0's lines: the Linux process's stdout, or the unikernel console's "[nI] [0] ".
    if [ "$lx" = 0 ]; then cp "$w/linux.$lx.log" "$w/out.$lx"; else
        sed -nE "s/^\[n$uk\] \[0\] //p" "$w/uk.$lx.log" >"$w/out.$lx"
    fi
    if [ $ukrc != 0 ] || [ $lxrc != 0 ]; then
        bad "$name" "unikernel node exit $ukrc, Linux node exit $lxrc" "$w/uk.$lx.log"
        sed 's/^/    linux| /' "$w/linux.$lx.log" | tail -n 5
    elif ! diff -q "$ref/$p.2.out" "$w/out.$lx" >/dev/null; then
        bad "$name" "rank 0's output differs from Open MPI's (- Open MPI, + ours)"
        diff -u "$ref/$p.2.out" "$w/out.$lx" | head -n 30 | sed 's/^/    diff| /'
    else
        ok "$name (unikernel node $uk + Linux node $lx, $(grep -c '^ok ' "$w/out.$lx") checks)"
    fi
}

# A rank that aborts on one side ends the job on the other: die.c's rank 1 calls MPI_Abort
# mid-job, on the Linux node (its socket closes) and then on the unikernel node (its VM
# powers off without closing anything: the Linux node finds it by its keepalive probes).
die_test() { # LINUX-NODE
    local lx=$1 w=$out/die name="abort.linux-node$1"
    local want_uk want_lx
    want_lx=$([ "$lx" = 1 ] && echo 9 || echo 73) want_uk=$([ "$lx" = 1 ] && echo 73 || echo 9)
    job "$w" die "$lx" 1 abort
    if [ "$lxrc" != "$want_lx" ] || [ "$ukrc" != "$want_uk" ]; then
        bad "$name" "unikernel node exit $ukrc (want $want_uk), Linux node exit $lxrc (want $want_lx)" \
            "$w/uk.$lx.log"
        sed 's/^/    linux| /' "$w/linux.$lx.log" | tail -n 5
    elif ! grep -q "mpi: node 0: connection to node 1 failed" "$w/uk.$lx.log" "$w/linux.$lx.log"; then
        bad "$name" "the surviving node 0 did not say its connection to node 1 failed" "$w/uk.$lx.log"
    else
        ok "$name (rank 1 aborts with 9: the other node ends with 73)"
    fi
}
mkdir -p "$out/die"
if mpi/bin/ukmpicc -O2 tests/mpi/linux/die.c -o "$out/die/die" >"$out/die/build.log" 2>&1 &&
    mpi/bin/ukmpicc --linux -O2 tests/mpi/linux/die.c -o "$out/die/die.linux" \
        >>"$out/die/build.log" 2>&1; then
    die_test 1
    die_test 0
else
    bad abort "build failed" "$out/die/build.log"
fi

for p in $MIXED_PROGS; do
    w=$out/$p
    mkdir -p "$w"
    if [ ! -f "$ref/$p.2.out" ] &&
        ! MPI_NP=2 tests/mpi/run.sh --ref-only "$p" >"$w/ref.log" 2>&1; then
        bad "$p" "no Open MPI reference on 2 ranks" "$w/ref.log"
        continue
    fi
    if ! mpi/bin/ukmpicc -O2 "tests/mpi/progs/$p.c" -o "$w/$p" >"$w/build.log" 2>&1 ||
        ! mpi/bin/ukmpicc --linux -O2 "tests/mpi/progs/$p.c" -o "$w/$p.linux" >>"$w/build.log" 2>&1; then
        bad "$p" "build failed" "$w/build.log"
        continue
    fi
    run "$p" 1
    run "$p" 0
done
finish
