#!/usr/bin/env bash
# Hostile peers against impi-server and impi-relay, on loopback only, without LAM: slow
# clients (the stall limit must count complete commands, not bytes), a flooding
# unidentified gateway connection (no busy loop, no unbounded buffering), a connection
# flood at a gateway (the extras are dropped, the job goes on), and option typos (a clear
# message and exit status 2 before anything listens). Each case is bounded in time (about
# 15 s in all); attackers are tests/interop/impi_attack.py, the job is two scripted IMPI
# clients (tests/interop/impi_fake_client.py). Closing line: "hostile: N passed, N failed".
# SERVER_BIN / RELAY_BIN override the programs under test (e.g. an older build);
# HOSTILE_TESTS selects cases by name (default: all, as listed at the end).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
SERVER_BIN=${SERVER_BIN:-$B/net/impi-server}
RELAY_BIN=${RELAY_BIN:-$B/net/impi-relay}
ATTACK=tests/interop/impi_attack.py
FAKE=tests/interop/impi_fake_client.py
# Loopback addresses: the server, the relay's private and global sides, the two clients.
SRV_IP=127.0.0.1 PRIV_IP=127.0.0.2 GLOB_IP=127.0.0.3 A_IP=127.0.0.4 B_IP=127.0.0.5
STALL=2                        # the stall limit (-timeout) where it is under test, s
SLOW_INTERVAL=0.1              # the slow peers' pace: one byte per this many seconds
SLOW_HOLD=8                    # how long slow peers keep going (well past STALL)
GRACE=4                        # how long after STALL a stalled program may take to end
FLOOD_BYTES=$((9 << 20))       # more than the relay ever buffered per connection (8 MiB)
FLOOD_PEERS=4                  # flooding connections in the busy-loop case
CPU_SECONDS=2                  # the relay's CPU time is measured over this long
CPU_MAX_PCT=10                 # ... and must stay below this share of it
RSS_MAX_GROWTH_KB=$((8 << 10)) # RSS growth allowed meanwhile (was 8 MiB per flooder)
FLOOD_CONNS=300                # unidentified connections, more than the 256 pending slots
FLOOD_IDX=10                   # ... of which this many send a bogus host index
WORK=$(mktemp -d /tmp/ukmpi-hostile.XXXXXX)
PIDS=()
# shellcheck source=tests/interop/check_lib.sh
. tests/interop/check_lib.sh

cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts a daemon ($2...) logging to $1 (stderr) and $1.out (stdout); waits for its first
# stdout line (ip:port). Sets DPID (the timeout wrapper's pid) and returns 1 if it did not
# start within 5 s.
start() {
    local log=$1 _
    shift
    timeout 60 "$@" >"$log.out" 2>"$log" &
    DPID=$!
    PIDS+=("$DPID")
    for _ in $(seq 50); do
        [ -s "$log.out" ] && return 0
        kill -0 "$DPID" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

# Runs a background attacker or client; sets APID.
spawn() {
    local log=$1
    shift
    timeout 60 "$@" >"$log" 2>&1 &
    APID=$!
    PIDS+=("$APID")
}

# Waits at most $2 seconds for pid $1 and stores its exit status in RC; a process still
# running then is killed and RC is "running".
wait_for() {
    local pid=$1 _
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        RC=running
        return
    fi
    wait "$pid" 2>/dev/null
    RC=$?
}

# The pid of the program a `timeout` wrapper ($1) runs.
child_of() {
    pgrep -P "$1" | head -n1
}

# A relay's gateway address on side $2 (private|global) from its -v log $1.
gateway() {
    local _
    for _ in $(seq 50); do
        if grep -q "private gateway" "$1"; then
            sed -n "s/.*$2 gateway \([0-9.]*:[0-9]*\).*/\1/p" "$1" | head -n1
            return
        fi
        sleep 0.1
    done
}

# A server for one relay (2 clients; its own stall limit out of the way); sets SRV.
server_for_relay() {
    start "$1" "$SERVER_BIN" -server 2 -host $SRV_IP -timeout 60 || return 1
    SRV=$(head -n1 "$1.out")
}

# A master relay in front of the server at $2, log $1, extra options after; sets RPID.
relay() {
    local log=$1 srv=$2
    shift 2
    start "$log" "$RELAY_BIN" -private $PRIV_IP -global $GLOB_IP -server "$srv" "$@" -v
    RPID=$DPID
}

# CPU time (utime + stime, clock ticks) and resident size (kB) of pid $1.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

# A client that keeps its connection busy but never completes a command must not hold
# off the startup stall limit.
t_server_slowloris() {
    local L=$WORK/server-slow spid
    start "$L" "$SERVER_BIN" -server 2 -host $SRV_IP -timeout $STALL ||
        { bad server-slowloris "server did not start"; return; }
    spid=$DPID
    spawn "$L.attack" python3 $ATTACK slow-client "$(head -n1 "$L.out")" 0 $SLOW_INTERVAL $SLOW_HOLD
    wait_for "$spid" $((STALL + GRACE))
    if [ "$RC" = 1 ] && grep -q "startup stalled" "$L"; then
        ok "server-slowloris: $(grep -o 'error: .*' "$L")"
    else
        bad server-slowloris "server rc=$RC (a 1-byte-per-${SLOW_INTERVAL}s client kept it alive)"
    fi
}

# The same at the relay: client A trickles a command.
t_relay_slowloris_client() {
    local L=$WORK/relay-slow
    server_for_relay "$L-server.log" || { bad relay-slowloris-client "no server"; return; }
    relay "$L" "$SRV" -timeout $STALL || { bad relay-slowloris-client "relay did not start"; return; }
    spawn "$L.attack" python3 $ATTACK slow-client "$(head -n1 "$L.out")" 0 $SLOW_INTERVAL $SLOW_HOLD
    wait_for "$RPID" $((STALL + GRACE))
    if [ "$RC" = 1 ] && grep -q "startup stalled" "$L"; then
        ok "relay-slowloris-client: $(grep -o 'error: .*' "$L")"
    else
        bad relay-slowloris-client "relay rc=$RC"
    fi
}

# ... and an unidentified peer trickling into a gateway before the tables are complete.
t_relay_slowloris_gateway() {
    local L=$WORK/relay-trickle gw
    server_for_relay "$L-server.log" || { bad relay-slowloris-gateway "no server"; return; }
    relay "$L" "$SRV" -timeout $STALL || { bad relay-slowloris-gateway "relay did not start"; return; }
    gw=$(gateway "$L" private)
    spawn "$L.attack" python3 $ATTACK trickle "$gw" $SLOW_INTERVAL $SLOW_HOLD
    wait_for "$RPID" $((STALL + GRACE))
    if [ "$RC" = 1 ] && grep -q "startup stalled" "$L"; then
        ok "relay-slowloris-gateway: $(grep -o 'error: .*' "$L")"
    else
        bad relay-slowloris-gateway "relay rc=$RC"
    fi
}

# Unidentified gateway connections that flood before the tables are complete: the relay
# must neither spin (level-triggered EPOLLIN on a connection it does not read) nor
# buffer what they send.
t_relay_busy_loop() {
    local L=$WORK/relay-busy gw pid k r0 r1 c0 c1 hz pct grow apids=()
    server_for_relay "$L-server.log" || { bad relay-busy-loop "no server"; return; }
    relay "$L" "$SRV" -timeout 60 || { bad relay-busy-loop "relay did not start"; return; }
    gw=$(gateway "$L" global)
    pid=$(child_of "$RPID")
    r0=$(rss_kb "$pid")
    for k in $(seq $FLOOD_PEERS); do
        spawn "$L.attack$k" python3 $ATTACK flood-bytes "$gw" $FLOOD_BYTES 20
        apids+=("$APID")
    done
    for k in $(seq 60); do # each flooder reports once it is done pushing (3 s at most)
        [ "$(cat "$L".attack* 2>/dev/null | grep -c 'flood-bytes:')" = $FLOOD_PEERS ] && break
        sleep 0.1
    done
    hz=$(getconf CLK_TCK)
    c0=$(cpu_ticks "$pid")
    sleep $CPU_SECONDS
    c1=$(cpu_ticks "$pid")
    r1=$(rss_kb "$pid")
    pct=$(((c1 - c0) * 100 / (hz * CPU_SECONDS)))
    grow=$((r1 - r0))
    if ! kill -0 "$pid" 2>/dev/null; then
        bad relay-busy-loop "the relay ended: $(grep -o 'error: .*' "$L")"
        return
    fi
    if [ "$pct" -lt $CPU_MAX_PCT ]; then
        ok "relay-busy-loop/cpu: ${pct}% of a CPU while $FLOOD_PEERS peers sit"
    else
        bad relay-busy-loop/cpu "${pct}% of a CPU over ${CPU_SECONDS}s (limit ${CPU_MAX_PCT}%)"
    fi
    if [ "$grow" -lt $RSS_MAX_GROWTH_KB ]; then
        ok "relay-busy-loop/memory: RSS grew ${grow} kB"
    else
        bad relay-busy-loop/memory "RSS grew ${grow} kB (limit $RSS_MAX_GROWTH_KB kB)"
    fi
    for k in "${apids[@]}"; do kill "$k" 2>/dev/null; done
    kill "$RPID" 2>/dev/null
}

# FLOOD_CONNS unidentified connections at the global gateway, then a real 2-client job
# through the relay (two scripted clients, 20 ping-pongs over the relayed host
# connections): the extras are dropped, the job completes, the relay exits 0.
t_relay_conn_flood() {
    local L=$WORK/relay-flood gw fa fb k ra rb
    server_for_relay "$L-server.log" || { bad relay-conn-flood "no server"; return; }
    relay "$L" "$SRV" -timeout 60 || { bad relay-conn-flood "relay did not start"; return; }
    gw=$(gateway "$L" global)
    spawn "$L.attack" python3 $ATTACK flood-conns "$gw" $FLOOD_CONNS $FLOOD_IDX 40
    for k in $(seq 100); do
        grep -q 'flood-conns:' "$L.attack" && break
        sleep 0.1
    done
    spawn "$L.a" python3 $FAKE "$(head -n1 "$L.out")" 0 pingpong:20 $A_IP
    fa=$APID
    spawn "$L.b" python3 $FAKE "$SRV" 1 pingpong:20 $B_IP
    fb=$APID
    wait_for "$fa" 20
    ra=$RC
    wait_for "$fb" 5
    rb=$RC
    wait_for "$RPID" 5
    if [ "$ra$rb$RC" = 000 ] && grep -q "pp_lat_us" "$L.a"; then
        ok "relay-conn-flood: job completed past $(sed 's/^flood-conns: //' "$L.attack")"
    else
        bad relay-conn-flood "client A rc=$ra, client B rc=$rb, relay rc=$RC: $(grep -o 'error: .*' "$L")"
    fi
    if grep -q "dropped" "$L"; then
        ok "relay-conn-flood/extras-dropped: $(grep -c dropped "$L") dropped"
    else
        bad relay-conn-flood/extras-dropped "no connection was dropped"
    fi
}

# Option typos and holes: exit status 2 and a message that names the option, before the
# program listens or connects. $1 = server|relay, $2 = expected text, then the options.
opt_case() {
    local prog=$1 want=$2 L=$WORK/opt-$TP-$TF srv spid
    shift 2
    if [ "$prog" = server ]; then
        timeout 3 "$SERVER_BIN" -server 2 -host $SRV_IP "$@" >"$L.out" 2>"$L"
        RC=$?
    else
        # A live server: a relay that accepted the options would run on until timeout.
        start "$L-server.log" "$SERVER_BIN" -server 2 -host $SRV_IP -timeout 60 ||
            { bad "options/$prog $*" "no server"; return; }
        spid=$DPID
        srv=$(head -n1 "$L-server.log.out")
        local args=(-private "$PRIV_IP" -global "$GLOB_IP")
        [[ " $* " == *" -trunk-of "* ]] || args+=(-server "$srv")
        timeout 3 "$RELAY_BIN" "${args[@]}" "$@" >"$L.out" 2>"$L"
        RC=$?
        kill "$spid" 2>/dev/null
    fi
    if [ "$RC" = 2 ] && grep -q -- "$want" "$L" && ! [ -s "$L.out" ]; then
        ok "options/$prog $*: $(head -n1 "$L")"
    else
        bad "options/$prog $*" "rc=$RC (want 2), stderr: $(head -n1 "$L")"
    fi
}

t_options() {
    opt_case relay "-auth" -auth KEY
    opt_case relay "-key" -auth key
    opt_case relay "-server-auth" -server-auth KEY
    opt_case relay "-server-key" -server-auth key
    opt_case relay "-key" -auth key -key 12ab
    opt_case relay "-port" -port 70000
    opt_case relay "-timeout" -timeout soon
    opt_case relay "-trunks" -trunks 2x
    opt_case relay "-trunk-index" -trunk-index 99 -trunk-of 127.0.0.1:9
    opt_case relay "-trunk-index" -trunk-index -1
    opt_case server "-auth" -auth KEY
    opt_case server "-key" -auth key
    opt_case server "-key" -auth key -key -v
    opt_case server "-port" -port 70000
    opt_case server "-timeout" -timeout soon
    opt_case server "-server" -server 2x
}

for t in ${HOSTILE_TESTS:-server_slowloris relay_slowloris_client relay_slowloris_gateway \
    relay_busy_loop relay_conn_flood options}; do
    "t_$t"
done
echo "hostile: $TP passed, $TF failed"
[ "$TF" = 0 ]
