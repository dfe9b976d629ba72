#!/usr/bin/env bash
# tests/bench/nbc.bench.sh: non-blocking collectives (issue 6), the KACC paper's evaluation
# (section 5) on our machine: MPI_Ibcast of 64 KiB and 1 MiB from rank 0, binomial tree
# ("tree") and pipelined chain ("pipeline"), ours against Open MPI's libnbc, measured in the
# same run on the same QEMU/TCG machine, NIC, hub and netdev. The program is
# tests/bench/mpi/ (modes bcasttime, overlap, cadlat; see nbc.c and cadlat.c), built
#   ours: with mpi/bin/ukmpicc, run by qemu/ukrun -n N*C --nodes N --smp C, with
#         UKMPI_COLL_BCAST=binomial|chain, UKMPI_COLL_CHUNK=$NBCB_CHUNK (chain only) and
#         UKMPI_CAD_PROGRESS=auto|ipi|... (interrupt-driven progress) or poll (the same
#         code progressing only inside MPI_Test/MPI_Wait)
#   Open MPI: with Debian's mpicc, in Debian Linux guests, N VMs x C vCPUs
#         (tests/bench/ompi/run.sh NxC), libnbc forced by --mca coll=libnbc,basic,self and
#         its broadcast by coll_libnbc_ibcast_algorithm=2 (binomial) or 3 (chain: 16 KiB
#         segments, fixed in Open MPI 4.1's libnbc when the algorithm is forced). Without
#         the parameter libnbc would take "linear" up to 4 ranks.
# Prints three tables: 1. the CPU time not spent computing while the broadcast runs
# (figures 4/5; ratios ours / Open MPI and policy / ours-auto); 2. completion time without
# compute (figure 6; ratios ours Ibcast / p2p binomial tree in the same job, ours / Open
# MPI) with our MPIX_Cad_stats progress counters; 3. ours: latency of interrupt-driven
# progress (MPIX_Cad_latency) in the pipeline jobs. A side or job that cannot be built or
# run says so on a line of its own; nothing is made up. Never fails `make bench`.
#
# Settings: NBCB_REPS (default 5) repetitions per figure (medians); NBCB_RUNS (1) jobs of
# each kind, alternating, figures are medians over them; NBCB_CONFIGS ("2x2 inter")
# configurations NxC: N nodes/VMs x C CPUs, a rank per CPU (intra = 1x2, inter = 2x1 as in
# mpi.bench.sh); NBCB_ALGS (tree pipeline); NBCB_PROGRESS (auto ipi poll; local exists
# too); NBCB_CHUNK (16384, libnbc's segment; empty: the library's default); NBCB_TIMEOUT
# (120) seconds per job (a job that fails is not run again for that side and configuration);
# NBCB_LATCONFIGS ("2x1:2") configurations NxC:R of R ranks per CPU that run only the
# progress latency (table 3) of ours, chain: 2x1:2 is issue 16's "vCPUs do not outnumber
# host cores" on a 2-core host, 4 ranks so that a chain has forwarding hops (with a rank
# per CPU, 2x1's chain has none), each node's CPU shared by its two ranks.
# Default: 19 jobs, about 3 minutes on a quiet 2-core host. Logs go to $B/bench/nbc/.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
out=$B/bench/nbc
REPS=${NBCB_REPS:-5}
CONFIGS=${NBCB_CONFIGS:-2x2 inter}
LATCONFIGS=${NBCB_LATCONFIGS-2x1:2}
ALGS=${NBCB_ALGS:-tree pipeline}
PROGRESS=${NBCB_PROGRESS:-auto ipi poll}
CHUNK=${NBCB_CHUNK-16384}
TIMEOUT=${NBCB_TIMEOUT:-120}
RUNS=${NBCB_RUNS:-1}
args=(-r "$REPS" bcasttime overlap cadlat)
# mpibench's result lines (ukrun prefixes "[nI] [rank] ", uknodes "[nI] ")
lines='(# mpibench|# nbc|# overlap|# bcasttime|# cadlat|overlap |bcasttime |cadstats |cadlat )'
t_start=$(date +%s)
mkdir -p "$out"
nodes_of() { case $1 in intra) echo 1 ;; inter) echo 2 ;; *) echo "${1%%x*}" ;; esac; }
cpus_of() { case $1 in intra) echo 2 ;; inter) echo 1 ;; *) local c=${1#*x}; echo "${c%:*}" ;; esac; }
ranks_of() { case $1 in *:*) echo "${1#*:}" ;; *) echo 1 ;; esac; } # per CPU
# First line of a log that says what went wrong.
why() { grep -m1 -iE 'not implemented|abort|error|fatal|not found|undefined|missing|failed|timeout' "$1" | cut -c1-150 || true; }
note() { echo "$*" >>"$out/notes"; }

# The undefined symbols a link log names.
undef() { grep -o "undefined reference to .[A-Za-z0-9_]*" "$1" | sed 's/.* .//' | sort -u | tr '\n' ' '; }
# A failed job: its reason for the report, and no more jobs of that side and configuration
# (the same failure would come again).
job_failed() { # side cfg rc log
    local w=timeout
    [ "$3" = 124 ] || w=$(why "$4")
    note "$1 $2: exit $3${w:+ ($w)}; see $4"
    failed+="$1-$2 "
}
run_ours() { # cfg alg progress run: alg "any" and progress "p2p" for a build without MPI_Ibcast
    local n c r e=() f=$out/ours-$3-$1-$2.$4 rc=0 m=("${args[@]}")
    n=$(nodes_of "$1") c=$(cpus_of "$1") r=$(ranks_of "$1")
    [[ $1 != *:* ]] || m=(-r "$REPS" cadlat) # a latency configuration
    [ "$3" = p2p ] || e+=(--env "UKMPI_CAD_PROGRESS=$3")
    case $2 in
    tree) e+=(--env UKMPI_COLL_BCAST=binomial) ;;
    pipeline) e+=(--env UKMPI_COLL_BCAST=chain)
        [ -z "$CHUNK" ] || e+=(--env "UKMPI_COLL_CHUNK=$CHUNK") ;;
    esac
    timeout $((TIMEOUT + 60)) qemu/ukrun -n $((n * c * r)) --nodes "$n" --smp "$c" --timeout "$TIMEOUT" \
        "${e[@]}" "$ours" "${m[@]}" >"$f.log" 2>&1 || rc=$?
    sed -n -E "s/^(\[n[0-9]+\] )?(\[0\] )?($lines.*)/\3/p" "$f.log" >"$f.txt"
    [ $rc = 0 ] || job_failed "ours-$3" "$1" $rc "$f.log"
}
run_ompi() { # cfg alg run
    local a=2 f=$out/ompi-$1-$2.$3 rc=0
    [ "$2" = pipeline ] && a=3
    timeout $((TIMEOUT + 120)) tests/bench/ompi/run.sh --timeout "$TIMEOUT" --log "$f.log" \
        --mca coll=libnbc,basic,self --mca coll_libnbc_ibcast_algorithm=$a "$1" "${args[@]}" \
        >"$f.txt" 2>"$f.err" || rc=$?
    [ $rc = 0 ] || job_failed ompi "$1" $rc "$f.log"
}

# Builds both sides, runs every job, keeps what the tables need besides the results.
measure() {
    rm -f "$out"/*.txt "$out"/*.log "$out/notes" "$out/state"
    # --- ours: the full program; without MPIX if the library lacks it; without MPI_Ibcast
    # (only the p2p tree) if it lacks that too.
    ours='' ours_ibcast=0 ours_note=''
    src=(tests/bench/mpi/*.c)
    for flags in "" "-DMPIBENCH_NO_MPIX" "-DMPIBENCH_NO_MPIX -DMPIBENCH_NO_IBCAST"; do
        # shellcheck disable=SC2086
        if mpi/bin/ukmpicc -O2 $flags -o "$out/mpibench.uk" "${src[@]}" >"$out/ukmpicc${flags// /}.log" 2>&1; then
            ours=$out/mpibench.uk
            [[ $flags == *NO_IBCAST* ]] || ours_ibcast=1
            [ -z "$flags" ] || ours_note="built with $flags; the library lacks: $(undef "$out/ukmpicc.log")"
            ours_note=${ours_note% }
            break
        fi
    done
    [ -n "$ours" ] || ours_note="not built ($(why "$out/ukmpicc.log"); see $out/ukmpicc.log)"

    # --- Open MPI: the guest (first run: built) and the kernel, before anything is timed
    ompi=1 ompi_note=''
    if ! timeout 1800 tests/bench/ompi/build-guest.sh 2>&1 >/dev/null | tee "$out/ompi-guest.log" >&2 ||
        ! timeout 600 tests/bench/linux-kernel.sh 2>&1 >/dev/null | tee -a "$out/ompi-guest.log" >&2; then
        ompi=0 ompi_note="not run ($(tail -n1 "$out/ompi-guest.log" | cut -c1-150))"
    fi

    failed=" "
    load0=$(cut -d' ' -f1 /proc/loadavg)
    sides=()
    [ "$ompi" = 0 ] || sides+=(ompi)
    if [ "$ours_ibcast" = 1 ]; then
        for p in $PROGRESS; do sides+=("ours-$p"); done
    elif [ -n "$ours" ]; then
        sides+=(ours-p2p) # no MPI_Ibcast: one job per configuration times the p2p tree
    fi
    for r in $(seq "$RUNS"); do
        for cfg in $CONFIGS; do
            for alg in $ALGS; do
                for s in "${sides[@]}"; do
                    [[ $failed == *" $s-$cfg "* ]] && continue
                    [ "$s" = ours-p2p ] && [ -e "$out/ours-p2p-$cfg-any.$r.txt" ] && continue
                    case $s in
                    ompi) run_ompi "$cfg" "$alg" "$r" ;;
                    ours-p2p) run_ours "$cfg" any p2p "$r" ;;
                    *) run_ours "$cfg" "$alg" "${s#ours-}" "$r" ;;
                    esac
                done
            done
        done
        for cfg in $LATCONFIGS; do
            for s in "${sides[@]}"; do
                [[ $s == ours-p2p || $s == ompi || $failed == *" $s-$cfg "* ]] ||
                    run_ours "$cfg" pipeline "${s#ours-}" "$r"
            done
        done
    done
    # what the tables need besides the results, for NBCB_REPORT=1
    for v in ours ours_ibcast ours_note ompi ompi_note load0; do
        printf '%s=%q\n' "$v" "${!v}"
    done >"$out/state"
}

if [ "${NBCB_REPORT:-0}" = 1 ]; then
    # the tables again from the last run's results, nothing run
    # shellcheck source=/dev/null
    . "$out/state" || exit 0
else
    measure
fi

# Median over the runs (or max) of KEY on the result lines of a job "KIND k=v k=v ..." that
# hold every k=v of FILTER; empty if there are none. ours-p2p has one job per configuration.
val() { # side cfg alg "KIND k=v..." key [max]
    local a=$3
    [ "$1" = ours-p2p ] && a=any
    cat "$out/$1-$2-$a".*.txt 2>/dev/null | awk -v f="$4" -v k="$5" '
        BEGIN { n = split(f, want, " ") }
        $1 == want[1] {
            delete have
            for (i = 2; i <= NF; i++) have[$i] = 1
            for (j = 2; j <= n; j++) if (!(want[j] in have)) next
            for (i = 2; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == k && kv[2] ~ /^-?[0-9.]+$/) print kv[2]
        }' | sort -g | awk -v m="${6:-med}" '{ v[NR] = $1 } END { if (NR) print (m == "max" ? v[NR] : v[int((NR + 1) / 2)]) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b == "" || b == 0 ? "-" : sprintf("%.2f", a / b)) }'; }
# Our progress steps per broadcast, summed over the ranks: local/ipi/home/polled.
cadper() { # side cfg alg phase bytes mm
    local o l i h p
    o=$(val "$1" "$2" "$3" "cadstats phase=$4 bytes=$5 mm=$6" ops)
    [ -n "$o" ] || return 0
    l=$(val "$1" "$2" "$3" "cadstats phase=$4 bytes=$5 mm=$6" local)
    i=$(val "$1" "$2" "$3" "cadstats phase=$4 bytes=$5 mm=$6" ipi)
    h=$(val "$1" "$2" "$3" "cadstats phase=$4 bytes=$5 mm=$6" home)
    p=$(val "$1" "$2" "$3" "cadstats phase=$4 bytes=$5 mm=$6" polled)
    awk -v o="$o" -v l="$l" -v i="$i" -v h="$h" -v p="$p" 'BEGIN { printf "%.1f/%.1f/%.1f/%.1f", l / o, i / o, h / o, p / o }'
}
# A line if some broadcasts completed without the root's data.
errs() { # side cfg alg "KIND k=v..."
    local e
    e=$(val "$1" "$2" "$3" "$4" errors max)
    [ -z "$e" ] || [ "$e" = 0 ] || echo "  ^ $1 $2 $3 ${4#* }: up to $e broadcasts without the root's data in a job"
}
kib() { echo "$(($1 / 1024))K"; }

lib=$(grep -h -o 'lib="[^"]*"' "$out"/ompi-*.txt 2>/dev/null | head -n1 || true)
echo "# NBC (issue 6; KACC paper sec. 5): MPI_Ibcast from rank 0, ours vs Open MPI ${lib:-(not run)} libnbc"
echo "# in Debian Linux VMs, same QEMU/TCG, NIC, hub, netdev. NxC: N nodes (VMs) x C CPUs, a rank per CPU."
echo "# ours: UKMPI_COLL_BCAST=binomial (tree) | chain (pipeline, UKMPI_COLL_CHUNK=${CHUNK:-default});"
echo "#   ours-P: UKMPI_CAD_PROGRESS=P (poll: progress only inside MPI calls, the same code)"
echo "# ompi: --mca coll libnbc,basic,self, coll_libnbc_ibcast_algorithm=2 (tree) | 3 (pipeline,"
echo "#   16 KiB segments); libnbc progresses only inside MPI calls. $REPS reps per figure, $RUNS job(s) each"
echo "# host: $(nproc) cores, load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end"
for cfg in $CONFIGS; do
    v=$(($(nodes_of "$cfg") * $(cpus_of "$cfg")))
    [ "$v" -le "$(nproc)" ] || echo "# $cfg: $v vCPUs on $(nproc) host cores: a rank that busy-polls takes host time from the others"
done
# the settings must have reached every rank (mpibench's "# nbc" line)
grep -l 'env_differs_on=[1-9]' "$out"/*.txt 2>/dev/null | sed 's/^/# warning: the ranks of this job saw different settings: /'

allsides=(ompi)
for p in $PROGRESS; do allsides+=("ours-$p"); done
# Sides with no line of KIND in any job of CFG: one line each saying why.
missing() { # kind cfg
    local s w
    for s in "${allsides[@]}"; do
        [ "$1" = cadlat ] && [ "$s" = ompi ] && continue
        grep -qs "^$1 " "$out/$s-$2"-*.txt && continue
        w=
        case $s in
        ompi) w=${ompi_note:-$(grep -m1 "^ompi $2:" "$out/notes" 2>/dev/null)} ;;
        *)
            if [ "$ours_ibcast" = 0 ]; then
                w=${ours_note:-no MPI_Ibcast}
            else
                w=$(grep -m1 "^$s $2:" "$out/notes" 2>/dev/null)
                [ -n "$w" ] || w=$(grep -h -m1 "^# $1" "$out/$s-$2"-*.txt 2>/dev/null | head -n1)
            fi
            ;;
        esac
        printf '  %s %s: no result: %s\n' "$2" "$s" "${w:-no line in its output (see $out/$s-$2-*.log)}"
    done
}

echo "## 1. overlap (figs 4/5): every rank multiplies MM x MM doubles, MPI_Test after each, until its"
echo "##    Ibcast is complete; notmm = 1 - mults * t_mm / elapsed: share of the CPU time NOT multiplying"
echo "##    (t_mm alone, after every rep). r0: root; oth: mean (max) over the other ranks; elapsed: max over"
echo "##    ranks. :ompi = ours / Open MPI (< 1: more CPU left to compute); :auto = this policy / ours-auto."
echo "##    cad: ours' progress steps per Ibcast (all ranks) local/ipi/home/polled (MPIX_Cad_stats)"
fmt1='%-5s %-8s %5s %3s %-10s %11s %9s %8s %7s %8s %7s %7s %7s %7s  %s\n'
# shellcheck disable=SC2059
printf "$fmt1" "# cfg" alg bytes mm side elapsed_us t_mm_us notmm_r0 oth "(max)" r0:ompi oth:ompi \
    r0:auto oth:auto cad
for cfg in $CONFIGS; do
    for alg in $ALGS; do
        for bytes in 65536 1048576; do
            for mm in 4 40; do
                p="overlap bytes=$bytes mm=$mm"
                for s in "${allsides[@]}"; do
                    el=$(val "$s" "$cfg" "$alg" "$p" elapsed_us)
                    [ -n "$el" ] || continue
                    r0=$(val "$s" "$cfg" "$alg" "$p" notmm_r0) oth=$(val "$s" "$cfg" "$alg" "$p" notmm_oth)
                    x1=- x2=- x3=- x4=-
                    if [ "$s" != ompi ]; then
                        x1=$(ratio "$r0" "$(val ompi "$cfg" "$alg" "$p" notmm_r0)")
                        x2=$(ratio "$oth" "$(val ompi "$cfg" "$alg" "$p" notmm_oth)")
                        if [ "$s" != ours-auto ]; then
                            x3=$(ratio "$r0" "$(val ours-auto "$cfg" "$alg" "$p" notmm_r0)")
                            x4=$(ratio "$oth" "$(val ours-auto "$cfg" "$alg" "$p" notmm_oth)")
                        fi
                    fi
                    c=$(cadper "$s" "$cfg" "$alg" overlap "$bytes" "$mm")
                    # shellcheck disable=SC2059
                    printf "$fmt1" "$cfg" "$alg" "$(kib "$bytes")" "$mm" "$s" "$el" \
                        "$(val "$s" "$cfg" "$alg" "$p" mm_us)" "$r0" "$oth" \
                        "($(val "$s" "$cfg" "$alg" "$p" notmm_othmax))" "$x1" "$x2" "$x3" "$x4" "${c:--}"
                    errs "$s" "$cfg" "$alg" "$p"
                done
            done
        done
    done
    missing overlap "$cfg"
done

echo "## 2. completion time (fig 6): Ibcast + MPI_Wait, no compute, barrier between, median of the reps"
echo "##    on each rank, max over ranks (us). p2ptree: whole messages along a binomial tree with"
echo "##    MPI_Irecv/MPI_Isend/MPI_Wait, same job. :p2p = Ibcast / that tree; :ompi = ours Ibcast /"
echo "##    Open MPI's Ibcast, p2p:ompi = the same for the tree (< 1: we are faster); pbcast: the"
echo "##    persistent broadcast (MPI_Bcast_init once, MPI_Start + MPI_Wait), pb:p2p its ratio to"
echo "##    the tree; cad: progress steps per Ibcast (all ranks) local/ipi/home/polled"
fmt2='%-5s %-8s %5s %-10s %11s %11s %7s %7s %8s %10s %7s  %s\n'
# shellcheck disable=SC2059
printf "$fmt2" "# cfg" alg bytes side ibcast_us p2ptree_us ":p2p" ":ompi" p2p:ompi pbcast_us pb:p2p cad
for cfg in $CONFIGS; do
    for alg in $ALGS; do
        for bytes in 65536 1048576; do
            pi="bcasttime bytes=$bytes op=ibcast" pt="bcasttime bytes=$bytes op=p2ptree"
            pp="bcasttime bytes=$bytes op=pbcast"
            for s in "${allsides[@]}" ours-p2p; do
                # ours-p2p (no MPI_Ibcast) is one job for every algorithm: once
                [ "$s" = ours-p2p ] && [ "$alg" != "${ALGS%% *}" ] && continue
                i=$(val "$s" "$cfg" "$alg" "$pi" us) t=$(val "$s" "$cfg" "$alg" "$pt" us)
                p=$(val "$s" "$cfg" "$alg" "$pp" us)
                [ -n "$i$t" ] || continue
                x=- y=-
                if [ "$s" != ompi ]; then
                    x=$(ratio "$i" "$(val ompi "$cfg" "$alg" "$pi" us)")
                    y=$(ratio "$t" "$(val ompi "$cfg" "$alg" "$pt" us)")
                fi
                c=$(cadper "$s" "$cfg" "$alg" bcasttime "$bytes" 0)
                # shellcheck disable=SC2059
                printf "$fmt2" "$cfg" "$alg" "$(kib "$bytes")" "$s" "${i:--}" "${t:--}" "$(ratio "$i" "$t")" \
                    "$x" "$y" "${p:--}" "$(ratio "$p" "$t")" "${c:--}"
                errs "$s" "$cfg" "$alg" "$pi"
                errs "$s" "$cfg" "$alg" "$pp"
                errs "$s" "$cfg" "$alg" "$pt"
            done
        done
    done
    missing bcasttime "$cfg"
done

# Figs 4/5 and 6 as curves for report.html (series.sh): one point per configuration.
. tests/bench/series.sh
series_new nbc-notmm "NBC overlap (KACC figs 4/5): share of CPU time not multiplying, other ranks (lower is better)" \
    "share" 0 "${allsides[@]}"
series_new nbc-ibcast "NBC completion time (KACC fig 6): Ibcast + Wait, and our point-to-point tree" us 1 \
    "${allsides[@]}" ours-p2ptree
for cfg in $CONFIGS; do
    for alg in $ALGS; do
        for bytes in 65536 1048576; do
            for mm in 4 40; do
                v=()
                for s in "${allsides[@]}"; do v+=("$(val "$s" "$cfg" "$alg" "overlap bytes=$bytes mm=$mm" notmm_oth)"); done
                series_row nbc-notmm "$cfg $alg $(kib "$bytes") mm$mm" "${v[@]}"
            done
            v=()
            for s in "${allsides[@]}"; do v+=("$(val "$s" "$cfg" "$alg" "bcasttime bytes=$bytes op=ibcast" us)"); done
            series_row nbc-ibcast "$cfg $alg $(kib "$bytes")" "${v[@]}" \
                "$(val ours-auto "$cfg" "$alg" "bcasttime bytes=$bytes op=p2ptree" us)"
        done
    done
done

echo "## 3. ours: interrupt-driven progress latency in the pipeline (chain) jobs: NIC interrupt entry ->"
echo "##    the SEND that the RECV completed there started (MPIX_Cad_latency), per non-root rank and over"
echo "##    all of them; 1 MiB Ibcasts overlapped with 4x4 multiplies. comm world: ranks in node blocks;"
echo "##    interleaved: nodes alternate along the chain (every hop crosses nodes). NxC:R: R ranks per"
echo "##    CPU, only this table (a node's ranks share its CPU: the interrupt lands on the CPU of both)"
fmt3='%-5s %-10s %-11s %-6s %7s %11s %11s %9s %9s\n'
# shellcheck disable=SC2059
printf "$fmt3" "# cfg" side comm rank samples med_cycles p99_cycles med_us p99_us
for cfg in $CONFIGS $LATCONFIGS; do
    for s in "${allsides[@]}"; do
        [ "$s" = ompi ] && continue
        grep -h -m1 '^# cadlat .*order=' "$out/$s-$cfg-pipeline".*.txt 2>/dev/null | head -n1 |
            sed "s/^# cadlat /  $cfg $s: /"
        awk '$1 == "cadlat" { print $2, $5 }' "$out/$s-$cfg-pipeline".*.txt 2>/dev/null | awk '!seen[$0]++' |
            while read -r comm who; do
                p="cadlat $comm $who"
                m=$(val "$s" "$cfg" pipeline "$p" med_cycles) q=$(val "$s" "$cfg" pipeline "$p" p99_cycles)
                mu=$(val "$s" "$cfg" pipeline "$p" med_us) qu=$(val "$s" "$cfg" pipeline "$p" p99_us)
                # shellcheck disable=SC2059
                printf "$fmt3" "$cfg" "$s" "${comm#comm=}" "${who#rank=}" "$(val "$s" "$cfg" pipeline "$p" n)" \
                    "${m:--}" "${q:--}" "${mu:--}" "${qu:--}"
            done
    done
    missing cadlat "$cfg"
done

[ -z "$ours_note" ] || echo "ours: $ours_note"
[ -z "$ompi_note" ] || echo "ompi: $ompi_note"
[ ! -s "$out/notes" ] || cat "$out/notes"
echo "# nbc bench: $(($(date +%s) - t_start)) s; logs in $out/"
exit 0
