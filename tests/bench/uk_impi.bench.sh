#!/usr/bin/env bash
# tests/bench/uk_impi.bench.sh: the unikernel as an IMPI client next to LAM/MPI 7.1.4
# (issue 13), against LAM<->LAM measured in the same run. Prints rows "figure value
# baseline unit ratio" (tests/bench/run.sh's format); figures only, never pass or fail.
#
#   - one-way latency (median of individually timed ping-pong round trips, halved) for
#     0 B and 1 KiB, unikernel rank 0 <-> LAM's last rank: directly through impi-server and
#     with the unikernel behind one impi-relay; baseline: LAM <-> LAM on the same kind of
#     path; and the added microseconds of the relay hop on both;
#   - bandwidth 64 KiB and 4 MiB, unikernel -> LAM (up) and LAM -> unikernel (down),
#     direct and through one relay; baseline: LAM -> LAM the same way (client 0 -> 1 or
#     back);
#   - the physical limit of the unikernel's path: raw TCP between a Linux process and the
#     kernel's own lwIP over the same TAP, hub and NIC (kernel test net_tap, driven by
#     tests/bench/impi/tap_stream.py): round trip (SYN -> RST), and 4 MiB each way. The
#     node checks every byte it receives in the NIC interrupt (as net_tap's test does), so
#     TAP -> node is a floor of the path's capacity rather than its limit.
#     The LAM side's path (veth between namespaces) is not measured: it moves GB/s, far
#     above anything LAM's impid reaches, so it bounds nothing here.
#
# Jobs: the program is tests/bench/impi/ukl_bench.c, built with mpi/bin/ukmpicc and with
# LAM's mpicc. The unikernel jobs run through tests/interop/uk-with-lam.sh (1 node x 2
# ranks + 2 LAM procs, with and without --relay); the LAM<->LAM baseline runs on the
# topology of tests/bench/impi.bench.sh (tests/bench/impi_topo.sh: 1 proc per client).
#
# Latency: LAM's impid puts a heavy tail on every cross-client message (its mean is several
# times its median): the rows are medians (and the hop also from minimums; the mean of 0 B for
# comparison with impi.bench.sh). 1 KiB: LAM writes an IMPI packet's header and payload
# separately without TCP_NODELAY, so Nagle holds the payload until the peer ACKs the
# header: Linux (a LAM peer, the relay) delays that ACK up to 40 ms, the unikernel's lwIP
# up to its 250 ms timer. These waits, not the path, decide the 1 KiB figures.
# Settings: UKB_ITERS (default 400) 0-byte round trips (1 KiB: ITERS/8, at least 10);
# UKB_REPS (64) 64 KiB messages per bandwidth run (4 MiB: REPS/16); UKB_RUNS (3)
# bandwidth runs, median; UKB_TAP_RUNS (3) raw TCP runs, median.
# PERF=1: impi-relay of the unikernel relay job runs under `perf stat` (task-clock, and
# cycles where the machine has a PMU); prints its CPU time per forwarded packet from the
# relay's own counters (mostly 64 KiB and 4 MiB data: copying dominates), and the same for
# one more relay job of 0-byte ping-pongs only (the per-packet work). PERF=record: under
# `perf record -g` instead; the same figures from the samples, and the relay's hottest
# symbols as "#" lines.
# Needs root (namespaces, TAP, the LAM user): skipped with a "#" line otherwise. About a
# minute on 2 cores (PERF: 20 s more).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
ITERS=${UKB_ITERS:-400} REPS=${UKB_REPS:-64} RUNS=${UKB_RUNS:-3} TAP_RUNS=${UKB_TAP_RUNS:-3}
PERF=${PERF:-}
readonly JOB_TIMEOUT=240 PERF_ITERS=500 TAP_BYTES=4194304 TAP_PROBES=50 TAP_NODE=10.0.0.1
readonly TAP_HOST=10.0.0.254/24

echo "# unikernel <-> LAM over IMPI (tests/bench/uk_impi.bench.sh; ITERS=$ITERS REPS=$REPS RUNS=$RUNS)"
if [ "$(id -u)" != 0 ]; then
    echo "# uk_impi: skipped: needs root (network namespaces, TAP, the LAM user)"
    exit 0
fi
for f in "$B/uk/ukernel.elf" "$B/uk/ukernel-test.elf" "$B/net/impi-server" "$B/net/impi-relay"; do
    [ -f "$f" ] || { echo "# uk_impi: skipped: $f not built (make all)"; exit 0; }
done
if [ -n "$PERF" ] && ! perf --version >/dev/null 2>&1; then
    echo "# uk_impi: PERF=$PERF ignored: no perf (Debian package linux-perf, make deps)"
    PERF=
fi

. tests/interop/impi_lib.sh
. tests/bench/impi_topo.sh

row() { # name value baseline unit baseline-name; an empty value prints "-"
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, (v == "" ? "-" : v), (b == "" ? "-" : b), u, (b > 0 && v != "" ? sprintf("%.2f", v / b) : "-"), bn }'
}
# fig FILE WHAT KEY: KEY's value on FILE's first "ukl WHAT ..." line (ukl_bench.c's output).
fig() { grep -m1 "ukl $2 " "$1" | sed -n "s/.* $3=\([0-9.]*\).*/\1/p"; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }
sub() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
# A job whose figures are missing says why, as "#" lines.
job_failed() { # name log
    echo "# uk_impi: $1 failed; its last lines (without the daemons' logs):"
    grep -v '^\[impi-' "$2" | tail -n 8 | sed 's/^/#   /'
}

impi_setup
# The program for both sides: the unikernel image, and LAM's build as $PROG for bench_job.
uk_prog=$WORK/ukl_bench.uk
mpi/bin/ukmpicc -O2 -o "$uk_prog" tests/bench/impi/ukl_bench.c >"$WORK/log/ukmpicc.log" 2>&1 ||
    { job_failed "ukmpicc" "$WORK/log/ukmpicc.log"; exit 0; }
PROG=$WORK/tmp/ukl_bench
"$LAM_CACHED/bin/mpicc" -O2 -o "$PROG" tests/bench/impi/ukl_bench.c >"$WORK/log/mpicc.log" 2>&1 ||
    { job_failed "LAM's mpicc" "$WORK/log/mpicc.log"; exit 0; }
chmod 755 "$PROG"
args=("$ITERS" "$REPS" "$RUNS")

# 1. LAM <-> LAM: client A (0) directly, then behind the relay on F1; client B (1) direct.
bench_topology
lam_boot BA ${NSP}A
lam_boot BB ${NSP}B
bench_job lam-direct 1 direct direct "${args[@]}"
bench_job lam-relay 1 relay direct "${args[@]}"
lam_halt_all # idle daemons: out of the unikernel jobs' way

# 2. The unikernel (client 0) with LAM (client 1), directly and behind the relay.
perf_out=$WORK/perf.out relay_prefix=
case $PERF in
'') ;;
record) relay_prefix="perf record -g -q -o $perf_out --" ;;
*) relay_prefix="perf stat -x , -e task-clock,cycles -o $perf_out --" ;;
esac
tests/interop/uk-with-lam.sh --timeout $JOB_TIMEOUT "$uk_prog" tests/bench/impi/ukl_bench.c \
    "${args[@]}" >"$WORK/log/uk-direct.out" 2>&1
UK_LAM_RELAY_PREFIX=$relay_prefix tests/interop/uk-with-lam.sh --relay --timeout $JOB_TIMEOUT \
    "$uk_prog" tests/bench/impi/ukl_bench.c "${args[@]}" >"$WORK/log/uk-relay.out" 2>&1

# With PERF: one more relay job, 0-byte ping-pong only, for the relay's cost per small packet.
if [ -n "$PERF" ]; then
    UK_LAM_RELAY_PREFIX=${relay_prefix/$perf_out/$perf_out.small} tests/interop/uk-with-lam.sh \
        --relay --timeout $JOB_TIMEOUT "$uk_prog" tests/bench/impi/ukl_bench.c $PERF_ITERS 0 1 \
        >"$WORK/log/uk-relay-small.out" 2>&1
fi

# 3. Raw TCP over the unikernel's path: a namespace with the TAP, the hub and one node.
tap_ns=${NSP}T
mkns "$tap_ns"
ip -n "$tap_ns" tuntap add dev uktap0 mode tap
ip -n "$tap_ns" addr add "$TAP_HOST" dev uktap0
ip -n "$tap_ns" link set uktap0 up
for _ in $(seq "$TAP_RUNS"); do
    qemu/uknodes --nodes 1 --timeout 90 --tap uktap0 --netns "$tap_ns" \
        --append "test=net_tap tap_wait_ms=60000" "$B/uk/ukernel-test.elf" >>"$WORK/log/tap.job" 2>&1 &
    tap_job=$!
    PIDS+=("$tap_job")
    ip netns exec "$tap_ns" python3 tests/bench/impi/tap_stream.py "$TAP_NODE" "$TAP_BYTES" \
        "$TAP_PROBES" 60 >>"$WORK/log/tap.out" 2>&1
    wait "$tap_job"
done
tap_fig() { sed -n "s/^tap .*$1=\([0-9.]*\).*/\1/p" "$WORK/log/tap.out" | median; }

# Rows. Baselines come from the LAM job on the same kind of path.
for j in lam-direct lam-relay uk-direct uk-relay; do
    [ -n "$(fig "$WORK/log/$j.out" "bw bytes=4194304 dir=down" MBps)" ] || job_failed "$j" "$WORK/log/$j.out"
done
declare -A lat lmin lmean
for bytes in 0 1024; do
    for j in lam-direct lam-relay uk-direct uk-relay; do
        lat[$j-$bytes]=$(fig "$WORK/log/$j.out" "lat bytes=$bytes" half_rtt_us)
        lmin[$j-$bytes]=$(fig "$WORK/log/$j.out" "lat bytes=$bytes" min_us)
        lmean[$j-$bytes]=$(fig "$WORK/log/$j.out" "lat bytes=$bytes" mean_us)
    done
    name=$([ "$bytes" = 0 ] && echo 0B || echo 1KiB)
    row "ukimpi: lat $name uk-LAM direct" "${lat[uk-direct-$bytes]}" "${lat[lam-direct-$bytes]}" us \
        "LAM-LAM direct (server)"
    row "ukimpi: lat $name uk-LAM 1 relay" "${lat[uk-relay-$bytes]}" "${lat[lam-relay-$bytes]}" us \
        "LAM-LAM, client 0 behind 1 relay"
    [ "$bytes" = 0 ] || continue # 1 KiB: LAM's Nagle waits decide it (see above), not the hop
    row "ukimpi: lat $name uk-LAM direct, mean" "${lmean[uk-direct-$bytes]}" "${lmean[lam-direct-$bytes]}" us \
        "LAM-LAM direct, mean (as impi.bench.sh)"
    row "ukimpi: added lat per hop $name" "$(sub "${lat[uk-relay-$bytes]}" "${lat[uk-direct-$bytes]}")" \
        "$(sub "${lat[lam-relay-$bytes]}" "${lat[lam-direct-$bytes]}")" us "LAM-LAM's hop (goal: <= 10 us)"
    row "ukimpi: added lat per hop $name, min" "$(sub "${lmin[uk-relay-$bytes]}" "${lmin[uk-direct-$bytes]}")" \
        "$(sub "${lmin[lam-relay-$bytes]}" "${lmin[lam-direct-$bytes]}")" us "LAM-LAM's hop, from minimums"
done
for bytes in 65536 4194304; do
    name=$([ "$bytes" = 65536 ] && echo 64KiB || echo 4MiB)
    for path in direct relay; do
        p=$([ $path = direct ] && echo direct || echo "1 relay")
        row "ukimpi: bw $name uk->LAM $p" "$(fig "$WORK/log/uk-$path.out" "bw bytes=$bytes dir=up" MBps)" \
            "$(fig "$WORK/log/lam-$path.out" "bw bytes=$bytes dir=up" MBps)" MB/s "LAM->LAM (client 0 -> 1)"
        row "ukimpi: bw $name LAM->uk $p" "$(fig "$WORK/log/uk-$path.out" "bw bytes=$bytes dir=down" MBps)" \
            "$(fig "$WORK/log/lam-$path.out" "bw bytes=$bytes dir=down" MBps)" MB/s "LAM->LAM (client 1 -> 0)"
    done
done
rtt=$(tap_fig rtt_us)
[ -n "$rtt" ] || job_failed "raw TCP over the TAP" "$WORK/log/tap.out"
row "ukimpi: lat 0B direct vs raw TCP" "${lat[uk-direct-0]}" "$(awk -v r="$rtt" 'BEGIN { if (r != "") printf "%.1f", r / 2 }')" us \
    "raw TCP over the same TAP: RTT/2"
row "ukimpi: bw 4MiB uk->LAM vs raw TCP" "$(fig "$WORK/log/uk-direct.out" "bw bytes=4194304 dir=up" MBps)" \
    "$(tap_fig up_MBps)" MB/s "raw TCP node -> TAP, 4 MiB"
row "ukimpi: bw 4MiB LAM->uk vs raw TCP" "$(fig "$WORK/log/uk-direct.out" "bw bytes=4194304 dir=down" MBps)" \
    "$(tap_fig down_MBps)" MB/s "raw TCP TAP -> node, 4 MiB"

# The relay's own counters (uk-with-lam.sh prints them): packets and bytes both ways.
relay_counts() { # log -> "packets bytes"
    sed -n 's/.*forwarded private->global \([0-9]*\) packets \([0-9]*\) bytes, global->private \([0-9]*\) packets \([0-9]*\) bytes.*/\1 \2 \3 \4/p' "$1" |
        head -n1 | awk '{ print $1 + $3, $2 + $4 }'
}
# perf_rows NAME LOG PERF_FILE: the relay's CPU per forwarded packet in job LOG.
perf_rows() {
    local name=$1 log=$2 out=$3 pkts bytes ev cnt ns cyc
    read -r pkts bytes < <(relay_counts "$log")
    if [ ! -s "$out" ] || [ -z "${pkts:-}" ] || [ "$pkts" = 0 ]; then
        echo "# uk_impi: PERF=$PERF, $name: no profile or no relay counters; the job said:"
        grep -i 'perf\|error' "$log" | tail -n 5 | sed 's/^/#   /'
        return
    fi
    if [ "$PERF" = record ]; then
        # cpu-clock samples count nanoseconds (the event without a PMU); cycles count cycles.
        read -r ev cnt < <(perf report -i "$out" --stdio 2>/dev/null |
            awk '/^# Samples:/ { e = $NF } /^# Event count/ { print e, $NF; exit }')
    else
        ns=$(awk -F, '$3 == "task-clock" { printf "%.0f", $1 * 1e6 }' "$out")
        cyc=$(awk -F, '$3 == "cycles" && $1 ~ /^[0-9]/ { print $1 }' "$out")
        ev=task-clock-ns cnt=$ns
    fi
    echo "# uk_impi: $name: impi-relay forwarded $pkts packets, $bytes bytes; $ev: ${cnt:-?}${cyc:+, cycles: $cyc}"
    row "ukimpi: relay CPU/packet, $name" "$(awk -v c="${cnt:-0}" -v p="$pkts" 'BEGIN { printf "%.2f", c / p / 1000 }')" \
        "" us "- ($((bytes / pkts)) B per packet on average)"
    [ -z "${cyc:-}" ] || row "ukimpi: relay cycles/packet, $name" "$((cyc / pkts))" "" cycles "-"
    if [ "$PERF" = record ]; then
        echo "# uk_impi: $name: impi-relay's hottest symbols (perf report, self):"
        perf report -i "$out" --stdio --no-children --sort symbol 2>/dev/null |
            grep -E '^ +[0-9.]+%' | head -n 12 | sed 's/^/#   /'
    fi
}
if [ -n "$PERF" ]; then
    grep -q cycles, "$perf_out" 2>/dev/null && ! grep -q '^[0-9].*,cycles,' "$perf_out" &&
        echo "# uk_impi: perf: cycles not supported on this machine (no PMU in the VM): CPU time instead"
    perf_rows "relay job" "$WORK/log/uk-relay.out" "$perf_out"
    perf_rows "0B only" "$WORK/log/uk-relay-small.out" "$perf_out.small"
fi
exit 0
