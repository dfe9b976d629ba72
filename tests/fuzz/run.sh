#!/usr/bin/env bash
# Short bounded libFuzzer runs of every fuzz target (IMPI's, the MPI engine's receive path,
# the kernel's image loader and initrd reader), starting from the in-tree seed corpus
# (copied, so the tree's corpus never grows) or, for the kernel's, from the crafted files
# tests/fuzz/pvas_images.c writes at run time.
# FUZZ_SECONDS per target (default 8). Closing line: "fuzz: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
secs=${FUZZ_SECONDS:-8}
pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# binary:corpus (tests/fuzz/corpus/<corpus>, or written by pvas-images below)
for bc in impi_fuzz_startup:startup impi_fuzz_packet:packet impi_fuzz_coll_reply:coll_reply \
    mpe_fuzz_rx:mpe_rx pvas_fuzz_image:pvas_image cpio_fuzz:cpio; do
    bin=$B/fuzz/${bc%%:*} t=${bc#*:}
    mkdir -p "$work/$t"
    case $t in
    pvas_image) "$B/fuzz/pvas-images" "$work/$t" ;;
    cpio) "$B/fuzz/pvas-images" --cpio "$work/$t" ;;
    *) cp tests/fuzz/corpus/$t/* "$work/$t/" ;;
    esac
    if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$work/" "$work/$t" >"$work/$t.log" 2>&1; then
        echo "PASS fuzz $t ($(grep -o 'Done [0-9]* runs' "$work/$t.log"))"
        pass=$((pass + 1))
    else
        echo "FAIL fuzz $t"
        tail -n 30 "$work/$t.log"
        fail=$((fail + 1))
    fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail = 0 ]
