#!/usr/bin/env bash
# Runs each test suite given as name=command, shows its output, adds up the closing
# lines ("N passed, N failed") and prints the total as the last line. Exits non-zero if
# any suite failed, crashed, or printed no closing line (a suite that tested nothing).
set -uo pipefail
cd "$(dirname "$0")/.."
total_p=0 total_f=0 bad=()
for spec in "$@"; do
    name=${spec%%=*}
    cmd=${spec#*=}
    echo "=== suite $name: $cmd"
    out=$(mktemp)
    # Word splitting of cmd is intended: it is a command line from the Makefile.
    # shellcheck disable=SC2086
    bash -c "$cmd" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    line=$(grep -E '(^|: )[0-9]+ passed, [0-9]+ failed' "$out" | tail -n1)
    rm -f "$out"
    if [ -z "$line" ]; then
        echo "=== suite $name: no closing line (rc=$rc): counted as one failure"
        total_f=$((total_f + 1)); bad+=("$name"); continue
    fi
    p=$(sed -E 's/.*(^|[ :])([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
    f=$(sed -E 's/.*(^|[ :])([0-9]+) passed, ([0-9]+) failed.*/\3/' <<<"$line")
    total_p=$((total_p + p)); total_f=$((total_f + f))
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
        echo "=== suite $name exited $rc with no failed test: counted as one failure"
        total_f=$((total_f + 1))
    fi
    { [ "$rc" != 0 ] || [ "$f" != 0 ]; } && bad+=("$name")
done
[ ${#bad[@]} = 0 ] || echo "failing suites: ${bad[*]}"
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ]
