#!/usr/bin/env bash
# tests/kmod/ukload.sh [ukload | ukload/CASE...]: host-kmod/ukload's tests, in a Debian guest
# under QEMU/TCG (tests/kmod/run.sh hands ukload's names here). One line per case, then
# "N passed, N failed"; exit status 1 on a failure.
#
# The guest: Debian's kernel (tests/bench/linux-kernel.sh), 4 CPUs of which Linux onlines
# 3 (maxcpus=3), 1 GiB with 128 MiB at 0x20000000 and the page at 0x70000 kept from Linux
# (memmap=, the hosted board's HOSTED_BASE and ukload.ko's default trampoline page); an
# initramfs with busybox-static, ukload.ko, the ukload tool, boards/hosted's test kernel
# (make BOARD=hosted), the qemu board's kernel (an image for the wrong range), vnicpeer, and
# tests/kmod/ukload-init as /init, which runs the cases. The console goes to
# $B/kmod/ukload.log. UKLOAD_CYCLES (10) boots in the cycles case; UKLOAD_VNIC_SIZES
# (A,B,...: 1 B to 16 MiB) the vnic case's transfers, one boot each; ukload/bench (not in
# the default list: tests/bench/ukload.bench.sh runs it) UKLOAD_BENCH_REPS (5) boots; so is
# ukload/noise (tests/kmod/uknoise.h's loop on both sides). UKLOAD_TIMEOUT (150 s): a
# guest's whole run. ukload/x2apic boots a second guest, in x2APIC mode (see below; its
# console in $B/kmod/ukload-x2apic.log).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/kmod/guestlib.sh
B=${B:-build}
out=$B/kmod
CASES="range badelf busycpu cycles exitcode fault hang smp isolation job vnic vnichostile stop rmmod online x2apic"
JOB_PROG=p2p_basic JOB_NP=4 # the job case: this conformance program, as 4 ranks on 2 CPUs
CYCLES=${UKLOAD_CYCLES:-10}

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
if ! mk=$(make -s ukload build/uk/ukernel.elf 2>&1 &&
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
        --append "console=ttyS0 quiet panic=-1 maxcpus=3 no_ipi_broadcast=1 memmap=128M\$0x20000000 memmap=4K\$0x70000 kmod_cases=$list ukload_cycles=$CYCLES ukload_reps=${UKLOAD_BENCH_REPS:-5}${UKLOAD_VNIC_SIZES:+ ukload_vnic_sizes=$UKLOAD_VNIC_SIZES}" \
        "$kdir/vmlinuz" -- "$@" >"$log" 2>&1
}
list=$(printf '%s\n' "${cases[@]}" | grep -vx x2apic | paste -sd,)
guest "$log" "$list" || rc=$?
# the x2apic case: its own guest, on QEMU 10 (qemu/ukboot --board knl: TCG with x2APIC,
# q35) with an Intel IOMMU for interrupt remapping: Debian's kernel turns x2APIC on only
# with it ("IRQ remapping doesn't support X2APIC mode" otherwise: no hypervisor says it
# may); 4 threads of one core, as that board has them
xlog=$out/ukload-x2apic.log
if [[ " ${cases[*]} " == *" x2apic "* ]]; then
    guest "$xlog" x2apic knl -device intel-iommu,intremap=on,eim=on || rc=$?
fi
pass=0 failn=0
for c in "${cases[@]}"; do
    clog=$log
    [ "$c" = x2apic ] && clog=$xlog
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
    kmod_verdict ukload "$c" "$line" "guest exit $rc; see $clog"
done
kmod_summary "$log" "$start"
