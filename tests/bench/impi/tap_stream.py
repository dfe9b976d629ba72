#!/usr/bin/env python3
"""tap_stream.py ADDR SIZE PROBES [TIMEOUT_S]: the raw-TCP reference of
tests/bench/uk_impi.bench.sh, run in the network namespace that holds the unikernel hub's
TAP: the same path (TAP, hub, QEMU's NIC, the kernel's lwIP) as the unikernel's IMPI
traffic, without MPI.

The node at ADDR runs the kernel test net_tap (tests/uk/net_tap.c): it accepts one
connection on port 5002, reads [magic, SIZE][SIZE bytes], checks them, answers the same
way and exits. Before that stream, PROBES connection attempts to a closed port each come
back as lwIP's RST after one round trip: their median is the raw TCP round trip.

Prints one line:  tap rtt_us=MEDIAN down_MBps=X up_MBps=Y
  down: this process -> the node (SIZE bytes, until the answer's first bytes arrive, which
        the node sends only after it has checked the last byte);
  up:   the node -> this process (the answer after its first bytes, until its last).
Exit 0 if the answer is right, 1 otherwise."""
import socket
import statistics
import struct
import sys
import time

PORT = 5002
CLOSED_PORT = 5003  # nothing listens there: lwIP answers a SYN with RST
MAGIC = 0x50544B55
HDR = 8


def pattern(node, direction, size):
    """tap_byte() of tests/uk/net_tap.c for (node, direction)."""
    k = node * 13 + direction * 101
    return bytes((i * 7 + (i >> 8) + k) & 255 for i in range(size))


def probe(addr):
    """One SYN to the closed port: the seconds until the RST, or None if nothing came back."""
    s = socket.socket()
    s.settimeout(1)
    t0 = time.monotonic()
    try:
        s.connect((addr, CLOSED_PORT))
    except ConnectionRefusedError:
        return time.monotonic() - t0
    except OSError:
        return None
    finally:
        s.close()
    return None


def main():
    addr, size, probes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    deadline = time.monotonic() + (float(sys.argv[4]) if len(sys.argv) > 4 else 60)
    node = int(addr.rsplit(".", 1)[1]) - 1  # 10.0.0.(I+1) is node I
    out = struct.pack("<II", MAGIC, size) + pattern(node, 0, size)
    want = struct.pack("<II", MAGIC, size) + pattern(node, 1, size)
    while probe(addr) is None:  # the node is still booting
        if time.monotonic() > deadline:
            print("tap_stream: %s did not answer within the timeout" % addr)
            return 1
        time.sleep(0.2)
    rtts = [r for r in (probe(addr) for _ in range(probes)) if r is not None]
    with socket.create_connection((addr, PORT), timeout=30) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t0 = time.monotonic()
        s.sendall(out)
        got = bytearray(s.recv(len(want)))
        t1, first = time.monotonic(), len(got)
        while got and len(got) < len(want):
            chunk = s.recv(len(want) - len(got))
            if not chunk:
                break
            got += chunk
        t2 = time.monotonic()
    if bytes(got) != want:
        print("tap_stream: the node's answer (%d bytes) is not the expected one" % len(got))
        return 1
    print("tap rtt_us=%.1f down_MBps=%.1f up_MBps=%.1f"
          % (statistics.median(rtts) * 1e6 if rtts else 0, size / (t1 - t0) / 1e6,
             (len(want) - first) / max(t2 - t1, 1e-9) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
