#!/usr/bin/env bash
# Bounded libFuzzer runs of every fuzz target (IMPI's, the MPI engine's receive paths, the
# CAD validator, the NIC's receive filter, the WaitIO codec and receive path, the kernel's
# image loader and initrd reader),
# starting from the in-tree seed corpus (copied, so the tree's corpus never grows) or, for
# the kernel's, from the crafted files tests/fuzz/pvas_images.c writes at run time.
# Closing line: "fuzz: N passed, N failed".
#   FUZZ_SECONDS      seconds per target (default 8: make test)
#   FUZZ_RUNS         executions per target instead (make fuzz: 10^6), at most
#   FUZZ_MAX_SECONDS  seconds each (default 900)
#   FUZZ_TARGETS      corpus names to run (default all)
# Each PASS line says how many executions ran in how long.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${FUZZ_RUNS:-}" ]; then
    limit=(-runs="$FUZZ_RUNS" -max_total_time="${FUZZ_MAX_SECONDS:-900}")
else
    limit=(-max_total_time="${FUZZ_SECONDS:-8}")
fi
# binary:corpus (tests/fuzz/corpus/<corpus>, or written by pvas-images below)
for bc in impi_fuzz_startup:startup impi_fuzz_packet:packet impi_fuzz_coll_reply:coll_reply \
    mpe_fuzz_rx:mpe_rx mpe_fuzz_impi:mpe_impi cad_fuzz_validate:cad_validate vnet_fuzz_frame:vnet_frame \
    wio_fuzz_wire:wio_wire wio_fuzz_rx:wio_rx pvas_fuzz_image:pvas_image cpio_fuzz:cpio \
    ukf_fuzz:ukf; do
    bin=$B/fuzz/${bc%%:*} t=${bc#*:}
    [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $t "* ]] && continue
    mkdir -p "$work/$t"
    case $t in
    pvas_image) "$B/fuzz/pvas-images" "$work/$t" ;;
    cpio) "$B/fuzz/pvas-images" --cpio "$work/$t" ;;
    *) cp tests/fuzz/corpus/$t/* "$work/$t/" ;;
    esac
    start=$(date +%s)
    if "$bin" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$work/" "$work/$t" >"$work/$t.log" 2>&1; then
        secs=$(($(date +%s) - start))
        runs=$(grep -o 'Done [0-9]* runs' "$work/$t.log" | grep -o '[0-9]*')
        echo "PASS fuzz $t (${runs:-?} runs in ${secs} s, $((${runs:-0} / (secs > 0 ? secs : 1))) per second)"
        pass=$((pass + 1))
    else
        echo "FAIL fuzz $t"
        tail -n 30 "$work/$t.log"
        fail=$((fail + 1))
    fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail = 0 ]
