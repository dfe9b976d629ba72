#!/usr/bin/env bash
# tests/bench/linux.bench.sh: the Linux build of our library (mpi/linux/, issue 17) against
# Debian's Open MPI and MPICH over TCP, measured in the same run in the same Debian Linux
# guests on the same QEMU/TCG machine, NIC, hub and netdev (tests/bench/ompi/run.sh --mpi).
# The program is tests/bench/mpi/ (mpibench), one source built three ways:
#   ours    mpi/bin/ukmpicc --linux (build/linux/libukmpi.a; sockets + epoll between VMs;
#           a process per rank, started by the guests' /init)
#   o2g     the same binary with the o2g module loaded in every guest and UKMPI_O2G=on
#           (LXB_O2G=0 leaves it out; $B/kmod/o2g/o2g.ko is built by `make o2g` first)
#   thread  ours with UKMPI_PROGRESS=thread on 2x1: its network thread reads the sockets,
#           where a rank alone on its CPU reads them itself by default (mpi/linux/mlx.h's
#           caller mode); the one-vCPU figures before and after, in the same run
#   ompi    Debian's mpicc and mpirun (pml ob1, btl tcp between VMs)
#   mpich   Debian's mpicc.mpich and mpiexec.hydra (ch4:ucx, UCX's tcp between VMs)
# Jobs, each side in each configuration (NxC: N VMs x C vCPUs, a rank per vCPU):
#   2x1             pingpong, waitcpu and is (see mpibench.c, is.c)
#   $LXB_IS_CFG     is alone on 4 ranks: 4x1 when the host has a core per vCPU (4 or more),
#                   else 2x2 (2 VMs x 2 ranks)
# Prints the ping-pong half round trips and bandwidths and the CPU time a rank burns in
# MPI_Wait for a message 100 ms away (waitcpu), each ratio ours / Open MPI; and the integer
# sort's time, ratio ours / Open MPI and ours / MPICH. A side that cannot be built or run
# says so on a line of its own; nothing is made up. Never fails `make bench`.
#
# Settings: LXB_ITERS (default 1000) ping-pong round trips for <= 1 KiB (64 KiB: /5,
# 1 MiB: /20); LXB_REPS (10) waitcpu repetitions and is iterations; LXB_KEYS (262144) is
# keys per rank; LXB_RUNS (1) jobs of each side and configuration, alternating, figures are
# medians over runs; LXB_SIDES ("ours ompi mpich"); LXB_O2G (1); LXB_IS_CFG (see above);
# LXB_TIMEOUT (300) seconds per job (a job that fails is not run again for that side and
# configuration); OURS_SPIN_NS (unset: mpi/bin/ukmpirun's rule, under which a rank alone on
# a 1-vCPU VM polls 10 ms before it sleeps, and the thread side sleeps at once) our ranks'
# UKMPI_SPIN_NS. Logs go to $B/bench/linux/.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
out=$B/bench/linux
ITERS=${LXB_ITERS:-1000}
REPS=${LXB_REPS:-10}
KEYS=${LXB_KEYS:-262144}
RUNS=${LXB_RUNS:-1}
SIDES=${LXB_SIDES:-ours ompi mpich}
TIMEOUT=${LXB_TIMEOUT:-300}
ISCFG=${LXB_IS_CFG:-$([ "$(nproc)" -ge 4 ] && echo 4x1 || echo 2x2)}
[ "${LXB_O2G:-1}" = 1 ] && SIDES="ours o2g ${SIDES/ours/}"
[[ " $SIDES " == *" ours "* ]] && SIDES="${SIDES/ours/ours thread}"
P2P=2x1
mkdir -p "$out"
rm -f "$out"/*.txt "$out/notes"

# First line of a log that says what went wrong.
why() { grep -m1 -iE 'error|fatal|not found|undefined|missing|failed|timeout' "$1" | cut -c1-150 || true; }
note() { echo "$*" >>"$out/notes"; }
failed=

# The guest and kernel first (a first build takes minutes), before anything is timed.
if ! timeout 1800 tests/bench/ompi/build-guest.sh 2>&1 >/dev/null | tee "$out/guest.log" >&2 ||
    ! timeout 600 tests/bench/linux-kernel.sh 2>&1 >/dev/null | tee -a "$out/guest.log" >&2; then
    echo "# linux: the Debian guests cannot be made ($(tail -n1 "$out/guest.log" | cut -c1-150)): nothing run"
    exit 0
fi
sides=
for s in $SIDES; do
    case $s in
    ours | o2g | thread)
        if [ ! -f "$B/linux/libukmpi.a" ]; then
            note "$s: not run ($B/linux/libukmpi.a missing: run make)"
            continue
        fi
        if [ "$s" = o2g ] && ! make -s o2g >"$out/o2g-build.log" 2>&1; then
            note "o2g: not run (make o2g failed: see $out/o2g-build.log)"
            continue
        fi
        # a library without the o2g path ignores UKMPI_O2G: that column would be sockets
        if [ "$s" = o2g ] && ! grep -q /dev/o2g "$B/linux/libukmpi.a"; then
            note "o2g: the library has no /dev/o2g path yet: the o2g column is sockets + epoll too"
        fi
        ;;
    mpich)
        if ! command -v mpicc.mpich >/dev/null; then
            note "mpich: not run (mpicc.mpich missing: make deps installs libmpich-dev)"
            continue
        fi
        ;;
    esac
    sides+=" $s"
done

run_job() { # side cfg run MPIBENCH-ARGS...
    local s=$1 c=$2 r=$3 rc=0 o=(--mpi "$1")
    shift 3
    [ "$s" = o2g ] && o=(--mpi ours --o2g)
    [ "$s" = thread ] && o=(--mpi ours --env UKMPI_PROGRESS=thread)
    tests/bench/ompi/run.sh --timeout "$TIMEOUT" --log "$out/$s-$c.$r.log" "${o[@]}" "$c" "$@" \
        >"$out/$s-$c.$r.txt" 2>"$out/$s-$c.$r.err" || rc=$?
    if [ "$rc" != 0 ]; then
        local w=timeout
        [ "$rc" = 124 ] || w=$(why "$out/$s-$c.$r.log")
        [ -n "$w" ] || w=$(why "$out/$s-$c.$r.err")
        note "$s $c: exit $rc${w:+ ($w)}; see $out/$s-$c.$r.log"
        failed+=" $s-$c"
    fi
}

load0=$(cut -d' ' -f1 /proc/loadavg)
t0=$SECONDS
for r in $(seq "$RUNS"); do
    for s in $sides; do
        [[ $failed == *" $s-$P2P"* ]] ||
            run_job "$s" "$P2P" "$r" -n "$ITERS" -r "$REPS" -k "$KEYS" pingpong waitcpu is
        # the thread side on 2x1 alone: the one-vCPU case its figures are for
        [[ $failed == *" $s-$ISCFG"* || $s == thread ]] ||
            run_job "$s" "$ISCFG" "$r" -r "$REPS" -k "$KEYS" is
    done
done

# Median over runs of KEY's numeric values on the lines starting with PREFIX in
# SIDE-CFG.*.txt; empty if there are none.
pick() { # side-cfg prefix key
    cat "$out/$1".*.txt 2>/dev/null | awk -v p="$2" -v k="$3" 'index($0, p) == 1 && $0 !~ / verified=0/ {
        for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == k && kv[2] ~ /^[0-9.]+$/) print kv[2]
    }' | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}' || true
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b == "" || b <= 0 ? "-" : sprintf(a / b < 0.1 ? "%.2g" : "%.2f", a / b)) }'; }
ours_sides() { for s in $sides; do case $s in ours | o2g | thread) echo "$s" ;; esac; done; }
# One row: the value of every side, then each of our sides over each baseline in BASES.
row() { # label unit cfg prefix key bases
    local s v line
    declare -A val
    line=$(printf '%-24s %-5s' "linux: $1" "$2")
    for s in $sides; do
        v=$(pick "$s-$3" "$4" "$5")
        val[$s]=$v
        line+=$(printf ' %10s' "${v:--}")
    done
    for s in $(ours_sides); do
        for bl in $6; do
            [[ " $sides " == *" $bl "* ]] && line+=$(printf ' %9s' "$(ratio "${val[$s]}" "${val[$bl]}")")
        done
    done
    echo "$line"
}
header() { # bases
    local h s bl
    h=$(printf '%-24s %-5s' "# figure" unit)
    for s in $sides; do h+=$(printf ' %10s' "$s"); done
    for s in $(ours_sides); do
        for bl in $1; do [[ " $sides " == *" $bl "* ]] && h+=$(printf ' %9s' "$s/$bl"); done
    done
    echo "$h"
}
waitline() { # side
    local w c
    w=$(pick "$1-$P2P" "waitcpu " wall_ms) c=$(pick "$1-$P2P" "waitcpu " cpu_ms)
    if [ -z "$w" ]; then
        printf 'linux: waitcpu %-5s (no result)\n' "$1"
    else
        printf 'linux: waitcpu %-5s wall_ms=%s cpu_ms=%s cpu_pct=%s\n' "$1" "$w" "${c:-na}" \
            "$(awk -v w="$w" -v c="$c" 'BEGIN { print (c != "" && w > 0 ? sprintf("%.1f", 100 * c / w) : "na") }')"
    fi
}
libs=$(cat "$out"/*.txt 2>/dev/null | grep -o 'lib="[^"]*"' | sort -u | tr '\n' ' ')
echo "# Linux build: ours (mpi/linux) vs Debian's Open MPI and MPICH over TCP, in the same Debian"
echo "# Linux VMs on the same QEMU/TCG machine, NIC, hub, netdev; $RUNS run(s), medians; libs: ${libs:-(none ran)}"
echo "# host: $(nproc) cores, load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end" \
    "(other work on the host shows in every TCG figure); $((SECONDS - t0)) s"
echo "# ping-pong, $P2P (2 VMs x 1 vCPU, a rank each): half round trip (us; ratio < 1: we are faster)"
echo "# and bandwidth (MB/s = bytes / half round trip; ratio > 1: we are faster), median of $ITERS"
echo "# round trips (64 KiB: /5, 1 MiB: /20)"
header ompi
row "0 B" us $P2P "pingpong bytes=0 " half_rtt_us ompi
row "8 B" us $P2P "pingpong bytes=8 " half_rtt_us ompi
row "1 KiB" us $P2P "pingpong bytes=1024 " half_rtt_us ompi
row "64 KiB" us $P2P "pingpong bytes=65536 " half_rtt_us ompi
row "1 MiB" us $P2P "pingpong bytes=1048576 " half_rtt_us ompi
row "64 KiB" MB/s $P2P "pingpong bytes=65536 " MBps ompi
row "1 MiB" MB/s $P2P "pingpong bytes=1048576 " MBps ompi
echo "# waitcpu, $P2P: rank 1 waits in MPI_Wait for a message rank 0 sends after 100 ms: wall and"
echo "# process CPU time of the wait (medians of $REPS); cpu_pct ~100: busy polling, ~0: blocked"
for s in $sides; do waitline "$s"; done
echo "# the same wait: process CPU time (user + sys, every thread: CLOCK_PROCESS_CPUTIME_ID) and"
echo "# wall time, ms (ratio < 1: we burn less)"
header ompi
row "MPI_Wait cpu" ms $P2P "waitcpu " cpu_ms ompi
row "MPI_Wait wall" ms $P2P "waitcpu " wall_ms ompi
echo "# is: integer bucket sort (NAS IS's idea; tests/bench/mpi/is.c), $KEYS keys per rank, median"
echo "# of $REPS sorts of all ranks' keys (ms; ratio < 1: we are faster)"
header "ompi mpich"
for c in $P2P $ISCFG; do
    row "is $c" ms "$c" "is " time_ms "ompi mpich"
done
# a sort that ran but did not verify is not a figure
grep -l 'verified=0' "$out"/*.txt 2>/dev/null | sed 's/^/linux: is NOT VERIFIED in /'
[ ! -s "$out/notes" ] || sed 's/^/linux: /' "$out/notes"
exit 0
