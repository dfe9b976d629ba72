# Test 1: our impi-server with two LAM clients (2 + 2 procs) on loopback. Client 0
# advertises 127.0.0.2 and client 1 127.0.0.1, so that LAM's accept-side source-IP check
# matches (spec §13.4).
t_loopback() {
    lam_boot A ""
    lam_boot B ""
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
