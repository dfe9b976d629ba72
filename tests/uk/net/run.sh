#!/usr/bin/env bash
# tests/uk/net/run.sh [FILTER]: multi-node tests of the unikernel's network (virtio-net,
# lwIP from the NIC interrupt, ksock), each one job of qemu/uknodes booting the test image
# with test=net_mesh (tests/uk/net_mesh.c). Logs in build/uk/net-logs/NAME.log.
# Closing line: "uk-net: N passed, N failed".
#
#   mesh_2nodes  2 nodes, each way 1 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, checked byte by byte
#   mesh_4nodes  4 nodes, every node to every other node, the same sizes, all at once
#   mesh_cross_cpu  2 nodes of 2 CPUs; the sender runs on CPU 1 while the NIC interrupt
#                (and all of lwIP's receive path) runs on CPU 0: the lwIP lock across CPUs
#   mesh_intx    2 nodes whose NIC has no MSI-X (vectors=0): the INTx path through the IOAPIC
#   mesh_q35     2 nodes on the q35 (PCIe) machine
#   kill_node    3 nodes; node 2 is SIGKILLed half-way: nodes 0 and 1 finish with each
#                other, report "peer 2 ... ERROR" and exit 10 (no hang: the guests'
#                dead-peer timeout is 3 s, the job's timeout only a safety net)
#   garbage      2 nodes; the hub injects 300 malformed frames into each node during a
#                1 MiB exchange: every one is dropped and counted, the data is intact
#   close_in_recv  2 nodes (test=net_close); node 1 answers node 0's request and closes
#                inside the recv callback: node 0 gets the whole answer, then EOF (a FIN,
#                not the RST lwIP sends when a close leaves received bytes unacknowledged)
#   raw_frames   2 nodes (test=l2_echo): 1000 frames below lwIP (net_set_frame_hook),
#                each echoed by node 1 in its NIC interrupt; none lost
#   vcpu_nice    the same job with --vcpu-nice 10, watched from outside: each QEMU's
#                vCPU thread runs 10 nice levels below its main (I/O) thread
#   tap_linux    2 nodes whose hub has a TAP port (uknodes --tap, --netns) in a network
#                namespace this test makes: a Linux process there (tap_peer.py) sends 1 MiB
#                over TCP to each node (test=net_tap, tests/uk/net_tap.c) and checks the
#                1 MiB each answers. Needs root (ip netns, /dev/net/tun), else SKIP.
set -uo pipefail
cd "$(dirname "$0")/../../.."
filter=${1:-}
B=${B:-build}
img=$B/uk/ukernel-test.elf
logdir=$B/uk/net-logs
mkdir -p "$logdir"
pass=0 fail=0

# check NAME LOG RC WANT_RC then lines of "expect:RE", "count:N:RE", "reject:RE"
check() {
    local name=$1 log=$2 rc=$3 want=$4 why=
    shift 4
    [ "$rc" = "$want" ] || why="exit code $rc, expected $want"
    for c in "$@"; do
        case $c in
        expect:*) grep -qE -- "${c#expect:}" "$log" || why="${why:+$why; }missing: ${c#expect:}" ;;
        reject:*) ! grep -qE -- "${c#reject:}" "$log" || why="${why:+$why; }unexpected: ${c#reject:}" ;;
        count:*)
            local rest=${c#count:} n re got
            n=${rest%%:*} re=${rest#*:}
            got=$(grep -cE -- "$re" "$log")
            [ "$got" = "$n" ] || why="${why:+$why; }$got lines (want $n): $re" ;;
        esac
    done
    if [ -z "$why" ]; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: $why"
        grep -vE '^\[n[0-9]+\] *$' "$log" | tail -n 30 | sed 's/^/    | /'
        fail=$((fail + 1))
    fi
}

crash='FAULT|PANIC|lwip assert|unexpected interrupt'

run() { # NAME uknodes-args... ; sets rc, log
    log=$logdir/$1.log
    shift
    qemu/uknodes "$@" >"$log" 2>&1
    rc=$?
}

want() { [ -z "$filter" ] || [[ $1 == *$filter* ]]; }

if want mesh_2nodes; then
    run mesh_2nodes --nodes 2 --timeout 120 --append "test=net_mesh" "$img"
    check mesh_2nodes "$log" "$rc" 0 "count:2:all 1 peers ok" \
        "count:2:all 5 records from peer [01] verified" "reject:$crash"
fi

if want mesh_4nodes; then
    run mesh_4nodes --nodes 4 --timeout 150 --append "test=net_mesh" "$img"
    check mesh_4nodes "$log" "$rc" 0 "count:4:all 3 peers ok" \
        "count:12:all 5 records from peer [0-3] verified" "reject:$crash"
fi

if want mesh_cross_cpu; then
    run mesh_cross_cpu --nodes 2 --smp 2 --timeout 120 --append "test=net_mesh mesh_cpu=1" "$img"
    check mesh_cross_cpu "$log" "$rc" 0 "count:2:sending and waiting on cpu 1" \
        "count:2:all 1 peers ok" "count:2:all 5 records from peer [01] verified" "reject:$crash"
fi

if want mesh_intx; then
    run mesh_intx --nodes 2 --nic vectors=0 --timeout 120 \
        --append "test=net_mesh mesh_sizes=1,1024,65536,1048576" "$img"
    check mesh_intx "$log" "$rc" 0 "count:2:legacy PCI, INTx" "count:2:all 1 peers ok" \
        "count:2:all 4 records from peer [01] verified" "reject:$crash" \
        "reject:irq_to_recv_cycles min 0 "
fi

if want mesh_q35; then
    run mesh_q35 --nodes 2 --machine q35 --timeout 120 \
        --append "test=net_mesh mesh_sizes=1,1024,65536,1048576" "$img"
    check mesh_q35 "$log" "$rc" 0 "count:2:all 1 peers ok" "reject:$crash"
fi

if want kill_node; then
    run kill_node --nodes 3 --timeout 120 --grace 60 --kill '2:mesh: node 2: sent 50%' \
        --append "test=net_mesh ksock_timeout_ms=3000" "$img"
    check kill_node "$log" "$rc" 10 "expect:node 2 killed" \
        "expect:\[n0\] mesh: node 0: peer 2 \(10.0.0.3\): ERROR" \
        "expect:\[n1\] mesh: node 1: peer 2 \(10.0.0.3\): ERROR" \
        "expect:\[n0\] mesh: node 0: all 5 records from peer 1 verified" \
        "expect:\[n1\] mesh: node 1: all 5 records from peer 0 verified" \
        "count:2:\[n[01]\] ktest net_mesh: exit 10" "reject:$crash" "reject:\[n[01]\].*timeout after"
fi

if want close_in_recv; then
    run close_in_recv --nodes 2 --timeout 120 --append "test=net_close" "$img"
    check close_in_recv "$log" "$rc" 0 "expect:\\[n0\\] close: node 0: the whole answer" \
        "expect:\\[n1\\] close: node 1: answered and closed" "reject:$crash"
fi

# Frames below lwIP (net_set_frame_hook, net_frame_send): the raw echo that is make bench's
# cross-node floor; node 1 echoes every ping in its NIC interrupt, and lwIP still works after.
if want raw_frames; then
    run raw_frames --nodes 2 --timeout 120 --append "test=l2_echo" "$img"
    check raw_frames "$log" "$rc" 0 "expect:\[n0\] bench: l2_half_rtt_us=[0-9.]+ .*pings=1000 lost=0" \
        "count:2:ktest l2_echo: exit 0" "reject:$crash"
fi

# uknodes --vcpu-nice lowers each QEMU's vCPU threads below its I/O thread: read both
# threads' nice values in /proc while the raw echo runs.
nice_of() { # TID -> its nice value (field 19 of /proc/TID/stat; the name may hold spaces)
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    set -- ${s##*) }
    echo "${17}"
}
if want vcpu_nice; then
    log=$logdir/vcpu_nice.log d=$(mktemp -d)
    qemu/uknodes --nodes 2 --timeout 120 --keep "$d" --vcpu-nice 10 --append "test=l2_echo" "$img" >"$log.job" 2>&1 &
    job=$! seen= main=$(nice) vcpu=$(($(nice) + 10))
    [ "$vcpu" -le 19 ] || vcpu=19
    want_seen="n0 vcpu=$vcpu n0 main=$main n1 vcpu=$vcpu n1 main=$main"
    for _ in $(seq 200); do
        seen=
        for i in 0 1; do
            p=$(cat "$d/n$i.pid" 2>/dev/null) || continue
            for t in /proc/"$p"/task/*; do
                c=$(cat "$t/comm" 2>/dev/null) || continue
                [[ $c == *TCG ]] && seen+=" n$i vcpu=$(nice_of "${t##*/}")"
            done
            seen+=" n$i main=$(nice_of "$p")"
        done
        [ "${seen# }" = "$want_seen" ] && break
        sleep 0.05
    done
    echo "threads:$seen" >"$log"
    wait "$job"
    rc=$?
    cat "$log.job" >>"$log" && rm -rf "$log.job" "$d"
    check vcpu_nice "$log" "$rc" 0 "expect:^threads: $want_seen$" \
        "count:2:ktest l2_echo: exit 0" "reject:$crash"
fi

if want garbage; then
    run garbage --nodes 2 --timeout 120 --garbage 300 \
        --append "test=net_mesh mesh_sizes=1,1024,65536,1048576 mesh_garbage=300" "$img"
    check garbage "$log" "$rc" 0 "count:2:all 1 peers ok" \
        "count:2:ukhub: node [01]: injected 300 garbage frames" \
        "count:2:RX filter dropped 300 frames \(expected 300\)" "reject:$crash"
fi

# The namespace and the job of tap_linux; removed on any exit.
tap_ns= tap_job=
tap_cleanup() {
    if [ -n "$tap_job" ]; then
        kill -TERM "$tap_job" 2>/dev/null # uknodes' own trap stops its QEMUs and hub
        wait "$tap_job" 2>/dev/null
    fi
    [ -z "$tap_ns" ] || ip netns del "$tap_ns" 2>/dev/null
    tap_job= tap_ns=
}
trap tap_cleanup EXIT
trap 'exit 130' INT TERM

if want tap_linux; then
    if [ "$(id -u)" != 0 ] || [ ! -c /dev/net/tun ] || ! command -v ip >/dev/null; then
        echo "SKIP tap_linux: needs root, /dev/net/tun and ip (iproute2)"
    else
        log=$logdir/tap_linux.log
        tap_ns=uknet-tap-$$
        # Everything below lives in the new namespace: the host's network is untouched.
        { ip netns add "$tap_ns" && ip -n "$tap_ns" link set lo up &&
            ip -n "$tap_ns" tuntap add dev uktap0 mode tap &&
            ip -n "$tap_ns" addr add 10.0.0.100/24 dev uktap0 &&
            ip -n "$tap_ns" link set uktap0 up; } >"$log" 2>&1
        qemu/uknodes --nodes 2 --timeout 90 --tap uktap0 --netns "$tap_ns" \
            --append "test=net_tap tap_wait_ms=60000" "$img" >"$log.job" 2>&1 &
        tap_job=$!
        ip netns exec "$tap_ns" python3 tests/uk/net/tap_peer.py 2 1048576 60 >>"$log" 2>&1
        peer_rc=$?
        wait "$tap_job"
        rc=$?
        tap_job=
        cat "$log.job" >>"$log" && rm -f "$log.job"
        tap_cleanup
        [ "$peer_rc" = 0 ] || rc="$rc (tap_peer.py: $peer_rc)"
        check tap_linux "$log" "$rc" 0 \
            "count:2:tap_peer: node [01] \(10.0.0.[12]\): 1048576 bytes each way verified" \
            "count:2:tap: node [01]: 1048576 bytes from 10.0.0.100 verified" \
            "count:2:tap: node [01]: 1048576 bytes sent back" "reject:$crash"
    fi
fi

echo "uk-net: $pass passed, $fail failed"
[ "$fail" = 0 ]
