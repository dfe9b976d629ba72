#!/usr/bin/env bash
# mk/newlib.sh FLAVOR OUTDIR CFLAGS: build newlib (libc.a, libm.a and headers, no libgloss)
# from Debian's newlib-source into OUTDIR/x86_64-elf/{include,lib}.
#
# Called by mk/newlib.mk, which names OUTDIR after a hash of this script, the flags and the
# compiler version, so a finished OUTDIR is never rebuilt. The build happens in OUTDIR.tmp.PID
# and is renamed to OUTDIR only at the very end: an interrupted build never looks complete.
# Prints one line while building, nothing when OUTDIR already exists.
set -euo pipefail

flavor=$1 out=$2 cflags=$3
tarball=${NEWLIB_TARBALL:-/usr/src/newlib/newlib-3.3.0.tar.xz}
[ -d "$out" ] && exit 0
[ -f "$tarball" ] || { echo "newlib: $tarball missing (run 'make deps')" >&2; exit 1; }

# This script runs from a make recipe: keep the parent's jobserver out of the inner make.
unset MAKEFLAGS MFLAGS MAKELEVEL

tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/src" "$tmp/build"
trap 'rm -rf "$tmp"' EXIT
log="$tmp/build.log"
start=$(date +%s)
echo "newlib: building the $flavor flavor into $out (about a minute)" >&2

fail() {
    echo "newlib: $flavor build failed; last lines of $log:" >&2
    tail -n 30 "$log" >&2
    cp "$log" "$out.failed.log" 2>/dev/null || true
    exit 1
}

tar -C "$tmp/src" -xf "$tarball"
gcc_inc=$(gcc -print-file-name=include)

# --target=x86_64-elf with the host's binutils/gcc: the code generator is the same; only
# newlib's configure.host choices (machine dir x86_64, no syscalls dir) depend on it.
# -D__DYNAMIC_REENT__: newlib's per-thread state (errno, stdio streams, strtok, ...) is
# found through __getreent() instead of one global _impure_ptr, so the kernel can give each
# CPU (later each PVAS task) its own. The installed newlib.h says so too (below), so every
# program built against these headers agrees with the library on what _REENT means.
# -nostdinc + -idirafter: newlib's headers first, gcc's freestanding ones (stdarg.h,
# stddef.h, float.h, ...) after them, and never glibc's /usr/include.
(
    cd "$tmp/build"
    ../src/newlib-salsa/configure \
        --target=x86_64-elf --prefix="$tmp/install" \
        --disable-multilib --disable-nls \
        --disable-newlib-supplied-syscalls \
        --enable-newlib-retargetable-locking \
        --enable-newlib-io-long-long \
        --enable-newlib-io-c99-formats \
        CC_FOR_TARGET=gcc AR_FOR_TARGET=ar RANLIB_FOR_TARGET=ranlib AS_FOR_TARGET=as \
        LD_FOR_TARGET=ld NM_FOR_TARGET=nm OBJDUMP_FOR_TARGET=objdump \
        STRIP_FOR_TARGET=strip READELF_FOR_TARGET=readelf OBJCOPY_FOR_TARGET=objcopy \
        CFLAGS_FOR_TARGET="$cflags -D__DYNAMIC_REENT__ -nostdinc -idirafter $gcc_inc"
    make -j2 all-target-newlib
    make install-target-newlib
) >"$log" 2>&1 || fail

inst="$tmp/install/x86_64-elf"
[ -f "$inst/lib/libc.a" ] && [ -f "$inst/lib/libm.a" ] && [ -f "$inst/include/stdio.h" ] || fail
cat >>"$inst/include/newlib.h" <<'EOH'

/* Added by ukmpi's mk/newlib.sh: this libc was built with dynamic reentrancy
 * (_REENT is __getreent()); code compiled against it must agree. */
#ifndef __DYNAMIC_REENT__
#define __DYNAMIC_REENT__ 1
#endif
EOH
echo "$flavor: $cflags" >"$tmp/install/FLAGS"
cp "$log" "$tmp/install/build.log"
rm -rf "$out"
mv "$tmp/install" "$out"
echo "newlib: $flavor flavor built in $(($(date +%s) - start)) s" >&2
