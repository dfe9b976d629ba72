#!/usr/bin/env python3
"""A scriptable IMPI client for the bad-input tests: speaks the startup protocol to a
server (or a relay) and misbehaves on request.

usage: impi_fake_client.py HOST:PORT RANK MODE
  MODE full        complete startup as a 1-proc LAM-like client, then FINI
       garbage     send bytes that are no IMPI command
       truncated   send half of a COLL command, then close
       early-close close after the IMPI command
       stall       connect, authenticate, then say nothing (until killed)
       badlabel    send an unknown COLL label
Exit status 0 when the conversation went as MODE intends."""
import socket
import struct
import sys
import time


def cmd(name, payload=b""):
    return name + struct.pack(">I", len(payload)) + payload


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError("server closed")
        b += c
    return b


LABELS = [
    (0x1000, struct.pack(">II", 0, 0)),
    (0x1100, struct.pack(">i", 1)),
    (0x1200, struct.pack(">i", 1)),
    (0x1300, struct.pack(">I", 65536)),
    (0x1400, struct.pack(">i", 2147483647)),
    (0x1500, struct.pack(">i", -1)),
    (0x1600, struct.pack(">i", -1)),
    (0x2000, bytes(12) + bytes([127, 0, 0, 9])),
    (0x2100, struct.pack(">i", 9)),
    (0x2200, struct.pack(">i", 1)),
    (0x2300, struct.pack(">I", 10)),
    (0x2400, struct.pack(">I", 20)),
    (0x3000, bytes(12) + bytes([127, 0, 0, 9])),
    (0x3100, struct.pack(">q", 4242)),
]


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    rank, mode = int(sys.argv[2]), sys.argv[3]
    s = socket.create_connection((host, int(port)), timeout=30)
    if mode == "garbage":
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        time.sleep(0.5)
        return 0
    s.sendall(cmd(b"AUTH", struct.pack(">I", 1)))
    which, _ = struct.unpack(">ii", recv_exact(s, 8))
    if mode == "stall":
        time.sleep(3600)
    s.sendall(cmd(b"IMPI", struct.pack(">i", rank)))
    if mode == "early-close":
        s.close()
        return 0
    recv_exact(s, 12)
    if mode == "badlabel":
        s.sendall(cmd(b"COLL", struct.pack(">I", 0x7777) + bytes(4)))
        time.sleep(0.5)
        return 0
    if mode == "truncated":
        c = cmd(b"COLL", struct.pack(">I", 0x1000) + bytes(8))
        s.sendall(c[:7])
        s.close()
        return 0
    for label, data in LABELS:
        s.sendall(cmd(b"COLL", struct.pack(">I", label) + data))
        hdr = recv_exact(s, 8)
        n = struct.unpack(">I", hdr[4:])[0]
        rep = recv_exact(s, n)
        if struct.unpack(">I", rep[:4])[0] != label:
            print("wrong label in reply", file=sys.stderr)
            return 1
    s.sendall(cmd(b"DONE"))
    if recv_exact(s, 8)[:4] != b"DONE":
        return 1
    s.sendall(cmd(b"FINI"))
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
