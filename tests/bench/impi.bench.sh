#!/usr/bin/env bash
# IMPI benchmarks (prints figures, never passes or fails on timing). LAM/MPI 7.1.4 on both
# ends, in network namespaces, all measured in the same run:
#   - one-way latency (0-byte ping-pong): direct through impi-server, through one relay,
#     through two relays (private cluster to private cluster), and the added us per hop;
#   - streaming bandwidth 1 KiB .. 4 MiB for the same three paths;
#   - aggregate bandwidth of a pairwise all-to-all between the two clusters (2 + 2 procs)
#     with 1 and 2 trunks.
# Topology: <ns>A (private 10.77.1.0/24, client A), <ns>B (private 10.77.3.0/24, client B),
# <ns>G (global 10.77.2.0/24, impi-server); A and B also have a global address for the
# direct path. Front-ends: F1 (A side), F3 (A side, second trunk), F2 (B side).
# Needs root; LAM as in tests/interop. ITERS (default 2000) sets the ping-pong count.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/interop/impi_lib.sh
ITERS=${ITERS:-2000}

row() { # name value baseline unit baseline-name (the format of tests/bench/run.sh)
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b > 0 ? sprintf("%.2f", v / b) : "-"), bn }'
}

# A bridge namespace with one address; front-end namespaces joined to two bridges.
bench_topology() {
    local ns
    for ns in ${NSP}A ${NSP}B ${NSP}G; do
        mkns $ns
        ip -n $ns link add br0 type bridge
        ip -n $ns link set br0 up
    done
    ip -n ${NSP}A addr add 10.77.1.2/24 dev br0
    ip -n ${NSP}B addr add 10.77.3.2/24 dev br0
    ip -n ${NSP}G addr add 10.77.2.2/24 dev br0
    # direct global addresses of A and B
    ip link add gA netns ${NSP}A type veth peer name pA netns ${NSP}G
    ip link add gB netns ${NSP}B type veth peer name pB netns ${NSP}G
    ip -n ${NSP}G link set pA master br0 up
    ip -n ${NSP}G link set pB master br0 up
    ip -n ${NSP}A addr add 10.77.2.4/24 dev gA
    ip -n ${NSP}B addr add 10.77.2.3/24 dev gB
    ip -n ${NSP}A link set gA up
    ip -n ${NSP}B link set gB up
    fe ${NSP}F1 ${NSP}A 10.77.1.101 10.77.2.101
    fe ${NSP}F2 ${NSP}B 10.77.3.101 10.77.2.102
    fe ${NSP}F3 ${NSP}A 10.77.1.103 10.77.2.103
}
fe() { # namespace private-bridge-ns private-ip global-ip
    mkns "$1"
    ip link add priv netns "$1" type veth peer name "${1}p" netns "$2"
    ip link add glob netns "$1" type veth peer name "${1}g" netns ${NSP}G
    ip -n "$2" link set "${1}p" master br0 up
    ip -n ${NSP}G link set "${1}g" master br0 up
    ip -n "$1" addr add "$3/24" dev priv
    ip -n "$1" addr add "$4/24" dev glob
    ip -n "$1" link set priv up
    ip -n "$1" link set glob up
}

# bench_job NAME NP A-PATH B-PATH prog-args...: A-PATH direct|relay|trunk2, B-PATH
# direct|relay. Rank 0's output ends up in $WORK/log/mpirun-A.log.
bench_job() {
    local name=$1 np=$2 ap=$3 bp=$4 srv asrv bsrv aip bip p pids=()
    shift 4
    start_daemon ${NSP}G "$WORK/log/$name-server.log" "$SERVER_BIN" -server 2 -host 10.77.2.2 ||
        return 1
    pids+=("$DAEMON_PID")
    srv=$(head -n1 "$WORK/log/$name-server.log.out")
    asrv=$srv aip=10.77.2.4 bsrv=$srv bip=10.77.2.3
    if [ "$ap" != direct ]; then
        local t=()
        [ "$ap" = trunk2 ] && t=(-trunks 2)
        start_daemon ${NSP}F1 "$WORK/log/$name-rA.log" "$RELAY_BIN" -private 10.77.1.101 \
            -global 10.77.2.101 -server "$srv" "${t[@]}" || return 1
        pids+=("$DAEMON_PID")
        asrv=$(head -n1 "$WORK/log/$name-rA.log.out") aip=10.77.1.2
        if [ "$ap" = trunk2 ]; then
            start_daemon ${NSP}F3 "$WORK/log/$name-rA2.log" "$RELAY_BIN" -private 10.77.1.103 \
                -global 10.77.2.103 -trunk-index 1 \
                -trunk-of "$(sed -n 's/^trunk control //p' "$WORK/log/$name-rA.log.out")" ||
                return 1
            pids+=("$DAEMON_PID")
        fi
    fi
    if [ "$bp" = relay ]; then
        start_daemon ${NSP}F2 "$WORK/log/$name-rB.log" "$RELAY_BIN" -private 10.77.3.101 \
            -global 10.77.2.102 -server "$srv" || return 1
        pids+=("$DAEMON_PID")
        bsrv=$(head -n1 "$WORK/log/$name-rB.log.out") bip=10.77.3.2
    fi
    if [ "$1" = fake ]; then # two scripted IMPI hosts instead of LAM (see below)
        ip netns exec ${NSP}A timeout 120 python3 tests/interop/impi_fake_client.py "$asrv" 0 \
            "$2" "$aip" >"$WORK/log/$name.out" 2>&1 &
        local a=$!
        ip netns exec ${NSP}B timeout 120 python3 tests/interop/impi_fake_client.py "$bsrv" 1 \
            "$2" "$bip" >"$WORK/log/$name.b" 2>&1
        wait "$a"
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
        return
    fi
    LAMU_A=BA start_client A 0 ${NSP}A "$aip" "$asrv" "$np" "$@"
    local a=$MPIRUN_PID
    LAMU_B=BB start_client B 1 ${NSP}B "$bip" "$bsrv" "$np" "$@"
    wait "$MPIRUN_PID"
    wait "$a"
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    cp "$WORK/log/mpirun-A.log" "$WORK/log/$name.out"
}

impi_setup
impi_build_prog
bench_topology
lam_boot BA ${NSP}A
lam_boot BB ${NSP}B
echo "# IMPI benchmarks (LAM/MPI 7.1.4 over impi-server / impi-relay, namespaces+veth)"
declare -A lat
for path in "direct direct" "relay direct" "relay relay"; do
    set -- $path
    bench_job "lat-$1-$2" 1 "$1" "$2" lat "$ITERS"
    lat[$1-$2]=$(sed -n 's/^lat_us //p' "$WORK/log/lat-$1-$2.out")
    bench_job "bw-$1-$2" 1 "$1" "$2" bw
done
# LAM 7.1.4's own IMPI path costs tens of milliseconds per message (its impid daemon sits
# between the MPI process and the socket), which hides a relay's cost: the per-hop figure
# is also measured with two scripted IMPI hosts (tests/interop/impi_fake_client.py, mode
# pingpong) that speak the real startup, dance and packets through the same paths.
declare -A pp
for path in "direct direct" "relay direct" "relay relay"; do
    set -- $path
    bench_job "pp-$1-$2" 1 "$1" "$2" fake "pingpong:$((ITERS * 5))"
    pp[$1-$2]=$(sed -n 's/^pp_lat_us //p' "$WORK/log/pp-$1-$2.out")
done
perhop() { awk -v a="$2" -v b="$3" -v d="$1" 'BEGIN { printf "%.2f", ((a - d) + (b - d) / 2) / 2 }'; }
d=${lat[direct-direct]:-0} r1=${lat[relay-direct]:-0} r2=${lat[relay-relay]:-0}
row "impi: LAM latency direct (server)" "$d" "$d" us "direct"
row "impi: LAM latency via 1 relay" "$r1" "$d" us "direct"
row "impi: LAM latency via 2 relays (PC-PC)" "$r2" "$d" us "direct"
row "impi: LAM added latency per hop" "$(perhop "$d" "$r1" "$r2")" 25 us \
    "seed paper: about +25 us per hop"
d=${pp[direct-direct]:-0} r1=${pp[relay-direct]:-0} r2=${pp[relay-relay]:-0}
row "impi: host latency direct (server)" "$d" "$d" us "direct"
row "impi: host latency via 1 relay" "$r1" "$d" us "direct"
row "impi: host latency via 2 relays" "$r2" "$d" us "direct"
row "impi: host added latency per hop" "$(perhop "$d" "$r1" "$r2")" 25 us \
    "seed paper: about +25 us per hop"
for n in 1024 4096 16384 65536 262144 1048576 4194304; do
    b0=$(sed -n "s/^bw $n B \([0-9.]*\) MB\/s/\1/p" "$WORK/log/bw-direct-direct.out")
    b1=$(sed -n "s/^bw $n B \([0-9.]*\) MB\/s/\1/p" "$WORK/log/bw-relay-direct.out")
    b2=$(sed -n "s/^bw $n B \([0-9.]*\) MB\/s/\1/p" "$WORK/log/bw-relay-relay.out")
    row "impi: bw $n B via 1 relay" "${b1:-0}" "${b0:-0}" MB/s "direct"
    row "impi: bw $n B via 2 relays" "${b2:-0}" "${b0:-0}" MB/s "direct"
done
bench_job a2a-1 2 relay direct a2a 2 1048576 20
bench_job a2a-2 2 trunk2 direct a2a 2 1048576 20
# Directly between two LAMs this exchange can deadlock in LAM's own flow control (see
# net/impi/README.md), so the direct baseline uses fewer rounds; 0 means it hung.
LAM_TIMEOUT=60 bench_job a2a-0 2 direct direct a2a 2 1048576 4
t0=$(sed -n 's/^a2a_MBps //p' "$WORK/log/a2a-0.out")
t1=$(sed -n 's/^a2a_MBps //p' "$WORK/log/a2a-1.out")
t2=$(sed -n 's/^a2a_MBps //p' "$WORK/log/a2a-2.out")
row "impi: all-to-all 2+2, 1 trunk" "${t1:-0}" "${t0:-0}" MB/s "direct"
row "impi: all-to-all 2+2, 2 trunks" "${t2:-0}" "${t1:-0}" MB/s "1 trunk"
exit 0
