#!/usr/bin/env bash
# tests/kmod/kacc.sh [kacc | kacc/CASE...]: host-kmod/kacc's tests, in a Debian guest under
# QEMU/TCG (tests/kmod/run.sh hands kacc's names here). One line per case, then
# "N passed, N failed"; exit status 1 on a failure.
#
# The guest: Debian's kernel (tests/bench/linux-kernel.sh) with an initramfs made here:
# busybox-static, o2g.ko and kacc.ko, tests/kmod/kacctest (static, with mpi/cad's builder) and
# tests/kmod/kacc-init as /init. Two CPUs: the ipi case needs a second one. The console
# goes to $B/kmod/kacc.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/kmod/guestlib.sh
B=${B:-build}
out=$B/kmod
# listen and fuzz come after rmmod: a kacc socket that listened keeps the module loaded for good
CASES="refuse calc status cancel ipi poll stress killed memlock xfer xerror noprogress xkilled userop xlost eager kmem progress0 pinfile xclose rmmod listen fuzz"

cases=()
for n in "${@:-kacc}"; do
    case $n in
    kacc) for c in $CASES; do cases+=("$c"); done ;;
    kacc/*) cases+=("${n#kacc/}") ;;
    *) echo "FAIL $n: not a kacc test (run kacc and o2g tests separately)"
       echo "0 passed, 1 failed"; exit 1 ;;
    esac
done
# dmesg always closes a run: every case's kernel log is checked
[[ " ${cases[*]} " == *" dmesg "* ]] || cases+=(dmesg)

if ! mk=$(make -s kacc 2>&1); then
    echo "$mk" >&2
    for c in "${cases[@]}"; do echo "FAIL kacc/$c: the module does not build"; done
    echo "0 passed, ${#cases[@]} failed"
    exit 1
fi
mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -I mpi/cad -I mpi/core -o "$out/kacctest" \
    tests/kmod/kacctest.c mpi/core/mpe_wire.c mpi/cad/cad_build.c mpi/cad/cad_validate.c mpi/cad/cad_exec.c \
    mpi/cad/cad_calc.c mpi/cad/cad_err.c mpi/cad/cad_types.c
kmod_build_kfuzz "$out/kfuzz" # the fuzz case (tests/kmod/kfuzz.c)
kdir=$(tests/bench/linux-kernel.sh)
# the module must be built for the guest's kernel
if ! why=$(kmod_for_guest "$out/kacc/kacc.ko" "$kdir"); then
    for c in "${cases[@]}"; do echo "FAIL kacc/$c: $why"; done
    echo "0 passed, ${#cases[@]} failed"
    exit 1
fi
r=$out/kacc-root
kmod_root "$r" tests/kmod/kacc-init
cp "$out/kacc/kacc.ko" "$r/kacc.ko"
cp "$out/o2g/o2g.ko" "$r/o2g.ko" # kacc.ko uses its exports (SEND/RECV)
cp "$out/kacctest" "$out/kfuzz" "$r/"
kmod_cpio "$r" "$out/kacc-initrd.cpio"

log=$out/kacc.log
list=$(IFS=,; echo "${cases[*]}")
start=$SECONDS
rc=0
# the fuzz case: its budget, the time kfuzz gives it to end, calc after it
limit=180
[[ " ${cases[*]} " != *" fuzz "* ]] || limit=$((limit + KMOD_FUZZ_SECS + 80))
qemu/ukboot --smp 2 --mem 512M --timeout "$limit" --initrd "$out/kacc-initrd.cpio" \
    --append "console=ttyS0 quiet panic=-1 $KMOD_DEBUG_APPEND $KMOD_FUZZ_APPEND kmod_cases=$list" "$kdir/vmlinuz" \
    >"$log" 2>&1 || rc=$?
pass=0 failn=0
for c in "${cases[@]}"; do
    line=$(grep -E "^(ok|FAIL) $c(:|$)" "$log" | head -n1 || true)
    kmod_verdict kacc "$c" "$line" "guest exit $rc; see $log"
done
kmod_summary "$log" "$start"
