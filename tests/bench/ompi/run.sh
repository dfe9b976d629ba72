#!/usr/bin/env bash
# tests/bench/ompi/run.sh: the Open MPI baseline of tests/bench/mpi.bench.sh and
# tests/bench/nbc.bench.sh, and every side of tests/bench/linux.bench.sh. Runs
# tests/bench/mpi/mpibench (every .c file there), built with Debian's mpicc, under Debian's
# Open MPI in Debian Linux guests on the same QEMU/TCG machine as our unikernel: the guests
# are booted by qemu/ukboot and qemu/uknodes themselves (same -accel/-cpu/-M, virtio-net-pci
# NIC, hub and -netdev dgram).
#
#   tests/bench/ompi/run.sh [--log FILE] [--timeout S] [--mca NAME=VALUE]...
#                           [--env NAME=VALUE]... [--mpi ompi|mpich|ours] [--o2g]
#                           [--kacc tasklet|ipi|poll] intra|inter|NxC MPIBENCH-ARGS...
#
#   --mpi   whose MPI, in the same guests (default ompi): ompi = Debian's Open MPI (mpicc,
#           mpirun); mpich = Debian's MPICH (mpicc.mpich, mpiexec.hydra; ch4:ucx over TCP
#           between VMs); ours = our library's Linux build (`mpi/bin/ukmpicc --linux`,
#           build/linux/libukmpi.a: sockets + epoll between VMs), one process per rank
#           started by the guests' /init (guest/init: run_ours)
#   --o2g   with ours: the guests load the o2g module ($B/kmod/o2g/o2g.ko, `make o2g`) and
#           the ranks run with UKMPI_O2G=on (inter-node traffic through /dev/o2g)
#   --kacc P  with ours: the guests load o2g.ko and the kacc module ($B/kmod/kacc/kacc.ko,
#           `make kacc`) with progress=P, the ranks run with UKMPI_O2G=on UKMPI_KACC=on,
#           and after the job every VM's kacc counters are printed ("kaccstats node=I
#           issued=... ipi=..."; tests/bench/ompi/kacc_stats.c)
#   --env NAME=VALUE  an environment variable of every rank (repeatable), e.g.
#           --env UKMPI_COLL_BCAST=chain; it travels on the kernel command line as --mca's do
#
#   intra   1 VM x 2 vCPUs, 2 ranks: Open MPI's shared-memory BTL (pml ob1, btl self,vader),
#           ranks bound to the vCPUs. Mirrors `qemu/ukrun -n 2 --nodes 1 --smp 2`.
#   inter   2 VMs x 1 vCPU, 1 rank each: TCP BTL over virtio-net through qemu/uknodes' hub
#           (net/hub/ukhub). Mirrors `qemu/ukrun -n 2 --nodes 2`. mpirun on n0 starts
#           orted on n1 through rexec (socat; no ssh in the guests).
#   NxC     N VMs x C vCPUs, N*C ranks placed in blocks (n0 has ranks 0..C-1), bound to
#           the vCPUs: vader inside a VM, TCP between VMs. 1x2 = intra, 2x1 = inter;
#           2x2 mirrors `qemu/ukrun -n 4 --nodes 2 --smp 2`.
#   --mca NAME=VALUE  an Open MPI MCA parameter of the job (repeatable), e.g.
#           --mca coll=libnbc,basic,self. It travels as OMPI_MCA_NAME=VALUE on the guest
#           kernel's command line: Linux hands such unknown parameters to /init as
#           environment variables, mpirun inherits them and passes OMPI_MCA_* on to every
#           rank (mpibench's `# nbc` line shows what the ranks got).
#
# Prints mpibench's own lines (`# mpibench ...`, `pingpong ...`, `overlap ...`, `is ...`)
# and exits with the job's exit code (124: timeout; 4: a guest's clock could not be
# trusted, twice; 5: o2g.ko or kacc.ko did not load). The whole consoles go to FILE (default
# $B/bench/mpi/MPI-CONFIG.log, e.g. ompi-inter.log). First run:
# builds the guest (ompi/build-guest.sh) and fetches the kernel (tests/bench/linux-kernel.sh);
# later runs reuse both from the cache. OMPI_KLOG=loglevel=7 shows the guest kernel's log;
# OURS_SPIN_NS=NS sets our ranks' UKMPI_SPIN_NS (guest/init: mpib_spin).
set -euo pipefail
cd "$(dirname "$0")/../../.."
B=${B:-build}
out=$B/bench/mpi
log='' timeout=300 mca='' mpi=ompi o2g=0 kacc=
usage() { echo "usage: $0 [--log FILE] [--timeout S] [--mca NAME=VALUE]... [--env NAME=VALUE]... [--mpi ompi|mpich|ours] [--o2g] [--kacc tasklet|ipi|poll] intra|inter|NxC MPIBENCH-ARGS..." >&2; exit 2; }
while [ $# -gt 0 ]; do
    case $1 in
    --log) log=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --mca)
        # one word of the kernel command line: no spaces, quotes or dots in the name
        [[ ${2:-} =~ ^[A-Za-z0-9_]+=[A-Za-z0-9,._:-]+$ ]] || { echo "ompi/run.sh: --mca NAME=VALUE, got '${2:-}'" >&2; exit 2; }
        mca+=" OMPI_MCA_$2"; shift 2 ;;
    --env)
        [[ ${2:-} =~ ^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9,_:-]+$ ]] || { echo "ompi/run.sh: --env NAME=VALUE, got '${2:-}'" >&2; exit 2; }
        mca+=" $2"; shift 2 ;;
    --kacc)
        case ${2:-} in tasklet | ipi | poll) kacc=$2 ;; *) usage ;; esac
        shift 2 ;;
    --mpi)
        case ${2:-} in ompi | mpich | ours) mpi=$2 ;; *) usage ;; esac
        shift 2 ;;
    --o2g) o2g=1; shift ;;
    *) break ;;
    esac
done
cfg=${1:-}
case $cfg in
intra) nodes=1 smp=2 ;;
inter) nodes=2 smp=1 ;;
[1-9]x[1-9]) nodes=${cfg%x*} smp=${cfg#*x} ;;
*) usage ;;
esac
shift
[ "$o2g$kacc" = 0 ] || [ "$mpi" = ours ] || { echo "ompi/run.sh: --o2g and --kacc are for --mpi ours" >&2; exit 2; }
log=${log:-$out/$mpi-$cfg.log}
# The arguments travel on the kernel command line, commas for spaces (guest/init).
args=$(IFS=,; echo "$*")
[[ $args =~ ^[A-Za-z0-9.,=_-]*$ ]] || { echo "ompi/run.sh: arguments may hold only [A-Za-z0-9._=-]" >&2; exit 2; }
mkdir -p "$out"

guest=$(tests/bench/ompi/build-guest.sh)
kdir=$(tests/bench/linux-kernel.sh)
# mpibench is built on the host with Debian's mpicc (Open MPI of the same Debian release
# as the guest: build-guest.sh uses the host's suite); a different version only warns.
# (ours: built with the host's gcc and glibc, which are the guest's: the same suite)
case $mpi in
ompi)
    host_ompi=$(dpkg-query -W -f '${Version}' libopenmpi-dev 2>/dev/null || echo none)
    guest_ompi=$(sed -n 's/^openmpi=//p' "$guest/info")
    [ "$host_ompi" = "$guest_ompi" ] ||
        echo "ompi/run.sh: warning: host libopenmpi-dev $host_ompi, guest libopenmpi3 $guest_ompi" >&2
    mpicc=/usr/bin/mpicc.openmpi
    [ -x $mpicc ] || mpicc=mpicc
    ;;
mpich)
    host_mpich=$(dpkg-query -W -f '${Version}' libmpich-dev 2>/dev/null || echo none)
    guest_mpich=$(sed -n 's/^mpich=//p' "$guest/info")
    [ "$host_mpich" = "$guest_mpich" ] ||
        echo "ompi/run.sh: warning: host libmpich-dev $host_mpich, guest libmpich12 $guest_mpich" >&2
    mpicc=mpicc.mpich
    ;;
ours) mpicc="mpi/bin/ukmpicc --linux" ;;
esac
# shellcheck disable=SC2086 # mpicc may be a command with an option
$mpicc -O2 -Wall -o "$out/mpibench.$mpi" tests/bench/mpi/*.c

# The run's initramfs: the cached root filesystem, then a second cpio archive with the
# kernel's virtio-net modules and mpibench (the kernel unpacks concatenated archives).
x=$out/ompi-extra
rm -rf "$x" && mkdir -p "$x/m" "$x/usr/local/bin"
cp "$kdir"/m/*.ko "$kdir/m/order" "$x/m/"
cp "$out/mpibench.$mpi" "$x/usr/local/bin/mpibench"
if [ "$o2g" = 1 ]; then
    cp "$B/kmod/o2g/o2g.ko" "$x/m/" || { echo "ompi/run.sh: --o2g: no $B/kmod/o2g/o2g.ko (make o2g)" >&2; exit 5; }
fi
if [ -n "$kacc" ]; then
    cp "$B/kmod/o2g/o2g.ko" "$B/kmod/kacc/kacc.ko" "$x/m/" ||
        { echo "ompi/run.sh: --kacc: no $B/kmod/kacc/kacc.ko or o2g.ko (make kacc)" >&2; exit 5; }
    gcc -O2 -Wall -o "$x/usr/local/bin/kacc_stats" tests/bench/ompi/kacc_stats.c
fi
(cd "$x" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out/ompi-extra.cpio"
cat "$guest/rootfs.cpio" "$out/ompi-extra.cpio" >"$out/ompi-initrd.cpio"

# tsc=reliable: with 2 vCPUs under TCG the kernel would distrust the TSC and read the HPET,
# ~1.3 us per MPI_Wtime (1-vCPU guests pick the TSC anyway); our unikernel reads the TSC.
# tsc_early_khz: the host's TSC rate, which a guest's TSC has under TCG; the guest's own PIT
# calibration can be wildly off on a busy host (guest/init checks the kernel's refinement).
gcc -O2 -o "$out/tsc_khz" tests/bench/ompi/tsc_khz.c
khz=$("$out/tsc_khz")
# no_timer_check: on a loaded host the kernel's IO-APIC timer check can time out under TCG
# and panic the guest at boot ("IO-APIC + timer doesn't work!").
append="console=ttyS0 ${OMPI_KLOG:-quiet} panic=-1 tsc=reliable no_timer_check"
[ "$khz" -gt 0 ] && append+=" tsc_early_khz=$khz"
append+=" mpib_args=$args mpib_np=$((nodes * smp)) mpib_mpi=$mpi$mca"
[ "$o2g" = 0 ] || append+=" mpib_o2g=1"
[ -z "$kacc" ] || append+=" mpib_kacc=$kacc"
[[ ${OURS_SPIN_NS:-} =~ ^[0-9]+$ ]] && append+=" mpib_spin=$OURS_SPIN_NS"
for attempt in 1 2; do
    rc=0
    if [ "$nodes" = 1 ]; then
        qemu/ukboot --smp "$smp" --mem 1024M --timeout "$timeout" --initrd "$out/ompi-initrd.cpio" \
            --append "node=0 nodes=1 $append" "$kdir/vmlinuz" >"$log" 2>&1 || rc=$?
    else
        qemu/uknodes --nodes "$nodes" --smp "$smp" --mem 1024M --timeout "$timeout" \
            --initrd "$out/ompi-initrd.cpio" --append "$append" "$kdir/vmlinuz" >"$log" 2>&1 || rc=$?
    fi
    # 4: a guest's clock could not be trusted (guest/init); a new boot calibrates anew
    if [ "$rc" != 4 ] || [ $attempt != 1 ]; then break; fi
    echo "ompi/run.sh: $(grep -m1 'TSC rate not confirmed' "$log"); booting again" >&2
done
rm -f "$out/ompi-initrd.cpio" # 150 MiB, rebuilt by every run
sed -n -E 's/^(\[n[0-9]+\] )?((# mpibench|# nbc|# overlap|# bcasttime|# cadlat|pingpong |waitcpu |overlap |bcasttime |cadstats |cadlat |is |kaccstats ).*)/\2/p' "$log"
if [ "$rc" != 0 ]; then
    echo "ompi/run.sh: $cfg run failed (exit $rc); last console lines of $log:" >&2
    tail -n 15 "$log" >&2
fi
exit "$rc"
