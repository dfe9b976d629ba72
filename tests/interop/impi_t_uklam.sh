# Test uk_lam (issue 13, test 1): one unikernel node (2 ranks, IMPI client 0) and LAM (2
# procs, client 1) as one MPI_COMM_WORLD through impi-server, run by the entry point
# tests/interop/uk-with-lam.sh with tests/interop/uk_lam_prog.c built for both sides.
# Test uk_lam_relay (issue 13, test 3; not in the default set yet): the same with the
# unikernel behind impi-relay (uk-with-lam.sh --relay).
# UK_LAM_MODE (p2p, coll or all; default all) chooses the program's cases; UK_LAM_NODES
# (default 1) the unikernel nodes. Output of a run: $WORK/log/<test>.log.
t_uk_lam() { uk_lam_case uk_lam; }
t_uk_lam_relay() { uk_lam_case uk_lam_relay --relay; }

# Runs uk-with-lam.sh as test $1 with its options $2...
uk_lam_case() {
    local t=$1 kernel=$ROOT/$B/uk/ukernel.elf img=$WORK/uk_lam_prog log=$WORK/log/$1.log
    local mode=${UK_LAM_MODE:-all} rc line
    shift
    if [ ! -f "$kernel" ]; then
        echo "SKIP $t: $B/uk/ukernel.elf missing (make all)"
        return
    fi
    if ! "$ROOT/mpi/bin/ukmpicc" -O2 -o "$img" "$ROOT/tests/interop/uk_lam_prog.c" \
        >"$WORK/log/$t-build.log" 2>&1; then
        bad "$t/ukmpicc-build" "$(tail -n 5 "$WORK/log/$t-build.log")"
        return
    fi
    "$ROOT/tests/interop/uk-with-lam.sh" "$@" -v --uk-nodes "${UK_LAM_NODES:-1}" "$img" \
        "$ROOT/tests/interop/uk_lam_prog.c" "$mode" >"$log" 2>&1
    rc=$?
    # Rank 0's total counts the checks of every rank; every FAIL line names one.
    line=$(grep -E 'uk_lam_prog: [0-9]+ of [0-9]+ checks ok' "$log" | tail -n 1)
    if [[ $line =~ ([0-9]+)\ of\ ([0-9]+)\ checks && ${BASH_REMATCH[1]} = "${BASH_REMATCH[2]}" &&
        ${BASH_REMATCH[2]} -gt 0 ]] && ! grep -q '\] FAIL ' "$log"; then
        ok "$t/checks-$mode (${line#*uk_lam_prog: })"
    else
        bad "$t/checks-$mode" "${line:-no summary line from rank 0}"
        grep '\] FAIL ' "$log" | head -n 20
    fi
    if [ "$rc" = 0 ]; then
        ok "$t/both-sides-exit-0"
    else
        bad "$t/both-sides-exit-0" "$(grep '^uk-with-lam: unikernel side exit' "$log")"
        echo "--- last 40 lines of $log:"
        tail -n 40 "$log"
    fi
}
