# host-kmod/ (o2g.ko) and its guest tests (tests/kmod/): Debian's kernel headers of the
# version linux-image-amd64 depends on (the kernel tests/bench/linux-kernel.sh fetches for
# the guests), and busybox-static for the tests' small initramfs.
kmod_ver=$(apt-cache depends linux-headers-amd64 2>/dev/null |
    sed -n 's/.*Depends: linux-headers-\([0-9].*\)/\1/p' | head -n1)
[ -n "$kmod_ver" ] && PKGS+=("linux-headers-$kmod_ver")
PKGS+=(busybox-static)
