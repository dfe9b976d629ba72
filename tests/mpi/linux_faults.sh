#!/usr/bin/env bash
# tests/mpi/linux_faults.sh: the Linux platform of the MPI library (mpi/linux/) under load
# and when things break, with Linux processes over loopback (mpi/bin/ukmpirun).
#
#   stress.NP     tests/mpi/linux/stress.c (all-to-all exchanges of eager and rendezvous
#                 sizes with any-source receives, barriers, allreduces) on 4 and 8 ranks
#   kill, abort   tests/mpi/linux/die.c: a rank killed by SIGKILL, or calling MPI_Abort,
#                 mid-job: the job ends in seconds, non-zero, ukmpirun names the rank and
#                 the cause, the others say which connection failed
#   env.*         bad UKMPI_* values are refused with a message naming the variable
#   mutant.*      the same stress test on a broken platform must fail: mlx_plat.c with the
#                 futex wake-up removed (nowake), with a wake-up that arrives before
#                 plat_block() forgotten (lostwake: the check-then-sleep race), and with
#                 the network lock gone (nolock: the rank and the network thread in the
#                 engine at once; up to MUTANT_TRIES runs, one must fail). A mutant is
#                 built by make's own rule for the library's objects, so with its flags.
#
# Closing line: "mpi-linux-faults: N passed, N failed"; exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
out=$B/mpi-lx/faults
mkdir -p "$out"
babs=$(cd "$B" && pwd)
export UKMPI_BUILD=${UKMPI_BUILD:-$babs}
ITERS=2000        # stress iterations: about 1.5 s on 4 ranks, 4 s on 8
JOB_TIMEOUT=30    # a healthy run, or a dying job's end, takes a few seconds
MUTANT_TIMEOUT=10 # a mutant that hangs
MUTANT_TRIES=3
pass=0 fail=0

ok() {
    echo "PASS $1"
    pass=$((pass + 1))
}
bad() { # NAME REASON [LOG]
    echo "FAIL $1: $2"
    [ $# -ge 3 ] && [ -s "$3" ] && tail -n 15 "$3" | sed 's/^/    | /'
    fail=$((fail + 1))
}
build() { # SRC OUT [EXTRA...]
    local src=$1 bin=$2
    shift 2
    mpi/bin/ukmpicc --linux -O2 -Wall -Werror "$src" "$@" -o "$bin" >"$bin.build.log" 2>&1
}

for p in stress die; do
    build "tests/mpi/linux/$p.c" "$out/$p" || bad "build $p" "ukmpicc --linux failed" "$out/$p.build.log"
done

for np in 4 8; do
    log=$out/stress.$np.log
    mpi/bin/ukmpirun -n $np --timeout $JOB_TIMEOUT "$out/stress" $ITERS >"$log" 2>&1
    rc=$?
    if [ $rc = 0 ] && grep -q "^stress: ok, $ITERS iterations on $np ranks" "$log"; then
        ok "stress.$np ($ITERS iterations)"
    else
        bad "stress.$np" "exit $rc" "$log"
    fi
done

# die VICTIM HOW EXPECTED-RC EXPECTED-CAUSE
die_test() {
    local log=$out/die.$2.log start=$SECONDS
    mpi/bin/ukmpirun -n 4 --timeout $JOB_TIMEOUT "$out/die" "$1" "$2" >"$log" 2>&1
    local rc=$?
    if [ $rc != "$3" ]; then
        bad "$2" "exit $rc, not $3" "$log"
    elif ! grep -q "^ukmpirun: rank $1 failed: $4" "$log"; then
        bad "$2" "ukmpirun did not say 'rank $1 failed: $4'" "$log"
    elif ! grep -q "^mpi: node [0-9]: connection to node $1 failed" "$log"; then
        bad "$2" "no other rank said its connection to node $1 failed" "$log"
    else
        ok "$2 (rank $1 dies mid-job: the job ended in $((SECONDS - start)) s, exit $rc)"
    fi
}
die_test 1 kill 137 "killed by SIGKILL"
die_test 3 abort 9 "exit code 9"

# env NAME EXPECTED-MESSAGE VAR=VALUE...
env_test() {
    local name=$1 want=$2 log=$out/env.$1.log
    shift 2
    env "$@" timeout 10 "$out/stress" 1 >"$log" 2>&1
    local rc=$?
    if [ $rc = 73 ] && grep -qF "mpi: $want" "$log"; then
        ok "env.$name"
    else
        bad "env.$name" "exit $rc, wanted 73 and 'mpi: $want'" "$log"
    fi
}
env_test node "UKMPI_NODE=\"2\": not a whole number from 0 to 1" UKMPI_NODES=2 UKMPI_NODE=2
env_test nodes "UKMPI_NODES=\"99999999999\": not a whole number" UKMPI_NODES=99999999999
env_test port "UKMPI_PEERS: node 1: port \"70000\" is not 1 to 65535" \
    UKMPI_NODES=2 UKMPI_PEERS=127.0.0.1,127.0.0.1:70000
env_test count "UKMPI_PEERS has 1 addresses, UKMPI_NODES=2" UKMPI_NODES=2 UKMPI_PEERS=127.0.0.1
env_test size "UKMPI_SIZE=4 but UKMPI_NODES=2" UKMPI_NODES=2 UKMPI_SIZE=4 \
    UKMPI_PEERS=127.0.0.1:1,127.0.0.1:2

# mutant NAME NP PERL-SUBSTITUTION: stress on mlx_plat.c changed so; it must fail.
mutant() {
    local name=$1 np=$2 dir=$out/mutant-$1 log=$out/mutant-$1.log
    mkdir -p "$dir"
    perl -0pe "$3" mpi/linux/mlx_plat.c >"$dir/mlx_plat.c"
    if cmp -s "$dir/mlx_plat.c" mpi/linux/mlx_plat.c; then
        bad "mutant.$name" "the substitution no longer applies to mpi/linux/mlx_plat.c"
        return
    fi
    local obj=$B/linux/obj/$dir/mlx_plat.o
    if ! make -s "$obj" >"$log" 2>&1 || ! build tests/mpi/linux/stress.c "$dir/stress" "$obj"; then
        bad "mutant.$name" "build failed" "$log"
        return
    fi
    for ((try = 1; try <= MUTANT_TRIES; try++)); do
        mpi/bin/ukmpirun -n "$np" --timeout $MUTANT_TIMEOUT "$dir/stress" $ITERS >"$log" 2>&1
        local rc=$?
        if [ $rc != 0 ]; then
            ok "mutant.$name fails (run $try: $(grep '^ukmpirun:' "$log" | tail -n1 | cut -c11-90))"
            return
        fi
    done
    bad "mutant.$name" "the stress test passed $MUTANT_TRIES times on a broken platform" "$log"
}
mutant nowake 4 's/futex\(&t->state, FUTEX_WAKE_PRIVATE, 1\);/(void)0;/'
mutant lostwake 4 's/if \(__atomic_exchange_n\(&t->state, WAKE_NONE, __ATOMIC_SEQ_CST\) == WAKE_PENDING\)\n\s*return;/__atomic_store_n(&t->state, WAKE_NONE, __ATOMIC_SEQ_CST);/'
mutant nolock 8 's/pthread_mutex_(un)?lock\(&net_lock\);//g'

echo "mpi-linux-faults: $pass passed, $fail failed"
[ "$fail" = 0 ]
