#!/usr/bin/env bash
# `make check`: warnings as errors on a full rebuild, and clang-format on every C file
# we own (host-kmod/ has its own .clang-format, Linux style).
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
echo "check: build with -Werror"
if ! make -s WERROR=-Werror B=build/check all; then
    echo "check: build with -Werror failed"; rc=1
fi
echo "check: clang-format"
bad=0
while IFS= read -r f; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "  not formatted: $f"; bad=1
    fi
done < <(git ls-files '*.c' '*.h')
[ $bad = 0 ] || { echo "check: run clang-format -i on the files above"; rc=1; }
# host-kmod/: Linux style, checked by the kernel's own checkpatch.pl (mk/deps.d/60-kmod.sh).
cp=${UKMPI_CACHE:-$HOME/.cache/ukmpi}/checkpatch/scripts/checkpatch.pl
if [ -f "$cp" ]; then
    echo "check: checkpatch.pl --strict (host-kmod/)"
    while IFS= read -r f; do
        if ! out=$(perl "$cp" --strict --no-tree --terse --quiet -f "$f" 2>&1); then
            echo "$out"; rc=1
        fi
    done < <(git ls-files 'host-kmod/*.c' 'host-kmod/*.h')
else
    echo "check: no checkpatch.pl (make deps): host-kmod/ not style-checked"
fi
[ $rc = 0 ] && echo "check: ok"
exit $rc
