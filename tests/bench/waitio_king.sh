#!/usr/bin/env bash
# tests/bench/waitio_king.sh: King collectives vs the flat (root-to-all over WaitIO)
# version of the same operation on the same universe, 2, 3 and 4 PBs of 2 ranks each as
# separate Open MPI jobs on loopback. Prints the bench program's lines (times and the
# flat/king ratio); a benchmark, not a test. Needs `make all` first.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
LIB=$B/waitio/lib
OUT=$B/bench/waitio_king
PER_PB=${PER_PB:-2}
mkdir -p "$OUT"
mpicc -std=gnu11 -O2 -Impi/waitio/include -Impi/waitio/wmpi tests/bench/waitio_king.c \
    -o "$OUT/waitio_king" "$LIB/libwaitio_mpi.a" "$LIB/libwaitio.a" || exit 1
# mpi_yield_when_idle: more processes than cores here, and Open MPI's busy-polling in
# local collectives would otherwise starve the King blocked in waitio_wait (epoll) for
# whole scheduler slices (King collectives then ran 10-100x slower than flat ones).
# shellcheck disable=SC2054 # the commas are in MCA values
flags=(--oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle 1
    -x WAITIO_MASTER_HOST -x WAITIO_MASTER_PORT -x WAITIO_PBID -x WAITIO_NPB)
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
for npb in 2 3 4; do
    port=$(tests/free_port)
    pids=()
    for ((i = 0; i < npb; i++)); do
        WAITIO_MASTER_HOST=127.0.0.1 WAITIO_MASTER_PORT=$port WAITIO_PBID=$i WAITIO_NPB=$npb \
            timeout -k 5 600 mpirun "${flags[@]}" -np "$PER_PB" "$OUT/waitio_king" \
            >"$OUT/npb$npb.pb$i.out" 2>"$OUT/npb$npb.pb$i.err" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || echo "# npb=$npb: a job failed (see $OUT)"; done
    cat "$OUT/npb$npb.pb0.out"
done
