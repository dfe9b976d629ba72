# Tests uk_bad_* (issue 13, test 5): bad input on the unikernel's IMPI paths. A unikernel
# job (1 node, 2 ranks, IMPI client 0, waiting in MPI_Recv: uk_wait_prog.c) shares a job
# with a scripted client 1 (impi_fake_client.py) that misbehaves on its host connection,
# or the start-up itself goes wrong. Each case: the unikernel job must end by itself with
# exit code 73 (the MPI engine ended the job) and a line naming the peer and the reason,
# never hang (the timeout is only a safety net) and never report success.

UKBAD_NS=${NSP}K
UKBAD_TIMEOUT=120

# uk_bad_case NAME EXPECTED-REGEX FAKE-MODE [SERVER-ARGS [UKRUN-ARGS]]
uk_bad_case() {
    local name=$1 expect=$2 mode=$3 sargs=${4:-} uargs=${5:-} log=$WORK/log/$1.log srv rc
    if [ ! -f "$ROOT/$B/uk/ukernel.elf" ]; then
        echo "SKIP $name: $B/uk/ukernel.elf missing (make all)"
        return
    fi
    mkns "$UKBAD_NS"
    ip -n "$UKBAD_NS" tuntap add dev uktap0 mode tap
    ip -n "$UKBAD_NS" addr add 10.0.0.254/24 dev uktap0
    ip -n "$UKBAD_NS" link set uktap0 up
    # shellcheck disable=SC2086 # word splitting of the optional arguments is intended
    start_daemon "$UKBAD_NS" "$WORK/log/$name-server.log" "$SERVER_BIN" -server 2 \
        -host 10.0.0.254 -timeout 60 $sargs || { bad "$name/server-start"; return; }
    srv=$(head -n1 "$WORK/log/$name-server.log.out")
    if [ "$mode" != none ]; then
        # In a subshell: host-killed SIGKILLs itself, which bash would report as "Killed".
        (ip netns exec "$UKBAD_NS" timeout $UKBAD_TIMEOUT python3 \
            "$ROOT/tests/interop/impi_fake_client.py" "$srv" 1 "$mode" 10.0.0.254 \
            >"$WORK/log/$name-fake.log" 2>&1 || true) 2>/dev/null &
        PIDS+=($!)
    fi
    # shellcheck disable=SC2086
    timeout $UKBAD_TIMEOUT "$ROOT/qemu/ukrun" -n 2 --impi-server "$srv" --impi-client 0 $uargs \
        --hub-tap uktap0 --hub-netns "$UKBAD_NS" --timeout $((UKBAD_TIMEOUT - 10)) \
        "$UKBAD_PROG" >"$log" 2>&1
    rc=$?
    if [ "$rc" = 73 ] && grep -Eq "$expect" "$log"; then
        ok "$name ($(grep -Eo "$expect" "$log" | head -n1))"
    else
        bad "$name" "exit $rc (expected 73), expected a line matching: $expect"
        tail -n 15 "$log"
    fi
    ip netns del "$UKBAD_NS" 2>/dev/null
}

ukbad_build() {
    [ -n "${UKBAD_PROG:-}" ] && return
    UKBAD_PROG=$WORK/uk_wait_prog
    "$ROOT/mpi/bin/ukmpicc" -O2 -o "$UKBAD_PROG" "$ROOT/tests/interop/uk_wait_prog.c"
}

# Test uk_fini_late: a peer that keeps talking after our FINI (§9: nothing follows FINI on
# a stream). A unikernel job (1 node, 2 ranks, IMPI client 0: uk_fini_prog.c) finalizes
# with the scripted client 1, which then sends packets that would each ask for an answer
# (a PROTOACK falls due, a DATASYNC, a CANCEL) and its own FINI. The unikernel must send
# no byte after its FINI (the fake checks and exits 1 otherwise), drop those packets, say
# so once naming the host and the packet, and still end the job with exit code 0.
t_uk_fini_late() {
    local name=uk_fini_late log=$WORK/log/uk_fini_late.log prog=$WORK/uk_fini_prog srv rc f rf
    local warn='IMPI host 1 \(10\.0\.0\.254\) sent [0-9]+ packets? after our FINI'
    warn+=' \(the first: DATA to rank 0\): dropped'
    if [ ! -f "$ROOT/$B/uk/ukernel.elf" ]; then
        echo "SKIP $name: $B/uk/ukernel.elf missing (make all)"
        return
    fi
    "$ROOT/mpi/bin/ukmpicc" -O2 -o "$prog" "$ROOT/tests/interop/uk_fini_prog.c" ||
        { bad "$name/build"; return; }
    mkns "$UKBAD_NS"
    ip -n "$UKBAD_NS" tuntap add dev uktap0 mode tap
    ip -n "$UKBAD_NS" addr add 10.0.0.254/24 dev uktap0
    ip -n "$UKBAD_NS" link set uktap0 up
    start_daemon "$UKBAD_NS" "$WORK/log/$name-server.log" "$SERVER_BIN" -server 2 \
        -host 10.0.0.254 -timeout 60 || { bad "$name/server-start"; return; }
    srv=$(head -n1 "$WORK/log/$name-server.log.out")
    ip netns exec "$UKBAD_NS" timeout $UKBAD_TIMEOUT python3 \
        "$ROOT/tests/interop/impi_fake_client.py" "$srv" 1 host-after-fini 10.0.0.254 \
        >"$WORK/log/$name-fake.log" 2>&1 &
    f=$!
    PIDS+=("$f")
    timeout $UKBAD_TIMEOUT "$ROOT/qemu/ukrun" -n 2 --impi-server "$srv" --impi-client 0 \
        --hub-tap uktap0 --hub-netns "$UKBAD_NS" --timeout $((UKBAD_TIMEOUT - 10)) \
        "$prog" >"$log" 2>&1
    rc=$?
    wait_rc $f rf
    if [ "$rf" = 0 ]; then
        ok "$name/nothing-after-our-fini ($(cat "$WORK/log/$name-fake.log"))"
    else
        bad "$name/nothing-after-our-fini" "fake exit $rf: $(tail -n3 "$WORK/log/$name-fake.log")"
    fi
    if [ "$rc" = 0 ] && [ "$(grep -Ec "$warn" "$log")" = 1 ]; then
        ok "$name/exit-0-and-one-warning ($(grep -Eo "$warn" "$log"))"
    else
        bad "$name/exit-0-and-one-warning" \
            "exit $rc (expected 0), expected one line matching: $warn"
        tail -n 15 "$log"
    fi
    ip netns del "$UKBAD_NS" 2>/dev/null
}

t_uk_bad() {
    ukbad_build
    local host='IMPI host 1 \(10\.0\.0\.254\)'
    uk_bad_case uk_bad_garbage "$host: bad IMPI packet: unknown packet type" host-garbage
    uk_bad_case uk_bad_unknown_src "$host: bad DATA packet: its source is not a proc of that host" \
        host-unknown-src
    uk_bad_case uk_bad_unknown_dest \
        "$host: bad DATA packet: its destination is not a proc of this node" host-unknown-dest
    uk_bad_case uk_bad_killed "$host failed \(.*\) while the job was running" host-killed
    uk_bad_case uk_bad_truncated "$host failed \(.*\) while the job was running" host-truncated
    uk_bad_case uk_bad_auth_key "impi: the server dropped us after our AUTH key: is --impi-key" \
        none "-auth key -key 111" "--impi-auth key --impi-key 222"
}
