# Relays in jobs of any size (net/impi/README.md, "Jobs of any size"), LAM clients only,
# 2 procs per client, in one topology built by the first of these tests:
#   multi3:       LAM clients 0 and 1 directly on the global network (namespaces <ns>G,
#                 <ns>H), LAM client 2 on the private network <ns>A behind one relay
#                 (<ns>F1). "suite ssend" (p2p rank 0 <-> last = client 0 <-> client 2,
#                 the collectives over all clients), then "pairs 3" (rank i <-> i+3: the
#                 pairs of clients 0-1, 0-2 and 1-2).
#   multi3_trunk: the same job with client 2 behind two trunked relays (<ns>F1, <ns>F2):
#                 "pairs 3" and a pairwise exchange "a2a 3".
#   multi4:       LAM clients 0, 1 and 2 directly on the global network (<ns>G, <ns>H,
#                 <ns>F3), LAM client 3 behind one relay (<ns>F1): "pairs 4" (clients 0-2
#                 and 1-3) and "a2a 6" (clients 0, 1, 2 with client 3).
#   relay2relay:  a 2-client job with each client behind its own relay (<ns>A via <ns>F1,
#                 <ns>P via <ns>F3): the relays are each other's IMPI hosts on the global
#                 network.
# A LAM client behind a relay must be the highest client of a job of more than 2 (LAM
# checks accepted host connections against the first host at the source address: README),
# so a job with two LAM clusters behind relays has exactly 2 clients.
#
# LAM 7.1.4's own IMPI reduce is wrong with 3 or more clients (its linear global phase
# receives every other master's partial result into one buffer and combines only the last):
# multi3 first runs the same job with client 2 directly on the global network, and a check
# that fails there counts as passed through the relay only if it fails there too.

# The global network's extra LAM host: namespace <ns>H at 10.77.2.3 on <ns>G's bridge.
mk_global_host() {
    mkns ${NSP}H
    ip link add eth0 netns ${NSP}H type veth peer name hg netns ${NSP}G
    ip -n ${NSP}G link set hg master br0 up
    ip -n ${NSP}H addr add 10.77.2.3/24 dev eth0
    ip -n ${NSP}H link set eth0 up
}

# A second private network: namespace <ns>P (10.77.3.2, bridge) and front-end <ns>F3 with
# 10.77.3.103 on it and 10.77.2.103 on the global bridge.
mk_second_private() {
    mkns ${NSP}P
    mkns ${NSP}F3
    ip -n ${NSP}P link add br0 type bridge
    ip -n ${NSP}P addr add 10.77.3.2/24 dev br0
    ip -n ${NSP}P link set br0 up
    ip link add priv netns ${NSP}F3 type veth peer name f3p netns ${NSP}P
    ip link add glob netns ${NSP}F3 type veth peer name f3g netns ${NSP}G
    ip -n ${NSP}P link set f3p master br0 up
    ip -n ${NSP}G link set f3g master br0 up
    ip -n ${NSP}F3 addr add 10.77.3.103/24 dev priv
    ip -n ${NSP}F3 addr add 10.77.2.103/24 dev glob
    ip -n ${NSP}F3 link set priv up
    ip -n ${NSP}F3 link set glob up
}

# Builds the topology and boots the universes once per run: M0 <ns>G, M1 <ns>H, M2 <ns>A,
# M3 <ns>P, D2 <ns>F1 (multi3's direct baseline), D3 <ns>F3 (multi4's client 2).
multi_topology() {
    [ -n "${MULTI_UP:-}" ] && return
    mk_topology 2
    mk_global_host
    mk_second_private
    lam_boot M0 ${NSP}G
    lam_boot M1 ${NSP}H
    lam_boot M2 ${NSP}A
    lam_boot M3 ${NSP}P
    lam_boot D2 ${NSP}F1
    lam_boot D3 ${NSP}F3
    MULTI_UP=1
}

# Starts a client's relays: "NS PRIVATE GLOBAL" per trunk in $3..., master first; $1 is
# the log prefix, $2 the name in checks. Appends their pids to MJ_DPIDS (names to
# MJ_DNAMES) and sets MJ_TO to the address the client uses as its server.
multi_relays() {
    local pre=$1 name=$2 K=$((($# - 2) / 3)) k=0 ctrl targs=()
    shift 2
    [ "$K" -gt 1 ] && targs=(-trunks "$K")
    while [ $# -ge 3 ]; do
        if [ $k = 0 ]; then
            start_daemon "$1" "$WORK/log/$pre$k.log" "$RELAY_BIN" -private "$2" -global "$3" \
                -server "$MJ_SRV" "${targs[@]}" -v || return 1
            MJ_TO=$(head -n1 "$WORK/log/${pre}0.log.out")
            ctrl=$(sed -n 's/^trunk control //p' "$WORK/log/${pre}0.log.out")
        else
            start_daemon "$1" "$WORK/log/$pre$k.log" "$RELAY_BIN" -private "$2" -global "$3" \
                -trunk-of "$ctrl" -trunk-index $k -v || return 1
        fi
        MJ_DPIDS+=("$DAEMON_PID") MJ_DNAMES+=("$name$k")
        k=$((k + 1))
        shift 3
    done
}

# One job of ${#MC_NS[@]} LAM clients, $1 = name prefix, $2 = procs per client, program
# arguments $3... Client c runs in universe MC_U[c], namespace MC_NS[c], address MC_IP[c];
# MC_RELAY[c] is "" (directly to the server) or its relays for multi_relays. With
# MJ_BASE=LOG, a check rank 0 fails counts as passed if it failed in LOG too (see above).
# One check per CHECK line of rank 0 and per process exit; sets MJ_ALL (the clients'
# exit codes, concatenated).
multi_job() {
    local pre=$1 np=$2 n=${#MC_NS[@]} c rc
    shift 2
    start_daemon ${NSP}G "$WORK/log/$pre-server.log" "$SERVER_BIN" -server "$n" -host 10.77.2.2 \
        -v || { bad "$pre/server-start"; return; }
    local spid=$DAEMON_PID cpids=()
    MJ_SRV=$(head -n1 "$WORK/log/$pre-server.log.out")
    MJ_DPIDS=() MJ_DNAMES=()
    for c in $(seq 0 $((n - 1))); do
        MJ_TO=$MJ_SRV
        if [ -n "${MC_RELAY[$c]}" ]; then
            # shellcheck disable=SC2086
            multi_relays "$pre-c$c-relay" "client$c-relay" ${MC_RELAY[$c]} ||
                { bad "$pre/relay-start"; return; }
        fi
        start_client "${MC_U[$c]}" "$c" "${MC_NS[$c]}" "${MC_IP[$c]}" "$MJ_TO" "$np" "$@"
        cpids+=("$MPIRUN_PID")
    done
    local crc=() zeros=
    MJ_ALL=
    for c in "${!cpids[@]}"; do
        wait_rc "${cpids[$c]}" rc
        crc+=("$rc") MJ_ALL+=$rc zeros+=0
        cp "$WORK/log/mpirun-${MC_U[$c]}.log" "$WORK/log/$pre-mpirun-$c.log"
    done
    # A failed job leaves impid daemons holding their connections: end them (see relay_run).
    [ "$MJ_ALL" = "$zeros" ] || lam_clean_all
    local log=$WORK/log/$pre-mpirun-0.log name res
    while read -r _ name res; do
        if [ "$res" = ok ]; then
            ok "$pre/$name"
        elif [ -n "${MJ_BASE:-}" ] && grep -q "^CHECK $name FAIL" "$MJ_BASE"; then
            ok "$pre/$name (fails directly between the same LAM clients too: LAM's defect)"
        else
            bad "$pre/$name"
        fi
    done < <(grep '^CHECK ' "$log")
    grep -q '^CHECK ' "$log" || bad "$pre/checks" "no output"
    for c in "${!crc[@]}"; do
        [ "${crc[$c]}" = 0 ] && ok "$pre/client$c-exit" || bad "$pre/client$c-exit" "rc=${crc[$c]}"
    done
    wait_rc $spid rc
    [ "$rc" = 0 ] && ok "$pre/server-exit0" || bad "$pre/server-exit" "rc=$rc"
    for c in "${!MJ_DPIDS[@]}"; do
        wait_rc "${MJ_DPIDS[$c]}" rc
        [ "$rc" = 0 ] && ok "$pre/${MJ_DNAMES[$c]}-exit0" || bad "$pre/${MJ_DNAMES[$c]}-exit" "rc=$rc"
    done
    if [ "$MJ_ALL" != "$zeros" ]; then
        tail -n 15 "$WORK/log/$pre-mpirun-"*.log "$WORK/log/$pre-server.log" \
            "$WORK/log/$pre-"*relay*.log
    fi
}

# The three global-network clients: 0 <ns>G, 1 <ns>H, 2 (relayed: <ns>A, direct: <ns>F1).
multi3_clients() {
    MC_U=(M0 M1 M2)
    MC_NS=(${NSP}G ${NSP}H ${NSP}A)
    MC_IP=(10.77.2.2 10.77.2.3 10.77.1.2)
    MC_RELAY=("" "" "$*")
}

t_multi3() {
    multi_topology
    # The baseline: client 2 directly on the global network (its checks are not counted).
    MC_U=(M0 M1 D2)
    MC_NS=(${NSP}G ${NSP}H ${NSP}F1)
    MC_IP=(10.77.2.2 10.77.2.3 10.77.2.101)
    MC_RELAY=("" "" "")
    local tp=$TP tf=$TF
    LAM_TIMEOUT=50 multi_job multi3-direct 2 suite ssend >/dev/null
    TP=$tp TF=$tf
    [ "$MJ_ALL" = 000 ] && grep -q '^SUMMARY' "$WORK/log/multi3-direct-mpirun-0.log" &&
        ok multi3/direct-baseline-ran || bad multi3/direct-baseline-ran
    multi3_clients ${NSP}F1 10.77.1.101 10.77.2.101
    MJ_BASE=$WORK/log/multi3-direct-mpirun-0.log LAM_TIMEOUT=50 multi_job multi3 2 suite ssend
    LAM_TIMEOUT=50 multi_job multi3-pairs 2 pairs 3
    # The relay serves both external clients: its tables show procs of both.
    local out=$WORK/log/multi3-c2-relay0.log.out
    grep -q 'external-proc .*(client 0)' "$out" && grep -q 'external-proc .*(client 1)' "$out" &&
        ok multi3/relay-maps-both-external-clients || bad multi3/relay-maps-both-external-clients
}

t_multi3_trunk() {
    multi_topology
    multi3_clients ${NSP}F1 10.77.1.101 10.77.2.101 ${NSP}F2 10.77.1.102 10.77.2.102
    LAM_TIMEOUT=50 multi_job multi3-trunk 2 pairs 3
    LAM_TIMEOUT=50 multi_job multi3-trunk-a2a 2 a2a 3 4096 10
    # Trunk k owns proc k of each external client (2 procs each): both relays map procs of
    # both external clients.
    local k
    for k in 0 1; do
        [ "$(grep -c "external-proc .*via trunk $k (" "$WORK/log/multi3-trunk-c2-relay$k.log.out")" = 2 ] &&
            ok "multi3-trunk/relay$k-owns-one-proc-per-external-client" ||
            bad "multi3-trunk/relay$k-owns-one-proc-per-external-client"
    done
}

t_multi4() {
    multi_topology
    MC_U=(M0 M1 D3 M2)
    MC_NS=(${NSP}G ${NSP}H ${NSP}F3 ${NSP}A)
    MC_IP=(10.77.2.2 10.77.2.3 10.77.2.103 10.77.1.2)
    MC_RELAY=("" "" "" "${NSP}F1 10.77.1.101 10.77.2.101")
    LAM_TIMEOUT=50 multi_job multi4 2 pairs 4
    LAM_TIMEOUT=50 multi_job multi4-a2a 2 a2a 6 4096 10
    [ "$(grep -c 'external-proc .*(client [012])' "$WORK/log/multi4-c3-relay0.log.out")" = 6 ] &&
        ok multi4/relay-maps-three-external-clients || bad multi4/relay-maps-three-external-clients
}

t_relay2relay() {
    multi_topology
    MC_U=(M2 M3)
    MC_NS=(${NSP}A ${NSP}P)
    MC_IP=(10.77.1.2 10.77.3.2)
    MC_RELAY=("${NSP}F1 10.77.1.101 10.77.2.101" "${NSP}F3 10.77.3.103 10.77.2.103")
    LAM_TIMEOUT=50 multi_job relay2relay 2 suite ssend
}
