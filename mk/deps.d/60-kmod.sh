# host-kmod/ (o2g.ko) and its guest tests (tests/kmod/): Debian's kernel headers of the
# version linux-image-amd64 depends on (the kernel tests/bench/linux-kernel.sh fetches for
# the guests), and busybox-static for the tests' small initramfs.
kmod_ver=$(apt-cache depends linux-headers-amd64 2>/dev/null |
    sed -n 's/.*Depends: linux-headers-\([0-9].*\)/\1/p' | head -n1)
[ -n "$kmod_ver" ] && PKGS+=("linux-headers-$kmod_ver")
PKGS+=(busybox-static)

# checkpatch.pl, the style check of host-kmod/ (mk/check.sh): Debian ships it only inside
# the kernel source tarball of linux-source-<major>. The three files it reads are taken out
# of it into $CACHE/checkpatch/ once; the 140 MB package is not kept.
fetch_checkpatch() {
    local d=$CACHE/checkpatch src major
    [ -f "$d/scripts/checkpatch.pl" ] && return 0
    major=$(echo "$kmod_ver" | cut -d. -f1,2)
    src=linux-source-$major
    say "fetching checkpatch.pl from $src"
    rm -rf "$d" && mkdir -p "$d/dl"
    (cd "$d/dl" && apt-get download "$src" >/dev/null 2>&1) ||
        { apt_update && (cd "$d/dl" && apt-get download "$src" >/dev/null 2>&1); } ||
        { say "apt-get download $src failed: make check skips checkpatch"; return 0; }
    dpkg-deb --fsys-tarfile "$d"/dl/"$src"_*.deb | tar -xO "./usr/src/$src.tar.xz" |
        tar -xJ -C "$d" --strip-components=1 "$src/scripts/checkpatch.pl" \
            "$src/scripts/spelling.txt" "$src/scripts/const_structs.checkpatch"
    rm -rf "$d/dl"
}
[ -n "$kmod_ver" ] && POST+=(fetch_checkpatch)
