#!/usr/bin/env bash
# tests/bench/net.bench.sh: TCP between two unikernel VMs vs the same between two Linux
# VMs, measured in the same run on the same QEMU/TCG, virtio-net-pci NIC, hub and
# -netdev dgram (qemu/uknodes). Prints rows "figure value baseline unit ratio".
#
# Unikernel: tests/uk/net_bench.c (test=net_bench). Linux: Debian's kernel image
# (linux-image-amd64's current version, fetched by tests/bench/linux-kernel.sh into
# $UKMPI_CACHE/linux-guest, never installed on the host) with an initramfs holding only
# the virtio-net modules and tests/bench/net/pingpong.c (static) as /init, which speaks
# the same protocol. BENCH_BYTES (default 32 MiB) sets the bulk transfer; NET_REPS (default
# 3) how many job pairs run, alternating unikernel and Linux; each figure is the median.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
BYTES=${BENCH_BYTES:-33554432}
REPS=${NET_REPS:-3}
out=$B/bench/net
mkdir -p "$out"

row() { # name value baseline unit baseline-name
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b > 0 && v != "" ? sprintf("%.2f", v / b) : "-"), bn }'
}
val() { sed -n "s/.*bench: .*$1=\([0-9.]*\).*/\1/p" | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }

# --- the Linux guest: Debian's kernel (tests/bench/linux-kernel.sh), initramfs = pingpong + modules ---
linux_guest() {
    local k
    k=$(tests/bench/linux-kernel.sh) || return 1
    gcc -static -O2 -o "$out/pingpong" tests/bench/net/pingpong.c || return 1
    rm -rf "$out/root" && mkdir -p "$out/root/m" && cp "$k/m/"*.ko "$out/root/m/"
    cp "$out/pingpong" "$out/root/init"
    (cd "$out/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out/initrd.cpio"
    echo "$k/vmlinuz"
}

kernel=$(linux_guest) || kernel=
uk= lx=
for r in $(seq "$REPS"); do
    uk+=$(qemu/uknodes --nodes 2 --timeout 180 --append "test=net_bench bench_bytes=$BYTES" \
        $B/uk/ukernel-test.elf 2>&1 | tee "$out/uk.$r.log" | grep '^\[n0\] bench:')$'\n'
    [ -n "$kernel" ] || continue
    lx+=$(qemu/uknodes --nodes 2 --timeout 300 --mem 512M --initrd "$out/initrd.cpio" \
        --append "console=ttyS0 quiet panic=-1 bench_bytes=$BYTES" "$kernel" 2>&1 |
        tee "$out/linux.$r.log" | grep '^\[n0\] bench:')$'\n'
done
row "net: TCP round trip, 1 byte" "$(val tcp_rtt_us <<<"$uk")" "$(val tcp_rtt_us <<<"$lx")" us \
    "2 Linux VMs, same QEMU/NIC/netdev"
row "net: TCP bulk, $((BYTES >> 20)) MiB one way" "$(val tcp_bulk_MBps <<<"$uk")" \
    "$(val tcp_bulk_MBps <<<"$lx")" MB/s "2 Linux VMs (ratio > 1: we are faster)"
row "net: NIC irq entry to tcp_recv" "$(val 'irq_to_recv_cycles' <<<"$uk")" 0 cycles \
    "none (median; min $(val irq_to_recv_min_cycles <<<"$uk"))"
exit 0
