#!/usr/bin/env bash
# tests/bench/waitio.bench.sh: WaitIO (issue 14) side by side with Open MPI, the seed's
# evaluation. Prints rows "figure value baseline unit ratio" (tests/bench/run.sh's
# format), every baseline measured in the same run; figures only, never pass or fail.
#
#  1a. Half round trip 0 B .. 4 MiB between two PBs of one process each, ours Linux-Linux
#      on loopback; baseline: an Open MPI ping-pong over TCP (btl self,tcp: no shared
#      memory) between two processes on the same loopback, same sizes.
#  1b. (root) The same from a unikernel PB (1 node x 1 rank, tests/waitio/uk-with-linux.sh)
#      to a Linux PB in the global namespace through waitio-gw; baselines: Open MPI TCP
#      between a process in the front-end namespace and one in the global namespace
#      (across the same veth; one mpirun spanning both through tests/bench/waitio/
#      ns_agent.sh), and ours Linux-Linux through the same gateway (the Linux PB 1 in a
#      private namespace behind it).
#  2.  Multi-stream bandwidth: 1, 2, 4 pairs at once (two PBs of 1/2/4 processes on
#      loopback), 4 MiB messages, per pair and aggregate; baseline: Open MPI TCP, same pairs.
#  3.  King collectives vs the flat root-to-all version, 2-4 PBs (tests/bench/waitio_king.sh).
#
# Programs: tests/bench/waitio/wio_bench.c (public WaitIO API only; built with mpicc
# -lwaitio and with mpi/bin/ukmpicc -lwaitio) and mpi_bench.c (the same pattern in MPI).
# Latency: the median of individually timed round trips, halved; bandwidth: the median of
# the runs; every Linux figure then the median over WIO_JOBS jobs (default 3; the unikernel
# job runs once): on a loaded 2-core machine Open MPI's busy-polling processes fall into a
# slow mode for a whole job now and then (a 0 B half round trip of 4 ms, one scheduler
# tick; a single pair's 4 MiB stream at 0.5 instead of 5-11 GB/s).
# Settings: WIO_ITERS (200) round trips at <= 1 KiB (fewer above, see bench_common.h);
# WIO_MSGS (8) messages per bandwidth run; WIO_RUNS (5) runs per job; WIO_KING=0 skips
# part 3.
# Each PB's own MPI is Open MPI with btl self,vader; WaitIO itself runs over TCP.
# About a minute on 2 cores (half of it the King part). Needs `make all`; part 1b needs
# root (namespaces, TAP).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
ITERS=${WIO_ITERS:-200} MSGS=${WIO_MSGS:-8} RUNS=${WIO_RUNS:-5} JOBS=${WIO_JOBS:-3}
readonly JOB_S=120 UK_JOB_S=240 MASTER_PORT=7100
readonly PRIV_NS_ADDR=10.0.1.1 PRIV_FRONT_ADDR=10.0.1.254 PRIV_PREFIX=24
# The front-end and global addresses of tests/waitio/uk-with-linux.sh, so 1b's paths match.
readonly TAP_ADDR=10.0.0.254 FRONT_ADDR=10.77.4.101 GLOBAL_HOST=10.77.4.2 GLOBAL_PREFIX=24
LIB=$B/waitio/lib
OUT=$B/bench/waitio
echo "# WaitIO vs Open MPI (tests/bench/waitio.bench.sh; ITERS=$ITERS MSGS=$MSGS RUNS=$RUNS JOBS=$JOBS)"
for f in "$LIB/libwaitio.a" "$B/waitio/bin/waitio-gw"; do
    [ -f "$f" ] || { echo "# waitio: skipped: $f not built (make all)"; exit 0; }
done
command -v mpicc >/dev/null || { echo "# waitio: skipped: no Open MPI (mpicc)"; exit 0; }
mkdir -p "$OUT"
rm -f "$OUT"/*.out "$OUT"/*.log

row() { # name value baseline unit baseline-name; an empty value prints "-"
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, (v == "" ? "-" : v), (b == "" ? "-" : b), u, (b > 0 && v != "" ? sprintf("%.2f", v / b) : "-"), bn }'
}
# fig FILE WHAT KEY: KEY's value on FILE's first "bench: WHAT ..." line.
fig() { grep -m1 "bench: $2 " "$1" 2>/dev/null | sed -n "s/.* $3=\([0-9.]*\).*/\1/p"; }
# jobs_median PREFIX WHAT KEY: the median of fig over PREFIX.1.out .. PREFIX.$JOBS.out.
jobs_median() {
    local j
    for j in $(seq "$JOBS"); do fig "$1.$j.out" "$2" "$3"; done | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
size_name() { # bytes -> 0B, 1KiB, 4MiB
    awk -v n="$1" 'BEGIN { if (n >= 1048576) print n / 1048576 "MiB"
        else if (n >= 1024) print n / 1024 "KiB"; else print n "B" }'
}
failed() { # what log: a job whose figures are missing says why, as "#" lines
    echo "# waitio: $1 failed; its last lines:"
    tail -n 6 "$2" 2>/dev/null | sed 's/^/#   /'
}

if ! mpicc -O2 -Impi/waitio/include tests/bench/waitio/wio_bench.c -o "$OUT/wio_bench" \
    -L"$LIB" -lwaitio >"$OUT/build.log" 2>&1 ||
    ! mpicc -O2 tests/bench/waitio/mpi_bench.c -o "$OUT/mpi_bench" >>"$OUT/build.log" 2>&1; then
    failed build "$OUT/build.log"
    exit 0
fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# shellcheck disable=SC2054 # the commas are in MCA values
WIO_RUN=(--oversubscribe --bind-to none -x WAITIO_MASTER_HOST -x WAITIO_MASTER_PORT -x WAITIO_PBID
    -x WAITIO_NPB)
# shellcheck disable=SC2054
OMPI_TCP=(--oversubscribe --bind-to none --mca btl self,tcp)

# wio_pbs NP OUT NS0 MASTER0 NS1 MASTER1 ARGS...: PB 0 and PB 1 of NP processes each, PB 0
# in namespace NS0 ("" = this one) meeting the master at MASTER0, PB 1 likewise; PB 0's
# output (the figures) in OUT, PB 1's in OUT.pb1.
wio_pbs() {
    local np=$1 out=$2 ns0=$3 m0=$4 ns1=$5 m1=$6
    shift 6
    local port=$MASTER_PORT pids=()
    [ -n "$ns0" ] || port=$(tests/free_port)
    for pb in 0 1; do
        local ns=$ns0 m=$m0 o=$out
        [ $pb = 0 ] || { ns=$ns1 m=$m1 o=$out.pb1; }
        ${ns:+ip netns exec "$ns"} env WAITIO_MASTER_HOST="$m" WAITIO_MASTER_PORT="$port" \
            WAITIO_PBID=$pb WAITIO_NPB=2 timeout -k 5 $JOB_S mpirun "${WIO_RUN[@]}" -np "$np" \
            "$OUT/wio_bench" "$@" >"$o" 2>&1 &
        pids+=($!)
        # PB 1 only once the master listens: through the gateway, a REGISTER that comes
        # first is refused by the master's host, the gateway closes, and rank 0 of PB 1
        # gives up at once instead of retrying (the library retries failed connects only).
        [ $pb = 1 ] || for _ in $(seq 100); do
            [ -n "$(${ns0:+ip netns exec "$ns0"} ss -Hltn "sport = :$port")" ] && break
            sleep 0.1
        done
    done
    wait "${pids[@]}"
    [ -n "$(fig "$out" "${1}" pairs)$(fig "$out" "${1}" bytes)" ] || failed "WaitIO $* ($np+$np procs)" "$out"
}
# ompi_lo NP OUT ARGS...: the Open MPI baseline on loopback, NP processes.
ompi_lo() {
    local np=$1 out=$2
    shift 2
    timeout -k 5 $JOB_S mpirun "${OMPI_TCP[@]}" --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        -np "$np" "$OUT/mpi_bench" "$@" >"$out" 2>&1 || failed "Open MPI $* ($np procs)" "$out"
}

# 1a. Half round trip on loopback.
for j in $(seq "$JOBS"); do
    wio_pbs 1 "$OUT/lat-lo.$j.out" "" 127.0.0.1 "" 127.0.0.1 lat "$ITERS"
    ompi_lo 2 "$OUT/lat-lo-ompi.$j.out" lat "$ITERS"
done
for n in 0 8 128 129 1024 65536 1048576 4194304; do
    row "wio: lat $(size_name $n) Linux-Linux lo" "$(jobs_median "$OUT/lat-lo" "lat bytes=$n" half_rtt_us)" \
        "$(jobs_median "$OUT/lat-lo-ompi" "lat bytes=$n" half_rtt_us)" us "Open MPI TCP ping-pong, lo"
done

# 2. Multi-stream bandwidth on loopback.
for p in 1 2 4; do
    for j in $(seq "$JOBS"); do
        wio_pbs $p "$OUT/bw$p.$j.out" "" 127.0.0.1 "" 127.0.0.1 bw "$MSGS" "$RUNS"
        ompi_lo $((2 * p)) "$OUT/bw$p-ompi.$j.out" bw "$MSGS" "$RUNS"
    done
    for k in pair agg; do
        row "wio: bw 4MiB $p pair$([ $p = 1 ] || echo s), $([ $k = pair ] && echo per pair || echo total)" \
            "$(jobs_median "$OUT/bw$p" "bw pairs=$p" ${k}_MBps)" \
            "$(jobs_median "$OUT/bw$p-ompi" "bw pairs=$p" ${k}_MBps)" MB/s "Open MPI TCP, same pairs, lo"
    done
done

# 3. King vs flat (another helper's program): its lines become rows.
if [ "${WIO_KING:-1}" != 0 ] && [ -x tests/bench/waitio_king.sh ]; then
    tests/bench/waitio_king.sh >"$OUT/king.out" 2>&1
    # "bench: waitio_king npb=N procs=P OP BYTES B king_us= T flat_us= T ..." -> N OP BYTES T T
    sed -n 's/= */=/g; s/^bench: waitio_king //p' "$OUT/king.out" |
        awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
               print v["npb"], $3, $4, v["king_us"], v["flat_us"] }' |
        while read -r npb op bytes king flat; do
            row "wio: king $op $(size_name "$bytes") $npb PBs" "$king" "$flat" us \
                "flat root-to-all, same universe"
        done
    grep -q '^bench: waitio_king' "$OUT/king.out" || failed "tests/bench/waitio_king.sh" "$OUT/king.out"
fi

# 1b. The unikernel through the gateway, and its baselines on the same topology.
if [ "$(id -u)" != 0 ]; then
    echo "# waitio: unikernel <-> Linux skipped: needs root (network namespaces, TAP)"
    exit 0
fi
if ! mpi/bin/ukmpicc -O2 tests/bench/waitio/wio_bench.c -o "$OUT/wio_bench.uk" -lwaitio \
    >"$OUT/ukbuild.log" 2>&1; then
    failed "ukmpicc" "$OUT/ukbuild.log"
    exit 0
fi
tests/waitio/uk-with-linux.sh --uk-nodes 1 --uk-ranks 1 --linux-procs 1 --timeout $UK_JOB_S \
    "$OUT/wio_bench.uk" "$OUT/wio_bench" lat "$ITERS" >"$OUT/lat-uk.log" 2>&1
sed -n 's/^\[linux\] //p' "$OUT/lat-uk.log" >"$OUT/lat-uk.out"

# The baselines' topology: uk-with-linux.sh's front-end (F: the TAP leg, the veth to the
# global bridge) and global (G) namespaces, and a private namespace P behind F for PB 1.
LAM_TIMEOUT=$JOB_S # impi_lib.sh: start_daemon's safety net
# shellcheck source=tests/interop/impi_lib.sh
. tests/interop/impi_lib.sh
WORK=$(mktemp -d /tmp/wio-bench.XXXXXX)
mkdir -p "$WORK/log"
trap impi_cleanup EXIT
F=${NSP}F G=${NSP}G P=${NSP}P
mkns "$F"
mkns "$G"
mkns "$P"
{ ip -n "$F" tuntap add dev uktap0 mode tap && ip -n "$F" addr add "$TAP_ADDR/24" dev uktap0 &&
    ip -n "$F" link set uktap0 up &&
    ip -n "$G" link add br0 type bridge && ip -n "$G" addr add "$GLOBAL_HOST/$GLOBAL_PREFIX" dev br0 &&
    ip -n "$G" link set br0 up &&
    ip link add glob netns "$F" type veth peer name f1 netns "$G" &&
    ip -n "$F" addr add "$FRONT_ADDR/$GLOBAL_PREFIX" dev glob && ip -n "$F" link set glob up &&
    ip -n "$G" link set f1 master br0 up &&
    link_ns "$F" priv "$PRIV_FRONT_ADDR/$PRIV_PREFIX" "$P" eth0 "$PRIV_NS_ADDR/$PRIV_PREFIX" &&
    ip -n "$P" route add default via "$PRIV_FRONT_ADDR"; } ||
    { echo "# waitio: cannot build the baselines' topology"; exit 0; }
start_daemon "$F" "$WORK/log/waitio-gw.log" "$B/waitio/bin/waitio-gw" --private "$TAP_ADDR:$MASTER_PORT" \
    --public "$FRONT_ADDR" --master "$GLOBAL_HOST:$MASTER_PORT" >/dev/null ||
    { echo "# waitio: waitio-gw did not start"; exit 0; }
# One mpirun in G; its second "host" (F's address) is started in F by ns_agent.sh.
printf 'localhost slots=1\n%s slots=1\n' "$FRONT_ADDR" >"$WORK/hosts"
for j in $(seq "$JOBS"); do
    wio_pbs 1 "$OUT/lat-gw.$j.out" "$G" "$GLOBAL_HOST" "$P" "$TAP_ADDR" lat "$ITERS"
    ip netns exec "$G" env WIO_AGENT_NS="$F" timeout -k 5 $JOB_S mpirun "${OMPI_TCP[@]}" \
        --hostfile "$WORK/hosts" --mca plm_rsh_agent "$PWD/tests/bench/waitio/ns_agent.sh" \
        --mca oob_tcp_if_include "$GLOBAL_HOST/$GLOBAL_PREFIX" \
        --mca btl_tcp_if_include "$GLOBAL_HOST/$GLOBAL_PREFIX" -x OMPI_ALLOW_RUN_AS_ROOT \
        -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -np 2 "$PWD/$OUT/mpi_bench" lat "$ITERS" \
        >"$OUT/lat-veth-ompi.$j.out" 2>&1 || failed "Open MPI across the veth" "$OUT/lat-veth-ompi.$j.out"
done
[ -n "$(fig "$OUT/lat-uk.out" "lat bytes=0" half_rtt_us)" ] || failed "unikernel <-> Linux (uk-with-linux.sh)" "$OUT/lat-uk.log"
for n in 0 8 128 129 1024 65536 1048576 4194304; do
    v=$(fig "$OUT/lat-uk.out" "lat bytes=$n" half_rtt_us)
    row "wio: lat $(size_name $n) uk-Linux gw" "$v" "$(jobs_median "$OUT/lat-veth-ompi" "lat bytes=$n" half_rtt_us)" us \
        "Open MPI TCP, front-end ns <-> global ns"
    row "wio: lat $(size_name $n) uk-Linux gw vs Linux" "$v" "$(jobs_median "$OUT/lat-gw" "lat bytes=$n" half_rtt_us)" us \
        "ours Linux-Linux, same gateway"
done
exit 0
