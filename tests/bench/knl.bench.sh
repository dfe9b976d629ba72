#!/usr/bin/env bash
# tests/bench/knl.bench.sh: the knl board (boards/knl, issue 20) under the backports QEMU
# 10's TCG (qemu/qemu-bpo), whose figures say how the emulation scales, not how a Knights
# Landing runs: every virtual CPU is a host thread on this machine's few cores.
#   boot     the whole QEMU process (qemu/ukboot --board knl, KTEST bench_boot) on 4, 16,
#            64 and 255 CPUs, and the kernel's own entry-to-test time; baseline: 4 CPUs
#   ipi      IPI round trip (KTEST bench_knl_ipi) from CPU 0 to APIC id 1 (near: the same
#            core's next thread) and to the largest APIC id (far: 287, above 255, on 288
#            CPUs with the IOMMU); baseline: near
#   mpi      tests/knl/apps/knlbench.c: 8-byte ping-pong (ranks 0, 1) and Allreduce of one
#            double, 64 ranks on one 64-CPU node against 4 ranks on a 4-CPU node
#   copy     knlbench copy (8 MiB per rank, 4 ranks) on the snc4 NUMA layout with the
#            heaps on MCDRAM (mem=mcdram) against DDR (mem=ddr). Under TCG both are the
#            host's DRAM: the figure only shows the job ran with each placement (the
#            numa_place tests check where the pages are); only a real KNL shows MCDRAM's
#            bandwidth.
# Settings: KNLB_REPS (default 3) boots per boot figure (median). Logs: $B/bench/knl/.
# Never fails `make bench`: a part that cannot run says so on a line of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
K=$B/knl
out=$B/bench/knl
REPS=${KNLB_REPS:-3}
mkdir -p "$out"
. tests/bench/series.sh
row() { # name value baseline unit baseline-name (the format of run.sh)
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b > 0 && v != "-" ? sprintf("%.2f", v / b) : "-"), bn }'
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR ? v[int((NR+1)/2)] : "-")}'; }
ms_now() { echo $(($(date +%s%N) / 1000000)); }
val() { tr ' ' '\n' | grep "^$1=" | head -n1 | cut -d= -f2; }

echo "# knl board (tests/bench/knl.bench.sh): QEMU $(qemu/qemu-bpo --version 2>/dev/null | head -n1 | awk '{print $4}') TCG on $(nproc) host cores; scaling of the emulation, not KNL figures"
if ! qemu/qemu-bpo --version >/dev/null 2>&1; then
    echo "knl: not run (no backports QEMU: make deps)"
    exit 0
fi
if ! make -s BOARD=knl "$K/uk/ukernel-test.elf" "$K/uk/ukernel.elf" "$K/app/ukmpicc.conf" \
    >"$out/build.log" 2>&1; then
    echo "knl: not run (make BOARD=knl failed: $out/build.log)"
    exit 0
fi

# 1. Boot time against the CPU count.
series_new knl_boot "knl board: boot time against CPUs (QEMU 10 TCG)" ms 0 "QEMU process" "kernel entry to test"
base=
for n in 4 16 64 255; do
    walls=() guests=()
    for _ in $(seq "$REPS"); do
        t0=$(ms_now)
        qemu/ukboot --board knl --smp "$n" --mem 1G --timeout 150 --append test=bench_boot \
            "$K/uk/ukernel-test.elf" >"$out/boot$n.log" 2>&1
        t1=$(ms_now)
        walls+=($((t1 - t0)))
        guests+=("$(sed -n 's/^bench: //p' "$out/boot$n.log" | val boot_kernel_to_test_us)")
    done
    wall=$(printf '%s\n' "${walls[@]}" | median)
    g=$(printf '%s\n' "${guests[@]}" | grep . | median)
    [ -n "$base" ] || base=$wall
    row "knl boot: $n CPUs, QEMU process" "$wall" "$base" ms "4 CPUs"
    row "knl boot: $n CPUs, kernel to test" "$g" "$((wall * 1000))" us "whole QEMU process"
    series_row knl_boot "$n" "$wall" "$(awk -v g="$g" 'BEGIN { if (g != "-") printf "%.0f", g / 1000 }')"
done

# 2. IPI round trip near and far in the APIC id range, 288 CPUs (ids up to 287).
qemu/ukboot --board knl --smp 288 --mem 1G --timeout 200 --append test=bench_knl_ipi \
    "$K/uk/ukernel-test.elf" >"$out/ipi.log" 2>&1
line=$(sed -n 's/^bench: //p' "$out/ipi.log")
if [ -n "$line" ]; then
    row "knl ipi: cpu0 -> APIC id $(val ipi_far_apic <<<"$line") (far)" "$(val ipi_far_ns <<<"$line")" \
        "$(val ipi_near_ns <<<"$line")" ns "cpu0 -> APIC id $(val ipi_near_apic <<<"$line") (near)"
else
    echo "knl ipi: no figure (see $out/ipi.log)"
fi

# 3. MPI on one node: 64 ranks against 4.
app=$K/mpi-uk/bin/knlbench
mkdir -p "$(dirname "$app")"
if ! UKMPI_BUILD=$PWD/$K mpi/bin/ukmpicc -O2 tests/knl/apps/knlbench.c -o "$app" >"$out/app.log" 2>&1; then
    echo "knl mpi: not run (ukmpicc failed: $out/app.log)"
    exit 0
fi
for n in 4 64; do
    qemu/ukrun --board knl -n $n --smp $n --timeout 300 "$app" pingpong allreduce >"$out/mpi$n.log" 2>&1
done
fig() { sed -n 's/^\[0\] knlbench //p' "$1" | val "$2"; }
for f in pingpong_us allreduce_us; do
    v=$(fig "$out/mpi64.log" $f) b=$(fig "$out/mpi4.log" $f)
    row "knl mpi: ${f%_us}, 64 ranks" "${v:--}" "${b:-0}" us "4 ranks on 4 CPUs"
done

# 4. STREAM-like copy, heaps on MCDRAM against DDR (TCG: placement only, see above).
for pol in ddr mcdram; do
    qemu/ukrun --board knl --numa snc4 -n 4 --smp 4 --mem 1536M --mem-policy $pol -v \
        --timeout 120 "$app" copy >"$out/copy_$pol.log" 2>&1
done
v=$(fig "$out/copy_mcdram.log" copy_MBps) b=$(fig "$out/copy_ddr.log" copy_MBps)
row "knl copy: heaps on MCDRAM (TCG)" "${v:--}" "${b:-0}" MB/s "heaps on DDR; TCG: placement only"
exit 0
