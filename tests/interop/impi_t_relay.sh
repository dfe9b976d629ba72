# Test 2: the seed's topology in network namespaces. A private network (10.77.1.0/24,
# a bridge in namespace <ns>A) holds LAM client A; a global network (10.77.2.0/24, bridge in
# <ns>G) holds LAM client B and impi-server; front-end namespaces <ns>F<k> have one address
# on each and run impi-relay. A cannot reach the global network at all: everything
# crosses the relay. All addresses exist only inside these namespaces.

# Builds the topology with K front-ends.
mk_topology() {
    local K=$1 k
    mkns ${NSP}A
    mkns ${NSP}G
    ip -n ${NSP}A link add br0 type bridge
    ip -n ${NSP}G link add br0 type bridge
    ip -n ${NSP}A addr add 10.77.1.2/24 dev br0
    ip -n ${NSP}G addr add 10.77.2.2/24 dev br0
    ip -n ${NSP}A link set br0 up
    ip -n ${NSP}G link set br0 up
    for k in $(seq 1 "$K"); do
        mkns ${NSP}F$k
        ip link add priv netns ${NSP}F$k type veth peer name f${k}p netns ${NSP}A
        ip link add glob netns ${NSP}F$k type veth peer name f${k}g netns ${NSP}G
        ip -n ${NSP}A link set f${k}p master br0 up
        ip -n ${NSP}G link set f${k}g master br0 up
        ip -n ${NSP}F$k addr add 10.77.1.$((100 + k))/24 dev priv
        ip -n ${NSP}F$k addr add 10.77.2.$((100 + k))/24 dev glob
        ip -n ${NSP}F$k link set priv up
        ip -n ${NSP}F$k link set glob up
    done
}

# Runs one job A(<ns>A) <-> relay(s) <-> B(<ns>G) with $1 procs per client and program
# arguments $3...; name prefix $2 (logs $WORK/log/$2-*). K relays from $RELAYS (default 1).
# Prints nothing on success; sets JOB_RA/JOB_RB (the clients' mpirun status, 124 = hung),
# JOB_RS (server) and JOB_RR (the relays' statuses, in trunk order). Returns 1 if a daemon
# did not start (after reporting it).
relay_run() {
    local np=$1 pre=$2 K=${RELAYS:-1} k
    shift 2
    JOB_RA= JOB_RB= JOB_RS= JOB_RR=()
    start_daemon ${NSP}G "$WORK/log/$pre-server.log" "$SERVER_BIN" -server 2 -host 10.77.2.2 -v \
        ${SERVER_ARGS:-} ||
        { bad "$pre/server-start"; return 1; }
    local spid=$DAEMON_PID srv rpid=()
    srv=$(head -n1 "$WORK/log/$pre-server.log.out")
    local targs=()
    [ "$K" -gt 1 ] && targs=(-trunks "$K")
    start_daemon ${NSP}F1 "$WORK/log/$pre-relay0.log" "$RELAY_BIN" -private 10.77.1.101 \
        -global 10.77.2.101 -server "$srv" "${targs[@]}" -v ${RELAY_ARGS:-} ||
        { bad "$pre/relay-start"; return 1; }
    rpid+=("$DAEMON_PID")
    local relay ctrl
    relay=$(head -n1 "$WORK/log/$pre-relay0.log.out")
    for k in $(seq 2 "$K"); do
        ctrl=$(sed -n 's/^trunk control //p' "$WORK/log/$pre-relay0.log.out")
        start_daemon ${NSP}F$k "$WORK/log/$pre-relay$((k - 1)).log" "$RELAY_BIN" \
            -private 10.77.1.$((100 + k)) -global 10.77.2.$((100 + k)) -trunk-of "$ctrl" \
            -trunk-index $((k - 1)) -v || { bad "$pre/relay$k-start"; return 1; }
        rpid+=("$DAEMON_PID")
    done
    CLIENT_AUTH=${AUTH_A:-IMPI_AUTH_NONE=} start_client A 0 ${NSP}A 10.77.1.2 "$relay" "$np" "$@"
    local a=$MPIRUN_PID
    CLIENT_AUTH=${AUTH_B:-IMPI_AUTH_NONE=} start_client B 1 ${NSP}G 10.77.2.2 "$srv" "$np" "$@"
    local b=$MPIRUN_PID rr
    wait_rc $a JOB_RA
    wait_rc $b JOB_RB
    # A failed or hung job leaves LAM's impid daemons holding their server and relay
    # connections: end them now, so that the server and relays end at once (they fail the
    # job when a peer drops) instead of at their safety timeout.
    [ "$JOB_RA$JOB_RB" = 00 ] || lam_clean_all
    wait_rc $spid JOB_RS
    for k in "${!rpid[@]}"; do
        wait_rc "${rpid[$k]}" rr
        JOB_RR+=("$rr")
    done
    cp "$WORK/log/mpirun-A.log" "$WORK/log/$pre-mpirun-A.log"
    cp "$WORK/log/mpirun-B.log" "$WORK/log/$pre-mpirun-B.log"
}

# relay_run, then one check per CHECK line of rank 0, per client and per daemon.
relay_job() {
    local pre=$2 k
    relay_run "$@" || return
    count_checks "$pre" "$WORK/log/mpirun-A.log"
    grep -q '^CHECK ' "$WORK/log/mpirun-A.log" || bad "$pre/checks" "no output"
    [ "$JOB_RA" = 0 ] && ok "$pre/client-A-exit" || bad "$pre/client-A-exit" "rc=$JOB_RA"
    [ "$JOB_RB" = 0 ] && ok "$pre/client-B-exit" || bad "$pre/client-B-exit" "rc=$JOB_RB"
    [ "$JOB_RS" = 0 ] && ok "$pre/server-exit0" || bad "$pre/server-exit" "rc=$JOB_RS"
    for k in "${!JOB_RR[@]}"; do
        [ "${JOB_RR[$k]}" = 0 ] && ok "$pre/relay$k-exit0" || bad "$pre/relay$k-exit" "rc=${JOB_RR[$k]}"
    done
    if [ "$JOB_RA$JOB_RB$JOB_RS" != 000 ]; then
        tail -n 15 "$WORK/log/mpirun-A.log" "$WORK/log/mpirun-B.log" "$WORK/log/$pre-server.log" \
            "$WORK/log/$pre-relay"*.log
    fi
}

t_relay() {
    mk_topology 1
    lam_boot RA ${NSP}A
    lam_boot RB ${NSP}G
    # Universe names: the relay tests use their own LAM sessions (RA/RB) in the namespaces.
    LAMU_A=RA LAMU_B=RB relay_job 2 relay suite ssend
    grep -q 'forwarded private->global [1-9]' "$WORK/log/relay-relay0.log.out" &&
        ok relay/relay-counted-traffic || bad relay/relay-counted-traffic
    # KEY authentication on both hops, with different keys (AUTH is per hop).
    AUTH_A=IMPI_AUTH_KEY=777 AUTH_B=IMPI_AUTH_KEY=1234567 SERVER_ARGS="-auth key -key 1234567" \
        RELAY_ARGS="-auth key -key 777 -server-auth key -server-key 1234567" \
        LAMU_A=RA LAMU_B=RB relay_job 1 relay-key pairs 1
    # Regression: with end-to-end PROTOACKs this exchange deadlocked inside LAM.
    LAMU_A=RA LAMU_B=RB relay_job 2 relay-a2a a2a 2 1048576 10
}
