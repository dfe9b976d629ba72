#!/usr/bin/env bash
# tests/waitio/wmpi.sh: the WaitIO-MPI layer (libwaitio_mpi.a) between PBs that are
# separate Open MPI jobs (mpirun) on loopback, coupled by WaitIO (WAITIO_MASTER_HOST
# 127.0.0.1, a free WAITIO_MASTER_PORT, WAITIO_PBID, WAITIO_NPB). Programs in
# tests/waitio/progs/ print "RESULT ... fail=N" per process; a run passes when every job
# exits 0 within its timeout and every process reports no failed check.
#   1. test_mpi: point-to-point, waitio_create_universe without waitio_init, 1+1 and 2+2
#   2. king: every collective from every root on a universe (King model), on a user group
#      and on pbhead (WaitIO-only versions), 3 and 4 PBs
#   3. aliases: the upper-case WAITIO_MPI_* names
# Needs `make all` first (build/waitio/lib/libwaitio.a and libwaitio_mpi.a).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
LIB=$B/waitio/lib
OUT=$B/waitio/wmpi-tests
T=${WMPI_TIMEOUT:-120} # seconds per PB job
pass=0 fail=0

ok() {
    echo "ok - $1"
    pass=$((pass + 1))
}
bad() { # message [log files...]
    echo "FAIL - $1"
    shift
    for f in "$@"; do
        [ -s "$f" ] && { echo "    --- $f"; head -n 30 "$f" | sed 's/^/    /'; }
    done
    fail=$((fail + 1))
}
finish() {
    echo "wmpi: $pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}

mkdir -p "$OUT"
for l in "$LIB/libwaitio.a" "$LIB/libwaitio_mpi.a"; do
    [ -f "$l" ] || { bad "$l missing (make all)"; finish; }
done
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
    bad "mpicc/mpirun not found (make deps)"
    finish
fi

built=()
for p in test_mpi king aliases; do
    if mpicc -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -Impi/waitio/include -Itests/waitio/progs \
        "tests/waitio/progs/$p.c" -o "$OUT/$p" "$LIB/libwaitio_mpi.a" "$LIB/libwaitio.a" \
        >"$OUT/$p.build.log" 2>&1; then
        built+=("$p")
    else
        bad "build $p" "$OUT/$p.build.log"
    fi
done

# mpi_yield_when_idle: more processes than cores here, and Open MPI's busy-polling in
# local collectives would otherwise starve the King blocked in waitio_wait (epoll) for
# whole scheduler slices (King collectives then ran 10-100x slower than flat ones).
# shellcheck disable=SC2054 # the commas are in MCA values
mpirun_flags=(--oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle 1
    -x WAITIO_MASTER_HOST -x WAITIO_MASTER_PORT -x WAITIO_PBID -x WAITIO_NPB)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)


# run LABEL SIZES PROG [ARGS...]: one mpirun job per PB (SIZES like 1,2,3), all at once.
run() {
    local label=$1 sizes=$2 prog=$3 port dir i total=0 rc bad_rc=""
    shift 3
    local -a np pids logs=()
    [[ " ${built[*]} " == *" $prog "* ]] || { bad "$label: $prog not built"; return; }
    IFS=, read -ra np <<<"$sizes"
    port=$(tests/free_port)
    dir=$OUT/$label
    rm -rf "$dir" && mkdir -p "$dir"
    for i in "${!np[@]}"; do
        WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_PBID=$i \
            WAITIO_NPB=${#np[@]} timeout -k 5 "$T" \
            mpirun "${mpirun_flags[@]}" -np "${np[$i]}" "$OUT/$prog" "$@" \
            >"$dir/pb$i.out" 2>"$dir/pb$i.err" &
        pids+=($!)
        total=$((total + np[i]))
        logs+=("$dir/pb$i.out" "$dir/pb$i.err")
    done
    for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        rc=$?
        [ $rc = 0 ] || bad_rc+=" pb$i=$rc"
    done
    local results fails checks
    results=$(cat "$dir"/pb*.out | grep -c '^RESULT ')
    fails=$(cat "$dir"/pb*.out | grep '^RESULT ' | grep -vc ' fail=0$')
    checks=$(cat "$dir"/pb*.out | sed -n 's/^RESULT .* pass=\([0-9]*\) .*/\1/p' |
        awk '{s += $1} END {print s + 0}')
    if [ -z "$bad_rc" ] && [ "$results" = "$total" ] && [ "$fails" = 0 ]; then
        ok "$label: PBs of $sizes ranks, $checks checks"
    else
        bad "$label: exit${bad_rc:- ok}, $results of $total processes reported, $fails with failures (124 = timeout)" "${logs[@]}"
    fi
}

run test_mpi-1+1 1,1 test_mpi
run test_mpi-2+2 2,2 test_mpi
run king-universe-1+2+3 1,2,3 king universe
run king-universe-2+1+1+1 2,1,1,1 king universe
run king-group-1+2+3 1,2,3 king group
run king-pbhead-2+1+2 2,1,2 king pbhead
run aliases-1+2 1,2 aliases

# A PB id outside 0..NPB-1: waitio_create_universe's own waitio_init fails at once, the
# call returns non-zero with a NULL group (what test-mpi.c checks), no hang.
d=$OUT/bad-pbid
mkdir -p "$d"
if [[ " ${built[*]} " == *" test_mpi "* ]]; then
    WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$(tests/free_port) WAITIO_PBID=2 WAITIO_NPB=2 \
        timeout -k 5 "$T" mpirun "${mpirun_flags[@]}" -np 1 "$OUT/test_mpi" \
        >"$d/pb0.out" 2>"$d/pb0.err"
    rc=$?
    if [ $rc != 0 ] && [ $rc != 124 ] && grep -q '^universe failed, comm NULL$' "$d/pb0.out" &&
        grep -q '^waitio_create_universe: waitio_init failed' "$d/pb0.err"; then
        ok "bad WAITIO_PBID: waitio_create_universe fails at once, NULL group"
    else
        bad "bad WAITIO_PBID: exit $rc" "$d/pb0.out" "$d/pb0.err"
    fi
fi

# Argument errors are one stderr line naming the call (king's errors(), every process).
d=$OUT/king-universe-1+2+3
if [ -d "$d" ] && grep -q '^waitio_mpi_bcast: unknown datatype' "$d"/pb*.err &&
    grep -q '^waitio_mpi_reduce: unknown reduction op' "$d"/pb*.err &&
    grep -q '^waitio_mpi_bcast: root 6 outside' "$d"/pb*.err; then
    ok "argument errors name the call on stderr"
else
    bad "argument errors: expected lines missing from $d/pb*.err"
fi
finish
