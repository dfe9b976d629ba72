#!/usr/bin/env python3
"""A scriptable IMPI client for the bad-input tests: speaks the startup protocol to a
server (or a relay) and misbehaves on request.

usage: impi_fake_client.py HOST:PORT RANK MODE [MY_IP]
  MODE full        complete startup as a 1-proc LAM-like client, then FINI
       garbage     send bytes that are no IMPI command
       truncated   send half of a COLL command, then close
       early-close close after the IMPI command
       stall       connect, authenticate, then say nothing (until killed)
       badlabel    send an unknown COLL label
   host modes: complete the startup as a 1-proc client with one host at MY_IP, connect
   to client 0's first host (the relay's gateway) as the higher-indexed host, then
       host-unknown-src   send a DATA packet from a proc nobody announced
       host-unknown-dest  send a DATA packet to a proc nobody announced
       host-truncated     send 60 bytes of a packet header and close
       host-killed        send a header and part of its payload, then SIGKILL itself
       host-garbage       send 512 bytes that are no IMPI packet (an unknown packet type)
       host-after-fini    join the finalize barrier (client 0's master, world rank 0), wait
                          for client 0's FINI, then send what would each ask for an answer
                          (ackmark DATA packets to rank 0: a PROTOACK is due; a DATASYNC; a
                          CANCEL) and our FINI; fails (exit 1) on any byte that comes after
                          client 0's FINI, and prints "late_bytes N"
       pingpong:N         benchmark: a 2-client job of two fakes; client 1 connects to client
                          0's host, client 0 times N 0-byte DATA ping-pongs and prints
                          "pp_lat_us <one-way>"; both then exchange FINI and end properly
Exit status 0 when the conversation went as MODE intends."""
import socket
import os
import signal
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


def labels(ip, port):
    hid = bytes(12) + socket.inet_aton(ip)
    return [
        (0x1000, struct.pack(">II", 0, 0)),
        (0x1100, struct.pack(">i", 1)),
        (0x1200, struct.pack(">i", 1)),
        (0x1300, struct.pack(">I", 65536)),
        (0x1400, struct.pack(">i", 2147483647)),
        (0x1500, struct.pack(">i", -1)),
        (0x1600, struct.pack(">i", -1)),
        (0x2000, hid),
        (0x2100, struct.pack(">i", port)),
        (0x2200, struct.pack(">i", 1)),
        (0x2300, struct.pack(">I", 10)),
        (0x2400, struct.pack(">I", 20)),
        (0x3000, hid),
        (0x3100, struct.pack(">q", 4242)),
    ]


def packet(ptype, plen, msglen, src, dest, tag=1, cid=0, srqid=0):
    """A 128-byte IMPI packet header; src/dest are (16-byte hostid, pid)."""
    return (struct.pack(">II", ptype, plen) + src[0] + struct.pack(">q", src[1]) + dest[0] +
            struct.pack(">q", dest[1]) + struct.pack(">QQQiiQQqQQ", srqid, 0, msglen, 0, tag,
                                                     cid, 0, 0, 0, 0))


PK_DATA, PK_DATASYNC, PK_CANCEL, PK_FINI = 0, 1, 4, 7
BARRIER_TAG, COLL_CID = 110, 1  # LAM's cross-client barrier: zero-byte DATA (spec §12.3)
LATE_WAIT_S = 3  # after our FINI: how long a late answer from client 0 is waited for


def after_fini(h, me, dest, ackmark):
    """host-after-fini: the finalize barrier with client 0's master (linear: it receives
    from us, then answers), its FINI, then packets it must drop unanswered, and ours."""
    h.sendall(packet(PK_DATA, 0, 0, me, dest, BARRIER_TAG, COLL_CID))
    buf = b""
    while True:
        pk, buf = read_pkt(h, buf)
        if struct.unpack(">I", pk[:4])[0] == PK_FINI:
            break
    late = buf
    burst = b"".join(packet(PK_DATA, 8, 8, me, dest) + bytes(8) for _ in range(ackmark))
    burst += packet(PK_DATASYNC, 8, 8, me, dest, srqid=7) + bytes(8)
    burst += packet(PK_CANCEL, 128, 128, me, dest, srqid=7)
    h.sendall(burst + packet(PK_FINI, 128, 128, (bytes(16), -1), (bytes(16), -1)))
    h.settimeout(LATE_WAIT_S)
    try:
        while True:
            c = h.recv(65536)
            if not c:
                break
            late += c
    except (socket.timeout, ConnectionResetError):
        pass
    print("late_bytes %d" % len(late), flush=True)
    return 1 if late else 0


def read_pkt(h, buf):
    """Returns (header, rest-of-buffer) for the next non-PROTOACK packet."""
    while True:
        while len(buf) < 128:
            c = h.recv(65536)
            if not c:
                raise EOFError("host connection closed")
            buf += c
        ptype, plen = struct.unpack(">II", buf[:8])
        n = 128 + (plen if ptype in (0, 1) else 0)
        while len(buf) < n:
            c = h.recv(65536)
            if not c:
                raise EOFError("host connection closed")
            buf += c
        pk, buf = buf[:n], buf[n:]
        if ptype != 2:  # PROTOACKs (from a relay acknowledging us) need no action here
            return pk, buf


def pingpong(s, rank, n, my_ip, lsock, replies):
    """Client 0 pings client 1 n times; both are one-proc, one-host fakes."""
    other = 1 - rank
    nh = struct.unpack(">ii", replies[0x1100][0:8])
    off = 0 if other == 0 else nh[0]
    peer_ip = socket.inet_ntoa(replies[0x2000][16 * off + 12:16 * off + 16])
    peer_port = struct.unpack(">i", replies[0x2100][4 * off:4 * off + 4])[0]
    np0 = struct.unpack(">ii", replies[0x1200][0:8])[0]
    poff = 0 if other == 0 else np0
    peer = (replies[0x3000][16 * poff:16 * poff + 16],
            struct.unpack(">q", replies[0x3100][8 * poff:8 * poff + 8])[0])
    me = (bytes(12) + socket.inet_aton(my_ip), 4242)
    if rank == 0:
        h, _ = lsock.accept()
        recv_exact(h, 4)
    else:
        h = socket.create_connection((peer_ip, peer_port), timeout=60, source_address=(my_ip, 0))
        h.sendall(struct.pack(">I", nh[0]))
    h.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ping = packet(0, 0, 0, me, peer)
    buf = b""
    warm = n // 10 + 1
    t0 = 0.0
    for k in range(n + warm):
        if k == warm:
            t0 = time.perf_counter()
        if rank == 0:
            h.sendall(ping)
            _, buf = read_pkt(h, buf)
        else:
            _, buf = read_pkt(h, buf)
            h.sendall(ping)
    if rank == 0:
        print("pp_lat_us %.2f" % ((time.perf_counter() - t0) / n / 2 * 1e6), flush=True)
    fini = packet(7, 128, 128, (bytes(16), -1), (bytes(16), -1))
    h.sendall(fini)
    pk, buf = read_pkt(h, buf)
    if struct.unpack(">I", pk[:4])[0] != 7:
        return 1
    h.close()
    s.sendall(cmd(b"FINI"))
    s.close()
    return 0


def host_mode(s, rank, mode, my_ip, replies):
    """Connects to client 0's first host and misbehaves as MODE says."""
    nh0 = struct.unpack(">i", replies[0x1100][0:4])[0]
    ip0 = socket.inet_ntoa(replies[0x2000][12:16])
    port0 = struct.unpack(">i", replies[0x2100][0:4])[0]
    dest = (replies[0x3000][0:16], struct.unpack(">q", replies[0x3100][0:8])[0])
    me = (bytes(12) + socket.inet_aton(my_ip), 4242)
    h = socket.create_connection((ip0, port0), timeout=30, source_address=(my_ip, 0))
    h.sendall(struct.pack(">I", nh0))  # our global host index: right after client 0's hosts
    if mode == "host-after-fini":
        ackmark = min(struct.unpack(">%dI" % (len(replies[0x2300]) // 4), replies[0x2300]))
        rc = after_fini(h, me, dest, ackmark)
        h.close()
        s.sendall(cmd(b"FINI"))
        s.close()
        return rc
    if mode == "host-unknown-src":
        h.sendall(packet(0, 8, 8, (bytes(12) + socket.inet_aton("10.99.99.99"), 7), dest) +
                  bytes(8))
    elif mode == "host-unknown-dest":
        h.sendall(packet(0, 8, 8, me, (dest[0], 999999)) + bytes(8))
    elif mode == "host-truncated":
        h.sendall(packet(0, 8, 8, me, dest)[:60])
        h.close()
    elif mode == "host-garbage":
        h.sendall(bytes([0x47, 0x45, 0x54, 0x20]) + bytes(range(256)) + bytes(252))
    elif mode == "host-killed":
        h.sendall(packet(0, 4096, 4096, me, dest) + bytes(1000))
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(5)  # the peer is expected to end the job; our exit closes everything
    return 0


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
    # The server answers IMPI and each label only once every client has sent it, and a
    # unikernel client may still be booting: no wait of our own bounds that. The server's
    # start-up limit (-timeout) does: it then ends the job, and we see the connection end.
    s.settimeout(None)
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
    my_ip = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.9"
    lsock = socket.socket()
    hosty = mode.startswith("host") or mode.startswith("pingpong")
    lsock.bind((my_ip, 0)) if hosty else None
    lsock.listen(4) if hosty else None
    port = lsock.getsockname()[1] if hosty else 9
    replies = {}
    for label, data in (labels(my_ip, port) if hosty else LABELS):
        s.sendall(cmd(b"COLL", struct.pack(">I", label) + data))
        hdr = recv_exact(s, 8)
        n = struct.unpack(">I", hdr[4:])[0]
        rep = recv_exact(s, n)
        if struct.unpack(">I", rep[:4])[0] != label:
            print("wrong label in reply", file=sys.stderr)
            return 1
        replies[label] = rep[8:]
    s.sendall(cmd(b"DONE"))
    if recv_exact(s, 8)[:4] != b"DONE":
        return 1
    if mode.startswith("pingpong"):
        return pingpong(s, rank, int(mode.split(":")[1]), my_ip, lsock, replies)
    if mode.startswith("host"):
        return host_mode(s, rank, mode, my_ip, replies)
    s.sendall(cmd(b"FINI"))
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
