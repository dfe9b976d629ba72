# Test 3: destination-based trunking with 2 relays on 2 front-ends (2 + 2 procs). Relay k
# owns proc k of each side, so traffic to a proc must enter through the relay that owns it,
# and reach its receiver through the relay that owns its source (the other relay passes it
# over their trunk link): the relays' counters prove both, and the results must be right.

# Packets relay k took for proc N of a side (counted where they enter), from its output
# "impi-relay[k]: to <side> proc N: P packets, D data packets": all of them ($4 = all) or
# the data packets only ($4 = data).
relay_count() {
    local field='\1'
    [ "${4:-all}" = data ] && field='\2'
    sed -n "s/^impi-relay\[$1\]: to $2 $3: \([0-9]*\) packets, \([0-9]*\) data packets/$field/p" \
        "$WORK/log/trunk-relay$1.log.out"
}

# Packets relay $1 sent ($2 = sent) or received ($2 = received) over its link to the other
# trunk in direction $3 (private->global or global->private).
link_count() {
    awk -F'; ' -v part="$2" -v dir="$3" '/^impi-relay\[[0-9]+\]: link to trunk/ {
        n = split(part == "sent" ? $1 : $2, w, " ")
        for (i = 1; i < n; i++) if (w[i] == dir) { print w[i + 1]; exit }
    }' "$WORK/log/trunk-relay$1.log.out"
}

t_trunk() {
    mk_topology 2
    lam_boot TA ${NSP}A
    lam_boot TB ${NSP}G
    TRUNK_TOPOLOGY=1 # t_trunk_a2a reuses it
    LAMU_A=TA LAMU_B=TB RELAYS=2 relay_job 2 trunk pairs 2
    local k
    for k in 0 1; do
        grep -q "^impi-relay\[$k\]: map .*via trunk" "$WORK/log/trunk-relay$k.log.out" &&
            ok "trunk/relay$k-printed-mapping" || bad "trunk/relay$k-printed-mapping"
    done
    # relay 0 owns external proc 0 and private proc 0; relay 1 owns proc 1 of each side.
    local e00 e01 e10 e11 p00 p01 p10 p11
    e00=$(relay_count 0 "external proc" 0) e01=$(relay_count 0 "external proc" 1)
    e10=$(relay_count 1 "external proc" 0) e11=$(relay_count 1 "external proc" 1)
    p00=$(relay_count 0 "private proc" 0) p01=$(relay_count 0 "private proc" 1)
    p10=$(relay_count 1 "private proc" 0) p11=$(relay_count 1 "private proc" 1)
    echo "trunk counters: relay0 ext0=$e00 ext1=$e01 priv0=$p00 priv1=$p01;" \
        "relay1 ext0=$e10 ext1=$e11 priv0=$p10 priv1=$p11"
    # Every packet (SYNCACKs included: LAM sends them back to the host that delivered the
    # DATASYNC, which is now the owner of the destination) enters at the destination's trunk.
    [ "${e00:-0}" -gt 0 ] && [ "${e11:-0}" -gt 0 ] && [ "${e01:-1}" = 0 ] && [ "${e10:-1}" = 0 ] &&
        ok trunk/to-external-by-destination || bad trunk/to-external-by-destination
    [ "${p00:-0}" -gt 0 ] && [ "${p11:-0}" -gt 0 ] && [ "${p01:-1}" = 0 ] && [ "${p10:-1}" = 0 ] &&
        ok trunk/to-private-by-destination || bad trunk/to-private-by-destination
    # The long message between rank 0 (A0, trunk 0) and the last rank (B1, trunk 1) crosses
    # the link both ways (A0->B1 enters at trunk 1 and leaves from trunk 0, B1->A0 the
    # other way round): every direction has traffic, and what one relay sent over the
    # link the other received.
    local d s0 r1 s1 r0 ok_link=1
    for d in private-\>global global-\>private; do
        s0=$(link_count 0 sent "$d") r1=$(link_count 1 received "$d")
        s1=$(link_count 1 sent "$d") r0=$(link_count 0 received "$d")
        echo "trunk link $d: relay0 sent ${s0:-?} (relay1 received ${r1:-?})," \
            "relay1 sent ${s1:-?} (relay0 received ${r0:-?})"
        [ -n "$s0" ] && [ -n "$s1" ] && [ "$s0" = "$r1" ] && [ "$s1" = "$r0" ] &&
            [ $((s0 + s1)) -gt 0 ] || ok_link=0
    done
    [ $ok_link = 1 ] && ok trunk/source-trunk-delivers-over-link || bad trunk/source-trunk-delivers-over-link
    # The whole test program through the two trunks (cross-trunk SYNCACK paths included).
    LAMU_A=TA LAMU_B=TB RELAYS=2 relay_job 2 trunk-suite suite ssend
}

# Regression for the benchmark's hang: a 2+2 pairwise all-to-all through the two trunks,
# TRUNK_A2A_RUNS times (default 20), each bounded by a short timeout (a healthy run takes
# about 2 s). LAM's impid must receive every packet from proc p on its connection to the
# host that owns p in its tables; the relays used to deliver each packet from the trunk
# that owns its destination instead, and impid's reentrant reads then blocked on a socket
# with nothing to read (net/impi/README.md, Trunking). With that relay, 14 of 26 runs of
# these 1 KiB x 100 rounds hung (and 9 of 10 of the benchmark's 1 MiB x 20); small
# messages keep each run short. One check per run; the loop stops at the first failure.
t_trunk_a2a() {
    local runs=${TRUNK_A2A_RUNS:-20} r pre t0 why
    [ -n "${TRUNK_TOPOLOGY:-}" ] || {
        mk_topology 2
        lam_boot TA ${NSP}A
        lam_boot TB ${NSP}G
        TRUNK_TOPOLOGY=1
    }
    for r in $(seq -w 1 "$runs"); do
        pre=trunk-a2a-$r
        t0=$SECONDS
        LAMU_A=TA LAMU_B=TB RELAYS=2 LAM_TIMEOUT=${TRUNK_A2A_TIMEOUT:-30} \
            relay_run 2 "$pre" a2a 2 1024 100 || return
        why=
        [ "$JOB_RA" = 124 ] || [ "$JOB_RB" = 124 ] && why="hung (killed after the timeout)"
        [ -z "$why" ] && [ "$JOB_RA $JOB_RB $JOB_RS ${JOB_RR[*]}" != "0 0 0 0 0" ] &&
            why="exit status A=$JOB_RA B=$JOB_RB server=$JOB_RS relays=${JOB_RR[*]}"
        [ -z "$why" ] && ! grep -q '^CHECK a2a_exchange ok' "$WORK/log/$pre-mpirun-A.log" &&
            why="wrong data or no result"
        if [ -n "$why" ]; then
            bad "$pre" "$why"
            tail -n 5 "$WORK/log/$pre-relay"*.log
            return
        fi
        ok "$pre ($((SECONDS - t0)) s)"
    done
}
