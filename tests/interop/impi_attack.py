#!/usr/bin/env python3
"""Connection-level attacks on impi-server and impi-relay for tests/interop/hostile.sh
(loopback only; every mode ends by itself after at most HOLD seconds).

usage: impi_attack.py MODE HOST:PORT ARGS...
  slow-client RANK INTERVAL HOLD
        authenticate (NONE), register as RANK, then send the header of a 1 MiB COLL
        command and its payload one byte per INTERVAL seconds for HOLD seconds: a client
        that keeps its socket busy but never completes a command (slowloris)
  trickle INTERVAL HOLD
        send one zero byte per INTERVAL seconds for HOLD seconds (a gateway slowloris)
  flood-bytes NBYTES HOLD
        send a 4-byte host index that no job has and then NBYTES more as fast as the peer takes them
        (giving up after 3 s of back-pressure), then sit silent for the rest of HOLD
  flood-conns N NIDX HOLD
        open N connections; NIDX of them send a 4-byte host index that no job has
        (0x7fffffff), the others stay silent; keep them all open for HOLD seconds
Prints one line "<mode>: ..." with what it did; exit status 0 unless it could not connect
(the first connection of flood-conns; later refusals are counted, not fatal)."""
import socket
import struct
import sys
import time

# A COLL command's length field for the slow client: a valid size (under the 4 MiB limit),
# so that only its slowness is under test.
SLOW_COLL_LEN = 1 << 20
# A host index no job uses (jobs have at most 2 * 1024 hosts per view).
BOGUS_INDEX = 0x7FFFFFFF
# How long flood-bytes keeps pushing against a peer that stopped reading.
PUSH_SECONDS = 3.0
CHUNK = 65536


def addr(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def sit(until):
    while time.monotonic() < until:
        time.sleep(0.05)


def drip(s, end, interval, limit=None):
    """Sends one zero byte per interval on s until `end` (or `limit` bytes); returns
    (bytes sent, what happened)."""
    sent = 0
    try:
        while time.monotonic() < end and (limit is None or sent < limit):
            s.sendall(b"\0")
            sent += 1
            time.sleep(interval)
        return sent, "held to the end"
    except OSError as e:
        return sent, "dropped by the peer (%s)" % e.__class__.__name__


def slow_client(target, rank, interval, hold):
    end = time.monotonic() + hold
    s = socket.create_connection(target, timeout=5)
    s.sendall(b"AUTH" + struct.pack(">II", 4, 1))
    s.recv(8)
    s.sendall(b"IMPI" + struct.pack(">Ii", 4, rank))
    s.sendall(b"COLL" + struct.pack(">I", SLOW_COLL_LEN))
    sent, outcome = drip(s, end, interval, SLOW_COLL_LEN)
    print("slow-client: %d payload bytes sent, %s" % (sent, outcome))


def trickle(target, interval, hold):
    end = time.monotonic() + hold
    s = socket.create_connection(target, timeout=5)
    sent, outcome = drip(s, end, interval)
    print("trickle: %d bytes sent, %s" % (sent, outcome))


def flood_bytes(target, nbytes, hold):
    end = time.monotonic() + hold
    s = socket.create_connection(target, timeout=5)
    s.sendall(struct.pack(">I", BOGUS_INDEX))
    s.setblocking(False)
    chunk = bytes(CHUNK)
    sent = 0
    give_up = time.monotonic() + PUSH_SECONDS
    while sent < nbytes and time.monotonic() < give_up:
        try:
            sent += s.send(chunk[:min(CHUNK, nbytes - sent)])
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            break
    print("flood-bytes: %d bytes sent after the index" % sent, flush=True)
    sit(end)


def flood_conns(target, n, nidx, hold):
    end = time.monotonic() + hold
    socks, refused = [], 0
    for i in range(n):
        try:
            s = socket.create_connection(target, timeout=5)
        except OSError:
            if not socks:
                raise
            refused += 1
            continue
        if i < nidx:
            s.sendall(struct.pack(">I", BOGUS_INDEX))
        socks.append(s)
    print("flood-conns: %d connections open (%d with a bogus index), %d refused" %
          (len(socks), min(nidx, len(socks)), refused), flush=True)
    sit(end)


def main():
    mode, target, args = sys.argv[1], addr(sys.argv[2]), sys.argv[3:]
    if mode == "slow-client":
        slow_client(target, int(args[0]), float(args[1]), float(args[2]))
    elif mode == "trickle":
        trickle(target, float(args[0]), float(args[1]))
    elif mode == "flood-bytes":
        flood_bytes(target, int(args[0]), float(args[1]))
    elif mode == "flood-conns":
        flood_conns(target, int(args[0]), int(args[1]), float(args[2]))
    else:
        print("unknown mode " + mode, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
