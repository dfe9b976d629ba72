#!/usr/bin/env bash
# tests/bench/linux-kernel.sh: the Linux kernel of the benchmarks' Linux guests (net.bench.sh,
# the Open MPI baseline of mpi.bench.sh). Prints the directory that holds `vmlinuz` and `m/`
# (the virtio-net modules; m/order lists them in load order; and kTLS's, m/tls-order).
#
# The kernel is the version Debian's linux-image-amd64 currently depends on, fetched with
# `apt-get download` into $UKMPI_CACHE/linux-guest/<version>/ and never installed on the
# host; a later run with the same version reuses it.
set -euo pipefail
CACHE=${UKMPI_CACHE:-$HOME/.cache/ukmpi}
g=$CACHE/linux-guest
# The modules virtio-net needs in Debian's config, dependencies first.
MODS="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover net_failover virtio_net"
# kTLS with AES-GCM, dependencies first (m/tls-order): the module tests' guests stack it
# on attached sockets. Loaded by the tests that need them, not by m/order's users.
TLS_MODS="gf128mul ghash-generic ctr gcm tls"

pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[0-9].*\)/\1/p' | head -n1)
[ -n "$pkg" ] || { echo "linux-kernel: cannot resolve linux-image-amd64" >&2; exit 1; }
ver=${pkg#linux-image-}
d=$g/$ver
complete() {
    local m
    [ -f "$d/vmlinuz" ] || return 1
    for m in $MODS $TLS_MODS; do [ -f "$d/m/$m.ko" ] || return 1; done
}
if ! complete; then
    mkdir -p "$g"
    # Two benchmark runs (or worktrees sharing the cache) must not unpack into one tree.
    exec 9>"$g/.lock"
    flock 9
    if ! complete; then
        rm -rf "$g/x" "$g"/*.deb "$d" && mkdir -p "$d/m"
        (cd "$g" && apt-get download "$pkg" >"$g/dl.log" 2>&1) ||
            { echo "linux-kernel: apt-get download $pkg failed (see $g/dl.log)" >&2; exit 1; }
        dpkg-deb -x "$g"/"$pkg"_*.deb "$g/x"
        for m in $MODS $TLS_MODS; do
            find "$g/x/lib/modules/$ver" -name "$m.ko" -exec cp {} "$d/m/" \;
        done
        cp "$g/x/boot/vmlinuz-$ver" "$d/vmlinuz.tmp" && mv "$d/vmlinuz.tmp" "$d/vmlinuz"
        rm -rf "$g/x" "$g"/*.deb
    fi
    exec 9>&-
fi
[ -f "$d/m/order" ] || echo "$MODS" >"$d/m/order"
[ -f "$d/m/tls-order" ] || echo "$TLS_MODS" >"$d/m/tls-order"
echo "$d"
