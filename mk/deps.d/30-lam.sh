# LAM/MPI 7.1.4 with IMPI support, the interop test peer (spec §16). Built from Debian's
# `lam` source package into $CACHE/lam-7.1.4-<key>, where <key> names the upstream tarball
# and this recipe; a finished build is marked by .built and never redone.
# Tools that LAM's configure needs beyond 00-base (g++ is in build-essential).
PKGS+=(build-essential g++ make dpkg-dev iproute2 util-linux procps)

LAM_RECIPE=r2-ssend-mkptfix
LAM_SHA=7cd5f289b9e4887d2a62532c33d93265a049b372ae23d0a6309e6870fef811ae

# The one-hunk fix for LAM's short-Ssend hang (spec §13.1 #1), applied as two line edits
# to the unpacked cache copy: process_syncack() must swap the saved packet's tag and cid
# (kept in network order) to host order before using them locally.
lam_patch_ssend() {
    local f=$1/otb/sys/impid/host.cc
    sed -i -e 's/^    tag = pk->pk_tag;$/    tag = pk->pk_tag; LAM_SWAP_ENDIAN(\&tag, sizeof(tag));/' \
        -e 's/^    cid = lam_pt2impisyncack(pk->pk_cid);$/    cid = pk->pk_cid; LAM_SWAP_ENDIAN(\&cid, sizeof(cid)); cid = lam_pt2impisyncack(cid);/' \
        "$f"
    grep -q 'LAM_SWAP_ENDIAN(&tag' "$f" && grep -q 'LAM_SWAP_ENDIAN(&cid' "$f" ||
        { say "LAM ssend patch did not apply to $f"; exit 1; }
}

# The one-line fix for "the communicator stays on cid -1" (spec §11.2): after a lam_basic
# collective (gather, scatter, alltoall, scan, ...) on a communicator that spans IMPI clients,
# lam_mkpt() turns the flipped collective cid (-1 - cid) back with lam_impicoll2pt(), which
# only undoes the IMPI collective cid (cid + 1) and leaves negative cids alone; the
# communicator's later point-to-point traffic and IMPI collectives then go out on cid -1
# (between LAM clients a long message then gets LAM's rendezvous ping as its data and an
# Ssend hangs; a peer that keeps cids apart, like the unikernel, matches none of it).
# Negative cids must go through lam_coll2pt() as without IMPI. mpietc.c is compiled as two
# pre-generated copies, patched alike. Relied on by tests/interop/impi_prog.c (suite:
# after_gather_*; lambasic) and uk_lam_prog.c (coll).
lam_patch_mkpt() {
    local f
    for f in "$1"/share/mpi/{mpietc,liblam-mpietc,libmpi-mpietc}.c; do
        sed -i 's/^    if (comm->c_shadow != NULL)$/    if (comm->c_shadow != NULL \&\& comm->c_contextid >= 0)/' "$f"
        grep -q 'c_shadow != NULL && comm->c_contextid >= 0' "$f" ||
            { say "LAM mkpt patch did not apply to $f"; exit 1; }
    done
}

build_lam() {
    local prefix="$CACHE/lam-7.1.4-${LAM_SHA:0:12}-$LAM_RECIPE"
    [ -f "$prefix/.built" ] && return 0
    # Two `make` runs (or worktrees sharing the cache) must not build into one tree.
    exec 9>"$CACHE/.lam.lock"
    flock 9
    [ -f "$prefix/.built" ] && { exec 9>&-; return 0; }
    local src="$CACHE/src/lam" log="$CACHE/src/lam-build.log"
    if [ ! -f "$src/lam_7.1.4.orig.tar.gz" ]; then
        ensure_deb_src
        apt_update
        rm -rf "$src" && mkdir -p "$src"
        # Only the pristine upstream tarball is needed; the Debian packaging tarball may
        # be missing from the archive, so apt's exit status is not trusted, the sha is.
        (cd "$src" && apt-get source --download-only -qq lam >/dev/null 2>&1) || true
    fi
    echo "$LAM_SHA  $src/lam_7.1.4.orig.tar.gz" | sha256sum -c --quiet - ||
        { say "lam_7.1.4.orig.tar.gz missing or bad checksum in $src"; exit 1; }
    say "building LAM/MPI 7.1.4 with IMPI into $prefix (about 3 minutes; log: $log)"
    rm -rf "$src/lam-7.1.4" "$prefix"
    tar xzf "$src/lam_7.1.4.orig.tar.gz" -C "$src"
    lam_patch_ssend "$src/lam-7.1.4"
    lam_patch_mkpt "$src/lam-7.1.4"
    (
        cd "$src/lam-7.1.4"
        export CFLAGS="-O1 -g -fcommon -std=gnu89 -Wno-error -Wno-implicit-function-declaration -Wno-int-conversion -Wno-incompatible-pointer-types"
        export CXXFLAGS="-O1 -g -std=gnu++98 -fpermissive -Wno-error -include string.h -include stdlib.h"
        ./configure --prefix="$prefix" --with-impi --without-fc --without-romio \
            --with-memory-manager=none --with-rpi=tcp --with-boot=rsh --with-rsh="ssh -x" &&
            make -j"$(nproc)" && make install
    ) >"$log" 2>&1 || { say "LAM build failed; see $log"; exit 1; }
    local info
    info=$("$prefix/bin/laminfo" 2>/dev/null || true) # not piped into grep -q: SIGPIPE
    grep -q 'IMPI support: yes' <<<"$info" ||
        { say "LAM built without IMPI support; see $log"; exit 1; }
    rm -rf "$src/lam-7.1.4"
    touch "$prefix/.built"
    ln -sfn "$(basename "$prefix")" "$CACHE/lam-7.1.4"
    exec 9>&-
}
POST+=(build_lam)
