#!/usr/bin/env bash
# tests/bench/is_test.sh: the correctness of mpibench's `is` mode (tests/bench/mpi/is.c, the
# integer sort of tests/bench/linux.bench.sh), in `make test` (suite is-sort). The benchmark
# program is built with `mpi/bin/ukmpicc --linux` and run by mpi/bin/ukmpirun as Linux
# processes on loopback; a test passes when the job exits 0 and rank 0 prints verified=1.
#   linux-4        4 processes, 65536 keys each (the benchmark's size)
#   linux-3-odd    3 processes, 1001 keys each: bucket runs that do not split evenly
#   openmpi-4      the same program under the host's Open MPI (mpicc, mpirun): the
#                  reference that the sort, not only our library, is right
#   catches-*      the verification itself: is.c with the local sort left out (unsorted)
#                  or with one received key dropped (lost-key), patched into a copy here,
#                  must make the job exit 3 with verified=0
# One line per test, then "N passed, N failed". Logs: $B/is-test/.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
babs=$(mkdir -p "$B" && cd "$B" && pwd)
export UKMPI_BUILD=${UKMPI_BUILD:-$babs}
out=$B/is-test
TIMEOUT=${IS_TEST_TIMEOUT:-60}
IS_FAILED=3 # mpibench's exit code when the sort is wrong (is.c IS_FAILED)
pass=0 fail=0
mkdir -p "$out"
ok() {
    echo "ok is/$1"
    pass=$((pass + 1))
}
bad() { # NAME REASON
    echo "FAIL is/$1: $2"
    fail=$((fail + 1))
}
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit
}

# build NAME SRC CC...: $out/NAME, mpibench from the sources in $out/SRC.src (a copy of
# tests/bench/mpi)
build() {
    local n=$1 src=$2
    shift 2
    "$@" -O2 -o "$out/$n" "$out/$src.src"/*.c >"$out/$n.build.log" 2>&1
}
copy_src() { rm -rf "$out/$1.src" && cp -r tests/bench/mpi "$out/$1.src"; }
# mutate NAME FROM TO: a copy of the sources with the line FROM of is.c replaced by TO
mutate() {
    copy_src "$1"
    if ! grep -qF -- "$2" "$out/$1.src/is.c"; then
        echo "is_test: is.c has no line '$2' to mutate (update this test)" >&2
        return 1
    fi
    FROM=$2 TO=$3 perl -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$out/$1.src/is.c"
}
# run NAME LOG CMD...: the verdict from the exit code and rank 0's `is` line; sets rc, line
run() {
    timeout -k 5 $((TIMEOUT + 10)) "${@:3}" >"$out/$2.log" 2>&1
    rc=$?
    line=$(grep -m1 '^is ' "$out/$2.log" || true)
}
expect_ok() { # NAME
    if [ "$rc" = 0 ] && [[ $line == *" verified=1"* ]]; then
        ok "$1"
    else
        bad "$1" "exit $rc, '${line:-no is line}' (see $out/$1.log)"
    fi
}
expect_caught() { # NAME
    if [ "$rc" = $IS_FAILED ] && [[ $line == *" verified=0"* ]]; then
        ok "$1"
    else
        bad "$1" "a broken sort was not caught: exit $rc, '${line:-no is line}' (see $out/$1.log)"
    fi
}

copy_src good
if ! build good good mpi/bin/ukmpicc --linux; then
    bad build "ukmpicc --linux failed (see $out/good.build.log)"
    finish
fi
run linux-4 linux-4 mpi/bin/ukmpirun -n 4 --timeout "$TIMEOUT" "$out/good" -r 3 -k 65536 is
expect_ok linux-4
run linux-3-odd linux-3-odd mpi/bin/ukmpirun -n 3 --timeout "$TIMEOUT" "$out/good" -r 2 -k 1001 is
expect_ok linux-3-odd

if build good.ompi good mpicc; then
    run openmpi-4 openmpi-4 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np 4 "$out/good.ompi" -r 3 -k 65536 is
    expect_ok openmpi-4
else
    bad openmpi-4 "mpicc (Debian's Open MPI: make deps) failed (see $out/good.ompi.build.log)"
fi

# the counting sort's placement becomes a plain copy: every rank's keys stay unsorted
if mutate unsorted "st->sorted[st->count[st->recv[i] - st->lo]++] = st->recv[i];" \
    "st->sorted[i] = st->recv[i];" && build unsorted unsorted mpi/bin/ukmpicc --linux; then
    run catches-unsorted unsorted mpi/bin/ukmpirun -n 4 --timeout "$TIMEOUT" "$out/unsorted" -r 1 is
    expect_caught catches-unsorted
else
    bad catches-unsorted "the mutant did not build (see $out/unsorted.build.log)"
fi
# every rank with keys loses its last received one
if mutate lost-key "st->nrecv = n;" "st->nrecv = n > 0 ? n - 1 : 0;" &&
    build lost-key lost-key mpi/bin/ukmpicc --linux; then
    run catches-lost-key lost-key mpi/bin/ukmpirun -n 4 --timeout "$TIMEOUT" "$out/lost-key" -r 1 is
    expect_caught catches-lost-key
else
    bad catches-lost-key "the mutant did not build (see $out/lost-key.build.log)"
fi
finish
