#!/usr/bin/env bash
# tests/mpich/run.sh [--full] [FILTER]: MPICH's own test suite (test/mpi of Debian's
# `mpich` source package, fetched by `make deps` into $UKMPI_CACHE/src/mpich-tests) as a
# conformance suite of our MPI, built with mpi/bin/ukmpicc and run under qemu/ukrun.
#
# Directories: MPICH_DIRS (default pt2pt coll comm group datatype init attr info topo
# errhan). Each test of a directory's testlist.in is built from its sources (the
# directory's Makefile.am says which, and with which -D flags) with MPICH's util/mtest*.c
# and our tests/mpich/mpitestconf.h, and run with the testlist's rank count on one node
# and, with 2 or more ranks, on two nodes. A run passes when it exits 0 and rank 0 prints
# "No Errors", as MPICH's runtests decides; a test marked resultTest=TestStatus or
# TestErrFatal passes when the job fails (with timeLimit= as its time limit).
#
# Not run, each with its reason in the log: a rank count above 8; the variants that only
# set MPICH's tuning variables (env=MPIR_CVAR_...); tests that need a newer MPI than ours
# (mpiversion=); lines that MPICH's configure rewrites (@...@); tests without a source.
#
# Expected failures: tests/mpich/xfail ("ID | reason" lines; ID is dir/name, then the
# testlist's arguments if any; "ID @2" for the two-node runs only). An expected failure that passes fails the suite too, so
# the list stays true.
#
# make test runs the subset that fits its time (tests/mpich/subset: about a hundred tests,
# each on one node, and those of pt2pt, coll and comm on two nodes too). --full (`make
# test-full`) runs every test of the directories, on one node and on two. FILTER: only the
# IDs that contain it (in any mode).
# MPICH_TIMEOUT (default 120: sendflood takes a minute under TCG) bounds each job;
# MPICH_MEM (default 2G) is each node's memory.
# Logs: build/mpich/.
# Closing line: "mpich: N passed, N failed" (skips counted apart); non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
CACHE=${UKMPI_CACHE:-$HOME/.cache/ukmpi}
src=$CACHE/src/mpich-tests/mpi
out=$B/mpich
full=0 filter=
while [ $# -gt 0 ]; do
    case $1 in
    --full) full=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$ d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) filter=$1; shift ;;
    esac
done
dirs=${MPICH_DIRS:-pt2pt coll comm group datatype init attr info topo errhan}
two_node_dirs=" ${MPICH_TWO_NODE_DIRS-pt2pt coll comm} "
timeout=${MPICH_TIMEOUT:-120}
# Some tests allocate hundreds of MiB per rank (manylmt: 320): every node gets this much.
mem=${MPICH_MEM:-2G}
MAX_RANKS=8
OUR_MPI_VERSION=3.1

[ -f "$src/util/mtest.c" ] || { echo "mpich: $src missing: run 'make deps'"; echo "mpich: 0 passed, 1 failed"; exit 1; }
mkdir -p "$out/obj" "$out/bin" "$out/log"
cc=(mpi/bin/ukmpicc -O1 -w -Itests/mpich -I"$src/include" -I"$src/dtpools/include")

# MPICH's test helpers, once.
for f in mtest mtest_common mtest_single dtypes; do
    o=$out/obj/$f.o
    [ "$o" -nt "$src/util/$f.c" ] && [ "$o" -nt tests/mpich/mpitestconf.h ] && continue
    "${cc[@]}" -c "$src/util/$f.c" -o "$o" 2>"$out/log/$f.cc" ||
        { echo "FAIL mpich: util/$f.c does not build"; cat "$out/log/$f.cc"; echo "mpich: 0 passed, 1 failed"; exit 1; }
done
# MPICH's datatype pool generator (dtpools), as a library the tests that use it pull in.
# Its sources include "../dtpoolsconf.h" relative to an include directory: ours.
mkdir -p "$out/dtp/include"
cp tests/mpich/dtpoolsconf.h "$out/dtp/dtpoolsconf.h"
if [ ! -f "$out/obj/libdtpools.a" ]; then
    for f in "$src"/dtpools/src/*.c; do
        "${cc[@]}" -I"$out/dtp/include" -c "$f" -o "$out/obj/dtp_$(basename "$f" .c).o" 2>"$out/log/dtpools.cc" ||
            { echo "FAIL mpich: dtpools/src/$(basename "$f") does not build"; cat "$out/log/dtpools.cc"; echo "mpich: 0 passed, 1 failed"; exit 1; }
    done
    ar rcs "$out/obj/libdtpools.a" "$out"/obj/dtp_*.o
fi
mtest=("$out"/obj/{mtest,mtest_common,mtest_single,dtypes}.o "$out/obj/libdtpools.a")

declare -A subset
while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] || subset[$line]=1
done <tests/mpich/subset

declare -A xfail
while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    id=${line%%|*} id=${id%"${id##*[![:space:]]}"}
    xfail[$id]=${line#*| }
done <tests/mpich/xfail

pass=0 fail=0 skip=0 xf=0
declare -A dpass dfail dskip
skipped() {
    echo "skip $1: $2" >>"$out/skipped.txt"
    skip=$((skip + 1)) dskip[$d]=$((${dskip[$d]:-0} + 1))
}
: >"$out/skipped.txt"

# Makefile.am of directory $1: prints "name<TAB>sources<TAB>cppflags" for the programs that
# name their sources (continuation lines joined).
programs() {
    sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$1" | awk '
        $1 ~ /_SOURCES$/ && $2 == "=" { n = $1; sub(/_SOURCES$/, "", n); s = ""
            for (i = 3; i <= NF; i++) s = s " " $i; srcs[n] = s }
        $1 ~ /_CPPFLAGS$/ && $2 == "=" { n = $1; sub(/_CPPFLAGS$/, "", n); f = ""
            for (i = 3; i <= NF; i++) if ($i !~ /^\$\(/) f = f " " $i; flags[n] = f }
        END { for (n in srcs) printf "%s\t%s\t%s\n", n, srcs[n], flags[n] }'
}

# Build program $1 of directory $d: 0, or 1 (the compiler's words in the log).
declare -A built
build() {
    local name=$1 bin=$out/bin/$d/$1 s f srcs=() flags=()
    [ -n "${built[$d/$name]:-}" ] && return "${built[$d/$name]}"
    mkdir -p "$out/bin/$d"
    if [ -n "${psrc[$name]:-}" ]; then
        for s in ${psrc[$name]}; do [[ $s == *.c ]] && srcs+=("$src/$d/$s"); done
        # shellcheck disable=SC2206
        flags=(${pflags[$name]:-})
    else
        srcs=("$src/$d/$name.c")
    fi
    for f in "${srcs[@]}"; do [ -f "$f" ] || { built[$d/$name]=2; return 2; }; done
    if "${cc[@]}" "${flags[@]}" -o "$bin" "${srcs[@]}" "${mtest[@]}" -lm >"$out/log/$d.$name.cc" 2>&1; then
        built[$d/$name]=0
    else
        built[$d/$name]=1
    fi
    return "${built[$d/$name]}"
}

# True if rank 0's "No Errors" line is in log $1 (behind the [nI] [rank] prefixes).
no_errors() {
    grep -qE '^(\[n[0-9]+\] )?(\[[0-9]+\] )?\s*No [Ee]rrors' "$1"
}

# Record the outcome of run $1 (id + config) as passed ($2 = 0) or failed, against xfail
# (an entry "ID" covers every configuration, "ID @N" only the runs on N nodes).
result() {
    local what=$1 ok=$2 log=$3 why=$4 id=$5 nodes=${6:-}
    [ -z "${xfail[$id]:-}" ] && [ -n "$nodes" ] && [ -n "${xfail[$id @$nodes]:-}" ] && id="$id @$nodes"
    if [ -n "${xfail[$id]:-}" ]; then
        if [ "$ok" = 0 ]; then
            echo "FAIL mpich $what: passes, but tests/mpich/xfail expects a failure (${xfail[$id]})"
            fail=$((fail + 1)) dfail[$d]=$((${dfail[$d]:-0} + 1))
        else
            echo "XFAIL mpich $what: ${xfail[$id]}"
            xf=$((xf + 1)) dpass[$d]=$((${dpass[$d]:-0} + 1)) pass=$((pass + 1))
        fi
    elif [ "$ok" = 0 ]; then
        echo "PASS mpich $what"
        pass=$((pass + 1)) dpass[$d]=$((${dpass[$d]:-0} + 1))
    else
        echo "FAIL mpich $what: $why"
        [ -f "$log" ] && grep -v '^\s*$' "$log" | tail -n 8 | sed 's/^/    /'
        fail=$((fail + 1)) dfail[$d]=$((${dfail[$d]:-0} + 1))
    fi
}

for d in $dirs; do
    declare -A psrc=() pflags=()
    while IFS=$'\t' read -r n s f; do psrc[$n]=$s pflags[$n]=$f; done < <(programs "$src/$d/Makefile.am")
    list=$src/$d/testlist.in
    [ -f "$list" ] || list=$src/$d/testlist # some directories have no configure-time list
    while read -r name np rest; do
        [[ -z $name || $name == \#* ]] && continue
        args=() envs=() why= expect=clean limit=$timeout
        for kv in $rest; do
            case $kv in
            arg=*) args+=("${kv#arg=}") ;;
            resultTest=TestStatus | resultTest=TestErrFatal) expect=fails ;;
            resultTest=*) why="a result check of MPICH's runtests we do not have ($kv)" ;;
            timeLimit=*) [[ ${kv#timeLimit=} =~ ^[0-9]+$ ]] && limit=${kv#timeLimit=} ;;
            env=MPIR_CVAR_*) why="a variant that sets MPICH's tuning variables ($kv)" ;;
            env=*) envs+=(--env "${kv#env=}") ;;
            mpiversion=*) awk -v a="${kv#mpiversion=}" -v b=$OUR_MPI_VERSION 'BEGIN { exit !(a > b) }' &&
                why="needs MPI ${kv#mpiversion=} (ours is $OUR_MPI_VERSION)" ;;
            *@*) why="configure-dependent ($kv)" ;;
            esac
        done
        id="$d/$name${args[*]:+ ${args[*]}}"
        [ -n "$filter" ] && [[ $id != *"$filter"* ]] && continue
        [ $full = 1 ] || [ -n "$filter" ] || [ -n "${subset[$id]:-}" ] || continue
        [[ $name$np == *@* ]] && why="configure-dependent"
        [[ $np =~ ^[0-9]+$ ]] || why="no rank count"
        [ -z "$why" ] && [ "$np" -gt $MAX_RANKS ] && why="needs $np ranks (more than $MAX_RANKS)"
        if [ -n "$why" ]; then skipped "$id" "$why"; continue; fi
        build "$name"
        case $? in
        2) skipped "$id" "no source for it in $d"; continue ;;
        1) result "$id (build)" 1 "$out/log/$d.$name.cc" "does not build with ukmpicc" "$id"; continue ;;
        esac
        cfgs=(1)
        if [ "$np" -ge 2 ] && { [ $full = 1 ] || [[ $two_node_dirs == *" $d "* ]]; }; then cfgs+=(2); fi
        for nodes in "${cfgs[@]}"; do
            what="$id [${np} ranks, $nodes node$([ "$nodes" = 1 ] || echo s)]"
            log=$out/log/$d.$name.$np.$nodes.$(echo "${args[*]}" | md5sum | cut -c1-6).log
            qemu/ukrun -n "$np" --nodes "$nodes" --mem "$mem" --timeout "$limit" "${envs[@]}" \
                "$out/bin/$d/$name" "${args[@]}" >"$log" 2>&1
            rc=$?
            if [ $expect = fails ]; then
                # the test is that the job fails (a rank's exit status, an error that
                # is fatal, a time limit): runtests' TestStatus and TestErrFatal
                if [ $rc != 0 ]; then result "$what" 0 "$log" "" "$id" "$nodes"; else result "$what" 1 "$log" "the job should have failed" "$id" "$nodes"; fi
            elif [ $rc = 0 ] && no_errors "$log"; then
                result "$what" 0 "$log" "" "$id" "$nodes"
            else
                result "$what" 1 "$log" "exit $rc$(no_errors "$log" || echo ', no "No Errors"')" "$id" "$nodes"
            fi
        done
    done < <(sed 's/#.*//' "$list")
    unset psrc pflags
done

for d in $dirs; do
    printf 'mpich: %-9s %3d passed, %3d failed, %3d not run\n' "$d" "${dpass[$d]:-0}" "${dfail[$d]:-0}" "${dskip[$d]:-0}"
done
echo "mpich: $xf expected failures (tests/mpich/xfail), $skip not run ($out/skipped.txt)"
echo "mpich: $pass passed, $fail failed"
[ $fail = 0 ]
