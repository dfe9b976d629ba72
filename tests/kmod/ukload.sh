#!/usr/bin/env bash
# tests/kmod/ukload.sh [ukload | ukload/CASE...]: host-kmod/ukload's tests, in a Debian guest
# under QEMU/TCG (tests/kmod/run.sh hands ukload's names here). One line per case, then
# "N passed, N failed"; exit status 1 on a failure.
#
# The guest: Debian's kernel (tests/bench/linux-kernel.sh), 4 CPUs of which Linux onlines
# 3 (maxcpus=3), 1 GiB with 128 MiB at 0x20000000 and the page at 0x70000 kept from Linux
# (memmap=, the hosted board's HOSTED_BASE and ukload.ko's default trampoline page) and
# 32 MiB at 0x30000000 made legacy persistent memory (memmap=!: the range case's); an
# initramfs with busybox-static, ukload.ko, the ukload tool, ukperm (the perm case's
# unprivileged user), boards/hosted's test kernel
# (make BOARD=hosted), the qemu board's kernel (an image for the wrong range), vnicpeer,
# vnicevil (the vnicvictim case's hostile writer), virtio-net's modules (the route cases) and
# tests/kmod/ukload-init as /init, which runs the cases. The console goes to
# $B/kmod/ukload.log. UKLOAD_CYCLES (10) boots in the cycles case; UKLOAD_VNIC_SIZES
# (A,B,...: 1 B to 16 MiB) the vnic case's transfers, one boot each; ukload/bench (not in
# the default list: tests/bench/ukload.bench.sh runs it) UKLOAD_BENCH_REPS (5) boots; so is
# ukload/noise (tests/kmod/uknoise.h's loop on both sides). UKLOAD_TIMEOUT (150 s): a
# guest's whole run. ukload/x2apic boots a second guest, in x2APIC mode (see below; its
# console in $B/kmod/ukload-x2apic.log). ukload/vnicipi: ukvnic0 with the unikernel's IPIs
# towards Linux (ukload.ko vnic_ipi=1), counted in /proc/interrupts. ukload/mpi:
# UKLOAD_MPI_PROGS (p2p_basic colls_reduce), each one job of 2 ranks over ukvnic0: the
# hosted unikernel's rank 0 and a Linux process's rank 1 (`ukmpicc --linux -static`, in
# the guest's /mpi); ukload/mpibad:
# the unikernel told a wrong address for the Linux node, both sides end with an error;
# ukload/mpibench (not in the default list: tests/bench/ukload.bench.sh runs it)
# tests/bench/mpi's ping-pong (UKLOAD_MPI_ITERS, 300) over ukvnic0 and over loopback TCP.
# ukload/route and ukload/routetcp each boot a qemu/uknodes job of a unikernel VM node and
# this guest (see route_guest below); UKLOAD_ROUTE_BYTES (1 MiB) routetcp's stream each way.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/kmod/guestlib.sh
B=${B:-build}
out=$B/kmod
# lockdown last: the guest cannot leave lockdown (ukload-init runs it last in any case)
CASES="range perm badelf busycpu cycles exitcode fault hang smp isolation job vnic vnicipi vnichostile vnicvictim mpi mpibad stop rmmod online x2apic route routetcp lockdown"
JOB_PROG=p2p_basic JOB_NP=4 # the job case: this conformance program, as 4 ranks on 2 CPUs
CYCLES=${UKLOAD_CYCLES:-10}
# the mpi case: these conformance programs, each a job of the hosted unikernel's rank 0 and
# a Linux process's rank 1 over ukvnic0
MPI_PROGS=${UKLOAD_MPI_PROGS:-p2p_basic colls_reduce}

cases=()
for n in "${@:-ukload}"; do
    case $n in
    ukload) for c in $CASES; do cases+=("$c"); done ;;
    ukload/*) cases+=("${n#ukload/}") ;;
    *) echo "FAIL $n: not a ukload test"; echo "0 passed, 1 failed"; exit 1 ;;
    esac
done
[[ " ${cases[*]} " == *" dmesg "* ]] || cases+=(dmesg) # every run's kernel log is checked

refuse() { # all cases fail for one reason
    for c in "${cases[@]}"; do echo "FAIL ukload/$c: $1"; done
    echo "0 passed, ${#cases[@]} failed"
    exit 1
}
if ! mk=$(make -s ukload build/uk/ukernel.elf build/uk/ukernel-test.elf build/net/ukhub 2>&1 &&
    make -s BOARD=hosted build/hosted/uk/ukernel-test.elf build/hosted/uk/ukernel.elf 2>&1); then
    echo "$mk" >&2
    refuse "the module, the tool or the kernels do not build"
fi
kdir=$(tests/bench/linux-kernel.sh)
why=$(kmod_for_guest "$out/ukload/ukload.ko" "$kdir") || refuse "$why"

r=$out/ukload-root
kmod_root "$r" tests/kmod/ukload-init
mkdir -p "$r/uk"
cp "$out/ukload/ukload.ko" "$r/"
cp "$out/ukload/ukload" "$r/bin/"
cp "$B/hosted/uk/ukernel-test.elf" "$r/uk/"
cp "$B/uk/ukernel.elf" "$r/uk/qemu-board.elf"
cp "$B/hosted/uk/ukernel.elf" "$r/uk/ukernel.elf"
# the noise case's Linux side (static: the guest has no libc)
gcc -static -O2 -Wall -Wextra -o "$r/bin/uknoise" tests/kmod/uknoise.c
# the vnicvictim case's hostile writer (static; the rings' layout from ukload_shm.h)
gcc -static -O2 -Wall -Wextra -Ihost-kmod/ukload -o "$r/bin/vnicevil" tests/kmod/vnicevil.c ||
    refuse "tests/kmod/vnicevil.c does not build"
# the perm case's hostile user (static; the ioctls from ukload_uapi.h)
gcc -static -O2 -Wall -Wextra -Ihost-kmod/ukload -o "$r/bin/ukperm" tests/kmod/ukperm.c ||
    refuse "tests/kmod/ukperm.c does not build"
# the vnic case's Linux end (static: the guest has no libc)
gcc -static -O2 -Wall -Wextra -o "$r/bin/vnicpeer" tests/kmod/vnicpeer.c ||
    refuse "tests/kmod/vnicpeer.c does not build"
# the job: its program and job.conf in a cpio, as qemu/ukrun packs them; Open MPI's output
# for the comparison, made by tests/mpi/run.sh when missing
ref=$B/mpi-ref/$JOB_PROG.$JOB_NP.out
[ -s "$ref" ] || tests/mpi/run.sh --ref-only "$JOB_PROG" >/dev/null 2>&1 || true
job=$out/ukload-job
rm -rf "$job" && mkdir -p "$job"
printf 'image=%s\nsize=%s\nnodes=1\n' "$JOB_PROG" "$JOB_NP" >"$job/job.conf"
if mpi/bin/ukmpicc -O2 "tests/mpi/progs/$JOB_PROG.c" -o "$job/$JOB_PROG" >"$job/build.log" 2>&1; then
    (cd "$job" && printf '%s\n' job.conf "$JOB_PROG" | cpio -o -H newc --quiet) >"$r/uk/job.cpio"
fi
# the mpi cases: each program for both sides, the unikernel's in a cpio with a job.conf of
# 2 nodes (qemu/ukrun's, as run.sh's mixed jobs), the Linux one static in /mpi; Open MPI's
# output with 2 ranks, made by tests/mpi/run.sh when missing
mkdir -p "$r/mpi"
: >"$r/mpi/progs"
# mpi_build PROG SRC...: PROG for both sides from SRCs; job.conf's extra lines on stdin
mpi_build() {
    local p=$1 d=$out/ukload-mpi/$1
    shift
    rm -rf "$d" && mkdir -p "$d"
    { printf '%s\n' "image=$p" size=2 nodes=2 env=UKMPI_SPIN_NS=0; cat; } >"$d/job.conf"
    mpi/bin/ukmpicc -O2 "$@" -o "$d/$p" >"$d/build.log" 2>&1 &&
        mpi/bin/ukmpicc --linux -static -s -O2 "$@" -o "$r/mpi/$p" >>"$d/build.log" 2>&1 &&
        (cd "$d" && printf '%s\n' job.conf "$p" | cpio -o -H newc --quiet) >"$r/uk/mpi-$p.cpio"
}
for p in $MPI_PROGS; do
    [ -s "$B/mpi-ref/$p.2.out" ] || MPI_NP=2 tests/mpi/run.sh --ref-only "$p" >/dev/null 2>&1 || true
    mpi_build "$p" "tests/mpi/progs/$p.c" </dev/null && echo "$p" >>"$r/mpi/progs"
done
# ukload/mpibench (tests/bench/ukload.bench.sh): mpibench's ping-pong, both sides built
# the same way (no MPI_Ibcast, no MPIX: the same code on both)
if [[ " ${cases[*]} " == *" mpibench "* ]]; then
    margs=(-n "${UKLOAD_MPI_ITERS:-300}" pingpong)
    echo "${margs[*]}" >"$r/mpi/mpibench.args"
    printf 'arg=%s\n' "${margs[@]}" | mpi_build mpibench -DMPIBENCH_NO_IBCAST -DMPIBENCH_NO_MPIX \
        tests/bench/mpi/*.c || echo "ukload: mpibench does not build (see $out/ukload-mpi/mpibench/build.log)" >&2
fi
# the route cases: virtio-net for the hub (tests/kmod/guest/init's way), the MPI job of 2
# nodes (rank 0 on the VM node, rank 1 hosted) and Open MPI's output with 2 ranks
mkdir -p "$r/m"
cp "$kdir"/m/*.ko "$kdir/m/order" "$r/m/"
rref=$B/mpi-ref/$JOB_PROG.2.out
[ -s "$rref" ] || MPI_NP=2 tests/mpi/run.sh --ref-only "$JOB_PROG" >/dev/null 2>&1 || true
if [ -f "$job/$JOB_PROG" ]; then
    mkdir -p "$job/route"
    cp "$job/$JOB_PROG" "$job/route/"
    printf '%s\n' "image=$JOB_PROG" size=2 nodes=2 env=UKMPI_SPIN_NS=0 >"$job/route/job.conf"
    (cd "$job/route" && printf '%s\n' job.conf "$JOB_PROG" | cpio -o -H newc --quiet) >"$r/uk/route.cpio"
fi
kmod_cpio "$r" "$out/ukload-initrd.cpio"

log=$out/ukload.log
start=$SECONDS
rc=0
# guest LOG CASES [BOARD [QEMU-ARGS...]]: the guest running CASES (a comma list) on
# qemu/ukboot's BOARD (qemu), console to LOG
guest() {
    local log=$1 list=$2 board=${3:-qemu}
    shift $(($# < 3 ? $# : 3))
    qemu/ukboot --board "$board" --smp 4 --mem 1G --timeout "${UKLOAD_TIMEOUT:-150}" --initrd "$out/ukload-initrd.cpio" \
        --append "console=ttyS0 quiet panic=-1 $KMOD_DEBUG_APPEND maxcpus=3 no_ipi_broadcast=1 memmap=128M\$0x20000000 memmap=4K\$0x70000 memmap=32M!0x30000000 kmod_cases=$list ukload_cycles=$CYCLES ukload_reps=${UKLOAD_BENCH_REPS:-5}${UKLOAD_VNIC_SIZES:+ ukload_vnic_sizes=$UKLOAD_VNIC_SIZES}" \
        "$kdir/vmlinuz" -- "$@" >"$log" 2>&1
}
list=$(printf '%s\n' "${cases[@]}" | grep -vxE 'x2apic|route|routetcp' | paste -sd,)
guest "$log" "$list" || rc=$?
# the x2apic case: its own guest, on QEMU 10 (qemu/ukboot --board knl: TCG with x2APIC,
# q35) with an Intel IOMMU for interrupt remapping: Debian's kernel turns x2APIC on only
# with it ("IRQ remapping doesn't support X2APIC mode" otherwise: no hypervisor says it
# may); 4 threads of one core, as that board has them
xlog=$out/ukload-x2apic.log
if [[ " ${cases[*]} " == *" x2apic "* ]]; then
    guest "$xlog" x2apic knl -device intel-iommu,intremap=on,eim=on || rc=$?
fi
# the route cases: each its own job on a qemu/uknodes hub: node 0 a unikernel VM (the MPI
# job's rank 0, or net_mesh), node 1 this guest (4 CPUs, 1 GiB) hosting node 1 of the job
# behind ukvnic0 (ukload-init). The VM node reaches the hosted subnet through the guest's hub
# address (gw=: a route, as a real cluster node would have; no proxy ARP); its console in
# $out/ukload-CASE.consoles, the guest's in $out/ukload-CASE.log
ROUTE_APPEND="gw=10.0.0.2 peers=10.0.0.1,10.0.9.2 mesh_sizes=${UKLOAD_ROUTE_BYTES:-1048576}"
route_guest() {
    local c=$1 img=$2 rd=$3 append=$4 rrc=0
    qemu/uknodes --nodes 2 --smp 1 --mem 512M --node-smp 1:4 --node-mem 1:1G --timeout "${UKLOAD_TIMEOUT:-150}" \
        ${rd:+--initrd "$rd"} --node-image "1:$kdir/vmlinuz" --node-initrd "1:$out/ukload-initrd.cpio" \
        --append "console=ttyS0 quiet panic=-1 $KMOD_DEBUG_APPEND maxcpus=3 no_ipi_broadcast=1 memmap=128M\$0x20000000 memmap=4K\$0x70000 kmod_cases=$c $ROUTE_APPEND $append" \
        "$img" >"$out/ukload-$c.consoles" 2>&1 || rrc=$?
    sed -n 's/^\[n1\] //p' "$out/ukload-$c.consoles" >"$out/ukload-$c.log"
    echo "kmod: $c: qemu/uknodes exit $rrc" >>"$out/ukload-$c.log"
}
for c in route routetcp; do
    [[ " ${cases[*]} " == *" $c "* ]] || continue
    if [ "$c" = route ]; then route_guest route build/uk/ukernel.elf "$r/uk/route.cpio" ""
    else route_guest routetcp build/uk/ukernel-test.elf "" test=net_mesh; fi
done
pass=0 failn=0
for c in "${cases[@]}"; do
    clog=$log
    [ "$c" = x2apic ] && clog=$xlog
    [[ $c != route* ]] || clog=$out/ukload-$c.log
    line=$(grep -E "^(ok|FAIL) $c( |:|$)" "$clog" | head -n1 || true)
    # the job's output: rank 0's lines identical to Open MPI's
    if [ "$c" = job ] && [ "${line%% *}" = ok ]; then
        if [ ! -s "$ref" ]; then
            line="FAIL job: no Open MPI reference $ref"
        elif ! sed -nE 's/^ukjob\| \[0\] //p' "$log" | diff -q "$ref" - >/dev/null; then
            line="FAIL job: rank 0's output differs from Open MPI's ($ref; see $log)"
        else
            line="ok job ($JOB_PROG, $JOB_NP ranks on CPUs 3 and 2, output as Open MPI's)"
        fi
    fi
    # the mpi jobs' output (rank 0's: the unikernel's console) identical to Open MPI's
    if [ "$c" = mpi ] && [ "${line%% *}" = ok ]; then
        for p in $MPI_PROGS; do
            if ! grep -qx "$p" "$r/mpi/progs"; then
                line="FAIL mpi: $p does not build (see $out/ukload-mpi/$p/build.log)"
            elif [ ! -s "$B/mpi-ref/$p.2.out" ]; then
                line="FAIL mpi: no Open MPI reference $B/mpi-ref/$p.2.out"
            elif ! { sed -nE "s/^ukmpi-uk $p\| \[0\] //p" "$log"
                sed -n "/^ukmpi-lx $p| stderr /d; s/^ukmpi-lx $p| //p" "$log"; } |
                diff -q "$B/mpi-ref/$p.2.out" - >/dev/null; then
                line="FAIL mpi: $p: rank 0's output differs from Open MPI's (see $log)"
            fi
            [ "${line%% *}" = ok ] || break
        done
        [ "${line%% *}" != ok ] ||
            line="ok mpi (${MPI_PROGS// /,}: the hosted unikernel's rank 0 and a Linux process's rank 1 over ukvnic0, output as Open MPI's)"
    fi
    # route: rank 0's output (the VM node) identical to Open MPI's with 2 ranks; both: the
    # VM node's lwIP has the gateway, and both nodes exited 0
    if [[ $c == route* ]] && [ "${line%% *}" = ok ]; then
        cl=$out/ukload-$c.consoles
        if ! grep -q '^\[n0\] net: gateway 10.0.0.2$' "$cl"; then line="FAIL $c: VM node 0 has no gateway in lwIP (see $cl)"
        elif ! grep -q "^kmod: $c: qemu/uknodes exit 0\$" "$clog"; then # every node exited 0
            line="FAIL $c: $(tail -n 1 "$clog"): $(grep -m1 -E '^\[n0\] (mpi|net_mesh|uk):' "$cl" || true) (see $cl)"
        elif [ "$c" = route ] && [ ! -s "$rref" ]; then line="FAIL route: no Open MPI reference $rref"
        elif [ "$c" = route ] && ! sed -nE 's/^\[n0\] \[0\] //p' "$cl" | diff -q "$rref" - >/dev/null; then
            line="FAIL route: rank 0's output differs from Open MPI's ($rref; see $cl)"
        elif [ "$c" = route ]; then
            line="ok route ($JOB_PROG: rank 0 on a VM node, rank 1 hosted behind ukvnic0, through Linux's forwarding; output as Open MPI's)"
        else
            line="ok routetcp (net_mesh: ${UKLOAD_ROUTE_BYTES:-1048576} B each way between a VM node and the hosted node, through Linux's forwarding, checked)"
        fi
    fi
    kmod_verdict ukload "$c" "$line" "guest exit $rc; see $clog"
done
kmod_summary "$log" "$start"
