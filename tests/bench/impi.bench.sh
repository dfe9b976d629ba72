#!/usr/bin/env bash
# IMPI benchmarks (prints figures, never passes or fails on timing). LAM/MPI 7.1.4 on both
# ends, in network namespaces, all measured in the same run:
#   - one-way latency (0-byte ping-pong): direct through impi-server, through one relay,
#     through two relays (private cluster to private cluster), and the added us per hop;
#   - streaming bandwidth 1 KiB .. 4 MiB for the same three paths;
#   - aggregate bandwidth of a pairwise all-to-all between the two clusters (2 + 2 procs)
#     with 1 and 2 trunks.
# Topology: tests/bench/impi_topo.sh (shared with tests/bench/uk_impi.bench.sh).
# Needs root; LAM as in tests/interop. ITERS (default 2000) sets the ping-pong count.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/interop/impi_lib.sh
. tests/bench/impi_topo.sh
ITERS=${ITERS:-2000}

row() { # name value baseline unit baseline-name (the format of tests/bench/run.sh)
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b ~ /^[0-9.]+$/ && b > 0 && v ~ /^-?[0-9.]+$/ ? sprintf("%.2f", v / b) : "-"), bn }'
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
# Added latency per relay hop; "-" when the direct path measured slower than a relayed one
# (LAM's impid noise can do that: the difference is then no hop's cost).
perhop() { awk -v a="$2" -v b="$3" -v d="$1" 'BEGIN { h = ((a - d) + (b - d) / 2) / 2; if (h < 0) print "-"; else printf "%.2f", h }'; }
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
row "impi: all-to-all 2+2, 1 trunk" "${t1:-0}" "${t0:--}" MB/s "direct (-: it hung)"
row "impi: all-to-all 2+2, 2 trunks" "${t2:-0}" "${t1:-0}" MB/s "1 trunk"
exit 0
