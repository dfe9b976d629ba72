# Test 4: bad input ends the job cleanly, with a clear message and without a hang. The
# misbehaving peer is tests/interop/impi_fake_client.py; a real LAM client sits on the
# other side and its job must end before the safety timeout (its exit status is LAM's
# business: LAM 7.1.4 sometimes exits 0 after aborting).

# Server case: LAM client 0 on loopback plus a fake client 1 in mode $1; the server must
# exit 1 with message $2 and LAM must not hang.
bad_server_case() {
    local mode=$1 msg=$2 pre="badinput/server-$1" L="$WORK/log/bad-server-$1"
    # The stall limit is the thing under test only in the stall case; elsewhere it must
    # not race LAM's own start-up.
    local limit=30
    [ "$mode" = stall ] && limit=3
    start_daemon "" "$L.log" "$SERVER_BIN" -server 2 -host 127.0.0.1 -timeout $limit ||
        { bad "$pre"; return; }
    local spid=$DAEMON_PID srv rs ra rf
    srv=$(head -n1 "$L.log.out")
    # A fresh LAM universe per case: after an aborted IMPI job a universe may not start
    # the next one reliably, and that must not be mistaken for the server's doing.
    lam_boot "S$mode" ""
    LAMU_A="S$mode" LAM_TIMEOUT=60 start_client A 0 "" 127.0.0.2 "$srv" 1 suite
    local a=$MPIRUN_PID
    timeout 30 python3 "$ROOT/tests/interop/impi_fake_client.py" "$srv" 1 "$mode" \
        >"$L.fake" 2>&1 &
    local f=$!
    PIDS+=("$f")
    wait_rc $spid rs
    [ "$mode" = stall ] || wait_rc $f rf
    kill "$f" 2>/dev/null
    wait_rc $a ra
    if [ "$rs" = 1 ] && grep -q "$msg" "$L.log"; then
        ok "$pre: $(grep -o 'error: .*' "$L.log" | head -n1)"
    else
        bad "$pre" "server rc=$rs; $(tail -n2 "$L.log")"
    fi
    [ "$ra" != 124 ] && ok "$pre/lam-client-ended-without-hang" ||
        bad "$pre/lam-client-ended-without-hang" "mpirun rc=$ra"
    lam_clean_all
}

# Relay case: LAM client A behind the relay, a fake client 1 in the global namespace in
# host mode $1; the relay must exit 1 with message $2 and LAM A must not hang.
bad_relay_case() {
    local mode=$1 msg=$2 pre="badinput/relay-$1" L="$WORK/log/bad-relay-$1"
    start_daemon ${NSP}G "$L-server.log" "$SERVER_BIN" -server 2 -host 10.77.2.2 ||
        { bad "$pre"; return; }
    local spid=$DAEMON_PID srv relay rr ra rs
    srv=$(head -n1 "$L-server.log.out")
    start_daemon ${NSP}F1 "$L-relay.log" "$RELAY_BIN" -private 10.77.1.101 \
        -global 10.77.2.101 -server "$srv" -timeout 20 || { bad "$pre"; return; }
    local rpid=$DAEMON_PID
    relay=$(head -n1 "$L-relay.log.out")
    LAMU_A=XA LAM_TIMEOUT=60 start_client A 0 ${NSP}A 10.77.1.2 "$relay" 2 suite
    local a=$MPIRUN_PID
    ip netns exec ${NSP}G timeout 30 python3 "$ROOT/tests/interop/impi_fake_client.py" "$srv" 1 \
        "$mode" 10.77.2.2 >"$L.fake" 2>&1 &
    local f=$!
    PIDS+=("$f")
    wait_rc $rpid rr
    # LAM 7.1.4 survives the loss of a host connection ("Closing connection (good luck)")
    # and its procs may then wait forever: once the relay has ended the job, LAM's own
    # lamclean ends the LAM side. The check is that nothing is left hanging.
    lam_clean_all
    wait_rc $a ra
    kill "$f" "$spid" 2>/dev/null
    wait_rc $spid rs
    if [ "$rr" = 1 ] && grep -q "$msg" "$L-relay.log"; then
        ok "$pre: $(grep -o 'error: .*' "$L-relay.log" | head -n1)"
    else
        bad "$pre" "relay rc=$rr; $(tail -n3 "$L-relay.log")"
    fi
    [ "$ra" != 124 ] && ok "$pre/lam-job-ended-without-hang" ||
        bad "$pre/lam-job-ended-without-hang" "mpirun rc=$ra"
}

t_badinput() {
    bad_server_case garbage "unknown startup command"
    bad_server_case truncated "truncated"
    bad_server_case badlabel "unknown COLL label"
    bad_server_case early-close "disconnected before FINI"
    bad_server_case stall "startup stalled"
    mk_topology 1
    lam_boot XA ${NSP}A
    bad_relay_case host-unknown-src "unknown source proc"
    bad_relay_case host-unknown-dest "unknown destination proc"
    bad_relay_case host-truncated "closed inside a packet"
    bad_relay_case host-killed "closed inside a packet"
}
