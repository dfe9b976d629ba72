#!/usr/bin/env bash
# tests/bench/linux-nbc.bench.sh: seed 000's (KACC) figures 4/5/6 on Linux (issue 18): the
# non-blocking broadcast of tests/bench/mpi/ (nbc.c: modes overlap and bcasttime) in the
# same Debian Linux guests, same QEMU/TCG machine, NIC, hub and netdev, one run, sides:
#   ours       the Linux build of our library (mpi/linux/, `ukmpicc --linux`): its own
#              progress of MPI_Ibcast's graph inside the MPI calls
#   ompi       Debian's Open MPI, libnbc (--mca coll=libnbc,basic,self; its broadcast forced
#              by coll_libnbc_ibcast_algorithm=2 binomial | 3 chain, 16 KiB segments)
#   kacc-P     ours with o2g.ko and kacc.ko (host-kmod/kacc/) loaded in every guest with the
#              module parameter progress=P, ranks run with UKMPI_O2G=on UKMPI_KACC=on
#              (tests/bench/ompi/run.sh --kacc P); kacc-poll is the baseline: the same
#              module, graphs advanced only when the process asks (KACC_IOC_PROGRESS)
# Ours and kacc use UKMPI_COLL_BCAST=binomial (tree) | chain (pipeline, UKMPI_COLL_CHUNK).
# Whether a kacc job's broadcasts ran in the module is read from the module's counters in
# every guest after the job ("kaccstats" lines, tests/bench/ompi/kacc_stats.c): a kacc
# column whose jobs issued no graph ran the library's own progress, and prints '-' and a
# note instead of figures that would only repeat ours.
#
# Prints: figs 4/5, the share of CPU time NOT multiplying while the Ibcast runs (64 KiB,
# 1 MiB; tree and pipeline; 4x4 and 40x40 multiplies with an MPI_Test after each; t_mm,
# one multiply alone, measured after every repetition, interleaved: nbc.c), root and other
# ranks, with its spread over the repetitions; fig 6, Ibcast + MPI_Wait completion time
# against libnbc's (seed: 79 %) and against a binomial tree of MPI_Isend/MPI_Irecv in the
# same job (seed: 55 %). Never fails `make bench`: a side or job that cannot be built or run
# says so on a line of its own; nothing is made up.
#
# Settings: LXN_REPS (5) repetitions per figure (medians; the spread is over them);
# LXN_RUNS (1) jobs of each kind, alternating, medians over them; LXN_CONFIGS ("2x2") NxC:
# N VMs x C vCPUs, a rank per vCPU; LXN_ALGS ("tree pipeline"); LXN_KACC ("ipi poll")
# kacc's progress policies, a side each (tasklet exists too; empty: no kacc sides);
# LXN_SIDES ("ours ompi kacc"); LXN_CHUNK (16384) our chain's segment; LXN_TIMEOUT (240)
# seconds per job (a job that fails is not run again for that side and configuration);
# LXN_REPORT=1 prints the tables again from the last run's results, running nothing.
# Default: 8 jobs of 2 VMs x 2 vCPUs, about 8 minutes on 2 host cores. Logs go to
# $B/bench/linux-nbc/.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
out=$B/bench/linux-nbc
REPS=${LXN_REPS:-5}
RUNS=${LXN_RUNS:-1}
CONFIGS=${LXN_CONFIGS:-2x2}
ALGS=${LXN_ALGS:-tree pipeline}
KACC=${LXN_KACC-ipi poll}
SIDES=${LXN_SIDES:-ours ompi kacc}
CHUNK=${LXN_CHUNK-16384}
TIMEOUT=${LXN_TIMEOUT:-240}
mkdir -p "$out"
t0=$SECONDS
load0=$(cut -d' ' -f1 /proc/loadavg)
note() { echo "$*" >>"$out/notes"; }
# First line of a log that says what went wrong.
why() { grep -m1 -iE 'not implemented|abort|error|fatal|not found|undefined|missing|failed|timeout' "$1" | cut -c1-150 || true; }

[ "${LXN_REPORT:-0}" = 1 ] || rm -f "$out/notes"
sides=()
for s in $SIDES; do
    case $s in
    ours | kacc)
        if [ ! -f "$B/linux/libukmpi.a" ]; then
            note "$s: not run ($B/linux/libukmpi.a missing: run make)"
            continue
        fi
        if [ "$s" = ours ]; then
            sides+=(ours)
        elif [ -n "$KACC" ] && ! make -s kacc >"$out/kacc-build.log" 2>&1; then
            note "kacc: not run (make kacc failed: see $out/kacc-build.log)"
        else
            for p in $KACC; do sides+=("kacc-$p"); done
        fi
        ;;
    *) sides+=("$s") ;;
    esac
done

failed=" "
run_job() { # side cfg alg run
    local s=$1 c=$2 a=$3 f=$out/$1-$2-$3.$4 rc=0 o=()
    case $s in
    ompi)
        # shellcheck disable=SC2054 # the commas are in the value
        o=(--mca coll=libnbc,basic,self --mca "coll_libnbc_ibcast_algorithm=$([ "$a" = tree ] && echo 2 || echo 3)")
        ;;
    *)
        o=(--mpi ours)
        [ "$s" = ours ] || o+=(--kacc "${s#kacc-}")
        if [ "$a" = tree ]; then
            o+=(--env UKMPI_COLL_BCAST=binomial)
        else
            o+=(--env UKMPI_COLL_BCAST=chain)
            [ -z "$CHUNK" ] || o+=(--env "UKMPI_COLL_CHUNK=$CHUNK")
        fi
        ;;
    esac
    timeout $((TIMEOUT + 120)) tests/bench/ompi/run.sh --timeout "$TIMEOUT" --log "$f.log" "${o[@]}" \
        "$c" -r "$REPS" bcasttime overlap >"$f.txt" 2>"$f.err" || rc=$?
    if [ "$rc" != 0 ]; then
        local w=timeout
        [ "$rc" = 124 ] || w=$(why "$f.log")
        [ -n "$w" ] || w=$(why "$f.err")
        note "$s $c $a: exit $rc${w:+ ($w)}; see $f.log"
        failed+="$s-$c "
    fi
}
# Builds the guests, runs every job; the notes of the sides (below) are kept.
measure() {
    rm -f "$out"/*.txt "$out"/*.log "$out"/*.err
    if ! timeout 1800 tests/bench/ompi/build-guest.sh 2>&1 >/dev/null | tee "$out/guest.log" >&2 ||
        ! timeout 600 tests/bench/linux-kernel.sh 2>&1 >/dev/null | tee -a "$out/guest.log" >&2; then
        echo "# linux-nbc: the Debian guests cannot be made ($(tail -n1 "$out/guest.log" | cut -c1-150)): nothing run"
        exit 0
    fi
    for r in $(seq "$RUNS"); do
        for c in $CONFIGS; do
            for a in $ALGS; do
                for s in "${sides[@]}"; do
                    [[ $failed == *" $s-$c "* ]] || run_job "$s" "$c" "$a" "$r"
                done
            done
        done
    done
}

# the host's load at the start and at the end of the run (kept for LXN_REPORT=1)
if [ "${LXN_REPORT:-0}" = 1 ]; then
    load0=$(cat "$out/load0" 2>/dev/null || echo "$load0")
else
    echo "$load0" >"$out/load0"
    measure
    { cut -d' ' -f1 /proc/loadavg; uptime | sed 's/^ *//'; echo $((SECONDS - t0)); } >"$out/load1"
fi
{ read -r load1 && read -r upt && read -r took; } <"$out/load1" 2>/dev/null ||
    load1=- upt=- took=-

# Median over the runs of KEY on the result lines of SIDE-CFG-ALG.*.txt that start with
# KIND and hold every k=v of "KIND k=v..."; empty if there are none.
val() { # side cfg alg "KIND k=v..." key
    cat "$out/$1-$2-$3".*.txt 2>/dev/null | awk -v f="$4" -v k="$5" '
        BEGIN { n = split(f, want, " ") }
        $1 == want[1] && $0 !~ / errors=[1-9]/ {
            delete have
            for (i = 2; i <= NF; i++) have[$i] = 1
            for (j = 2; j <= n; j++) if (!(want[j] in have)) next
            for (i = 2; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == k && kv[2] ~ /^-?[0-9.]+$/) print kv[2]
        }' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
# Sum over every VM and run of kacc counter KEY in SIDE-CFG-ALG's jobs; empty if no counters.
kacc_sum() { # side cfg alg key
    cat "$out/$1-$2-$3".*.txt 2>/dev/null | awk -v k="$4" '$1 == "kaccstats" {
        for (i = 2; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == k) { s += kv[2]; n++ } }
        END { if (n) print s }'
}
# A side's figure: val's, or empty for a kacc side whose module issued no graph in that
# job (its figures would be the library's own progress again).
fig() { # side cfg alg "KIND k=v..." key
    case $1 in
    kacc-*) [ "$(kacc_sum "$1" "$2" "$3" issued)" -gt 0 ] 2>/dev/null || return 0 ;;
    esac
    val "$@"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b == "" || a == "-" || b == "-" || b <= 0 || a < 0 ? "-" : sprintf("%.2f", a / b)) }'; }
kib() { echo "$(($1 / 1024))K"; }
# A number of the spread rows, short: 3 decimals below 10, 1 below 100, none above.
short() { awk -v x="$1" 'BEGIN { if (x == "" || x == "-") print "-"; else { a = x < 0 ? -x : x
    printf (a < 10 ? "%.3f" : a < 100 ? "%.1f" : "%.0f"), x } }'; }
# The comparisons of every row: each of our sides over Open MPI, kacc over kacc-poll.
pairs=()
for s in "${sides[@]}"; do
    [ "$s" = ompi ] && continue
    [[ " ${sides[*]} " == *" ompi "* ]] && pairs+=("$s/ompi")
    [[ $s == kacc-* && $s != kacc-poll && " ${sides[*]} " == *" kacc-poll "* ]] && pairs+=("$s/kacc-poll")
done
header() {
    local h s pr
    h=$(printf '%-44s %-5s' "# figure" unit)
    for s in "${sides[@]}"; do h+=$(printf ' %13s' "$s"); done
    for pr in "${pairs[@]}"; do h+=$(printf ' %18s' "$pr"); done
    echo "$h"
}
# One row: every side's value of KEY (or '-'), then the ratios of the pairs.
row() { # label unit cfg alg "KIND k=v..." key [ratios: 1|0]
    local line s v pr
    declare -A vs
    line=$(printf '%-44s %-5s' "linux-nbc: $1" "$2")
    for s in "${sides[@]}"; do
        v=$(fig "$s" "$3" "$4" "$5" "$6")
        vs[$s]=${v:--}
        line+=$(printf ' %13s' "${v:--}")
    done
    if [ "${7:-1}" = 1 ]; then
        for pr in "${pairs[@]}"; do line+=$(printf ' %18s' "$(ratio "${vs[${pr%/*}]}" "${vs[${pr#*/}]}")"); done
    fi
    echo "$line"
}
# The spread row under a figure: every side's lowest-highest of LO and HI keys.
spread() { # cfg alg "KIND k=v..." lo-key hi-key
    local line s lo hi
    line=$(printf '%-44s %-5s' "linux-nbc:   spread over reps" "")
    for s in "${sides[@]}"; do
        lo=$(fig "$s" "$1" "$2" "$3" "$4") hi=$(fig "$s" "$1" "$2" "$3" "$5")
        line+=$(printf ' %13s' "$(short "$lo")..$(short "$hi")")
    done
    echo "$line"
}

lib=$(grep -h -o 'lib="[^"]*"' "$out"/*.txt 2>/dev/null | sort -u | tr '\n' ' ')
echo "# Linux NBC (issue 18; seed 000 KACC figs 4/5/6): MPI_Ibcast from rank 0, ours vs Open MPI libnbc"
echo "# vs kacc (o2g.ko + kacc.ko in the guests, UKMPI_KACC=on; kacc-P: module parameter progress=P,"
echo "# kacc-poll the baseline), same Debian Linux VMs, QEMU/TCG, NIC, hub, netdev; libs: ${lib:-(none ran)}"
echo "# configs $CONFIGS (NxC: N VMs x C vCPUs, a rank per vCPU); $REPS reps per figure, $RUNS job(s) each;"
echo "# tree = binomial, pipeline = chain (ours: UKMPI_COLL_CHUNK=${CHUNK:-default}; libnbc: 16 KiB)"
echo "# host: $(nproc) cores, load average $load0 at the start, $load1 at the end; uptime at the end: $upt"
echo "## figs 4/5: share of CPU time NOT multiplying while the Ibcast runs (notmm = 1 - mults x t_mm /"
echo "##   elapsed; t_mm measured after every rep, interleaved); r0: the root, oth: mean over the other"
echo "##   ranks; median over reps; spread: lowest..highest over the reps (oth: over the other ranks too)."
echo "##   Ratio < 1: more CPU left to compute than the baseline. t_mm row: median, spread lo..hi (us)"
header
for c in $CONFIGS; do
    for a in $ALGS; do
        for bytes in 65536 1048576; do
            for mm in 4 40; do
                p="overlap bytes=$bytes mm=$mm"
                l="$c $a $(kib "$bytes") mm$mm"
                row "$l notmm r0" share "$c" "$a" "$p" notmm_r0
                spread "$c" "$a" "$p" notmm_r0_lo notmm_r0_hi
                row "$l notmm oth" share "$c" "$a" "$p" notmm_oth
                spread "$c" "$a" "$p" notmm_oth_lo notmm_oth_hi
                row "$l t_mm" us "$c" "$a" "$p" mm_us 0
                spread "$c" "$a" "$p" mm_lo_us mm_hi_us
            done
        done
    done
done
echo "## fig 6: Ibcast + MPI_Wait without compute, median of the reps per rank, max over ranks (us);"
echo "##   p2ptree: whole messages along a binomial tree of MPI_Isend/MPI_Irecv/MPI_Wait in the same job;"
echo "##   ibcast/p2ptree: each side's Ibcast over its own tree (seed: 0.55); ratio column /ompi of the"
echo "##   ibcast row: over libnbc's Ibcast (seed: 0.79). pbcast: the persistent broadcast (MPI_Bcast_init"
echo "##   once, then MPI_Start + MPI_Wait; Open MPI's MPIX_Bcast_init). Ratio < 1: faster"
header
for c in $CONFIGS; do
    for a in $ALGS; do
        for bytes in 65536 1048576; do
            l="$c $a $(kib "$bytes")"
            row "$l ibcast" us "$c" "$a" "bcasttime bytes=$bytes op=ibcast" us
            row "$l pbcast" us "$c" "$a" "bcasttime bytes=$bytes op=pbcast" us
            row "$l p2ptree" us "$c" "$a" "bcasttime bytes=$bytes op=p2ptree" us
            for op in ibcast pbcast; do
                line=$(printf '%-44s %-5s' "linux-nbc: $l $op/p2ptree" ratio)
                for s in "${sides[@]}"; do
                    i=$(fig "$s" "$c" "$a" "bcasttime bytes=$bytes op=$op" us)
                    t=$(fig "$s" "$c" "$a" "bcasttime bytes=$bytes op=p2ptree" us)
                    line+=$(printf ' %13s' "$(ratio "$i" "$t")")
                done
                echo "$line"
            done
        done
    done
done
# Figs 4/5 and 6 as curves for report.html (series.sh): one point per figure.
# shellcheck source=tests/bench/series.sh
. tests/bench/series.sh
series_new linux-nbc-notmm "Linux NBC overlap (KACC figs 4/5): share of CPU time not multiplying, other ranks (lower is better)" \
    share 0 "${sides[@]}"
series_new linux-nbc-ibcast "Linux NBC completion time (KACC fig 6): Ibcast + Wait" us 1 "${sides[@]}"
for c in $CONFIGS; do
    for a in $ALGS; do
        for bytes in 65536 1048576; do
            for mm in 4 40; do
                v=()
                for s in "${sides[@]}"; do v+=("$(fig "$s" "$c" "$a" "overlap bytes=$bytes mm=$mm" notmm_oth)"); done
                series_row linux-nbc-notmm "$c $a $(kib "$bytes") mm$mm" "${v[@]}"
            done
            v=()
            for s in "${sides[@]}"; do v+=("$(fig "$s" "$c" "$a" "bcasttime bytes=$bytes op=ibcast" us)"); done
            series_row linux-nbc-ibcast "$c $a $(kib "$bytes")" "${v[@]}"
        done
    done
done
# What ran where: the kacc module's counters of every kacc job, summed over its VMs.
for s in "${sides[@]}"; do
    [[ $s == kacc-* ]] || continue
    for c in $CONFIGS; do
        for a in $ALGS; do
            iss=$(kacc_sum "$s" "$c" "$a" issued)
            if [ -z "$iss" ]; then
                echo "linux-nbc: $s $c $a: no kacc counters read from the guests (see $out/$s-$c-$a.*.log)"
                continue
            fi
            line="linux-nbc: $s $c $a: kacc counters (all VMs):"
            for k in issued finished refused calc local ipi home polled sent received write_space; do
                line+=" $k=$(kacc_sum "$s" "$c" "$a" "$k")"
            done
            echo "$line"
            [ "$iss" -gt 0 ] ||
                echo "linux-nbc: $s $c $a: '-': no graph went to /dev/kacc (the library ran its own progress with UKMPI_KACC=on; its figures are in $out/$s-$c-$a.*.txt)"
        done
    done
done
# a broadcast that completed without the root's data is not a figure (val skips its line)
grep -H -o '^[a-z]* bytes=[0-9]* [^ ]*.* errors=[1-9][0-9]*' "$out"/*.txt 2>/dev/null |
    awk '{ print "linux-nbc: WRONG DATA (figure left out): " $1, $2, $3, $NF }'
grep -l 'env_differs_on=[1-9]' "$out"/*.txt 2>/dev/null | sed 's/^/linux-nbc: warning: the ranks of this job saw different settings: /'
[ ! -s "$out/notes" ] || sed 's/^/linux-nbc: /' "$out/notes"
echo "# linux-nbc: the run took $took s; logs in $out/"
exit 0
