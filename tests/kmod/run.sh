#!/usr/bin/env bash
# tests/kmod/run.sh [NAME...]: the kernel-module tests, in a Debian guest under QEMU/TCG
# (never on the host's kernel). NAME: a module (o2g: every case of it) or one case
# (o2g/race); o2g-mpi: the MPI conformance programs of tests/mpi/progs/ built by
# `mpi/bin/ukmpicc --linux -static`, each run as a job of MPI_KMOD_NP (4) processes in one
# guest over loopback TCP through /dev/o2g, with output identical to Open MPI's
# (tests/mpi/run.sh's references, made here when missing), and o2g-mpi/module: the
# module's counters show that it matched that traffic (it fails if the library read the
# sockets itself); o2g-mpi/PROG: one program (and the counter check); o2g-mpi2 and
# o2g-mpi2/PROG: the same on 2 guests (qemu/uknodes) of MPI_KMOD_NP/2 processes each;
# mixed: the programs of MIXED_PROGS, each as one job (one MPI_COMM_WORLD of 2 ranks) of a
# unikernel node (rank 0, build/uk/ukernel.elf with the program built by mpi/bin/ukmpicc)
# and a Linux guest (rank 1, `ukmpicc --linux -static`, through /dev/o2g) on one
# qemu/uknodes hub, speaking the native protocol; rank 0's output identical to Open MPI's
# with 2 ranks, and over o2g the module's counters show it took the unikernel's stream;
# mixed/PROG: one program (any of tests/mpi/progs/); PROG:off: the Linux rank on plain
# sockets + epoll instead (UKMPI_O2G=off).
# Default: o2g, o2g-mpi, o2g-mpi2, mixed. One line per case, then "N passed, N failed"; exit
# status 1 on a failure. kacc and kacc/CASE are host-kmod/kacc's: tests/kmod/kacc.sh runs
# them, in its own guest; kacc-mpi and kacc-mpi/CASE the MPI library's non-blocking
# collectives through it (tests/kmod/kacc_mpi.sh, its own guest); ukload and ukload/CASE are host-kmod/ukload's (tests/kmod/ukload.sh,
# a 4-CPU guest).
#
# The guest: Debian's kernel (tests/bench/linux-kernel.sh, the version the module is built
# for) with an initramfs made here: busybox-static, the module, tests/kmod/o2gtest
# (static), the MPI programs and tests/kmod/guest/ (init runs the cases and ends the VM).
# One boot per group; the console goes to $B/kmod/o2g.log and $B/kmod/o2g-mpi.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
out=$B/kmod
. tests/kmod/guestlib.sh
O2G_CASES="eager unexp race order rts cancel backpressure ringfull trunc many control corrupt closed killed memlock double listen ulp posts stallzero perm mmaprace rmmod wrap fuzz dmesg"
MPI_NP=${MPI_KMOD_NP:-4}
MPI_PORT=7300 # loopback ports of the first job; each job takes the next MPI_NP
MIXED_PROGS=${MIXED_PROGS:-p2p_basic p2p_large colls commgroup p2p_nonblocking:off}
MIXED_PORT=7101 # the unikernel's MPI port (unikernel/mpi/mpe_uk.c): node 0's address

cases=() progs=() progs2=() mixed=() names=("$@")
[ $# -gt 0 ] || names=(o2g o2g-mpi o2g-mpi2 mixed)
for n in "${names[@]}"; do
    case $n in
    o2g) for c in $O2G_CASES; do cases+=("$c"); done ;;
    o2g/*) cases+=("${n#o2g/}") ;;
    kacc-mpi | kacc-mpi/*) exec tests/kmod/kacc_mpi.sh "$@" ;; # the library over kacc
    kacc | kacc/*) exec tests/kmod/kacc.sh "$@" ;; # host-kmod/kacc: its own guest
    ukload | ukload/*) exec tests/kmod/ukload.sh "$@" ;; # host-kmod/ukload: its own guest
    o2g-mpi) for f in tests/mpi/progs/*.c; do progs+=("$(basename "$f" .c)"); done ;;
    o2g-mpi/module) ;;
    o2g-mpi/*) progs+=("${n#o2g-mpi/}") ;;
    o2g-mpi2) for f in tests/mpi/progs/*.c; do progs2+=("$(basename "$f" .c)"); done ;;
    o2g-mpi2/module) ;;
    o2g-mpi2/*) progs2+=("${n#o2g-mpi2/}") ;;
    mixed) for p in $MIXED_PROGS; do mixed+=("$p"); done ;;
    mixed/*) mixed+=("${n#mixed/}") ;;
    *) echo "FAIL $n: no such module test"; echo "0 passed, 1 failed"; exit 1 ;;
    esac
done
# dmesg always closes a run: every case's kernel log is checked
[ ${#cases[@]} = 0 ] || [[ " ${cases[*]} " == *" dmesg "* ]] || cases+=(dmesg)
total=$((${#cases[@]} + ${#progs[@]} + (${#progs[@]} > 0 ? 2 : 0) + ${#progs2[@]} + (${#progs2[@]} > 0 ? 2 : 0) + ${#mixed[@]}))

# the module: its build output only on failure (Kbuild's BTF notice is noise)
if ! mk=$(make -s o2g 2>&1); then
    echo "$mk" >&2
    echo "FAIL kmod: the module does not build"
    echo "0 passed, $total failed"
    exit 1
fi
mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -I mpi/core -o "$out/o2gtest" \
    tests/kmod/o2gtest.c mpi/core/mpe_wire.c
kmod_build_kfuzz "$out/kfuzz" # the fuzz case (tests/kmod/kfuzz.c)
kdir=$(tests/bench/linux-kernel.sh)
# the module must be built for the guest's kernel (both versions come from apt's view)
# (vermagic from the .modinfo section: the host has no modinfo, kmod is not a dependency)
objcopy -O binary -j .modinfo "$out/o2g/o2g.ko" "$out/modinfo"
kver=$(tr '\0' '\n' <"$out/modinfo" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p')
if [ "$kver" != "$(basename "$kdir")" ]; then
    echo "FAIL kmod: o2g.ko is for $kver, the guest runs $(basename "$kdir")"
    echo "0 passed, $total failed"
    exit 1
fi
# Open MPI's flags for the references (tests/mpi/run.sh's)
# shellcheck disable=SC2054 # the commas are in MCA values
mpirun_flags=(--oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)
bb=/bin/busybox # busybox-static's (mk/deps.d/60-kmod.sh): the guest has no libc
pass=0 failn=0
ok() {
    echo "ok $1"
    pass=$((pass + 1))
}
bad() {
    echo "FAIL $1"
    failn=$((failn + 1))
}

# mkroot [FILE...]: the guest's root in $out/root, with FILEs in /mpi.
mkroot() {
    local r=$out/root
    rm -rf "$r" && mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/mpi" "$r/m"
    cp "$bb" "$r/bin/busybox"
    ln -s busybox "$r/bin/sh"
    cp tests/kmod/guest/init "$r/init"
    cp tests/kmod/guest/kmodlib.sh "$r/kmodlib.sh"
    cp tests/kmod/guest/mpirun "$r/bin/mpirun"
    cp tests/bench/ompi/guest/guest-exit "$r/bin/guest-exit"
    cp "$out/o2g/o2g.ko" "$out/o2gtest" "$out/kfuzz" "$r/"
    cp "$kdir"/m/*.ko "$kdir"/m/*order "$r/m/" # virtio-net (several guests), kTLS
    [ $# = 0 ] || cp "$@" "$r/mpi/"
}

# boot GROUP GUESTS CASES TIMEOUT [FILE...]: an initramfs with FILEs in /mpi, one run of
# CASES (comma-separated, init's names) on GUESTS guests (more than one: qemu/uknodes,
# joined by its hub); the consoles into $out/GROUP.log, guest after guest, unprefixed.
boot() {
    local group=$1 guests=$2 list=$3 limit=$4 rc=0
    shift 4
    mkroot "$@"
    (cd "$out/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out/initrd.cpio"
    start=$SECONDS
    local append="console=ttyS0 quiet panic=-1 $KMOD_DEBUG_APPEND $KMOD_FUZZ_APPEND kmod_cases=$list"
    if [ "$guests" = 1 ]; then
        qemu/ukboot --smp 2 --mem 512M --timeout "$limit" --initrd "$out/initrd.cpio" \
            --append "$append" "$kdir/vmlinuz" >"$out/$group.log" 2>&1 || rc=$?
    else
        qemu/uknodes --nodes "$guests" --smp 1 --mem 512M --timeout "$limit" \
            --initrd "$out/initrd.cpio" --append "$append" "$kdir/vmlinuz" \
            >"$out/$group.consoles" 2>&1 || rc=$?
        for ((g = 0; g < guests; g++)); do
            sed -n "s/^\[n$g\] //p" "$out/$group.consoles"
        done >"$out/$group.log"
    fi
    grep -E '^kmod: ' "$out/$group.log" | sed 's/^/# /' || true
    echo "# guest run ($group, $guests guest(s)): $((SECONDS - start)) s, exit $rc"
}

if [ ${#cases[@]} -gt 0 ]; then
    # the fuzz case: its budget, the time kfuzz gives it to end, eager after it
    limit=170
    [[ " ${cases[*]} " != *" fuzz "* ]] || limit=$((limit + KMOD_FUZZ_SECS + 80))
    boot o2g 1 "$(IFS=,; echo "${cases[*]}")" "$limit"
    for c in "${cases[@]}"; do
        line=$(grep -E "^(ok|FAIL) $c(:|$)" "$out/o2g.log" | head -n1 || true)
        if [ "${line%% *}" = ok ]; then
            ok "o2g/$c"
        else
            [ -n "$line" ] || line="FAIL $c: no result (see $out/o2g.log)"
            bad "o2g/${line#FAIL }"
        fi
    done
fi

# --- o2g-mpi: the MPI library's Linux build over /dev/o2g -----------------------------
# mpi_group GROUP GUESTS: every program of progs as a job of MPI_NP processes on GUESTS
# guests, then the module's counters and the guests' kernel logs.
mpi_group() {
    local group=$1 guests=$2 ref=$B/mpi-ref bins=() list=mpi-before port=$MPI_PORT
    local log=$out/$1.log name p
    mkdir -p "$out/mpi" "$ref/bin"
    for p in "${progs[@]}"; do
        # Open MPI's output, as tests/mpi/run.sh makes it (and shares it) when missing
        if [ ! -s "$ref/$p.$MPI_NP.out" ]; then
            if ! mpicc -std=c99 -O2 "tests/mpi/progs/$p.c" -o "$ref/bin/$p" >/dev/null 2>&1 ||
                ! OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 120 mpirun \
                    "${mpirun_flags[@]}" -np "$MPI_NP" "$ref/bin/$p" >"$ref/$p.$MPI_NP.out" \
                    2>/dev/null; then
                rm -f "$ref/$p.$MPI_NP.out" # never compare against a failed reference
            fi
        fi
        if mpi/bin/ukmpicc --linux -static -s -O2 "tests/mpi/progs/$p.c" -o "$out/mpi/$p" \
            >"$out/mpi/$p.build.log" 2>&1; then
            bins+=("$out/mpi/$p")
            list+=",mpi:$p:$MPI_NP:$port:on"
            port=$((port + MPI_NP))
        fi
    done
    boot "$group" "$guests" "$list,mpi-after,dmesg" 300 "${bins[@]}"
    for p in "${progs[@]}"; do
        name="$group/$p ($guests guest(s), $MPI_NP processes)"
        if [ ! -f "$out/mpi/$p" ]; then
            bad "$name: ukmpicc --linux -static build (see $out/mpi/$p.build.log)"
        elif [ ! -s "$ref/$p.$MPI_NP.out" ]; then
            bad "$name: no Open MPI reference $ref/$p.$MPI_NP.out"
        elif ! grep -q "^mpi $p rc=" "$log"; then
            bad "$name: no result (see $log)"
        elif [ "$(grep -c "^mpi $p rc=0" "$log")" != "$guests" ]; then
            bad "$name: $(grep -m1 "^mpi $p rc=" "$log"): $(grep -m1 "^mpi $p| stderr" "$log" || true)"
        elif ! sed -n "s/^mpi $p| //p" "$log" | grep -v '^stderr ' | diff -q "$ref/$p.$MPI_NP.out" - >/dev/null; then
            bad "$name: output differs from Open MPI's (see $log)"
        else
            ok "$name"
        fi
    done
    # The module matched the jobs' messages: receives posted into it took messages on
    # arrival (softirq) and at posting (its unexpected queue), and control records went
    # through it; a library that read the sockets itself, or did not post its receives
    # (UKMPI_O2G_MATCH=0), would leave these counters where they were.
    field() { # summed over the guests
        sed -n "s/.*o2g counters $1 mpi: .*$2=\([0-9]*\).*/\1/p" "$log" | awk '{ n += $1 } END { print n }'
    }
    delta() { echo $(($(field after "$1") - $(field before "$1"))); }
    if [ -z "$(field before control)" ] || [ -z "$(field after control)" ]; then
        bad "$group/module: no counters (see $log)"
    else
        s=$(delta matched_softirq) p=$(delta matched_post) c=$(delta control)
        if [ "$s" -lt ${#bins[@]} ] || [ "$p" -lt ${#bins[@]} ] || [ "$c" -lt ${#bins[@]} ]; then
            bad "$group/module: the module matched too little for ${#bins[@]} jobs: $s on arrival, $p at posting, $c control records"
        else
            ok "$group/module ($s messages matched on arrival, $p at posting, $c control records)"
        fi
    fi
    if [ "$(grep -c '^ok dmesg' "$log")" = "$guests" ]; then
        ok "$group/dmesg"
    else
        bad "$group/dmesg: $(grep -m1 '^FAIL dmesg' "$log" || echo "no result")"
    fi
}
[ ${#progs[@]} = 0 ] || mpi_group o2g-mpi 1
if [ ${#progs2[@]} -gt 0 ]; then # 2 guests x MPI_NP/2 processes, over virtio-net
    progs=("${progs2[@]}")
    MPI_PORT=$((MPI_PORT + 1000))
    mpi_group o2g-mpi2 2
fi

# --- mixed: one job of a unikernel node and a Linux guest node ---------------------------
# mixed_one PROG[:MODE]: node 0 boots the unikernel with PROG (job.conf as qemu/ukrun
# writes it: 2 ranks on 2 nodes, rank 0 here), node 1 the Debian guest, whose init runs
# rank 1 of the same job (guest/mpirun: node 1 of 2, node 0 at 10.0.0.1:MIXED_PORT)
# through /dev/o2g, or with MODE off through plain sockets.
mixed_one() {
    local p=${1%%:*} mode=on ref=$B/mpi-ref dir log name rc=0 how="over o2g" before after
    [[ $1 != *:* ]] || mode=${1#*:}
    [ "$mode" = on ] || how="over sockets"
    dir=$out/mixed/$p.$mode
    name="mixed/$1 (unikernel rank 0 + Linux rank 1 $how)"
    log=$dir/consoles
    rm -rf "$dir" && mkdir -p "$dir/uk" "$ref/bin"
    # Open MPI's output with 2 ranks (as mpi_group's), never a failed one
    if [ ! -s "$ref/$p.2.out" ] &&
        { ! mpicc -std=c99 -O2 "tests/mpi/progs/$p.c" -o "$ref/bin/$p" >/dev/null 2>&1 ||
            ! OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 120 mpirun \
                "${mpirun_flags[@]}" -np 2 "$ref/bin/$p" >"$ref/$p.2.out" 2>/dev/null; }; then
        rm -f "$ref/$p.2.out"
    fi
    if ! mpi/bin/ukmpicc -O2 "tests/mpi/progs/$p.c" -o "$dir/uk/$p" >"$dir/build.log" 2>&1 ||
        ! mpi/bin/ukmpicc --linux -static -s -O2 "tests/mpi/progs/$p.c" -o "$dir/$p" \
            >>"$dir/build.log" 2>&1; then
        bad "$name: ukmpicc build (see $dir/build.log)"
        return
    fi
    if [ ! -s "$ref/$p.2.out" ]; then
        bad "$name: no Open MPI reference $ref/$p.2.out"
        return
    fi
    printf '%s\n' "image=$p" size=2 nodes=2 env=UKMPI_SPIN_NS=0 >"$dir/uk/job.conf"
    (cd "$dir/uk" && printf '%s\n' job.conf "$p" | cpio -o -H newc --quiet >../uk.cpio)
    mkroot "$dir/$p"
    (cd "$out/root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$dir/linux.cpio"
    qemu/uknodes --nodes 2 --smp 1 --mem 512M --timeout 120 --initrd "$dir/uk.cpio" \
        --node-image "1:$kdir/vmlinuz" --node-initrd "1:$dir/linux.cpio" \
        --append "console=ttyS0 quiet panic=-1 $KMOD_DEBUG_APPEND kmod_cases=mpi-before,mpi:$p:2:$MIXED_PORT:$mode,mpi-after,dmesg" \
        build/uk/ukernel.elf >"$log" 2>&1 || rc=$?
    sed -n 's/^\[n1\] //p' "$log" >"$dir/linux.log"
    if [ "$rc" != 0 ]; then
        bad "$name: the job failed, exit $rc: $(grep -m1 -E '^\[n[01]\] (mpi: |uknodes: |ukboot: |mpi [a-z_0-9]+\| stderr)' "$log" || true) (see $log)"
    elif ! grep -q "^mpi $p rc=0" "$dir/linux.log"; then
        bad "$name: the Linux rank: $(grep -m1 "^mpi $p rc=" "$dir/linux.log" || echo 'no result') (see $log)"
    elif ! grep -q '^ok dmesg' "$dir/linux.log"; then
        bad "$name: the Linux guest's kernel log: $(grep -m1 '^FAIL dmesg' "$dir/linux.log" || echo 'no result')"
    elif ! { sed -nE 's/^\[n0\] \[0\] //p' "$log"; sed -n "/^mpi $p| stderr /d; s/^mpi $p| //p" \
        "$dir/linux.log"; } | diff -q "$ref/$p.2.out" - >/dev/null; then
        bad "$name: output differs from Open MPI's (see $log)"
    else
        # over o2g, the unikernel's records came through the module (its control count)
        before=$(sed -n 's/.*o2g counters before mpi: .*control=\([0-9]*\).*/\1/p' "$dir/linux.log")
        after=$(sed -n 's/.*o2g counters after mpi: .*control=\([0-9]*\).*/\1/p' "$dir/linux.log")
        if [ "$mode" = on ] && [ $((${after:-0} - ${before:-0})) -le 0 ]; then
            bad "$name: the module took none of the unikernel's records (see $log)"
        else
            ok "$name"
        fi
    fi
}
for p in "${mixed[@]}"; do mixed_one "$p"; done

echo "$pass passed, $failn failed"
[ "$failn" = 0 ]
