#!/usr/bin/env bash
# tests/bench/mpi.bench.sh: our MPI against Open MPI, measured in the same run on the same
# QEMU/TCG machine, NIC, hub and netdev. The program is tests/bench/mpi/ (mpibench.c), built
#   ours: with mpi/bin/ukmpicc, run by qemu/ukrun in the unikernel
#         intra: ukrun -n 2 --nodes 1 --smp 2      inter: ukrun -n 2 --nodes 2 (1 CPU each)
#   Open MPI: with Debian's mpicc, run by Debian's Open MPI in Debian Linux guests
#         (tests/bench/ompi/run.sh): intra: 1 VM x 2 vCPUs, shared memory (vader);
#         inter: 2 VMs x 1 vCPU on qemu/uknodes' hub, TCP.
# Prints a table of ping-pong half round trips and bandwidths (ratio = ours / Open MPI), our
# figures against the floors measured in the same run (issue 16: a flag ping-pong between
# the two ranks' CPUs without MPI, a 1 MiB memcpy, and the flag ping-pong with a 1 MiB copy
# into the other CPU's buffer in each turn (one copy, as ours, of bytes the other CPU wrote),
# all from the same job, mpibench's `limits` mode; a raw frame echo between two of our nodes without a protocol stack,
# tests/uk/l2_echo.c), and the waitcpu lines (CPU time a rank burns in MPI_Wait for a
# message 100 ms away) of both.
# A side that cannot be built or run says so on a line of its own; nothing is made up.
#
# Settings: MPIB_ITERS (default 1000) ping-pong round trips for <= 1 KiB (64 KiB: /5,
# 1 MiB: /20); MPIB_REPS (5) waitcpu repetitions; MPIB_RUNS (3) runs of each side and
# configuration, alternating, figures are medians over runs; MPIB_TIMEOUT (180) seconds per
# job (a job that fails or times out is not run again in the later runs). The first run
# builds the Open MPI guest into $UKMPI_CACHE (ompi/build-guest.sh, about a minute with a
# fast mirror; needs root); logs and binaries go to $B/bench/mpi/. The non-blocking
# collectives (MPI_Ibcast with compute) are tests/bench/nbc.bench.sh's.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
out=$B/bench/mpi
ITERS=${MPIB_ITERS:-1000}
REPS=${MPIB_REPS:-5}
RUNS=${MPIB_RUNS:-3}
TIMEOUT=${MPIB_TIMEOUT:-180}
args=(-n "$ITERS" -r "$REPS" pingpong waitcpu)
mkdir -p "$out"
rm -f "$out"/ours-*.txt "$out"/ompi-*.txt

# First line of a log that says what went wrong.
why() { grep -m1 -iE 'error|fatal|not found|undefined|missing|failed|timeout' "$1" | cut -c1-150 || true; }
# A failed job: one line for the report, and no more runs of it.
failed=
job_failed() { # side cfg rc log
    local w=timeout
    [ "$3" = 124 ] || w=$(why "$4")
    echo "$1 $2: exit $3${w:+ ($w)}; see $4" >>"$out/notes"
    failed+=" $1-$2"
}

# --- ours: build with ukmpicc. pingpong and waitcpu need no MPI_Ibcast nor MPIX: built
# without them, the program also runs on a library that lacks them (nbc.bench.sh tries more).
ours='' ours_note=''
# -DMPIBENCH_SAS: the ranks of a node share one address space (limits.c's flag ping-pong).
if mpi/bin/ukmpicc -O2 -DMPIBENCH_SAS -DMPIBENCH_NO_IBCAST -DMPIBENCH_NO_MPIX -o "$out/mpibench.uk" \
    tests/bench/mpi/*.c >"$out/ukmpicc.log" 2>&1; then
    ours=$out/mpibench.uk
else
    ours_note="not built ($(why "$out/ukmpicc.log"); see $out/ukmpicc.log)"
fi

# interprio: inter with the host's threads ordered (tests/bench/crossnode.md): each QEMU's
# vCPU threads 10 nice levels below its I/O thread and the hub, waits polling 200 us.
run_ours() { # intra|inter|interprio RUN
    local o=(-n 2 --nodes 1 --smp 2) m=(limits) rc=0 nice=0
    [ "$1" = intra ] || o=(-n 2 --nodes 2) m=()
    [ "$1" != interprio ] || o+=(--env UKMPI_SPIN_NS=200000) nice=10
    UKNODES_VCPU_NICE=$nice qemu/ukrun "${o[@]}" --timeout "$TIMEOUT" "$ours" "${args[@]}" "${m[@]}" \
        >"$out/ours-$1.$2.log" 2>&1 || rc=$?
    # ukrun prefixes rank output "[rank] ", and "[nI] " with several nodes: rank 0's lines
    sed -n -E 's/^(\[n[0-9]+\] )?(\[0\] )?((# mpibench|pingpong |waitcpu |limit ).*)/\3/p' \
        "$out/ours-$1.$2.log" >"$out/ours-$1.$2.txt"
    [ $rc = 0 ] || job_failed ours "$1" $rc "$out/ours-$1.$2.log"
}
# The cross-node floor: a raw frame echo between two of our nodes (tests/uk/l2_echo.c).
run_l2() { # RUN
    local rc=0
    qemu/uknodes --nodes 2 --timeout "$TIMEOUT" --append test=l2_echo "$B/uk/ukernel-test.elf" \
        >"$out/ours-l2.$1.log" 2>&1 || rc=$?
    sed -n -E 's/^\[n0\] bench: (l2_.*)/limit l2echo \1/p' "$out/ours-l2.$1.log" >"$out/ours-l2.$1.txt"
    [ $rc = 0 ] || job_failed ours l2 $rc "$out/ours-l2.$1.log"
}

# --- Open MPI: the guest is built (first run) before anything is timed; its progress
# lines go to stderr too, a first build takes a while
ompi=1 ompi_note=
if ! timeout 1800 tests/bench/ompi/build-guest.sh 2>&1 >/dev/null | tee "$out/ompi-guest.log" >&2 ||
    ! timeout 600 tests/bench/linux-kernel.sh 2>&1 >/dev/null | tee -a "$out/ompi-guest.log" >&2; then
    ompi=0 ompi_note="not run ($(tail -n1 "$out/ompi-guest.log" | cut -c1-150))"
fi
run_ompi() { # intra|inter RUN
    local rc=0
    tests/bench/ompi/run.sh --timeout "$TIMEOUT" --log "$out/ompi-$1.$2.log" "$1" "${args[@]}" \
        >"$out/ompi-$1.$2.txt" 2>"$out/ompi-$1.$2.err" || rc=$?
    [ $rc = 0 ] || job_failed ompi "$1" $rc "$out/ompi-$1.$2.log"
}

rm -f "$out/notes"
load0=$(cut -d' ' -f1 /proc/loadavg)
for r in $(seq "$RUNS"); do
    for cfg in intra inter interprio; do
        [ -z "$ours" ] || [[ $failed == *" ours-$cfg"* ]] || run_ours "$cfg" "$r"
        [ "$ompi" = 0 ] || [ "$cfg" = interprio ] || [[ $failed == *" ompi-$cfg"* ]] || run_ompi "$cfg" "$r"
    done
    [[ $failed == *" ours-l2"* ]] || run_l2 "$r"
done

# Median over runs of KEY's numeric values (a sign allowed: split's notice_us) on the lines
# starting with PREFIX in SIDE-CFG.*.txt; empty if there are none.
pick() { # side-cfg prefix key
    cat "$out/$1".*.txt 2>/dev/null | awk -v p="$2" -v k="$3" 'index($0, p) == 1 {
        for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == k && kv[2] ~ /^-?[0-9.]+$/) print kv[2]
    }' | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}' || true
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b <= 0 ? "-" : sprintf(a / b < 0.1 ? "%.2g" : "%.2f", a / b)) }'; }
line() { # label unit prefix key
    local a b c d
    a=$(pick ours-intra "$3" "$4") b=$(pick ompi-intra "$3" "$4")
    c=$(pick ours-inter "$3" "$4") d=$(pick ompi-inter "$3" "$4")
    printf '%-22s %-5s %11s %11s %7s %11s %11s %7s\n' "mpi: $1" "$2" "${a:--}" "${b:--}" \
        "$(ratio "$a" "$b")" "${c:--}" "${d:--}" "$(ratio "$c" "$d")"
}
waitline() { # cfg side
    local w c
    w=$(pick "$2-$1" "waitcpu " wall_ms) c=$(pick "$2-$1" "waitcpu " cpu_ms)
    if [ -z "$w" ]; then
        printf 'mpi: waitcpu %-5s %-4s (no result)\n' "$1" "$2"
    else
        printf 'mpi: waitcpu %-5s %-4s wall_ms=%s cpu_ms=%s cpu_pct=%s\n' "$1" "$2" "$w" "${c:-na}" \
            "$(awk -v w="$w" -v c="$c" 'BEGIN { print (c != "" && w > 0 ? sprintf("%.1f", 100 * c / w) : "na") }')"
    fi
}

lib=$(grep -h -o 'lib="[^"]*"' "$out"/ompi-intra.*.txt "$out"/ompi-inter.*.txt 2>/dev/null | head -n1 || true)
echo "# MPI: ours (qemu/ukrun) vs Open MPI ${lib:-(not run)} in Debian Linux VMs, same QEMU/TCG, NIC, hub, netdev"
echo "# ping-pong half round trip (us) and bandwidth (MB/s = bytes / half round trip), median of"
echo "# $ITERS round trips (64 KiB: /5, 1 MiB: /20), $RUNS run(s); ratio = ours / Open MPI (us: < 1 we"
echo "# are faster; MB/s: > 1 we are faster). intra: 2 ranks, 1 VM x 2 CPUs; inter: 2 VMs x 1 CPU"
# Other work on the host shows in every TCG figure (intra needs 2 host cores to itself).
echo "# host: $(nproc) cores, load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end"
printf '%-22s %-5s %11s %11s %7s %11s %11s %7s\n' "# size" unit ours-intra ompi-1vm ratio \
    ours-inter ompi-2vm ratio
line "0 B" us "pingpong bytes=0 " half_rtt_us
line "8 B" us "pingpong bytes=8 " half_rtt_us
line "1 KiB" us "pingpong bytes=1024 " half_rtt_us
line "64 KiB" us "pingpong bytes=65536 " half_rtt_us
line "1 MiB" us "pingpong bytes=1048576 " half_rtt_us
line "64 KiB" MB/s "pingpong bytes=65536 " MBps
line "1 MiB" MB/s "pingpong bytes=1048576 " MBps
# Ours against the floors of the same run (ratio = ours / floor: 1 would be the floor).
floor() { # label unit ours-cfg prefix key floor-file floor-prefix floor-key floor-name [word]
    local a b
    a=$(pick "$3" "$4" "$5") b=$(pick "$6" "$7" "$8")
    printf '%-22s %-5s %11s %11s %7s   (%s: %s)\n' "mpi: $1" "$2" "${a:--}" "${b:--}" \
        "$(ratio "$a" "$b")" "${10:-floor}" "$9"
}
echo "# floors, same run: ours (median) against what no library can beat here"
printf '%-22s %-5s %11s %11s %7s\n' "# figure" unit ours floor ratio
floor "intra 0 B" us ours-intra "pingpong bytes=0 " half_rtt_us ours-intra "limit flagpp " \
    half_rtt_us "flag ping-pong in shared memory, same 2 CPUs, no MPI"
floor "intra 8 B" us ours-intra "pingpong bytes=8 " half_rtt_us ours-intra "limit flagpp " \
    half_rtt_us "the same"
floor "intra 1 MiB" MB/s ours-intra "pingpong bytes=1048576 " MBps ours-intra "limit memcpy " \
    MBps "1 MiB memcpy in the same guest"
floor "intra 1 MiB" MB/s ours-intra "pingpong bytes=1048576 " MBps ours-intra "limit copypp " \
    MBps "the flag ping-pong, each turn copying 1 MiB into the other CPU's buffer, no MPI"
floor "inter 0 B" us ours-inter "pingpong bytes=0 " half_rtt_us ours-l2 "limit l2echo " \
    l2_half_rtt_us "raw frame echo, driver to driver, same NIC/hub/netdev"
echo "# inter, the host's threads ordered: each QEMU's vCPU threads 10 nice levels below its I/O"
echo "# thread and the hub (uknodes --vcpu-nice 10), waits polling 200 us; not the default, it"
echo "# slows streams (tests/bench/crossnode.md). ratio = this / the figure named"
floor "inter 0 B" us ours-interprio "pingpong bytes=0 " half_rtt_us ours-inter "pingpong bytes=0 " \
    half_rtt_us "ours, default placement" against
floor "inter 0 B" us ours-interprio "pingpong bytes=0 " half_rtt_us ompi-inter "pingpong bytes=0 " \
    half_rtt_us "Open MPI TCP, default placement" against
floor "inter 0 B" us ours-interprio "pingpong bytes=0 " half_rtt_us ours-l2 "limit l2echo " \
    l2_half_rtt_us "raw frame echo, default placement, its answering node halting" against
floor "inter 64 KiB" MB/s ours-interprio "pingpong bytes=65536 " MBps ours-inter "pingpong bytes=65536 " \
    MBps "ours, default placement" against
# What the steps of a message cost in the same guest (limits.c): with pathcost.bench.sh's
# instruction and call counts, where the time between ours and the flag floor goes.
cost=
for k in loop_ns call_ns atomic_ns fence_ns; do cost+=" ${k%_ns}=$(pick ours-intra "limit cost " $k)ns"; done
echo "# a step's cost in our guest (median over runs):$cost"
# Where the intra 0 B half round trip goes (limits.c's split): the sender's MPI_Send in the
# ping-pong against the same call to itself (every line its own: the instructions), and when
# the receiver's MPI_Recv returns after the send returned (negative: before).
sp=
for k in pp_send_us self_send_us notice_us; do sp+=" ${k%_us}=$(pick ours-intra "limit split " $k)us"; done
echo "# intra 0 B split (median over runs):$sp"
# The same figures as curves for report.html (series.sh).
. tests/bench/series.sh
series_new mpi-latency "MPI ping-pong half round trip: ours vs Open MPI, and the floors" us 1 \
    ours-intra ompi-1vm ours-inter ompi-2vm floor-intra floor-inter
label() { case $1 in 1048576) echo "1 MiB" ;; 65536) echo "64 KiB" ;; 1024) echo "1 KiB" ;; *) echo "$1 B" ;; esac; }
for sz in 0 8 1024 65536 1048576; do
    p="pingpong bytes=$sz " fi= fo=
    case $sz in
    0 | 8) fi=$(pick ours-intra "limit flagpp " half_rtt_us) ;;
    1048576) fi=$(awk -v m="$(pick ours-intra "limit memcpy " MBps)" 'BEGIN { if (m > 0) printf "%.2f", 1048576 / m }') ;;
    esac
    [ "$sz" != 0 ] || fo=$(pick ours-l2 "limit l2echo " l2_half_rtt_us)
    series_row mpi-latency "$(label "$sz")" "$(pick ours-intra "$p" half_rtt_us)" "$(pick ompi-intra "$p" half_rtt_us)" \
        "$(pick ours-inter "$p" half_rtt_us)" "$(pick ompi-inter "$p" half_rtt_us)" "$fi" "$fo"
done
series_new mpi-bandwidth "MPI ping-pong bandwidth: ours vs Open MPI, and the copy floors" MB/s 1 \
    ours-intra ompi-1vm ours-inter ompi-2vm memcpy copy-ping-pong
for sz in 65536 1048576; do
    p="pingpong bytes=$sz " m= c=
    [ "$sz" != 1048576 ] || m=$(pick ours-intra "limit memcpy " MBps) c=$(pick ours-intra "limit copypp " MBps)
    series_row mpi-bandwidth "$(label "$sz")" "$(pick ours-intra "$p" MBps)" "$(pick ompi-intra "$p" MBps)" \
        "$(pick ours-inter "$p" MBps)" "$(pick ompi-inter "$p" MBps)" "$m" "$c"
done
echo "# waitcpu: rank 1 waits in MPI_Wait for a message rank 0 sends after 100 ms: wall and"
echo "# process CPU time of the wait (medians); cpu_pct ~100: busy polling, ~0: blocked"
for cfg in intra inter; do
    waitline "$cfg" ours
    waitline "$cfg" ompi
done
[ -z "$ours_note" ] || echo "ours: $ours_note"
[ -z "$ompi_note" ] || echo "ompi: $ompi_note"
[ ! -s "$out/notes" ] || cat "$out/notes"
exit 0
