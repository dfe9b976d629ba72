# Test 1: our impi-server with two LAM clients (2 + 2 procs) on loopback. Client 0
# advertises 127.0.0.2 and client 1 127.0.0.1, so that LAM's accept-side source-IP check
# matches (spec §13.4).
t_loopback() {
    lam_boot A ""
    lam_boot B ""
    t_loopback_key
    start_daemon "" "$WORK/log/server-lo.log" "$SERVER_BIN" -server 2 -host 127.0.0.1 -v ||
        { bad loopback/server-start; return; }
    local spid=$DAEMON_PID srv
    srv=$(head -n1 "$WORK/log/server-lo.log.out")
    start_client A 0 "" 127.0.0.2 "$srv" 2 suite ssend
    local a=$MPIRUN_PID
    start_client B 1 "" 127.0.0.1 "$srv" 2 suite ssend
    local b=$MPIRUN_PID
    local ra rb rs
    wait_rc $a ra
    wait_rc $b rb
    wait_rc $spid rs
    count_checks loopback "$WORK/log/mpirun-A.log"
    grep -q '^CHECK ' "$WORK/log/mpirun-A.log" || bad loopback/checks "no output"
    [ "$ra" = 0 ] && ok loopback/client0-exit || bad loopback/client0-exit "rc=$ra"
    [ "$rb" = 0 ] && ok loopback/client1-exit || bad loopback/client1-exit "rc=$rb"
    [ "$rs" = 0 ] && ok loopback/server-exit0-after-fini || bad loopback/server-exit "rc=$rs"
    if [ "$ra$rb$rs" != 000 ]; then
        tail -n 20 "$WORK/log/mpirun-A.log" "$WORK/log/mpirun-B.log" "$WORK/log/server-lo.log"
    fi
}

# Test 1b: KEY authentication (decimal key, as LAM reads IMPI_AUTH_KEY), 1 + 1 procs.
t_loopback_key() {
    start_daemon "" "$WORK/log/server-key.log" "$SERVER_BIN" -server 2 -host 127.0.0.1 \
        -auth key -key 1234567 -v || { bad loopback-key/server-start; return; }
    local spid=$DAEMON_PID srv ra rb rs
    srv=$(head -n1 "$WORK/log/server-key.log.out")
    CLIENT_AUTH=IMPI_AUTH_KEY=1234567 start_client A 0 "" 127.0.0.2 "$srv" 1 pairs 1
    local a=$MPIRUN_PID
    CLIENT_AUTH=IMPI_AUTH_KEY=1234567 start_client B 1 "" 127.0.0.1 "$srv" 1 pairs 1
    wait_rc $MPIRUN_PID rb
    wait_rc $a ra
    wait_rc $spid rs
    count_checks loopback-key "$WORK/log/mpirun-A.log"
    grep -q 'chose KEY' "$WORK/log/server-key.log" && ok loopback-key/server-chose-key ||
        bad loopback-key/server-chose-key
    [ "$ra$rb$rs" = 000 ] && ok loopback-key/exits-0 || bad loopback-key/exits "$ra $rb $rs"
}
