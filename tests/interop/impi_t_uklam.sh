# Test uk_lam (issue 13, test 1): one unikernel node (2 ranks, IMPI client 0) and LAM (2
# procs, client 1) as one MPI_COMM_WORLD through impi-server, run by the entry point
# tests/interop/uk-with-lam.sh with tests/interop/uk_lam_prog.c built for both sides.
# Test uk_lam_2nodes (test 2): two unikernel nodes of 2 ranks, two IMPI hosts in one client.
# Test uk_lam_relay (test 3): the seed's topology: the unikernel cluster (2 nodes) on its
# private hub behind impi-relay, LAM and impi-server on the global network
# (uk-with-lam.sh --relay).
# Test uk_lam_3clients (test 4): two unikernel clusters, each behind its own relay (IMPI
# clients 0 and 1), and LAM (client 2): p2p between every pair of clients through one or two
# relays, and every collective; the reduce results at LAM roots go unchecked, since LAM
# 7.1.4 combines only one other client's partial there (lam-reduce-broken, uk_lam_prog.c).
# UK_LAM_MODE (p2p, coll or all; default all) chooses the program's cases; UK_LAM_NODES
# the unikernel nodes of uk_lam (default 1) and uk_lam_relay (default 2). Output of a run:
# $WORK/log/<test>.log.
t_uk_lam() { uk_lam_case uk_lam --uk-nodes "${UK_LAM_NODES:-1}"; }
t_uk_lam_2nodes() { uk_lam_case uk_lam_2nodes --uk-nodes 2; }
t_uk_lam_relay() { uk_lam_case uk_lam_relay --relay --uk-nodes "${UK_LAM_NODES:-2}"; }
t_uk_lam_3clients() { UK_LAM_ARGS=lam-reduce-broken uk_lam_case uk_lam_3clients --relay --uk-clusters 2; }

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
    "$ROOT/tests/interop/uk-with-lam.sh" "$@" -v "$img" \
        "$ROOT/tests/interop/uk_lam_prog.c" "$mode" ${UK_LAM_ARGS:-} >"$log" 2>&1
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

# Test ukrun_impi (no QEMU, no LAM): qemu/ukrun's IMPI options without booting anything (--dry-run): each
# mistake is refused with exit 2 and a message naming it; a good command line puts exactly
# the impi_* keys the kernel parses into job.conf and runs the one node through uknodes.
t_ukrun_impi() {
    local app=$WORK/ukrun-app kernel=$WORK/ukrun-kernel out rc args expect
    touch "$app" "$kernel"
    local ok_srv=(--impi-server 10.0.0.254:4711 --impi-client 0 --hub-tap t0)
    # "expected message|options..." per mistake
    local cases=(
        "go together|--impi-server 10.0.0.254:1 --hub-tap t0"
        "go together|--impi-client 1 --hub-tap t0"
        "dotted IPv4|--impi-server 10.0.0.256:1 --impi-client 0 --hub-tap t0"
        "dotted IPv4|--impi-server 10.0.0.01:1 --impi-client 0 --hub-tap t0"
        "dotted IPv4|--impi-server host:1 --impi-client 0 --hub-tap t0"
        "dotted IPv4|--impi-server 10.0.0.1 --impi-client 0 --hub-tap t0"
        "1..65535|--impi-server 10.0.0.1:0 --impi-client 0 --hub-tap t0"
        "1..65535|--impi-server 10.0.0.1:65536 --impi-client 0 --hub-tap t0"
        "0..31|--impi-server 10.0.0.1:1 --impi-client 32 --hub-tap t0"
        "0..31|--impi-server 10.0.0.1:1 --impi-client x --hub-tap t0"
        "none or key|--impi-server 10.0.0.1:1 --impi-client 0 --impi-auth KEY --hub-tap t0"
        "needs --impi-key|--impi-server 10.0.0.1:1 --impi-client 0 --impi-auth key --hub-tap t0"
        "needs --impi-auth key|--impi-server 10.0.0.1:1 --impi-client 0 --impi-key 5 --hub-tap t0"
        "decimal|--impi-server 10.0.0.1:1 --impi-client 0 --impi-auth key --impi-key 0x5 --hub-tap t0"
        "decimal|--impi-server 10.0.0.1:1 --impi-client 0 --impi-auth key --impi-key 18446744073709551616 --hub-tap t0"
        "needs --hub-tap|--impi-server 10.0.0.1:1 --impi-client 0"
        "needs --hub-tap|--hub-netns ns0"
    )
    local c bad_cases=0
    for c in "${cases[@]}"; do
        expect=${c%%|*}
        read -ra args <<<"${c#*|}"
        out=$(UKRUN_KERNEL=$kernel "$ROOT/qemu/ukrun" --dry-run "${args[@]}" "$app" 2>&1)
        rc=$?
        if [ "$rc" != 2 ] || [[ $out != *"$expect"* ]]; then
            echo "  ukrun ${args[*]}: exit $rc, said: $out (expected exit 2 and '$expect')"
            bad_cases=$((bad_cases + 1))
        fi
    done
    [ "$bad_cases" = 0 ] && ok ukrun_impi/mistakes-refused ||
        bad ukrun_impi/mistakes-refused "$bad_cases of ${#cases[@]} accepted or unclear"

    out=$(UKRUN_KERNEL=$kernel "$ROOT/qemu/ukrun" --dry-run -n 2 --impi-server 10.0.0.254:65535 \
        --impi-client 31 --impi-auth key --impi-key 18446744073709551615 --hub-tap t0 \
        --hub-netns ns0 "$app" 2>&1)
    rc=$?
    expect="impi_server=10.0.0.254:65535
impi_client=31
impi_auth=key
impi_key=18446744073709551615"
    if [ "$rc" = 0 ] && [ "$(grep '^impi_' <<<"$out")" = "$expect" ] &&
        [[ $out == *"uknodes --nodes 1 "*"--tap t0 --netns ns0 "* ]]; then
        ok ukrun_impi/job-conf-keys
    else
        bad ukrun_impi/job-conf-keys "exit $rc: $out"
    fi
    out=$(UKRUN_KERNEL=$kernel "$ROOT/qemu/ukrun" --dry-run -n 2 "${ok_srv[@]}" "$app" 2>&1)
    [ "$(grep '^impi_' <<<"$out")" = $'impi_server=10.0.0.254:4711\nimpi_client=0\nimpi_auth=none' ] &&
        ok ukrun_impi/auth-none-by-default || bad ukrun_impi/auth-none-by-default "$out"
}
