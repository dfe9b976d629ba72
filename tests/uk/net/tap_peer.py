#!/usr/bin/env python3
"""tap_peer.py NODES SIZE [TIMEOUT_S]: the Linux side of tests/uk/net/run.sh's tap_linux case.

Runs inside the network namespace that holds the hub's TAP. For each node I (address
10.0.0.(I+1), the default rule of unikernel/include/uk/net.h) it connects to port 5002
(tests/uk/net_tap.c), sends [magic, SIZE][SIZE pattern bytes], reads the node's answer and
checks every byte. Prints one line per node; exits 0 only if every node answered right.
Connection attempts are retried until TIMEOUT_S (the nodes are still booting)."""
import socket
import struct
import sys
import time

PORT = 5002
MAGIC = 0x50544B55


def pattern(node, direction, size):
    """The bytes tap_byte() of tests/uk/net_tap.c gives for (node, direction)."""
    k = node * 13 + direction * 101
    return bytes((i * 7 + (i >> 8) + k) & 255 for i in range(size))


def connect(addr, deadline):
    while True:
        try:
            return socket.create_connection((addr, PORT), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def read_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def main():
    nodes, size = int(sys.argv[1]), int(sys.argv[2])
    deadline = time.monotonic() + (float(sys.argv[3]) if len(sys.argv) > 3 else 60)
    failed = 0
    for node in range(nodes):
        addr = "10.0.0.%d" % (node + 1)
        try:
            t0 = time.monotonic()
            with connect(addr, deadline) as s:
                s.settimeout(30)
                s.sendall(struct.pack("<II", MAGIC, size) + pattern(node, 0, size))
                got = read_exact(s, 8 + size)
            ms = (time.monotonic() - t0) * 1000
            want = struct.pack("<II", MAGIC, size) + pattern(node, 1, size)
            if got == want:
                print("tap_peer: node %d (%s): %d bytes each way verified in %.0f ms"
                      % (node, addr, size, ms))
            else:
                bad = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                           min(len(got), len(want)))
                print("tap_peer: node %d (%s): ERROR: answer of %d bytes differs at byte %d"
                      % (node, addr, len(got), bad))
                failed += 1
        except OSError as e:
            print("tap_peer: node %d (%s): ERROR: %s" % (node, addr, e))
            failed += 1
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
