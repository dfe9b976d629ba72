#!/usr/bin/env bash
# tests/bench/net.bench.sh: TCP between two unikernel VMs vs the same between two Linux
# VMs, measured in the same run on the same QEMU/TCG, virtio-net-pci NIC, hub and
# -netdev dgram (qemu/uknodes). Prints rows "figure value baseline unit ratio".
#
# Unikernel: tests/uk/net_bench.c (test=net_bench). Linux: Debian's kernel image
# (linux-image-amd64's current version, fetched with `apt-get download` into
# $UKMPI_CACHE/linux-guest, never installed on the host) with an initramfs holding only
# the virtio-net modules and tests/bench/net/pingpong.c (static) as /init, which speaks
# the same protocol. BENCH_BYTES (default 32 MiB) sets the bulk transfer; NET_REPS (default
# 3) how many job pairs run, alternating unikernel and Linux; each figure is the median.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
CACHE=${UKMPI_CACHE:-$HOME/.cache/ukmpi}
BYTES=${BENCH_BYTES:-33554432}
REPS=${NET_REPS:-3}
out=$B/bench/net
mkdir -p "$out"

row() { # name value baseline unit baseline-name
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b > 0 && v != "" ? sprintf("%.2f", v / b) : "-"), bn }'
}
val() { sed -n "s/.*bench: .*$1=\([0-9.]*\).*/\1/p" | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }

# --- the Linux guest: kernel from Debian's archive, initramfs = pingpong + 8 modules ---
linux_guest() {
    local g=$CACHE/linux-guest pkg ver
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*\)/\1/p' | head -n1)
    [ -n "$pkg" ] || { echo "net.bench: cannot resolve linux-image-amd64" >&2; return 1; }
    ver=${pkg#linux-image-}
    if [ ! -f "$g/$ver/vmlinuz" ]; then
        mkdir -p "$g/$ver" && rm -f "$g"/*.deb
        (cd "$g" && apt-get download "$pkg" >/dev/null 2>&1) || { echo "net.bench: apt-get download $pkg failed" >&2; return 1; }
        rm -rf "$g/x" && dpkg-deb -x "$g"/"$pkg"_*.deb "$g/x" || return 1
        mkdir -p "$g/$ver/m"
        for m in virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
                 failover net_failover virtio_net; do
            find "$g/x/lib/modules/$ver" -name "$m.ko" -exec cp {} "$g/$ver/m/" \;
        done
        cp "$g/x/boot/vmlinuz-$ver" "$g/$ver/vmlinuz"
        rm -rf "$g/x" "$g"/*.deb
    fi
    gcc -static -O2 -o "$out/pingpong" tests/bench/net/pingpong.c || return 1
    rm -rf "$out/root" && mkdir -p "$out/root/m" && cp "$g/$ver/m/"*.ko "$out/root/m/"
    cp "$out/pingpong" "$out/root/init"
    (cd "$out/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out/initrd.cpio"
    echo "$g/$ver/vmlinuz"
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
