#!/usr/bin/env bash
# tests/bench/pathcost.bench.sh: where the time of a small message goes (issue 16), counted
# in instructions, which are the same from run to run whatever the host's load (callgrind
# counts them; TCG timings move with it). The program is tests/bench/pathcost/selfmsg.c (a
# message to oneself: MPI_Irecv, MPI_Send, MPI_Wait), built with ukmpicc --linux (our
# mpi/lib and mpi/core, the code a unikernel rank runs, on the Linux platform) and with
# Debian's mpicc (Open MPI, its self transport). Two runs of each (N and N + 10000
# messages); the difference is the cost of 10000 messages, without start-up. Prints the
# total per message against Open MPI's, the function calls per message (under TCG each
# return is an indirect jump QEMU looks up, so calls cost far more than their instructions)
# and our breakdown by step. The unikernel's own platform (its ABI call, spinlocks,
# wake-ups) is not in these counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
out=$B/bench/pathcost
N=1000 D=10000
mkdir -p "$out"
row() { # name value baseline unit baseline-name (the format of run.sh)
    awk -v n="$1" -v v="$2" -v b="$3" -v u="$4" -v bn="$5" \
        'BEGIN { printf "%-34s %12s %12s %-7s %8s   (baseline: %s)\n", n, v, b, u, (b > 0 ? sprintf("%.2f", v / b) : "-"), bn }'
}
if ! command -v valgrind >/dev/null; then
    echo "pathcost: not run (no valgrind)"
    exit 0
fi
# total instructions of a callgrind run of "$@" into $out/$tag.N ($mode: selfmsg's second argument)
cg() { # tag N command...
    local tag=$1 n=$2
    shift 2
    "$@" valgrind --tool=callgrind --callgrind-out-file="$out/$tag.$n" "${exe[$tag]}" "$n" ${mode:-} \
        >"$out/$tag.$n.log" 2>&1 || return 1
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/$tag.$n.log" | tail -n1
}
declare -A exe
exe[ours]=$out/selfmsg.ours exe[ompi]=$out/selfmsg.ompi
exe[ours-unexp]=${exe[ours]} exe[ompi-unexp]=${exe[ompi]}
mpi/bin/ukmpicc --linux -O2 -g -o "${exe[ours]}" tests/bench/pathcost/selfmsg.c >"$out/build.log" 2>&1 ||
    { echo "pathcost: ours not built (see $out/build.log)"; exit 0; }
single=(env UKMPI_NODE=0 UKMPI_NODES=1 UKMPI_PEERS=127.0.0.1)
o1=$(cg ours $N "${single[@]}") o2=$(cg ours $((N + D)) "${single[@]}")
m1= m2=
if mpicc -O2 -g -o "${exe[ompi]}" tests/bench/pathcost/selfmsg.c >>"$out/build.log" 2>&1; then
    mpirun_=(timeout 600 mpirun --allow-run-as-root --oversubscribe -np 1 --mca btl self)
    m1=$(cg ompi $N "${mpirun_[@]}") m2=$(cg ompi $((N + D)) "${mpirun_[@]}")
fi
per() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" -v d="$D" 'BEGIN { printf "%.0f", (b - a) / d }'; }
ours=$(per "$o1" "$o2") ompi=$(per "$m1" "$m2")
calls() { # callgrind file: every call it recorded
    [ -f "$1" ] && awk '/^calls=/ { split($1, a, "="); s += a[2] } END { print s + 0 }' "$1"
}
ocalls=$(per "$(calls "$out/ours.$N")" "$(calls "$out/ours.$((N + D))")")
mcalls=$(per "$(calls "$out/ompi.$N")" "$(calls "$out/ompi.$((N + D))")")
echo "# path cost (tests/bench/pathcost.bench.sh): instructions per 8-byte message to oneself"
echo "# (MPI_Irecv + MPI_Send + MPI_Wait), callgrind, the difference of $N and $((N + D)) messages"
row "path: one message, total" "${ours:--}" "${ompi:-0}" instr "Open MPI 4.1, btl self"
[ -n "$ours" ] || exit 0
row "path: function calls per message" "${ocalls:--}" "${mcalls:-0}" calls "Open MPI 4.1, btl self"
# Our breakdown: inclusive (incl) or self (excl) instructions of functions, per message.
ann() { callgrind_annotate --inclusive="$1" --threshold=100 "$2" 2>/dev/null; }
for n in $N $((N + D)); do
    ann yes "$out/ours.$n" >"$out/incl.$n"
    ann no "$out/ours.$n" >"$out/excl.$n"
done
f() { # incl|excl FUNCTION... -> summed per-message instructions
    local kind=$1 a b
    shift
    a=$(sum "$out/$kind.$N" "$@") b=$(sum "$out/$kind.$((N + D))" "$@")
    awk -v a="$a" -v b="$b" -v d="$D" 'BEGIN { printf "%.0f", (b - a) / d }'
}
sum() { # file FUNCTION...: the first entry of each function in our binary
    local file=$1
    shift
    awk -v names="$*" 'BEGIN { n = split(names, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
        /selfmsg\.ours\]$/ { v = $1; gsub(",", "", v); fn = $(NF - 1); sub(/^.*:/, "", fn)
            if (fn in want && !(fn in seen)) { seen[fn] = 1; t += v } }
        END { print t + 0 }' "$file"
}
# The MPI calls: all but the program's own loop (inclusive costs miss the compiler's tail
# calls, MPI_Send's into its split-off body).
whole=$((ours - $(f excl main)))
engine=$(f incl op_isend op_irecv op_block)
row "path: the MPI calls" "$whole" "$ours" instr "the whole message"
row "path:  library, outside engine" "$((whole - engine))" "$ours" instr "the whole message"
row "path:   requests (alloc, finish)" "$(f excl req_alloc finish req_release)" "$ours" instr "the whole message"
# The steps inlined into their callers (MPI_HOT and the engine's always_inline ones: the
# argument checks but dt_span, who-am-I, the intra-node send's lock and completions) count
# in their callers' rows.
row "path:   datatype span (dt_span)" "$(f excl dt_span)" "$ours" instr "the whole message"
row "path:  engine calls (op_*)" "$engine" "$ours" instr "the whole message"
row "path:   post and match" "$(f excl match_rank_post match_post match_arrive find_unexpected)" "$ours" instr "the whole message"
row "path:   deliver (copy, complete)" "$(f incl deliver)" "$ours" instr "the whole message"
# The other order: MPI_Send, then MPI_Recv (the message is unexpected when it comes).
mode=unexp
u1=$(cg ours-unexp $N "${single[@]}") u2=$(cg ours-unexp $((N + D)) "${single[@]}")
v1= v2=
[ -z "$m1" ] || { v1=$(cg ompi-unexp $N "${mpirun_[@]}"); v2=$(cg ompi-unexp $((N + D)) "${mpirun_[@]}"); }
row "path: unexpected message (Send, Recv)" "$(per "$u1" "$u2")" "$(per "$v1" "$v2")" instr "Open MPI 4.1, btl self"
