# MPICH's test suite (test/mpi of Debian's `mpich` source package, upstream 4.0.2) for
# tests/mpich/: only the pristine upstream tarball is fetched (`apt-get source
# --download-only`, checked by its sha256) and only its test/mpi tree is unpacked, into
# $CACHE/src/mpich-tests/mpi. Nothing of it is built here or copied into the repository.
MPICH_TESTS_SHA=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860

fetch_mpich_tests() {
    local dst="$CACHE/src/mpich-tests" dl="$CACHE/src/mpich-dl"
    [ -f "$dst/.unpacked" ] && return 0
    local tarball="$dl/mpich_4.0.2.orig.tar.xz"
    if ! echo "$MPICH_TESTS_SHA  $tarball" | sha256sum -c --quiet - >/dev/null 2>&1; then
        say "fetching MPICH's source package for its test suite (apt-get source mpich) into $dl"
        ensure_deb_src
        apt_update
        rm -rf "$dl" && mkdir -p "$dl"
        (cd "$dl" && apt-get source --download-only -qq mpich >/dev/null 2>&1) || true
    fi
    echo "$MPICH_TESTS_SHA  $tarball" | sha256sum -c --quiet - ||
        { say "mpich_4.0.2.orig.tar.xz missing or bad checksum in $dl"; exit 1; }
    rm -rf "$dst.tmp" && mkdir -p "$dst.tmp"
    tar xJf "$tarball" -C "$dst.tmp" --strip-components=3 --wildcards 'mpich-4.0.2/test/mpi/*' ||
        { say "cannot unpack test/mpi from $tarball"; exit 1; }
    rm -rf "$dst" && mkdir -p "$dst" && mv "$dst.tmp" "$dst/mpi"
    rm -f "$dl"/*.debian.tar.* "$dl"/*.dsc
    touch "$dst/.unpacked"
}
POST+=(fetch_mpich_tests)
