# tests/bench/impi_topo.sh (sourced, bash, after tests/interop/impi_lib.sh): the namespace
# topology and the job runner of the IMPI benchmarks, shared by tests/bench/impi.bench.sh
# and tests/bench/uk_impi.bench.sh (its LAM<->LAM baseline).
# Topology: <ns>A (private 10.77.1.0/24, client A), <ns>B (private 10.77.3.0/24, client B),
# <ns>G (global 10.77.2.0/24, impi-server); A and B also have a global address for the
# direct path. Front-ends: F1 (A side), F3 (A side, second trunk), F2 (B side).
# bench_job runs $PROG (a LAM build) on both clients.

# A bridge namespace with one address; front-end namespaces joined to two bridges.
bench_topology() {
    local ns
    for ns in ${NSP}A ${NSP}B ${NSP}G; do
        mkns $ns
        ip -n $ns link add br0 type bridge
        ip -n $ns link set br0 up
    done
    ip -n ${NSP}A addr add 10.77.1.2/24 dev br0
    ip -n ${NSP}B addr add 10.77.3.2/24 dev br0
    ip -n ${NSP}G addr add 10.77.2.2/24 dev br0
    # direct global addresses of A and B
    ip link add gA netns ${NSP}A type veth peer name pA netns ${NSP}G
    ip link add gB netns ${NSP}B type veth peer name pB netns ${NSP}G
    ip -n ${NSP}G link set pA master br0 up
    ip -n ${NSP}G link set pB master br0 up
    ip -n ${NSP}A addr add 10.77.2.4/24 dev gA
    ip -n ${NSP}B addr add 10.77.2.3/24 dev gB
    ip -n ${NSP}A link set gA up
    ip -n ${NSP}B link set gB up
    fe ${NSP}F1 ${NSP}A 10.77.1.101 10.77.2.101
    fe ${NSP}F2 ${NSP}B 10.77.3.101 10.77.2.102
    fe ${NSP}F3 ${NSP}A 10.77.1.103 10.77.2.103
}
fe() { # namespace private-bridge-ns private-ip global-ip
    mkns "$1"
    ip link add priv netns "$1" type veth peer name "${1}p" netns "$2"
    ip link add glob netns "$1" type veth peer name "${1}g" netns ${NSP}G
    ip -n "$2" link set "${1}p" master br0 up
    ip -n ${NSP}G link set "${1}g" master br0 up
    ip -n "$1" addr add "$3/24" dev priv
    ip -n "$1" addr add "$4/24" dev glob
    ip -n "$1" link set priv up
    ip -n "$1" link set glob up
}

# bench_job NAME NP A-PATH B-PATH prog-args...: A-PATH direct|relay|trunk2, B-PATH
# direct|relay. Rank 0's output ends up in $WORK/log/mpirun-A.log.
bench_job() {
    local name=$1 np=$2 ap=$3 bp=$4 srv asrv bsrv aip bip p pids=()
    shift 4
    start_daemon ${NSP}G "$WORK/log/$name-server.log" "$SERVER_BIN" -server 2 -host 10.77.2.2 ||
        return 1
    pids+=("$DAEMON_PID")
    srv=$(head -n1 "$WORK/log/$name-server.log.out")
    asrv=$srv aip=10.77.2.4 bsrv=$srv bip=10.77.2.3
    if [ "$ap" != direct ]; then
        local t=()
        [ "$ap" = trunk2 ] && t=(-trunks 2)
        start_daemon ${NSP}F1 "$WORK/log/$name-rA.log" "$RELAY_BIN" -private 10.77.1.101 \
            -global 10.77.2.101 -server "$srv" "${t[@]}" || return 1
        pids+=("$DAEMON_PID")
        asrv=$(head -n1 "$WORK/log/$name-rA.log.out") aip=10.77.1.2
        if [ "$ap" = trunk2 ]; then
            start_daemon ${NSP}F3 "$WORK/log/$name-rA2.log" "$RELAY_BIN" -private 10.77.1.103 \
                -global 10.77.2.103 -trunk-index 1 \
                -trunk-of "$(sed -n 's/^trunk control //p' "$WORK/log/$name-rA.log.out")" ||
                return 1
            pids+=("$DAEMON_PID")
        fi
    fi
    if [ "$bp" = relay ]; then
        start_daemon ${NSP}F2 "$WORK/log/$name-rB.log" "$RELAY_BIN" -private 10.77.3.101 \
            -global 10.77.2.102 -server "$srv" || return 1
        pids+=("$DAEMON_PID")
        bsrv=$(head -n1 "$WORK/log/$name-rB.log.out") bip=10.77.3.2
    fi
    if [ "$1" = fake ]; then # two scripted IMPI hosts instead of LAM (see below)
        ip netns exec ${NSP}A timeout 120 python3 tests/interop/impi_fake_client.py "$asrv" 0 \
            "$2" "$aip" >"$WORK/log/$name.out" 2>&1 &
        local a=$!
        ip netns exec ${NSP}B timeout 120 python3 tests/interop/impi_fake_client.py "$bsrv" 1 \
            "$2" "$bip" >"$WORK/log/$name.b" 2>&1
        wait "$a"
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
        return
    fi
    LAMU_A=BA start_client A 0 ${NSP}A "$aip" "$asrv" "$np" "$@"
    local a=$MPIRUN_PID
    LAMU_B=BB start_client B 1 ${NSP}B "$bip" "$bsrv" "$np" "$@"
    wait "$MPIRUN_PID"
    wait "$a"
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    cp "$WORK/log/mpirun-A.log" "$WORK/log/$name.out"
}
