#!/usr/bin/env bash
# tests/bench/ukload.bench.sh: boot time and noise of the unikernel on a Linux node's reserved cores
# (host-kmod/ukload, issue 19) against the same test image booted as its own QEMU VM.
#   reserved cores: tests/kmod/ukload.sh ukload/bench, REPS boots of boards/hosted's test
#     image (test=bench_boot) on CPU 3 of a 4-CPU Debian guest: the kernel's own time from
#     its entry to the test code (TSC), and the wall time `ukload boot -w` saw from just
#     before the start-up IPIs (INIT's 10 ms wait included) to the exit word
#   own VM: the qemu board's test image, qemu/ukboot --smp 1 test=bench_boot: the same
#     kernel figure, and the wall time of the whole QEMU process
#   ukvnic0 (the shared-memory NIC): ukload/vnicbench, for each Linux poll period
#     (vnic_poll_us= 20, 100 (the default), 1000 us) and with the unikernel's IPIs towards
#     Linux instead (vnic_ipi=1, the poll a 100 ms backstop): the median of REPS x 200 1-byte TCP
#     round trips between a Linux process and the unikernel (tests/uk/vnic_echo.c), and
#     16 MiB each way in turn (net_tap, as the vnic test); against the unikernel's TCP
#     between two QEMU VMs over virtio-net (qemu/uknodes, test=net_bench, one run)
#   MPI (ukload/mpibench): tests/bench/mpi's ping-pong (mpibench pingpong, UKLOAD_MPI_ITERS
#     round trips for <= 1 KiB), REPS jobs of each side in turn in the same guest run: the
#     hosted unikernel's rank 0 (CPU 3) and a Linux process's rank 1 over ukvnic0 (Linux
#     polling every 100 us, and again with the unikernel's IPIs: the ", IPI" rows), against
#     two Linux processes of the library (mpi/linux/) over TCP loopback: UKMPI_SHM=0 and no
#     UKMPI_JOB, so the library's TCP path, not its shared memory between local processes
#     (mpi/linux/mlx_env.c), and no /dev/o2g; the half round trip of 0 B, 8 B and 1 KiB and
#     the ping-pong bandwidth of 64 KiB and 1 MiB (the medians of the runs' medians); both
#     sides' ranks wait without spinning (UKMPI_SPIN_NS=0: the vCPUs share the host's cores)
# Medians of REPS (5). Both under QEMU/TCG, so the walls are TCG's, not hardware's; the
# hosted kernel skips the PIT calibration (the loader gives the TSC rate).
# Noise (the same guest run, ukload/noise): tests/kmod/uknoise.h's fixed-work loop,
# NOISE_ITERS iterations timed with the TSC, on the unikernel's CPU 3 (test=bench_noise)
# and at the same time in a Linux process pinned to CPU 2 (tests/kmod/uknoise.c), with
# Linux idle, and while it runs a busy workload (fork/exec loops, dd | md5sum, 1 ms sleeps;
# ukload-init's load_start) on its other CPUs 0-1 ("apart") or on all three ("shared").
# The spread of the per-iteration times (max, p99.9 and p99 over the median) and the
# count of iterations over twice the median, each the median of REPS runs; value: the
# unikernel's, baseline: Linux's. Hazard for reading them: TCG adds its own noise to both
# sides (the host schedules the vCPU threads among its other work: with the load, more
# busy vCPUs than host cores; TCG's translation and cross-vCPU flushes stop every vCPU),
# so neither side reaches a bare-metal floor; the comparison within one run is the point,
# and the host's load is printed.
# Prints rows "figure value baseline unit ratio"; never fails `make bench`.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
REPS=${REPS:-5}
VNIC_BYTES=16777216 # ukvnic0's bulk transfer, each way (ukload-init's VNIC_BENCH_BYTES)
median() { sort -n | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "")}'; }
ms_now() { echo $(($(date +%s%N) / 1000000)); }
row() { # name value baseline unit baseline-name; an empty value prints "-"
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, (v == "" ? "-" : v), (b == "" ? "-" : b), u, (b > 0 && v != "" ? sprintf("%.2f", v / b) : "-"), bn }'
}

log=$B/kmod/ukload.log
echo "# host load before the guest run: $(uptime)"
if ! KMOD_DEBUG_APPEND= UKLOAD_BENCH_REPS=$REPS UKLOAD_TIMEOUT=700 tests/kmod/ukload.sh ukload/bench ukload/noise \
    ukload/vnicbench ukload/mpibench >/dev/null 2>&1; then
    echo "# ukload: the reserved-cores guest run failed (see $log)"
fi
hk=$(sed -n 's/^ukload-bench kernel_us=\([0-9]*\) .*/\1/p' "$log" 2>/dev/null | median)
hw=$(sed -n 's/^ukload-bench .*wall_ms=\([0-9]*\)$/\1/p' "$log" 2>/dev/null | median)

K=$B/uk/ukernel-test.elf
vk=() vw=()
for _ in $(seq "$REPS"); do
    t0=$(ms_now)
    out=$(qemu/ukboot --smp 1 --append test=bench_boot "$K" 2>&1)
    vw+=($(($(ms_now) - t0)))
    vk+=("$(sed -n 's/^bench: boot_kernel_to_test_us=//p' <<<"$out")")
done
row "ukload: boot, IPI to exit (wall)" "$hw" "$(printf '%s\n' "${vw[@]}" | median)" ms \
    "the image as its own QEMU VM, whole process"
row "ukload: kernel entry to test code" "$hk" "$(printf '%s\n' "${vk[@]}" | median)" us \
    "the same in its own QEMU VM (PIT calibration)"


# spread LOAD SIDE FIELD: the median over the guest's runs LOAD/SIDE (ukload-init's
# "ukload-noise" lines) of FIELD over the run's median iteration, two decimals; FIELD
# median_cycles: the median iteration itself, in us at the guest's TSC rate; FIELD slow*:
# a count of slow iterations as is (uknoise.h's histogram)
mhz=$(sed -n 's/^ukload-noise-tsc mhz=//p' "$log" 2>/dev/null | head -n1)
spread() {
    grep "^ukload-noise load=$1 side=$2 " "$log" 2>/dev/null |
        awk -v f="$3" -v mhz="$mhz" '{
            for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            if (f ~ /^slow/) print v[f]
            else if (f == "median_cycles") { if (mhz > 0) printf "%.1f\n", v[f] / mhz }
            else if (v["median_cycles"] > 0) printf "%.2f\n", v[f] / v["median_cycles"]
        }' | median
}
echo "# host load after the guest run: $(uptime)"
declare -A what=([idle]="Linux idle" [apart]="load on Linux CPUs 0-1" [shared]="load on CPUs 0-2")
for f in max p999 p99; do
    for l in idle apart shared; do
        row "noise: $f/median, $l" "$(spread $l uk ${f}_cycles)" "$(spread $l linux ${f}_cycles)" \
            x "the loop on Linux CPU 2, ${what[$l]}"
    done
done
for l in idle apart shared; do
    for k in "slow 2" "slow10 10" "slow100 100"; do
        row "noise: iterations > ${k#* }x median, $l" "$(spread $l uk "${k% *}")" \
            "$(spread $l linux "${k% *}")" count "Linux CPU 2, ${what[$l]}"
    done
done
row "noise: median iteration, apart" "$(spread apart uk median_cycles)" \
    "$(spread apart linux median_cycles)" us "Linux CPU 2, ${what[apart]}"
# ukvnic0 against virtio-net between two unikernel VMs (tests/bench/net.bench.sh's setup)
vn=$(qemu/uknodes --nodes 2 --timeout 180 --append "test=net_bench bench_bytes=$VNIC_BYTES" \
    "$K" 2>&1 | grep '^\[n0\] bench:')
vrtt=$(sed -n 's/.*tcp_rtt_us=\([0-9.]*\).*/\1/p' <<<"$vn")
vbw=$(sed -n 's/.*tcp_bulk_MBps=\([0-9.]*\).*/\1/p' <<<"$vn")
# one row pair per poll period the guest measured (ukload-init's vnic_polls)
for p in $(sed -n 's/^ukload-vnicbench poll_us=\([0-9a-z]*\) .*/\1/p' "$log" 2>/dev/null); do
    l=$(grep "^ukload-vnicbench poll_us=$p " "$log")
    how="poll $p us"
    [ "$p" != ipi ] || how="IPI to Linux"
    row "ukvnic0: TCP round trip 1 B, $how" "$(sed -n 's/.*rtt_us=\([0-9.]*\).*/\1/p' <<<"$l")" \
        "$vrtt" us "2 unikernel VMs, virtio-net"
    row "ukvnic0: TCP 16 MiB each way, $how" "$(sed -n 's/.*MBps=\([0-9.]*\).*/\1/p' <<<"$l")" \
        "$vbw" MB/s "2 unikernel VMs, virtio-net, one way (ratio > 1: faster)"
done
# MPI between the hosted rank and a Linux process, against two Linux processes over
# loopback TCP (ukload-init's "ukload-mpibench side=vnic|loopback pingpong ..." lines)
# mpib SIDE BYTES FIELD: the median over the runs of FIELD for BYTES on SIDE
mpib() {
    sed -n "s/^ukload-mpibench side=$1 pingpong bytes=$2 .*$3=\([0-9.]*\).*/\1/p" "$log" 2>/dev/null | median
}
for side in vnic vnicipi; do
    how=
    [ $side = vnic ] || how=", IPI"
    for b in 0 8 1024; do
        row "MPI: half round trip $b B$how" "$(mpib $side $b half_rtt_us)" \
            "$(mpib loopback $b half_rtt_us)" us "2 Linux processes, TCP loopback"
    done
    for b in 65536 1048576; do
        row "MPI: bandwidth $((b / 1024)) KiB$how" "$(mpib $side $b MBps)" \
            "$(mpib loopback $b MBps)" MB/s "2 Linux processes, TCP loopback (ratio > 1: faster)"
    done
done
exit 0
