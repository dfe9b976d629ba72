#!/usr/bin/env bash
# tests/knl/run.sh [FILTER]: the knl board (boards/knl: x2APIC, hundreds of CPUs) under
# the backports QEMU 10 (qemu/qemu-bpo), and the qemu board's xAPIC beside it.
# Closing line: "knl: N passed, N failed".
#
#   x2apic_smpN   the knl test kernel booted by qemu/ukboot --board knl on N CPUs, KTEST
#                 x2apic (tests/knl/x2apic_test.c): every CPU online and in x2APIC mode
#                 with the APIC id the MADT lists, IPIs between sampled pairs across the id
#                 range (above 255 on 288 CPUs, with the IOMMU ukboot adds there), the
#                 periodic timer on the sampled CPUs; plus the SMT width from CPUID 0xB
#                 (4 threads per core when N is a multiple of 4). Each line gives the time
#                 of the whole QEMU run (boot, test, exit).
#   xapic_qemu    the qemu board's test kernel on QEMU 7.2: the same KTEST, xAPIC mode.
#   numa          8 NUMA nodes (ukboot --numa snc4: 4 DDR with CPUs, 4 CPU-less MCDRAM-like,
#                 SLIT distances): the kernel's report from SRAT and SLIT matches; KTEST
#                 numa (tests/knl/numa_test.c): frames by node, each policy's nodes.
#   numa_place_P  the same layout, a job of 4 ranks (tests/knl/apps/numa_heap.c) with
#                 mem=P (ddr, mcdram, interleave): where each rank's heap and stack pages
#                 are, from their physical addresses (the kernel's job report);
#                 numa_place_cmdline: the kernel command line's mem= wins over job.conf's.
#   smt_*         KTEST smt (tests/knl/smt_test.c): SMT cores from CPUID leaf 0xB on
#                 -smp 16 as 4x4 and 2 sockets x 4 cores x 2 threads, placement one rank per
#                 core first; smt_job: 4 ranks of a job on 4 distinct cores.
#   mpi/...       a conformance program (tests/mpi/progs/) with 4 ranks on one knl node,
#                 through tests/mpi/run.sh (UKRUN_BOARD=knl): output identical to Open MPI's.
#   grub_iso_mpi4 the same program as a job inside a GRUB ISO (boards/knl/mkiso.sh), booted
#                 through the firmware from the CD drive (not -kernel): GRUB's multiboot2
#                 (the kernel takes the memory map, command line, initrd and RSDP from its
#                 Multiboot2 tags), 4 ranks, exit 0.
#   grub_iso_mb1  the test kernel through GRUB's multiboot (Multiboot1), KTEST x2apic.
#
#   mpi64/...     colls with 64 ranks on one 64-CPU knl node (16 cores x 4 threads),
#                 against Open MPI's 64-process output (about 40 s under TCG on 2 host
#                 cores, 35 s more the first time for Open MPI's reference, kept in
#                 build/knl/mpi-ref/). KNL_MPI64=0 leaves it out.
#
# KNL_CPUS (default "4 64 255 288") chooses the x2APIC CPU counts. Builds the knl board
# first (make BOARD=knl, into build/knl/; incremental). Logs: build/knl/tests/.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
filter=${1:-}
cpus=${KNL_CPUS:-4 64 255 288}
K=build/knl
logdir=$K/tests
mkdir -p "$logdir"
pass=0 fail=0

ok() {
    echo "PASS $1"
    pass=$((pass + 1))
}
bad() { # NAME REASON [LOG]
    echo "FAIL $1: $2"
    [ $# -ge 3 ] && [ -s "$3" ] && grep -E 'WRONG|NO PONG|FAIL|PANIC|\*\*\*|ukboot:' "$3" |
        head -n 15 | sed 's/^/    | /'
    fail=$((fail + 1))
}
want() { [ -z "$filter" ] || [[ $1 == *$filter* ]]; }
finish() {
    echo "knl: $pass passed, $fail failed"
    [ $fail = 0 ]
    exit
}

if ! qemu/qemu-bpo --version >/dev/null 2>&1; then
    bad "qemu-bpo" "the backports QEMU is missing: make deps (mk/deps.d/55-qemu-bpo.sh)"
    finish
fi
if ! make -s BOARD=knl $K/uk/ukernel-test.elf $K/uk/ukernel.elf $K/uk/ukernel-mb.bin \
    $K/uk/ukernel-test-mb.bin \
    $K/app/ukmpicc.conf \
    >"$logdir/build.log" 2>&1; then
    bad "build" "make BOARD=knl failed" "$logdir/build.log"
    tail -n 20 "$logdir/build.log" | sed 's/^/    | /'
    finish
fi

# NAME LOG RC EXPECT...: the run exited 0 and every EXPECT regex matches some line.
check() {
    local name=$1 log=$2 rc=$3 secs=$4
    shift 4
    if [ "$rc" != 0 ]; then
        bad "$name" "exit code $rc (${secs}s)" "$log"
        return
    fi
    for re in "$@"; do
        grep -qE -e "$re" "$log" || { bad "$name" "no line matches '$re' (${secs}s)" "$log"; return; }
    done
    ok "$name (${secs}s)"
}

# Elapsed seconds since $1 (date +%s%N), one decimal.
since() { local d=$(($(date +%s%N) - $1)); printf '%d.%d' $((d / 1000000000)) $((d / 100000000 % 10)); }

for n in $cpus; do
    name=x2apic_smp$n
    want "$name" || continue
    log=$logdir/$name.log
    threads=1
    [ $((n % 4)) = 0 ] && threads=4 # ukboot --board knl gives 4 threads per core then
    expects=("^cpus: $n online .*, x2APIC," "^topology: largest APIC id $((n - 1)), $threads thread"
        "^x2apic: topology: $((n / threads)) cores x $threads threads$"
        "^x2apic: mode: $n CPUs online, x2APIC, ids match the MADT: ok$" "^x2apic: all ok$")
    # Above 255 CPUs: an IPI to and from an APIC id above 255 must be among the sampled.
    [ "$n" -gt 256 ] && expects+=("-> cpu [0-9]+ \(APIC id (2(5[6-9]|[6-9][0-9])|[3-9][0-9]{2})\): ok"
        "^x2apic: ipi cpu [0-9]+ \(APIC id (2(5[6-9]|[6-9][0-9])|[3-9][0-9]{2})\) -> .*: ok")
    # Memory: each CPU takes 5 kernel stacks of 64 KiB; 1 GiB leaves room at 288.
    t0=$(date +%s%N)
    qemu/ukboot --board knl --smp "$n" --mem 1G --timeout 150 --append "test=x2apic targs=$n" \
        "$K/uk/ukernel-test.elf" >"$log" 2>&1
    rc=$?
    check "$name" "$log" $rc "$(since "$t0")" "${expects[@]}"
done

if want xapic_qemu; then
    log=$logdir/xapic_qemu.log
    t0=$(date +%s%N)
    qemu/ukboot --smp 4 --timeout 60 --append "test=x2apic targs=4,xapic" \
        build/uk/ukernel-test.elf >"$log" 2>&1
    check "xapic_qemu (qemu board, QEMU 7.2, 4 CPUs)" "$log" $? "$(since "$t0")" \
        "^cpus: 4 online .*, xAPIC," "^x2apic: mode: 4 CPUs online, xAPIC, .*: ok$" "^x2apic: all ok$"
fi

# NUMA as a KNL in SNC-4 flat mode shows it (qemu/ukboot --numa snc4): 4 DDR nodes with a
# CPU each, 4 CPU-less MCDRAM nodes; SLIT distances 10 local, 21 DDR-DDR, 31 DDR to its own
# quadrant's MCDRAM, 41 otherwise. The kernel's report (SRAT, SLIT) must match, and KTEST
# numa (tests/knl/numa_test.c) allocate by node as the policies say.
if want numa; then
    log=$logdir/numa.log
    t0=$(date +%s%N)
    qemu/ukboot --board knl --numa snc4 --smp 4 --mem 1536M --timeout 90 \
        --append "test=numa" "$K/uk/ukernel-test.elf" >"$log" 2>&1
    check "numa (8 nodes: 4 DDR with CPUs, 4 CPU-less, SLIT)" "$log" $? "$(since "$t0")" \
        "^numa: 8 nodes$" "^numa: node 0: 1 CPUs, 25[56] MiB$" "^numa: node 3: 1 CPUs, 256 MiB$" \
        "^numa: node 4: 0 CPUs, 128 MiB, CPU-less" "^numa: node 7: 0 CPUs, 128 MiB, CPU-less" \
        "^numa: distances from node 0: 10 21 21 21 31 41 41 41$" \
        "^numa: distances from node 5: 41 31 41 41 41 10 41 41$" \
        "^numa: cpu 2 \(node 2\): ddr -> node 2, mcdram -> node 6: ok$" \
        "^numa: node 4 full after [0-9]+ frames: the next from node 0 \(nearest 0\): ok$" \
        "^numa: interleave: 16 frames, 2 on each of 8 nodes: ok$" "^numa: all ok$"
fi

# Placement: tests/knl/apps/numa_heap (4 ranks, 4 MiB of heap each) on the same layout
# (ukrun --numa snc4: CPU i on DDR node i, MCDRAM node i+4 nearest it) under each mem=
# policy. The kernel's "job: rank R memory:" lines count each rank's heap and stack pages
# by the node of their physical frames (unikernel/pvas/job_place.c), and must show: ddr, all
# on the rank's CPU's node; mcdram, all on the nearest CPU-less node (CPU's node + 4);
# interleave, spread over all 8 nodes, no node more than 2 pages above another (the stack
# and the heap are each one turn of the round robin).
# placement POLICY LOG: prints why LOG's report breaks POLICY, or nothing.
placement() {
    awk -v pol="$1" '
    /^job: rank [0-9]+ memory: / {
        n++
        match($0, /cpu [0-9]+ \(node -?[0-9]+\), home node -?[0-9]+, [0-9]+ /)
        split(substr($0, RSTART, RLENGTH), f, /[ (),]+/) # cpu C node N home node H P
        node = f[4]; home = f[7]; total = f[8]; k = 0; min = -1; max = 0; only = 0
        for (i = 1; i <= NF; i++)
            if ($i ~ /^node[0-9]+=[0-9]+$/) {
                split(substr($i, 5), kv, "="); k++
                if (kv[1] == home && kv[2] == total) only = 1
                if (min < 0 || kv[2] + 0 < min) min = kv[2] + 0
                if (kv[2] + 0 > max) max = kv[2] + 0
            }
        if (total < 1024) { print "rank line with too few pages: " $0; failed = 1; exit }
        if (pol == "ddr" && !(home == node && k == 1 && only)) { print "not all on its CPU node: " $0; failed = 1; exit }
        if (pol == "mcdram" && !(home == node + 4 && k == 1 && only)) { print "not all on its MCDRAM node: " $0; failed = 1; exit }
        if (pol == "interleave" && !(k == 8 && max - min <= 2)) { print "not spread evenly over 8 nodes: " $0; failed = 1; exit }
    }
    END { if (!failed && n != 4) print "expected 4 \"job: rank R memory:\" lines, saw " n + 0 }' "$2"
}
if want numa_place; then
    app=$K/mpi-uk/bin/numa_heap
    mkdir -p "$K/mpi-uk/bin"
    if ! UKMPI_BUILD=$PWD/$K mpi/bin/ukmpicc -O2 tests/knl/apps/numa_heap.c -o "$app" \
        >"$logdir/numa_heap.build.log" 2>&1; then
        bad "numa_place" "ukmpicc failed" "$logdir/numa_heap.build.log"
    else
        for pol in ddr mcdram interleave; do
            log=$logdir/numa_place_$pol.log
            t0=$(date +%s%N)
            qemu/ukrun --board knl --numa snc4 -n 4 --smp 4 --mem 1536M --mem-policy "$pol" \
                --timeout 120 "$app" >"$log" 2>&1
            rc=$? secs=$(since "$t0")
            why=$(placement "$pol" "$log")
            if [ $rc != 0 ]; then
                bad "numa_place_$pol" "exit code $rc (${secs}s)" "$log"
            elif ! grep -q "^\[0\] numa_heap: 4 MiB per rank written and read back, 0 bytes wrong$" "$log"; then
                bad "numa_place_$pol" "no result line from rank 0 (${secs}s)" "$log"
            elif ! grep -q "^job: memory policy mem=$pol over 8 NUMA nodes; free MiB by node: 0:" "$log"; then
                bad "numa_place_$pol" "no policy line at the job's start (${secs}s)" "$log"
            elif [ -n "$why" ]; then
                bad "numa_place_$pol" "$why (${secs}s)"
            else
                ok "numa_place_$pol (mem=$pol, 4 ranks, pages by physical address) (${secs}s)"
            fi
        done
    fi
fi

# The kernel command line's mem= overrides the job's (job.conf mem=ddr, mem=mcdram on the
# command line: the heaps go to MCDRAM), booted with ukboot as a loader would.
if want numa_place; then
    log=$logdir/numa_place_cmdline.log work=$logdir/cmdline
    app=$K/mpi-uk/bin/numa_heap
    rm -rf "$work" && mkdir -p "$work"
    if [ -f "$app" ]; then
        cp "$app" "$work/numa_heap"
        printf 'image=numa_heap\nsize=4\nnodes=1\nmem=ddr\n' >"$work/job.conf"
        (cd "$work" && printf '%s\n' job.conf numa_heap | cpio -o -H newc --quiet >initrd.cpio)
        t0=$(date +%s%N)
        qemu/ukboot --board knl --numa snc4 --smp 4 --mem 1536M --timeout 120 \
            --initrd "$work/initrd.cpio" --append "node=0 nodes=1 mem=mcdram" >"$log" 2>&1
        rc=$? secs=$(since "$t0")
        why=$(placement mcdram "$log")
        if [ $rc != 0 ]; then
            bad "numa_place_cmdline" "exit code $rc (${secs}s)" "$log"
        elif [ -n "$why" ]; then
            bad "numa_place_cmdline" "$why (${secs}s)"
        else
            ok "numa_place_cmdline (job.conf mem=ddr, command line mem=mcdram: MCDRAM) (${secs}s)"
        fi
    fi
fi

# SMT: KTEST smt (tests/knl/smt_test.c) on 16 CPUs as 4 cores x 4 threads (ukboot's knl
# topology) and as 2 sockets x 4 cores x 2 threads (-smp after ukboot's own overrides it):
# cores counted from CPUID leaf 0xB, the first placement slots one per core. Then a job of
# 4 ranks on the 4x4 node: its ranks on 4 distinct cores (the kernel's "job: rank R on cpu"
# lines), not on the 4 threads of core 0.
if want smt; then
    for spec in "4x4:4,4:" "2s4c2t:8,2:-smp 16,sockets=2,cores=4,threads=2"; do
        IFS=: read -r tag targs extra <<<"$spec"
        log=$logdir/smt_$tag.log
        t0=$(date +%s%N)
        # shellcheck disable=SC2086 # $extra: QEMU words
        qemu/ukboot --board knl --smp 16 --timeout 60 --append "test=smt targs=$targs" \
            "$K/uk/ukernel-test.elf" -- $extra >"$log" 2>&1
        check "smt_$tag (16 CPUs, ${targs/,/ cores x } threads)" "$log" $? "$(since "$t0")" \
            "^smt: placement: .*: ok$" "^smt: all ok$"
    done
    log=$logdir/smt_job.log
    app=$K/mpi-uk/bin/numa_heap # built by the numa_place part
    t0=$(date +%s%N)
    if [ ! -f "$app" ]; then
        bad "smt_job" "no $app (the numa_place part builds it)"
    else
        qemu/ukrun --board knl -n 4 --smp 16 --mem 1G --timeout 60 "$app" >"$log" 2>&1
        rc=$? secs=$(since "$t0")
        cores=$(sed -nE 's/^job: rank [0-9]+ on cpu [0-9]+ \(APIC id [0-9]+, core ([0-9]+)\)$/\1/p' "$log" |
            sort -u | wc -l)
        if [ $rc != 0 ]; then
            bad "smt_job" "exit code $rc (${secs}s)" "$log"
        elif [ "$cores" != 4 ]; then
            bad "smt_job" "4 ranks on $cores distinct cores, not 4 (${secs}s)" "$log"
            grep '^job: rank' "$log" | sed 's/^/    | /'
        else
            ok "smt_job (4 ranks on 4x4 threads: 4 distinct cores) (${secs}s)"
        fi
    fi
fi

# An MPI conformance program, 4 ranks on one 4-CPU knl node, against Open MPI's output.
if want mpi; then
    out=$logdir/mpi.log
    t0=$(date +%s%N)
    B=$K UKRUN_BOARD=knl MPI_NP=4 MPI_UK_CONFIGS=1x4 MPI_UK_POLICY_PROGS=none \
        tests/mpi/run.sh p2p_basic >"$out" 2>&1
    secs=$(since "$t0")
    while read -r verdict rest; do
        case $verdict in
        PASS) ok "mpi/$rest [knl]" ;;
        FAIL) bad "mpi/$rest [knl]" "see $out" ;;
        esac
    done < <(grep -E '^(PASS|FAIL) ' "$out")
    grep -qE '^(PASS|FAIL) ' "$out" || bad "mpi [knl]" "tests/mpi/run.sh ran nothing (${secs}s)" "$out"
    echo "    (mpi part: ${secs}s)"
fi

# 64 ranks on one 64-CPU node (by default: KNL_MPI64=0 leaves it out). Not through
# tests/mpi/run.sh: its filter matches every program with "colls" in the name, and its
# ukrun gives a node 512 MiB, too little for 64 ranks of colls (malloc fails in rank 31).
if [ "${KNL_MPI64:-1}" = 1 ] && want mpi64; then
    name="mpi64/colls (-n 64 --smp 64 on one knl node)"
    ref=$K/mpi-ref/colls.64.out out=$logdir/mpi64.out log=$logdir/mpi64.log
    t0=$(date +%s%N)
    mkdir -p "$K/mpi-ref/bin" "$K/mpi-uk/bin"
    if [ ! -s "$ref" ] || [ tests/mpi/progs/colls.c -nt "$ref" ]; then
        flags=(--oversubscribe --bind-to none --mca btl self,vader)
        [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
        mpicc -std=c99 -O2 tests/mpi/progs/colls.c -o "$K/mpi-ref/bin/colls" >"$log" 2>&1 &&
            timeout -k 5 300 mpirun "${flags[@]}" -np 64 "$K/mpi-ref/bin/colls" >"$ref" 2>>"$log" ||
            rm -f "$ref"
    fi
    if [ ! -s "$ref" ]; then
        bad "$name" "no Open MPI reference (mpirun -np 64 failed)" "$log"
    elif ! UKMPI_BUILD=$PWD/$K mpi/bin/ukmpicc -O2 tests/mpi/progs/colls.c \
        -o "$K/mpi-uk/bin/colls" >"$log" 2>&1; then
        bad "$name" "ukmpicc failed" "$log"
    else
        qemu/ukrun --board knl -n 64 --smp 64 --mem 2G --timeout 300 "$K/mpi-uk/bin/colls" \
            >"$log" 2>&1
        rc=$?
        sed -nE 's/^\[0\] //p' "$log" >"$out"
        if [ $rc != 0 ]; then
            bad "$name" "exit code $rc ($(since "$t0")s)" "$log"
        elif ! diff -q "$ref" "$out" >/dev/null; then
            bad "$name" "rank 0's output differs from Open MPI's"
            diff -u "$ref" "$out" | head -n 20 | sed 's/^/    diff| /'
        else
            ok "$name ($(since "$t0")s)"
        fi
    fi
fi

# The same program as a job inside a GRUB ISO, booted through the firmware: the initrd
# packed as qemu/ukrun packs it (job.conf, the image, the file tree fs/: empty here).
if want grub_iso; then
    log=$logdir/grub_iso_mpi4.log work=$logdir/iso
    img=$K/mpi-uk/bin/p2p_basic
    rm -rf "$work" && mkdir -p "$work/fs"
    if [ ! -f "$img" ]; then
        bad "grub_iso_mpi4" "no $img (the mpi part builds it)"
    else
        cp "$img" "$work/p2p_basic"
        printf 'image=p2p_basic\nsize=4\nnodes=1\n' >"$work/job.conf"
        (cd "$work" && printf '%s\n' job.conf p2p_basic | cpio -o -H newc --quiet >initrd.cpio)
        t0=$(date +%s%N)
        if boards/knl/mkiso.sh "$work/job.iso" "$K/uk/ukernel-mb.bin" "$work/initrd.cpio" \
            -- node=0 nodes=1 >"$log" 2>&1; then
            qemu/ukboot --board knl --smp 4 --timeout 90 "$work/job.iso" >"$log" 2>&1
            check "grub_iso_mpi4 (GRUB ISO from the CD drive, 4 ranks)" "$log" $? "$(since "$t0")" \
                "^ukmpi unikernel, booted by Multiboot2;" "^cpus: 4 online .*, x2APIC," \
                "^\[0\] # conformance p2p_basic: [0-9]+ checks, 0 failed$" \
                "^job: 4 ranks on node 0 finished, exit code 0"
        else
            bad "grub_iso_mpi4" "boards/knl/mkiso.sh failed" "$log"
        fi
    fi
    log=$logdir/grub_iso_mb1.log
    t0=$(date +%s%N)
    if MKISO_MULTIBOOT=1 boards/knl/mkiso.sh "$work/mb1.iso" "$K/uk/ukernel-test-mb.bin" \
        -- test=x2apic targs=4 >"$log" 2>&1; then
        qemu/ukboot --board knl --smp 4 --timeout 90 "$work/mb1.iso" >"$log" 2>&1
        check "grub_iso_mb1 (GRUB ISO, Multiboot1, KTEST x2apic)" "$log" $? "$(since "$t0")" \
            "^ukmpi unikernel, booted by Multiboot;" "^x2apic: all ok$"
    else
        bad "grub_iso_mb1" "boards/knl/mkiso.sh failed" "$log"
    fi
fi
finish
