#!/usr/bin/env bash
# tests/kmod/kacc_mpi.sh [kacc-mpi | kacc-mpi/CASE...]: the Linux MPI library's
# non-blocking collectives through /dev/kacc (mpi/linux/mlx_kacc.c), in one Debian guest
# under QEMU/TCG with o2g.ko and kacc.ko loaded (tests/kmod/run.sh hands kacc-mpi here).
# Jobs of 4 processes over loopback TCP (tests/kmod/guest/mpirun), programs built by
# `mpi/bin/ukmpicc --linux -static`. The cases (CASE runs that one; the counter cases
# need the runs they compare):
#   icolls, icolls_inplace  the conformance programs with UKMPI_KACC=on: output identical
#                           to Open MPI's (tests/mpi/run.sh's references, made when missing)
#   module                  kacc's counters over those two jobs: graphs issued and none
#                           refused, SENDs and RECVs run, every graph finished, nothing
#                           left pinned: the graphs ran in kacc, not in the library
#   off                     icolls with UKMPI_KACC=off: Open MPI's output and no graph
#                           through kacc, so `module` fails for a library that does not
#                           use kacc (the check's own proof)
#   refuse                  icolls with UKMPI_KACC=on and UKMPI_KACC_REFUSE=1: node 1 takes
#                           every other graph's first offer as refused (a full table), its
#                           peers' are issued: Open MPI's output, and kacc issued them (a
#                           library that runs a refused graph itself leaves its peers'
#                           RECVs waiting: the job ends by guest/mpirun's timeout)
#   stuck                   tests/kmod/kacc_stuck.c with node 1 refused every graph
#                           (UKMPI_KACC_REFUSE=1:always, as an RLIMIT_MEMLOCK below a graph's
#                           buffers), refused while its network thread sleeps with nothing
#                           to read: the job ends, not by the time limit, with node 1 saying
#                           kacc refused for MLX_KACC_STUCK_NS with none of its graphs running
#                           (a library that waits for kacc forever, or whose network thread
#                           is not woken to retry, hangs the job)
#   vbig                    tests/kmod/kacc_vbig.c: v-collectives whose messages are over
#                           kacc's piece size (1 MiB) on odd ranks only, 3 MiB Ibcasts (8
#                           with late receivers: 24 MiB through o2g's dump area, whose
#                           records kacc's RECVs must give back): Open MPI's output, and
#                           kacc issued every graph
#   uop                     tests/kmod/kacc_uop.c: Iallreduce and Ireduce with user-defined
#                           ops (commutative and not): Open MPI's output, kacc issued every
#                           graph and the processes ran their user ops (KACC_IOC_USER_DONE)
#   nbc_progress            tests/uk/apps/nbc_progress.c: an Ibcast and an Iallreduce
#                           complete while every rank computes without MPI calls, and
#                           kacc ran them
#   nbc_progress_poll       the same with kacc's progress=poll: an expected failure (rank
#                           3 finds its Ibcast not complete), as the unikernel suite's
#                           nbc_progress_poll_2x2
#   dmesg                   no BUG, WARNING or oops in the guest's kernel log
# One line per case, then "N passed, N failed"; exit status 1 on a failure. The console
# goes to $B/kmod/kacc-mpi.log. MPIRUN_LIMIT=S lowers guest/mpirun's time limit per job
# (90 s), after which it reports where each hung rank was and ends it.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/kmod/guestlib.sh
B=${B:-build}
out=$B/kmod
NP=4
PORT=7500 # loopback ports of the first job; each job takes the next NP
ICOLLS="icolls icolls_inplace"
ALL="icolls icolls_inplace module off refuse vbig uop nbc_progress nbc_progress_poll stuck dmesg"

want=()
for n in "${@:-kacc-mpi}"; do
    case $n in
    kacc-mpi) for c in $ALL; do want+=("$c"); done ;;
    kacc-mpi/*) want+=("${n#kacc-mpi/}") ;;
    *) echo "FAIL $n: not a kacc-mpi test"; echo "0 passed, 1 failed"; exit 1 ;;
    esac
done
has() { [[ " ${want[*]} " == *" $1 "* ]]; }
has dmesg || want+=(dmesg)

pass=0 failn=0
ok() { echo "ok kacc-mpi/$1"; pass=$((pass + 1)); }
bad() { echo "FAIL kacc-mpi/$1"; failn=$((failn + 1)); }
if ! mk=$(make -s kacc build/linux/libukmpi.a 2>&1); then
    echo "$mk" >&2
    for c in "${want[@]}"; do bad "$c: the modules or the library do not build"; done
    echo "$pass passed, $failn failed"
    exit 1
fi
mkdir -p "$out/kacc-mpi" "$B/mpi-ref/bin"
gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -I mpi/cad -I mpi/core -o "$out/kacctest" \
    tests/kmod/kacctest.c mpi/core/mpe_wire.c mpi/cad/cad_build.c mpi/cad/cad_validate.c mpi/cad/cad_exec.c \
    mpi/cad/cad_calc.c mpi/cad/cad_err.c mpi/cad/cad_types.c
kdir=$(tests/bench/linux-kernel.sh)
if ! why=$(kmod_for_guest "$out/kacc/kacc.ko" "$kdir"); then
    for c in "${want[@]}"; do bad "$c: $why"; done
    echo "$pass passed, $failn failed"
    exit 1
fi
# shellcheck disable=SC2054 # the commas are in MCA values
mpirun_flags=(--oversubscribe --bind-to none --mca btl self,vader
    --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" = 0 ] && mpirun_flags+=(--allow-run-as-root)

# The guest's steps: the jobs each case needs, counters around them.
steps=kstats:start port=$PORT bins=()
rm -f "$out"/kacc-mpi/*
# nbc_progress's compute loop: the root issues last, once every other rank sent it a token
# (see the top of nbc_progress.c), and 4 processes share 2 vCPUs here, so the root may
# issue a few hundred ms into the others' loops: its unikernel length (250 ms) failed
# once on a rank whose graphs were still running when its loop ended.
LOOP_MS=${KACC_MPI_LOOP_MS:-1000}
declare -A runs # runs[PROG]: the jobs of PROG so far; job leaves the new one's number in nth
refuse=        # UKMPI_KACC_REFUSE of the next jobs
job() { # job PROG KACC [SRC [BEFORE [AFTER]]]: a step running PROG with UKMPI_KACC=KACC
    local p=$1 src=${3:-tests/mpi/progs/$1.c}
    if [ ! -f "$out/kacc-mpi/$p" ]; then
        mpi/bin/ukmpicc --linux -static -s -O2 -DLOOP_MS="$LOOP_MS" "$src" -o "$out/kacc-mpi/$p" \
            >"$out/kacc-mpi/$p.build.log" 2>&1 || return 0
        bins+=("$out/kacc-mpi/$p")
    fi
    runs[$p]=$((${runs[$p]:-0} + 1))
    nth=${runs[$p]}
    steps+=",${4:-}mpi:$p:$NP:$port:$2${refuse:+:$refuse}${5:-}"
    port=$((port + NP))
}
for p in $ICOLLS; do
    if has "$p" || has module; then job "$p" on; fi
done
steps+=,kstats:icolls
if has off; then job icolls off; n_off=$nth; fi
steps+=,kstats:off
if has refuse; then refuse=1 job icolls on; n_refuse=$nth; fi
steps+=,kstats:refuse
if has vbig; then job kacc_vbig on tests/kmod/kacc_vbig.c; fi
steps+=,kstats:vbig
if has uop; then job kacc_uop on tests/kmod/kacc_uop.c; fi
steps+=,kstats:uop
if has nbc_progress; then job nbc_progress on tests/uk/apps/nbc_progress.c; fi
steps+=,kstats:nbc
if has nbc_progress_poll; then
    job nbc_progress on tests/uk/apps/nbc_progress.c progress:poll, ,progress:tasklet
fi
# last: its peers end with graphs in flight in kacc
if has stuck; then refuse=1:always job kacc_stuck on tests/kmod/kacc_stuck.c; fi
steps+=,kstats:end,dmesg

r=$out/kacc-mpi-root
kmod_root "$r" tests/kmod/kacc-mpi-init
mkdir -p "$r/mpi"
cp "$out/kacc/kacc.ko" "$out/o2g/o2g.ko" "$out/kacctest" "$r/"
cp tests/kmod/guest/mpirun "$r/bin/mpirun"
[ ${#bins[@]} = 0 ] || cp "${bins[@]}" "$r/mpi/"
kmod_cpio "$r" "$out/kacc-mpi-initrd.cpio"
log=$out/kacc-mpi.log
start=$SECONDS
rc=0
qemu/ukboot --smp 2 --mem 512M --timeout 400 --initrd "$out/kacc-mpi-initrd.cpio" \
    --append "console=ttyS0 quiet panic=-1 $KMOD_DEBUG_APPEND kmod_cases=$steps${MPIRUN_LIMIT:+ MPIRUN_LIMIT=$MPIRUN_LIMIT}" \
    "$kdir/vmlinuz" >"$log" 2>&1 || rc=$?

# field LABEL NAME: kacc's counter NAME at the step kstats:LABEL
field() { sed -n "s/^kmod: kacc counters $1: .*\b$2 \([0-9]*\).*/\1/p" "$log" | head -n1; }
delta() { # delta FROM TO NAME
    local a b
    a=$(field "$1" "$3") b=$(field "$2" "$3")
    [ -n "$a" ] && [ -n "$b" ] && echo $((b - a))
}
run_rc() { grep "^mpi $1 rc=" "$log" | sed -n "${2}p"; } # run_rc PROG N: the Nth run's rc line
hung() { # hung PROG: where the first hung rank of a PROG job was (guest/mpirun's report)
    grep -m2 "^mpi $1 hung rank" "$log" | cut -c1-400 || true
}
run_out() { # run_out PROG N: the Nth run's standard output (guest/mpirun prints it whole)
    awk -v p="mpi $1" -v n="$2" '
        index($0, p "| ") == 1 { if (!open) { k++; open = 1 } if (k == n) print substr($0, length(p) + 3) }
        index($0, p " rc=") == 1 { open = 0 }' "$log" | grep -v '^stderr '
}
icolls_case() { # icolls_case NAME PROG N [SRC]: the Nth run of PROG matches Open MPI's
    local name=$1 p=$2 n=$3 ref=$B/mpi-ref/$2.$NP.out src=${4:-tests/mpi/progs/$2.c}
    [ -z "$(find "$src" -newer "$ref" 2>/dev/null)" ] || rm -f "$ref"
    if [ ! -s "$ref" ]; then
        if ! mpicc -std=c99 -O2 "$src" -o "$B/mpi-ref/bin/$p" >/dev/null 2>&1 ||
            ! OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 120 mpirun "${mpirun_flags[@]}" \
                -np "$NP" "$B/mpi-ref/bin/$p" >"$ref" 2>/dev/null; then
            rm -f "$ref"
        fi
    fi
    if [ ! -f "$out/kacc-mpi/$p" ]; then
        bad "$name: ukmpicc --linux -static build (see $out/kacc-mpi/$p.build.log)"
    elif [ ! -s "$ref" ]; then
        bad "$name: no Open MPI reference $ref"
    elif [ "$(run_rc "$p" "$n")" = "mpi $p rc=143" ]; then
        bad "$name: the job hung: guest/mpirun's time limit ended it: $(hung "$p") (see $log)"
    elif [ "$(run_rc "$p" "$n")" != "mpi $p rc=0" ]; then
        bad "$name: $(run_rc "$p" "$n" || true) $(grep -m1 "^mpi $p| stderr" "$log" || true) (see $log)"
    elif ! run_out "$p" "$n" | diff -q "$ref" - >/dev/null; then
        bad "$name: output differs from Open MPI's (see $log)"
    else
        return 0
    fi
    return 1
}

has icolls && icolls_case icolls icolls 1 && ok "icolls ($NP processes, UKMPI_KACC=on: Open MPI's output)"
has icolls_inplace && icolls_case icolls_inplace icolls_inplace 1 &&
    ok "icolls_inplace ($NP processes, UKMPI_KACC=on: Open MPI's output)"
if has module; then
    # Every rank's non-blocking collectives went to kacc: issued, none refused, SENDs and
    # RECVs run in the kernel, all finished and released. A library that kept its graphs
    # (UKMPI_KACC ignored, the kacc connections not made, every graph offered back) leaves
    # issued, sent and received where they were (the `off` case shows it).
    i=$(delta start icolls issued) rf=$(delta start icolls refused) f=$(delta start icolls finished)
    s=$(delta start icolls sent) rv=$(delta start icolls received)
    left=$(field icolls graphs)/$(field icolls pinned)
    if [ -z "$i" ] || [ -z "$s" ]; then
        bad "module: no counters (see $log)"
    elif [ "$i" -lt $((NP * 10)) ] || [ "$s" -lt "$i" ] || [ "$rv" -lt "$i" ] || [ "$rf" != 0 ] ||
        [ "$f" != "$i" ] || [ "$left" != 0/0 ]; then
        bad "module: kacc ran too little of icolls*: $i graphs issued, $rf refused, $f finished, $s SENDs, $rv RECVs, $left graphs/pages left"
    else
        ok "module (kacc ran $i graphs of icolls*: $s SENDs, $rv RECVs, $(delta start icolls calc) CALCs; $(delta start icolls ipi) IPIs; none left)"
    fi
fi
if has off; then
    if icolls_case off icolls "$n_off"; then
        i=$(delta icolls off issued)
        if [ "$i" = 0 ]; then
            ok "off (icolls with UKMPI_KACC=off: Open MPI's output, 0 graphs through kacc: the module check fails on such a library)"
        else
            bad "off: UKMPI_KACC=off, yet kacc issued ${i:-?} graphs"
        fi
    fi
fi
if has refuse && icolls_case refuse icolls "$n_refuse"; then
    i=$(delta off refuse issued)
    if [ -z "$i" ] || [ "$i" -lt $((NP * 10)) ]; then
        bad "refuse: Open MPI's output, but kacc issued ${i:-?} graphs (the library ran them)"
    else
        ok "refuse (icolls, node 1 refusing every other graph once: Open MPI's output; kacc issued $i graphs)"
    fi
fi
if has stuck; then
    why="kacc refused a collective's graph for"
    rc_line=$(run_rc kacc_stuck 1)
    if [ ! -f "$out/kacc-mpi/kacc_stuck" ]; then
        bad "stuck: ukmpicc --linux -static build (see $out/kacc-mpi/kacc_stuck.build.log)"
    elif [ -z "$rc_line" ]; then
        bad "stuck: the job did not run (see $log)"
    elif [ "$rc_line" = "mpi kacc_stuck rc=0" ]; then
        bad "stuck: node 1 never took a graph, yet $rc_line (see $log)"
    elif [ "$rc_line" = "mpi kacc_stuck rc=143" ]; then
        bad "stuck: the job hung until guest/mpirun's time limit: $(hung kacc_stuck) (see $log)"
    elif ! grep -q "^mpi kacc_stuck| stderr .*$why" "$log"; then
        bad "stuck: the job failed without node 1 saying '$why ...' (see $log)"
    else
        ok "stuck (node 1 refused every graph: $(grep -m1 -o "$why [0-9]* s" "$log"), job exit ${rc_line#*=})"
    fi
fi
if has vbig && icolls_case vbig kacc_vbig 1 tests/kmod/kacc_vbig.c; then
    # 4 + 4 + 1 + 1 + 1 + 8 collectives, each a graph on every rank
    i=$(delta refuse vbig issued) s=$(delta refuse vbig sent)
    if [ -z "$i" ] || [ "$i" -lt $((NP * 19)) ]; then
        bad "vbig: Open MPI's output, but kacc issued ${i:-?} graphs, not $((NP * 19))"
    else
        ok "vbig (v-collectives straddling kacc's 1 MiB piece size on odd ranks: Open MPI's output; kacc issued $i graphs, $s SENDs)"
    fi
fi
if has uop && icolls_case uop kacc_uop 1 tests/kmod/kacc_uop.c; then
    # 15 reductions, each a graph on every rank; the user ops: at least one per rank that
    # combines (the world's size - 1 per element block, in some order)
    i=$(delta vbig uop issued) u=$(delta vbig uop user)
    if [ -z "$i" ] || [ "$i" -lt $((NP * 15)) ] || [ -z "$u" ] || [ "$u" -lt $((15 * (NP - 1))) ]; then
        bad "uop: Open MPI's output, but kacc issued ${i:-?} graphs (not $((NP * 15))) and ran ${u:-?} user ops (the library ran them)"
    else
        ok "uop (user ops, commutative and not: Open MPI's output; kacc issued $i graphs, the processes ran $u user-op CALCs for it)"
    fi
fi
if has nbc_progress; then
    l=$(run_rc nbc_progress 1)
    i=$(delta uop nbc issued)
    if [ "$l" != "mpi nbc_progress rc=0" ] || ! run_out nbc_progress 1 | grep -q "nbc_progress: $NP of $NP ranks ok"; then
        bad "nbc_progress: ${l:-no result}: $(run_out nbc_progress 1 | grep -m1 FAIL || true) (see $log)"
    elif [ -z "$i" ] || [ "$i" -lt $((2 * NP)) ]; then
        bad "nbc_progress: passed, but kacc issued ${i:-?} graphs (the library progressed them)"
    else
        ok "nbc_progress ($NP processes computing without MPI calls; kacc ran $i graphs)"
    fi
fi
if has nbc_progress_poll; then
    n=$(grep -c "^mpi nbc_progress rc=" "$log" || true)
    l=$(run_rc nbc_progress "$n")
    if ! grep -q '^kmod: kacc progress=poll' "$log" || [ "$n" = 0 ]; then
        bad "nbc_progress_poll: no run under progress=poll (see $log)"
    elif [ "$l" != "mpi nbc_progress rc=0" ] &&
        run_out nbc_progress "$n" | grep -Eq "nbc_progress: FAIL rank 3: (Ibcast|Ibcast and Iallreduce) not complete"; then
        ok "nbc_progress_poll (expected failure under progress=poll: $(run_out nbc_progress "$n" | grep -m1 'FAIL rank 3' | sed 's/^nbc_progress: //'))"
    else
        bad "nbc_progress_poll: under progress=poll the job did not fail as expected: $l (see $log)"
    fi
fi
line=$(grep -E "^(ok|FAIL) dmesg" "$log" | head -n1 || true)
kmod_verdict kacc-mpi dmesg "$line" "guest exit $rc; see $log"
kmod_summary "$log" "$start"
