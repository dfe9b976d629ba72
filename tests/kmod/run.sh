#!/usr/bin/env bash
# tests/kmod/run.sh [NAME...]: the kernel-module tests, in a Debian guest under QEMU/TCG
# (never on the host's kernel). NAME: a module (o2g: every case of it) or one case
# (o2g/race). One line per case, then "N passed, N failed"; exit status 1 on a failure.
#
# The guest: Debian's kernel (tests/bench/linux-kernel.sh, the version the module is built
# for) with an initramfs made here: busybox-static, the module, tests/kmod/o2gtest
# (static) and tests/kmod/guest/init, which runs the cases and ends the VM. The console
# goes to $B/kmod/o2g.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
out=$B/kmod
O2G_CASES="eager unexp race order rts cancel backpressure ringfull trunc many control corrupt closed killed memlock double rmmod dmesg"

cases=()
for n in "${@:-o2g}"; do
    case $n in
    o2g) for c in $O2G_CASES; do cases+=("$c"); done ;;
    o2g/*) cases+=("${n#o2g/}") ;;
    *) echo "FAIL $n: no such module test"; echo "0 passed, 1 failed"; exit 1 ;;
    esac
done
# dmesg always closes a run: every case's kernel log is checked
[[ " ${cases[*]} " == *" dmesg "* ]] || cases+=(dmesg)

# the module: its build output only on failure (Kbuild's BTF notice is noise)
if ! mk=$(make -s o2g 2>&1); then
    echo "$mk" >&2
    for c in "${cases[@]}"; do echo "FAIL o2g/$c: the module does not build"; done
    echo "0 passed, ${#cases[@]} failed"
    exit 1
fi
mkdir -p "$out"
gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -I mpi/core -o "$out/o2gtest" \
    tests/kmod/o2gtest.c mpi/core/mpe_wire.c
kdir=$(tests/bench/linux-kernel.sh)
# the module must be built for the guest's kernel (both versions come from apt's view)
# (vermagic from the .modinfo section: the host has no modinfo, kmod is not a dependency)
objcopy -O binary -j .modinfo "$out/o2g/o2g.ko" "$out/modinfo"
kver=$(tr '\0' '\n' <"$out/modinfo" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p')
if [ "$kver" != "$(basename "$kdir")" ]; then
    for c in "${cases[@]}"; do echo "FAIL o2g/$c: o2g.ko is for $kver, the guest runs $(basename "$kdir")"; done
    echo "0 passed, ${#cases[@]} failed"
    exit 1
fi
bb=/bin/busybox # busybox-static's (mk/deps.d/60-kmod.sh): the guest has no libc
r=$out/root
rm -rf "$r" && mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp"
cp "$bb" "$r/bin/busybox"
ln -s busybox "$r/bin/sh"
cp tests/kmod/guest/init "$r/init"
cp tests/bench/ompi/guest/guest-exit "$r/bin/guest-exit"
cp "$out/o2g/o2g.ko" "$out/o2gtest" "$r/"
(cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out/initrd.cpio"

log=$out/o2g.log
list=$(IFS=,; echo "${cases[*]}")
start=$SECONDS
rc=0
qemu/ukboot --smp 2 --mem 512M --timeout 170 --initrd "$out/initrd.cpio" \
    --append "console=ttyS0 quiet panic=-1 kmod_cases=$list" "$kdir/vmlinuz" \
    >"$log" 2>&1 || rc=$?
pass=0 failn=0
for c in "${cases[@]}"; do
    line=$(grep -E "^(ok|FAIL) $c(:|$)" "$log" | head -n1 || true)
    if [ "${line%% *}" = ok ]; then
        echo "ok o2g/$c"
        pass=$((pass + 1))
    else
        [ -n "$line" ] || line="FAIL $c: no result (guest exit $rc; see $log)"
        echo "FAIL o2g/${line#FAIL }"
        failn=$((failn + 1))
    fi
done
grep -E '^kmod: ' "$log" | sed 's/^/# /' || true
echo "# guest run: $((SECONDS - start)) s"
echo "$pass passed, $failn failed"
[ "$failn" = 0 ]
