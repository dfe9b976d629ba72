#!/usr/bin/env bash
# tests/bench/run.sh: every benchmark, with its baseline measured in the same run, printed
# as "figure  value  baseline  ratio". Benchmarks print numbers; they never pass or fail.
# REPS (default 5) sets how many boots each boot-time figure takes the median of.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
REPS=${REPS:-5}
K=$B/uk/ukernel-test.elf

# The whole run's output also goes to $B/bench/report.txt, and at the end report.sh makes
# $B/bench/report.html of it and of the series the parts wrote (plots).
if [ -z "${UKMPI_BENCH_TEE:-}" ]; then
    mkdir -p "$B/bench"
    rm -rf "$B/bench/series"
    UKMPI_BENCH_TEE=1 "$0" "$@" | tee "$B/bench/report.txt"
    rc=${PIPESTATUS[0]}
    tests/bench/report.sh || true
    exit "$rc"
fi

median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ms_now() { echo $(($(date +%s%N) / 1000000)); }
row() { # name value baseline unit baseline-name
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b > 0 ? sprintf("%.2f", v / b) : "-"), bn }'
}
boot_wall() { # image args... -> wall ms of the whole QEMU process
    local t0 t1
    t0=$(ms_now)
    qemu/ukboot "$@" >/dev/null 2>&1
    t1=$(ms_now)
    echo $((t1 - t0))
}
guest() { # test smp -> the bench: lines of that in-kernel benchmark
    qemu/ukboot --smp "$2" --append "test=$1" "$K" 2>&1 | sed -n 's/^bench: //p' | tr ' ' '\n'
}
val() { grep "^$1=" | head -n1 | cut -d= -f2; }

echo "# ukmpi benchmarks  $(date -u +%Y-%m-%dT%H:%MZ)  host: $(nproc) cores, QEMU $(qemu-system-x86_64 --version | head -n1 | awk '{print $4}') TCG"
printf '%-34s %12s %12s %-7s %8s\n' "# figure" value baseline unit ratio

# 1. Boot: the whole QEMU process, ours vs the null kernel; and the guest's own TSC figure.
ours=$(for _ in $(seq "$REPS"); do boot_wall --smp 2 --append test=bench_boot "$K"; done | median)
null=$(for _ in $(seq "$REPS"); do boot_wall $B/bench/null-kernel.elf; done | median)
row "boot: QEMU process wall time" "$ours" "$null" ms "null PVH kernel that exits at once"
g=$(for _ in $(seq "$REPS"); do guest bench_boot 2 | val boot_kernel_to_test_us; done | median)
row "boot: kernel entry to first test code" "$g" "$((ours * 1000))" us "whole QEMU process"

# 2. IPI round trip vs a shared-memory round trip between the same two CPUs.
out=$(guest bench_ipi 2)
row "ipi: round trip cpu0<->cpu1" "$(val ipi_rtt_cycles <<<"$out")" \
    "$(val shm_rtt_cycles <<<"$out")" cycles "cache-line ping-pong, same CPUs"

# 3. Timer interrupt: entry to handler, and programmed expiry to handler, vs int \$n.
out=$(guest bench_irq 1)
row "irq: timer entry to handler" "$(val timer_entry_to_handler_cycles <<<"$out")" \
    "$(val softint_entry_to_handler_cycles <<<"$out")" cycles "software int, same entry path"
row "irq: timer expiry to handler" "$(val timer_expiry_to_handler_cycles <<<"$out")" \
    "$(val softint_round_trip_cycles <<<"$out")" cycles "software int round trip"

# 4. PVAS: page-table memory per task as the job grows, spawn time, context switches.
out=$(guest bench_pvas 1)
for n in 1 4 16 32; do
    line=$(grep -A2 "^pt_tasks=$n\$" <<<"$out" | tr '\n' ' ')
    row "pvas: page tables per task, $n tasks" "$(val pvas_bytes_per_task <<<"${line// /$'\n'}")" \
        "$(val procs_bytes_per_task <<<"${line// /$'\n'}")" bytes "a process per rank, peers cross-mapped"
done
row "pvas: spawn a task" "$(val spawn_us <<<"$out")" 0 us "-"
row "pvas: switch between 2 tasks, 1 CPU" "$(val switch_pvas_cycles <<<"$out")" \
    "$(val switch_procs_cycles <<<"$out")" cycles "the same tasks in 2 address spaces"
row "pvas: CR3 loads in 40000 switches" "$(val switch_pvas_cr3_loads <<<"$out")" \
    "$(val switch_procs_cr3_loads <<<"$out")" loads "2 address spaces (2 = entering and leaving the job)"

# 5. The TCP checksum of 64 KiB (lwIP's LWIP_CHKSUM, ours) against RFC 1071's sample loop
# (2 bytes a step, as lwIP's default) and a copy of the same bytes (tests/uk/bench_chksum.c).
out=$(guest bench_chksum 1)
row "net: TCP checksum of 64 KiB" "$(val chksum_us <<<"$out")" "$(val chksum2_us <<<"$out")" us \
    "RFC 1071's sample loop, 2 bytes a step"
row "net: TCP checksum of 64 KiB" "$(val chksum_us <<<"$out")" "$(val memcpy_us <<<"$out")" us \
    "memcpy of the same bytes"
[ "$(val chksum_equal <<<"$out")" = 1 ] || echo "net: the two checksums differ (tests/uk/bench_chksum.c)"

# Other parts add their benchmarks here (each prints rows in the same format).
for b in tests/bench/*.bench.sh; do
    [ -x "$b" ] && "$b"
done
exit 0
