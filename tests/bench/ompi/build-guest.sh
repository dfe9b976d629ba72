#!/usr/bin/env bash
# tests/bench/ompi/build-guest.sh: the root filesystem of the Open MPI baseline guests of
# tests/bench/mpi.bench.sh, built once and cached. Prints the cache directory, which holds
#   rootfs.cpio   Debian minbase + Open MPI and MPICH (Debian packages only) + guest/*,
#                 as one newc cpio: the whole initramfs, /init = guest/init
#   info          suite, mirror, Open MPI and MPICH versions, sizes, build time
#
# The directory is $UKMPI_CACHE/ompi-guest-<key>, where <key> hashes this script, guest/*
# and the suite: changing any of them builds a new guest, anything else reuses the old one.
# The kernel, its modules and the benchmark binary are not in here: ompi/run.sh appends
# them to each run's initramfs as a second cpio archive (the kernel unpacks both), so a
# new kernel or a changed mpibench.c costs no rebuild.
#
# debootstrap (mk/deps.d/45-ompi-guest.sh) fetches from the Debian archive this machine's
# apt already uses (/etc/apt/sources.list*), default http://deb.debian.org/debian. It needs
# root: as another user the script reruns itself with `sudo -n` or fails saying so.
# OMPI_GUEST_SUITE overrides the suite (default: the host's, e.g. bookworm: mpibench is
# compiled on the host with its Debian mpicc, so the guest's libopenmpi3 must match).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${UKMPI_CACHE:-$HOME/.cache/ukmpi}
# shellcheck disable=SC1091
SUITE=${OMPI_GUEST_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")}
# Depends only (no Recommends): the MPI runtimes (Open MPI; MPICH for the Linux-build
# benchmarks, tests/bench/linux.bench.sh), socat for the rexec launcher, ip, insmod.
PKGS=openmpi-bin,libopenmpi3,mpich,libmpich12,socat,iproute2,kmod
key=$({ cat "$here/build-guest.sh" "$here"/guest/*; echo "$SUITE $PKGS"; } | sha256sum | cut -c1-12)
out=$CACHE/ompi-guest-$key
say() { printf 'ompi-guest: %s\n' "$*" >&2; }

[ -f "$out/rootfs.cpio" ] && { echo "$out"; exit 0; }
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo -n env UKMPI_CACHE="$CACHE" OMPI_GUEST_SUITE="$SUITE" "$here/build-guest.sh" >/dev/null
        sudo -n chown -R "$(id -u):$(id -g)" "$out"
        echo "$out"
        exit 0
    fi
    say "debootstrap needs root (or sudo without a password); run 'make bench' as root once"
    exit 1
fi
command -v debootstrap >/dev/null || { say "debootstrap missing: run 'make deps'"; exit 1; }

# The mirror apt uses for $SUITE (deb822 .sources first, then one-line sources.list).
apt_mirror() {
    local u
    u=$(awk -v s="$SUITE" '
        function flush() {
            if (!found && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " s " ") && uri != "") {
                print uri; found = 1
            }
            types = suites = uri = ""
        }
        FNR == 1 || /^[ \t]*$/ { flush() }
        /^Types:/ { types = $0; sub(/^Types:[ \t]*/, "", types) }
        /^Suites:/ { suites = $0; sub(/^Suites:[ \t]*/, "", suites) }
        /^URIs:/ { uri = $2 }
        END { flush() }' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
    [ -n "$u" ] || u=$(awk -v s="$SUITE" '$1 == "deb" {
            i = 2
            if ($2 ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
            if ($(i + 1) == s) { print $i; exit }
        }' /etc/apt/sources.list 2>/dev/null)
    echo "${u:-http://deb.debian.org/debian}"
}

mkdir -p "$CACHE"
# Two runs (or worktrees sharing the cache) must not debootstrap into one tree.
exec 9>"$CACHE/.ompi-guest.lock"
flock 9
[ -f "$out/rootfs.cpio" ] && { echo "$out"; exit 0; }
tmp=$out.tmp
root=$tmp/rootfs
rm -rf "$tmp" && mkdir -p "$tmp"
mirror=$(apt_mirror)
t0=$(date +%s)
say "building the Open MPI guest: debootstrap $SUITE minbase + $PKGS from $mirror (a few minutes; log: $tmp/debootstrap.log)"
debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$root" "$mirror" >"$tmp/debootstrap.log" 2>&1 ||
    { say "debootstrap failed; see $tmp/debootstrap.log"; exit 1; }
t1=$(date +%s)

# /init and the launcher; node names n0..n63 as qemu/uknodes numbers them (ip 10.0.0.I+1)
install -m 755 "$here/guest/init" "$root/init"
install -m 755 "$here/guest/guest-exit" "$root/usr/local/sbin/guest-exit"
install -m 755 "$here/guest/rexecd-handler" "$root/usr/local/sbin/rexecd-handler"
install -m 755 "$here/guest/rexec" "$root/usr/local/bin/rexec"
{
    echo "127.0.0.1 localhost"
    for i in $(seq 0 63); do echo "10.0.0.$((i + 1)) n$i"; done
} >"$root/etc/hosts"
# the kernel opens /dev/console for /init before /init mounts devtmpfs
[ -e "$root/dev/console" ] || mknod -m 600 "$root/dev/console" c 5 1
[ -e "$root/dev/null" ] || mknod -m 666 "$root/dev/null" c 1 3
mkdir -p "$root/m"
# nothing the guest reads; a smaller initramfs unpacks faster under TCG
rm -rf "$root"/usr/share/{doc,man,info,locale,lintian} "$root"/var/cache/apt/* \
    "$root"/var/lib/apt/lists/* "$root"/var/log/*

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$tmp/rootfs.cpio"
ompi=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}' libopenmpi3)
mpich=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}' libmpich12)
{
    echo "suite=$SUITE mirror=$mirror"
    echo "openmpi=$ompi"
    echo "mpich=$mpich"
    echo "rootfs_MiB=$(du -sm "$root" | cut -f1) cpio_MiB=$(($(stat -c %s "$tmp/rootfs.cpio") >> 20))"
    echo "debootstrap_s=$((t1 - t0)) total_s=$(($(date +%s) - t0)) built=$(date -u +%FT%TZ)"
} >"$tmp/info"
rm -rf "$root"
rm -rf "$out" && mv "$tmp" "$out"
say "done: $out ($(tr '\n' ' ' <"$out/info"))"
echo "$out"
