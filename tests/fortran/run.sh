#!/usr/bin/env bash
# tests/fortran/run.sh [FILTER]: the Fortran bindings on the library's Linux home.
#
# Every program of tests/fortran/progs/ (*.f90: `use mpi`; *.f: FORTRAN 77 with
# include 'mpif.h'; or those whose name contains FILTER) is a self-checking MPI program
# whose rank 0 prints "ok N - ..." / "not ok N - ..." per check, the values it saw, and a
# closing "# fortran PROG: N checks, M failed"; its output depends only on the number of
# ranks. For each rank count of FORTRAN_NP (default 4):
#
#   reference  built with Debian's Open MPI (mpifort), run with mpirun as tests/mpi/run.sh
#              runs the C references, rank 0's output kept as
#              build/fortran-ref/PROG.NP.out; made again only when missing or older than
#              the program. A test: exit 0 and 0 failed.
#   ours       built with mpi/bin/ukmpifort --linux (ukmpif77 for .f), run by
#              mpi/bin/ukmpirun -n NP; stdout kept as build/fortran-lx/PROG.NP.out. A test:
#              exit 0 and output identical to the reference (the diff is shown otherwise).
#
# Also tested: ukmpifort refuses to build without --linux, and -show prints the command.
# Each build has a directory of its own: gfortran reads mpif.h and .mod files from the
# current and the source's directory first, so one MPI's files must never meet the other's.
# FORTRAN_TIMEOUT (default 60) bounds each run. Closing line: "fortran: N passed, N
# failed"; exits non-zero if any test failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
filter=${1:-}
nps=${FORTRAN_NP:-4}
limit=${FORTRAN_TIMEOUT:-60}
babs=$(mkdir -p "$B" && cd "$B" && pwd)
root=$(pwd)
export UKMPI_BUILD=${UKMPI_BUILD:-$babs}
ref=$babs/fortran-ref lx=$babs/fortran-lx
mkdir -p "$ref" "$lx"
pass=0 fail=0

ok() {
    echo "ok $1"
    pass=$((pass + 1))
}
bad() { # NAME REASON [FILE whose tail to show]
    echo "FAIL $1: $2"
    [ $# -ge 3 ] && [ -s "$3" ] && tail -n 20 "$3" | sed 's/^/    | /'
    fail=$((fail + 1))
}
closing_ok() { # PROG FILE
    grep -qE "^# fortran $1: [0-9]+ checks, 0 failed$" "$2"
}

# The wrapper itself.
if out=$(mpi/bin/ukmpifort x.f90 2>&1); then
    bad "ukmpifort without --linux" "it did not fail"
elif [[ $out == *"--linux"* ]]; then
    ok "ukmpifort without --linux refuses, naming --linux"
else
    bad "ukmpifort without --linux" "no mention of --linux: $out"
fi
out=$(mpi/bin/ukmpif77 --linux -show -O2 x.f -o x 2>&1)
if [[ $out == gfortran*-fallow-argument-mismatch*x.f*libukmpi.a* ]]; then
    ok "ukmpif77 --linux -show prints the gfortran command"
else
    bad "ukmpif77 --linux -show" "printed: $out"
fi

# shellcheck disable=SC2054 # the commas are in MCA values
mpirun_flags=(--oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)

for src in tests/fortran/progs/*.f90 tests/fortran/progs/*.f; do
    [ -f "$src" ] || continue
    p=$(basename "${src%.*}")
    [ -n "$filter" ] && [[ $p != *$filter* ]] && continue
    fflags=(-O2)
    ours=ukmpifort
    # FORTRAN 77 style: one routine called with buffers of several types (ukmpif77 adds it).
    if [[ $src == *.f ]]; then
        fflags+=(-fallow-argument-mismatch)
        ours=ukmpif77
    fi

    # Reference: Open MPI, when missing or older than the program.
    stale=0
    for np in $nps; do
        [ -f "$ref/$p.$np.out" ] && [ "$ref/$p.$np.out" -nt "$src" ] || stale=1
    done
    if [ $stale = 1 ]; then
        if ! command -v mpifort >/dev/null || ! command -v mpirun >/dev/null; then
            bad "ref/$p" "mpifort/mpirun not found (Debian's openmpi-bin, libopenmpi-dev)"
            continue
        fi
        rm -rf "${ref:?}/$p" && mkdir -p "$ref/$p"
        if ! (cd "$ref/$p" && mpifort "${fflags[@]}" "$root/$src" -o "$p") \
            >"$ref/$p.build.log" 2>&1; then
            bad "ref/$p: mpifort build" "see $ref/$p.build.log" "$ref/$p.build.log"
            continue
        fi
        for np in $nps; do
            out=$ref/$p.$np.out log=$ref/$p.$np.log
            OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 "$limit" \
                mpirun "${mpirun_flags[@]}" -np "$np" "$ref/$p/$p" >"$out" 2>"$log"
            rc=$?
            if [ $rc = 0 ] && closing_ok "$p" "$out"; then
                ok "ref/$p.$np (Open MPI, $(grep -c '^ok ' "$out") checks)"
            else
                bad "ref/$p.$np" "Open MPI run: exit $rc, $(grep -c '^not ok ' "$out") checks failed" "$log"
                mv "$out" "$out.bad" # never compare against a failed reference
            fi
        done
    fi

    # Ours: ukmpifort --linux and ukmpirun.
    rm -rf "${lx:?}/$p" && mkdir -p "$lx/$p"
    if ! (cd "$lx/$p" && "$root/mpi/bin/$ours" --linux "${fflags[@]}" "$root/$src" -o "$p") \
        >"$lx/$p.build.log" 2>&1; then
        bad "linux/$p: $ours --linux build" "see $lx/$p.build.log" "$lx/$p.build.log"
        continue
    fi
    ok "linux/$p: $ours --linux build"
    for np in $nps; do
        name="linux/$p.$np (ukmpirun -n $np)"
        out=$lx/$p.$np.out log=$lx/$p.$np.log
        if [ ! -f "$ref/$p.$np.out" ]; then
            bad "$name" "no Open MPI reference $ref/$p.$np.out"
            continue
        fi
        timeout -k 10 $((limit + 30)) mpi/bin/ukmpirun -n "$np" --timeout "$limit" \
            "$lx/$p/$p" >"$out" 2>"$log"
        rc=$?
        if [ $rc != 0 ]; then
            bad "$name" "exit code $rc" "$log"
            diff -u "$ref/$p.$np.out" "$out" | head -n 30 | sed 's/^/    diff| /'
        elif ! diff -q "$ref/$p.$np.out" "$out" >/dev/null; then
            bad "$name" "output differs from Open MPI's (- Open MPI, + ours)"
            diff -u "$ref/$p.$np.out" "$out" | head -n 40 | sed 's/^/    diff| /'
        else
            ok "$name"
        fi
    done
done

echo "fortran: $pass passed, $fail failed"
[ "$fail" = 0 ]
