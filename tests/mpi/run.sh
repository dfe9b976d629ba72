#!/usr/bin/env bash
# tests/mpi/run.sh [--ref-only | --uk-only | --linux-only] [FILTER]: the MPI conformance
# suite.
#
# Every program of tests/mpi/progs/*.c (or those whose name contains FILTER) is a
# self-checking MPI program whose rank 0 prints one "ok N - ..." / "not ok N - ..." line
# per check and a closing "# conformance PROG: N checks, M failed"; the output depends only
# on the number of ranks. Two halves, and a third on request:
#
#   reference  built with Debian's mpicc, run under Open MPI's mpirun with each rank count
#              of MPI_NP (default "4 8"); rank 0's output saved as
#              build/mpi-ref/PROG.NP.out. A test: the run exits 0 and reports 0 failed.
#   ours       built with mpi/bin/ukmpicc (a test of its own: it FAILS while the library
#              is missing), run under qemu/ukrun in each configuration NODESxRANKS of
#              MPI_UK_CONFIGS (default "1x4 2x2 4x2": -n 4 --nodes 1, -n 4 --nodes 2,
#              -n 8 --nodes 4), and the programs matching MPI_UK_POLICY_PROGS ("icolls*")
#              also in MPI_UK_POLICY_CONFIGS ("2x2:ipi 2x2:poll 1x4:local": the CAD
#              progress policy after the colon); rank 0's lines kept (the "[nI] [0] "
#              prefixes stripped) in build/mpi-uk/PROG.CONFIG.out. A test: exit code 0 and
#              output identical to the reference of the same rank count (the diff is shown
#              otherwise).
#   linux      (--linux-only, which runs only this half) built with `mpi/bin/ukmpicc
#              --linux` (the library on Linux, mpi/linux/), run as MPI_LX_NP (default
#              "4 8 4:tcp 4:caller") Linux processes of this host by mpi/bin/ukmpirun,
#              which talk through shared memory, or TCP over loopback for NP:tcp
#              (ukmpirun --tcp); NP:caller without network threads (UKMPI_PROGRESS=caller,
#              the default of a process confined to one CPU: mpi/linux/mlx.h);
#              and the MPI_UK_POLICY_PROGS also in MPI_LX_POLICY_CONFIGS ("4:ipi 4:poll
#              4:local", NP:POLICY); stdout kept in build/mpi-lx/PROG.CONFIG.out. A test:
#              exit code 0 and output identical to the reference. References missing or older than the programs are made first
#              (the reference half for those programs only).
#
# MPI_UK_TIMEOUT (default 90: a program takes well under a minute) bounds each QEMU job;
# after a program timed out once, its remaining configurations are not run (reported as
# failed) unless MPI_UK_KEEP_GOING=1, so a hanging library costs minutes, not an hour.
# MPI_REF_TIMEOUT (default 120) bounds each mpirun, MPI_LX_TIMEOUT (default 60) each
# ukmpirun. Logs: build/mpi-ref/*.log, build/mpi-uk/*.log, build/mpi-lx/*.log.
# Closing line: "mpi: N passed, N failed"; exits non-zero if any test failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
do_ref=1 do_uk=1 do_lx=0 filter=
while [ $# -gt 0 ]; do
    case $1 in
    --ref-only) do_uk=0; shift ;;
    --uk-only) do_ref=0; shift ;;
    --linux-only) do_ref=stale do_uk=0 do_lx=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$ d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) filter=$1; shift ;;
    esac
done
nps=${MPI_NP:-4 8}
configs=${MPI_UK_CONFIGS:-1x4 2x2 4x2}
# The non-blocking collective programs also run under the other progress policies of the
# CAD executor (mpix.h): CONFIG:POLICY runs with UKMPI_CAD_PROGRESS=POLICY.
policy_progs=${MPI_UK_POLICY_PROGS:-icolls*}
policy_configs=${MPI_UK_POLICY_CONFIGS:-2x2:ipi 2x2:poll 1x4:local}
uk_timeout=${MPI_UK_TIMEOUT:-90}
ref_timeout=${MPI_REF_TIMEOUT:-120}
lx_nps=${MPI_LX_NP:-4 8 4:tcp 4:caller}
lx_policy_configs=${MPI_LX_POLICY_CONFIGS:-4:ipi 4:poll 4:local}
lx_timeout=${MPI_LX_TIMEOUT:-60}
ref=$B/mpi-ref uk=$B/mpi-uk lx=$B/mpi-lx
# ukmpicc and ukrun use the same build directory (B=build/check etc.) as the suite.
babs=$(mkdir -p "$B" && cd "$B" && pwd)
export UKMPI_BUILD=${UKMPI_BUILD:-$babs} UKRUN_KERNEL=${UKRUN_KERNEL:-$babs/uk/ukernel.elf}
export UKHUB=${UKHUB:-$babs/net/ukhub}
mkdir -p "$ref/bin" "$uk/bin" "$lx/bin"
pass=0 fail=0

ok() {
    echo "PASS $1"
    pass=$((pass + 1))
}
bad() { # NAME REASON [FILE whose tail to show]
    echo "FAIL $1: $2"
    [ $# -ge 3 ] && [ -s "$3" ] && tail -n 20 "$3" | sed 's/^/    | /'
    fail=$((fail + 1))
}

# NAME RC TIMEOUT LOG REF OUT: a run passes when it exited 0 with Open MPI's output.
judge() {
    local name=$1 rc=$2 limit=$3 log=$4 ref=$5 out=$6
    if [ "$rc" != 0 ]; then
        bad "$name" "$([ "$rc" = 124 ] && echo "timeout after ${limit}s" || echo "exit code $rc")" "$log"
        diff -u "$ref" "$out" | head -n 30 | sed 's/^/    diff| /'
    elif ! diff -q "$ref" "$out" >/dev/null; then
        bad "$name" "output differs from Open MPI's (- Open MPI, + ours)"
        diff -u "$ref" "$out" | head -n 40 | sed 's/^/    diff| /'
    else
        ok "$name"
    fi
}
# The closing line must say 0 failed (a crash before it leaves none).
closing_ok() { # PROG FILE
    grep -qE "^# conformance $1: [0-9]+ checks, 0 failed$" "$2"
}

progs=()
for f in tests/mpi/progs/*.c; do
    p=$(basename "$f" .c)
    [ -n "$filter" ] && [[ $p != *$filter* ]] && continue
    progs+=("$p")
done
[ ${#progs[@]} -gt 0 ] || { echo "mpi: no program matches '$filter'"; echo "mpi: 0 passed, 1 failed"; exit 1; }

# --- reference: Debian's Open MPI ------------------------------------------------------
# shellcheck disable=SC2054 # the commas are in MCA values
mpirun_flags=(--oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)
# A reference of PROG is stale when one of its outputs (for $nps) is missing or older than
# the programs' sources.
ref_stale() { # PROG
    local np
    for np in $nps; do
        [ -f "$ref/$1.$np.out" ] || return 0
        [ -n "$(find "tests/mpi/progs/$1.c" tests/mpi/progs/*.h -newer "$ref/$1.$np.out")" ] &&
            return 0
    done
    return 1
}
# shellcheck disable=SC2086 # word lists
[ $do_lx = 1 ] && nps=$(printf '%s\n' $nps $lx_nps | sort -nu | tr '\n' ' ')
if [ $do_ref != 0 ]; then
    if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
        bad "reference" "mpicc/mpirun not found (Debian's openmpi-bin, libopenmpi-dev: make deps)"
    else
        for p in "${progs[@]}"; do
            [ $do_ref = stale ] && ! ref_stale "$p" && continue
            if ! mpicc -std=c99 -O2 -Wall -Wextra -Werror "tests/mpi/progs/$p.c" \
                -o "$ref/bin/$p" >"$ref/$p.build.log" 2>&1; then
                for np in $nps; do rm -f "$ref/$p.$np.out"; done
                bad "ref/$p: mpicc build" "see $ref/$p.build.log" "$ref/$p.build.log"
                continue
            fi
            for np in $nps; do
                out=$ref/$p.$np.out log=$ref/$p.$np.log
                OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 "$ref_timeout" \
                    mpirun "${mpirun_flags[@]}" -np "$np" "$ref/bin/$p" >"$out" 2>"$log"
                rc=$?
                cat "$out" >>"$log"
                if [ $rc = 0 ] && closing_ok "$p" "$out"; then
                    ok "ref/$p.$np (Open MPI, $(grep -c '^ok ' "$out") checks)"
                else
                    bad "ref/$p.$np" "Open MPI run: exit $rc, $(grep -c '^not ok ' "$out") checks failed" "$log"
                    mv "$out" "$out.bad" # never compare against a failed reference
                fi
            done
        done
    fi
fi

# --- ours: ukmpicc + qemu/ukrun -----------------------------------------------------------
# Rank 0's lines of a ukrun console: "[0] text" (one node) or "[nI] [0] text" (several).
rank0() {
    sed -nE 's/^(\[n[0-9]+\] )?\[0\] //p' "$1"
}
if [ $do_uk = 1 ]; then
    for p in "${progs[@]}"; do
        img=$uk/bin/$p
        rm -f "$img"
        if mpi/bin/ukmpicc -O2 "tests/mpi/progs/$p.c" -o "$img" >"$uk/$p.build.log" 2>&1 && [ -f "$img" ]; then
            ok "uk/$p: ukmpicc build"
            built=1
        else
            bad "uk/$p: ukmpicc build" "mpi/bin/ukmpicc failed (no MPI library yet?)" "$uk/$p.build.log"
            built=0
        fi
        timed_out=
        pconfigs=$configs
        # shellcheck disable=SC2053 # the right side is a glob on purpose
        [[ $p == $policy_progs ]] && pconfigs+=" $policy_configs"
        for c in $pconfigs; do
            policy=
            [[ $c == *:* ]] && policy=${c#*:}
            shape=${c%%:*}
            nodes=${shape%x*} per=${shape#*x}
            np=$((nodes * per))
            envs=()
            [ -n "$policy" ] && envs=(--env "UKMPI_CAD_PROGRESS=$policy")
            name="uk/$p.$c (-n $np --nodes $nodes${policy:+, progress $policy})"
            out=$uk/$p.$c.out log=$uk/$p.$c.log
            rm -f "$out"
            if [ $built = 0 ]; then
                bad "$name" "not run: the ukmpicc build failed"
                continue
            fi
            if [ -n "$timed_out" ] && [ "${MPI_UK_KEEP_GOING:-0}" != 1 ]; then
                bad "$name" "not run: timed out in $timed_out (MPI_UK_KEEP_GOING=1 runs it)"
                continue
            fi
            if [ ! -f "$ref/$p.$np.out" ]; then
                bad "$name" "no Open MPI reference $ref/$p.$np.out (run without --uk-only, MPI_NP with $np)"
                continue
            fi
            # ukrun's own timeout ends the job; the outer one is only a safety net.
            timeout -k 10 $((uk_timeout + 60)) \
                qemu/ukrun -n "$np" --nodes "$nodes" --timeout "$uk_timeout" "${envs[@]}" "$img" \
                >"$log" 2>&1
            rc=$?
            rank0 "$log" >"$out"
            [ $rc = 124 ] && timed_out=$c
            judge "$name" $rc "$uk_timeout" "$log" "$ref/$p.$np.out" "$out"
        done
    done
fi

# --- linux: ukmpicc --linux + ukmpirun ----------------------------------------------------
if [ $do_lx = 1 ]; then
    for p in "${progs[@]}"; do
        bin=$lx/bin/$p
        rm -f "$bin"
        if ! mpi/bin/ukmpicc --linux -O2 -Wall -Werror "tests/mpi/progs/$p.c" -o "$bin" \
            >"$lx/$p.build.log" 2>&1; then
            bad "linux/$p: ukmpicc --linux build" "see $lx/$p.build.log" "$lx/$p.build.log"
            continue
        fi
        lconfigs=$lx_nps
        # shellcheck disable=SC2053 # the right side is a glob on purpose
        [[ $p == $policy_progs ]] && lconfigs+=" $lx_policy_configs"
        for c in $lconfigs; do
            np=${c%%:*} policy=
            [[ $c == *:* ]] && policy=${c#*:}
            envs=() opts=() what=
            if [ "$policy" = tcp ]; then
                opts=(--tcp) policy=
            elif [ "$policy" = caller ]; then
                envs=("UKMPI_PROGRESS=caller") policy= what=", UKMPI_PROGRESS=caller"
            elif [ -n "$policy" ]; then
                envs=("UKMPI_CAD_PROGRESS=$policy")
            fi
            name="linux/$p.$c (ukmpirun -n $np${opts[*]:+ ${opts[*]}}${policy:+, progress $policy}$what)"
            out=$lx/$p.$c.out log=$lx/$p.$c.log
            if [ ! -f "$ref/$p.$np.out" ]; then
                bad "$name" "no Open MPI reference $ref/$p.$np.out"
                continue
            fi
            env "${envs[@]}" timeout -k 10 $((lx_timeout + 30)) \
                mpi/bin/ukmpirun -n "$np" "${opts[@]}" --timeout "$lx_timeout" "$bin" >"$out" 2>"$log"
            judge "$name" $? "$lx_timeout" "$log" "$ref/$p.$np.out" "$out"
        done
    done
fi

echo "mpi: $pass passed, $fail failed"
[ "$fail" = 0 ]
