# shellcheck shell=bash
# tests/kmod/guestlib.sh: shell shared by the module tests' host scripts (sourced).

# kmod_for_guest KO KDIR: the module's vermagic (from its .modinfo section: the host has
# no modinfo) names the guest kernel's version; prints why not and fails otherwise.
kmod_for_guest() {
    local ko=$1 kdir=$2 info kver
    info=$(mktemp)
    objcopy -O binary -j .modinfo "$ko" "$info"
    kver=$(tr '\0' '\n' <"$info" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p')
    rm -f "$info"
    [ "$kver" = "$(basename "$kdir")" ] && return 0
    echo "$(basename "$ko") is for $kver, the guest runs $(basename "$kdir")"
    return 1
}

# The module guests' kernel options beyond the console: slub_debug=FZPU poisons freed
# slab objects and checks red zones, so a use-after-free or an overflow in a module shows
# in dmesg (kmodlib.sh's kmod_dmesg) instead of passing silently. Debian's kernel has no
# KASAN or lockdep; these checks are what it offers without building a kernel.
KMOD_DEBUG_APPEND=${KMOD_DEBUG_APPEND-slub_debug=FZPU} # benches set it empty

# The fuzz cases (o2g/fuzz, kacc/fuzz: tests/kmod/kfuzz.c) on the guest's kernel command
# line: KMOD_FUZZ_SECS of operations (20 by default; make test-full gives 120), from
# KMOD_FUZZ_SEED (a fixed seed by default, so that make test runs the same operations
# every time; make test-full draws one, and every case prints its seed), leaving out the
# operation families of KMOD_FUZZ_AVOID (kfuzz's --avoid: comma-separated; "none", the
# default, leaves out nothing).
KMOD_FUZZ_SECS=${KMOD_FUZZ_SECS:-20}
KMOD_FUZZ_SEED=${KMOD_FUZZ_SEED:-1}
KMOD_FUZZ_AVOID=${KMOD_FUZZ_AVOID:-none}
# shellcheck disable=SC2034 # used by the scripts that source this file
KMOD_FUZZ_APPEND="kfuzz_secs=$KMOD_FUZZ_SECS kfuzz_seed=$KMOD_FUZZ_SEED kfuzz_avoid=$KMOD_FUZZ_AVOID"

# kmod_build_kfuzz OUT: tests/kmod/kfuzz.c as a static program (with mpi/cad's builder).
kmod_build_kfuzz() {
    gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -pthread -I mpi/cad -I mpi/core \
        -o "$1" tests/kmod/kfuzz.c mpi/core/mpe_wire.c mpi/cad/cad_build.c \
        mpi/cad/cad_validate.c mpi/cad/cad_exec.c mpi/cad/cad_calc.c mpi/cad/cad_err.c \
        mpi/cad/cad_types.c
}

# kmod_root DIR INIT: a fresh initramfs tree in DIR: busybox-static (mk/deps.d/60-kmod.sh;
# the guest has no libc), INIT as /init, guest-exit (tests/bench/ompi/guest/).
kmod_root() {
    local r=$1
    rm -rf "$r" && mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp"
    cp /bin/busybox "$r/bin/busybox"
    ln -s busybox "$r/bin/sh"
    cp "$2" "$r/init"
    cp tests/bench/ompi/guest/guest-exit "$r/bin/guest-exit"
    cp tests/kmod/guest/kmodlib.sh "$r/kmodlib.sh"
}

# kmod_cpio DIR OUT: DIR as a newc initramfs.
kmod_cpio() {
    (cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$2"
}

# kmod_verdict SUITE CASE LINE WHY: one case's result line from the guest ("ok CASE ..." or
# "FAIL CASE: ...", empty when the guest printed none: then WHY says so), printed as
# SUITE/CASE and counted in the caller's pass and failn.
kmod_verdict() {
    local line=$3
    if [ "${line%% *}" = ok ]; then
        echo "ok $1/${line#ok }"
        pass=$((pass + 1))
    else
        [ -n "$line" ] || line="FAIL $2: no result ($4)"
        echo "FAIL $1/${line#FAIL }"
        failn=$((failn + 1))
    fi
}

# kmod_summary LOG START: the module's counters from the guest's LOG, the run's time since
# START (seconds), the closing line; fails if a case failed.
kmod_summary() {
    grep -E '^kmod: ' "$1" | sed 's/^/# /' || true
    echo "# guest run: $((SECONDS - $2)) s"
    echo "$pass passed, $failn failed"
    [ "$failn" = 0 ]
}
