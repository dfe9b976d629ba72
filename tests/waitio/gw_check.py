#!/usr/bin/env python3
"""Scripted master and processes around one waitio-gw, for tests/waitio/gw.sh (loopback
only: 127.0.0.1 is the public network, 127.0.0.2 the private one).

usage: gw_check.py WAITIO_GW LOGFILE [BUF]

Starts the gateway (stderr to LOGFILE, BUF bytes per direction, default 262144), plays a
2-PB instance through it (PB 0 public: processes 0, 1; PB 1 private: processes 2, 3, 4,
where nobody listens for 4) and prints one line per check, "PASS: name" or
"FAIL: name: why". Headers are built here from PROTOCOL.md, independently of the codec.
Exit status 0 when every check passed."""
import hashlib
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

PUB, PRIV = "127.0.0.1", "127.0.0.2"
MAGIC, HDR = 0x314F4957, struct.Struct("<IBBHIIIIQQQIIQ")
T_HELLO, T_HELLO_OK, T_REGISTER, T_TABLE, T_REFUSE = 1, 2, 16, 17, 18
FIRST_TIMEOUT = 2  # the gateway's --first-timeout, s
BULK = 32 << 20  # bytes of the back-pressure transfer
SLOW_CHUNK, SLOW_PAUSE = 65536, 0.003  # the slow reader: this many bytes, then a pause
RSS_MAX_GROWTH_KB = 8 << 10  # gateway RSS growth allowed during the transfer
CPU_MAX = 0.5  # share of one CPU the gateway may use meanwhile (copying 16 MB/s)
WAIT = 5  # seconds any single expected event may take

results = []


def check(name, ok, why=""):
    results.append(ok)
    print(f"PASS: {name}" if ok else f"FAIL: {name}: {why}", flush=True)


def hdr(typ, src, dst, plen=0):
    """A 64-byte header: start-up types carry len == plen, handshakes are all zero."""
    return HDR.pack(MAGIC, 1, typ, 0, 0, 0, src, dst, 0, 0, plen, 0, plen, 0)


def entries(addrs):
    return b"".join(socket.inet_aton(ip) + struct.pack(">HH", port, 0) for ip, port in addrs)


def register(pbid, npb, addrs):
    return struct.pack("<IIII", pbid, npb, len(addrs), 0) + entries(addrs)


def table(nprocs, addrs):
    fixed = struct.pack("<IIII", len(nprocs), sum(nprocs), 0, 0)
    return fixed + struct.pack(f"<{len(nprocs)}I", *nprocs) + entries(addrs)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        k = s.recv(n - len(b))
        if not k:
            raise EOFError(f"closed after {len(b)} of {n} bytes")
        b += k
    return b


def closed_by_peer(s, timeout=WAIT):
    """True when the gateway closes s (EOF or reset) within timeout."""
    s.settimeout(timeout)
    try:
        while s.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def listener(ip):
    s = socket.socket()
    s.bind((ip, 0))
    s.listen(16)
    s.settimeout(WAIT)
    return s


def connect(leg, src_ip):
    s = socket.socket()
    s.bind((src_ip, 0))
    s.settimeout(WAIT)
    s.connect(leg)
    return s


class Log:
    """The gateway's stderr, searched from where the previous search ended."""

    def __init__(self, path):
        self.path, self.pos = path, 0

    def wait(self, pattern, timeout=WAIT):
        end = time.time() + timeout
        while True:
            with open(self.path) as f:
                f.seek(self.pos)
                text = f.read()
            m = re.search(pattern, text)
            if m:
                self.pos += len(text[: m.end()].encode())
                return m
            if time.time() > end:
                return None
            time.sleep(0.05)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def cpu_s(pid):
    """The process's user + system CPU time in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hello(leg, src_ip, src, dst, accept_on):
    """A HELLO'd connection src -> dst through the gateway leg; returns (initiator,
    accepted, the HELLO as received)."""
    a = connect(leg, src_ip)
    h = hdr(T_HELLO, src, dst)
    a.sendall(h)
    b, _ = accept_on.accept()
    b.settimeout(WAIT)
    got = recv_exact(b, 64)
    b.sendall(hdr(T_HELLO_OK, dst, src))
    recv_exact(a, 64)
    return a, b, got == h


def ping(a, b, word):
    a.sendall(word)
    ok = recv_exact(b, len(word)) == word
    b.sendall(word[::-1])
    return ok and recv_exact(a, len(word)) == word[::-1]


def main():
    gw, logpath = sys.argv[1], sys.argv[2]
    buf = int(sys.argv[3]) if len(sys.argv) > 3 else 262144
    master = listener(PUB)
    pub_l = [listener(PUB), listener(PUB)]  # processes 0, 1
    priv_l = [listener(PRIV), listener(PRIV)]  # processes 2, 3
    dead = socket.socket()  # process 4: an address where nobody listens
    dead.bind((PRIV, 0))
    pub_addrs = [l.getsockname() for l in pub_l]
    priv_addrs = [l.getsockname() for l in priv_l] + [dead.getsockname()]
    dead.close()
    log = open(logpath, "w")
    proc = subprocess.Popen(
        [gw, "--private", f"{PRIV}:0", "--public", f"{PUB}:0", "--master",
         f"{PUB}:{master.getsockname()[1]}", "--buf", str(buf),
         "--first-timeout", str(FIRST_TIMEOUT)],
        stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        run(proc, Log(logpath), master, pub_l, priv_l, pub_addrs, priv_addrs, buf)
    finally:
        alive = proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=WAIT)
    check("the gateway is still running at the end", alive, "it exited")
    late_master(gw, logpath + ".late")
    return 0 if all(results) else 1


def late_master(gw, logpath):
    """PB 1's rank 0 registers before the master listens: the gateway keeps trying the
    master (as rank 0 itself would) until it answers."""
    s = socket.socket()
    s.bind((PUB, 0))
    mport = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(
        [gw, "--private", f"{PRIV}:0", "--public", f"{PUB}:0", "--master", f"{PUB}:{mport}"],
        stdout=subprocess.PIPE, stderr=open(logpath, "w"), text=True)
    try:
        m = re.match(r"private ([\d.]+):(\d+) public ([\d.]+):(\d+)", proc.stdout.readline())
        gw_priv, gw_pub = (m.group(1), int(m.group(2))), (m.group(3), int(m.group(4)))
        r0 = connect(gw_priv, PRIV)
        reg = register(1, 2, [(PRIV, 1)])
        r0.sendall(hdr(T_REGISTER, 1, 0, len(reg)) + reg)
        time.sleep(1)
        master = socket.socket()
        master.bind((PUB, mport))
        master.listen(1)
        master.settimeout(WAIT)
        up, _ = master.accept()
        up.settimeout(WAIT)
        recv_exact(up, 64 + len(reg))
        tab = table([1, 1], [(PUB, 2), gw_pub])
        up.sendall(hdr(T_TABLE, 0, 1, len(tab)) + tab)
        up.close()
        want = hdr(T_TABLE, 0, 1, len(tab)) + table([1, 1], [gw_priv, (PRIV, 1)])
        check("a master that listens late: the gateway retries, rank 0 gets its TABLE",
              recv_exact(r0, len(want)) == want)
        check("a master that listens late: the retries are logged",
              Log(logpath).wait("Connection refused; retrying every") is not None)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=WAIT)


def run(proc, log, master, pub_l, priv_l, pub_addrs, priv_addrs, buf):
    m = re.match(r"private ([\d.]+):(\d+) public ([\d.]+):(\d+)", proc.stdout.readline())
    gw_priv, gw_pub = (m.group(1), int(m.group(2))), (m.group(3), int(m.group(4)))

    # 1. Start-up: PB 1's rank 0 registers through the gateway.
    r0 = connect(gw_priv, PRIV)
    reg = register(1, 2, priv_addrs)
    r0.sendall(hdr(T_REGISTER, 1, 0, len(reg)) + reg)
    up, peer = master.accept()
    up.settimeout(WAIT)
    got = recv_exact(up, 64 + len(reg))
    want = hdr(T_REGISTER, 1, 0, len(reg)) + register(1, 2, [gw_pub] * 3)
    check("REGISTER reaches the master with every entry at the public leg", got == want,
          f"got {got.hex()}")
    check("the gateway connects to the master from its public address", peer[0] == PUB,
          f"from {peer}")
    tab = table([2, 3], pub_addrs + [gw_pub] * 3)
    up.sendall(hdr(T_TABLE, 0, 1, len(tab)) + tab)
    up.close()
    got = recv_exact(r0, 64 + len(tab))
    want = hdr(T_TABLE, 0, 1, len(tab)) + table([2, 3], [gw_priv] * 2 + priv_addrs)
    check("TABLE: public entries at the private leg, PB 1's own entries real", got == want,
          f"got {got.hex()}")
    check("the start-up connection closes after the TABLE", closed_by_peer(r0), "still open")

    # 2. Data both ways, in both directions of the gateway.
    a, b, same = hello(gw_pub, PUB, 0, 2, priv_l[0])
    check("public -> private: the HELLO arrives unchanged", same)
    data = os.urandom(200000)
    t = threading.Thread(target=a.sendall, args=(data,))
    t.start()
    b.sendall(data[::-1])
    ok = recv_exact(b, len(data)) == data and recv_exact(a, len(data)) == data[::-1]
    t.join()
    check("public -> private: 200 kB each way, byte for byte", ok)
    a.close()
    check("closing one side closes the other", closed_by_peer(b), "still open")
    b.close()
    a, b, same = hello(gw_priv, PRIV, 3, 1, pub_l[1])
    check("private -> public: HELLO unchanged, from the public address",
          same and b.getpeername()[0] == PUB, f"from {b.getpeername()}")
    check("private -> public: bytes both ways", ping(a, b, b"x" * 5000))
    a.close()
    b.close()

    # 3. Back-pressure: a fast sender, a slow reader, the gateway's memory bounded.
    a, b, _ = hello(gw_pub, PUB, 1, 3, priv_l[1])
    port = a.getsockname()[1]
    rss0, cpu0, t0 = rss_kb(proc.pid), cpu_s(proc.pid), time.time()
    data = os.urandom(1 << 20) * (BULK >> 20)
    t = threading.Thread(target=a.sendall, args=(data,))
    t.start()
    h, n, rss_max = hashlib.sha256(), 0, rss0
    b.settimeout(30)
    while n < BULK:
        k = b.recv(SLOW_CHUNK)
        if not k:
            break
        h.update(k)
        n += len(k)
        time.sleep(SLOW_PAUSE)
        rss_max = max(rss_max, rss_kb(proc.pid))
    t.join()
    cpu = (cpu_s(proc.pid) - cpu0) / (time.time() - t0)
    check(f"{BULK >> 20} MiB to a slow reader arrive intact",
          n == BULK and h.digest() == hashlib.sha256(data).digest(), f"{n} bytes")
    growth = rss_max - rss0
    check(f"gateway RSS grows by at most {RSS_MAX_GROWTH_KB} kB meanwhile",
          growth <= RSS_MAX_GROWTH_KB, f"grew by {growth} kB")
    check(f"no busy loop while the reader is slow: gateway CPU {cpu:.0%} (under {CPU_MAX:.0%})",
          cpu < CPU_MAX, f"{cpu:.0%} of the time")
    a.close()
    b.close()
    m = log.wait(rf"pub {PUB}:{port} -> dst 3 .*closed: .*?; (\d+) B forwarded, \d+ B back, "
                 rf"buffered at most (\d+) \+ \d+ of (\d+) B, read pauses (\d+)")
    check("counters: all bytes forwarded, buffer full but never over, reads paused",
          m and int(m.group(1)) == 64 + BULK and int(m.group(2)) == int(m.group(3)) == buf
          and int(m.group(4)) > 0, m.group(0) if m else "no close line")

    # 4. Bad input, with a healthy connection alongside.
    ha, hb, _ = hello(gw_pub, PUB, 0, 2, priv_l[0])

    def bad(name, leg, payload, reason, then_close=False):
        s = connect(leg, PUB if leg == gw_pub else PRIV)
        me = "%s:%d" % s.getsockname()
        if payload:
            s.sendall(payload)
        if then_close:
            s.close()
            closed = True
        else:
            closed = closed_by_peer(s, FIRST_TIMEOUT + WAIT)
            s.close()
        m = log.wait(re.escape(me) + r" -> .*closed: .*" + reason, FIRST_TIMEOUT + WAIT)
        check(f"{name}: closed, logged with the peer and the reason", closed and m,
              "not closed" if not closed else f"no log line '{me} ... {reason}'")
        check(f"{name}: the healthy connection still works", ping(ha, hb, name.encode()))

    bad("garbage first header", gw_pub, os.urandom(64), "bad first header: bad magic")
    bad("truncated header, then close", gw_pub, hdr(T_HELLO, 0, 2)[:20],
        "truncated header: 20 of 64 bytes", then_close=True)
    bad("HELLO with dst out of range", gw_pub, hdr(T_HELLO, 0, 99),
        r"destination 99 out of range \(5 processes\)")
    bad("HELLO on the public leg for a public process", gw_pub, hdr(T_HELLO, 1, 0),
        "not behind this gateway")
    bad("REGISTER on the public leg", gw_pub, hdr(T_REGISTER, 1, 0, 40),
        "bad first header: type not allowed")
    short = register(1, 2, priv_addrs)[:24]  # says 3 processes, holds one
    bad("REGISTER with a short payload", gw_priv, hdr(T_REGISTER, 1, 0, len(short)) + short,
        "bad REGISTER: payload too short")
    bad("silent connection", gw_pub, b"", "no complete first header within")
    bad("HELLO for a process nobody listens at", gw_pub, hdr(T_HELLO, 0, 4),
        "connect to .*refused")

    # A side killed mid-stream: the initiator (a child process) dies while sending.
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import socket,struct,sys\n"
         f"s=socket.create_connection({gw_pub!r})\n"
         f"s.sendall({hdr(T_HELLO, 1, 2)!r})\n"
         "while True: s.sendall(b'z'*65536)\n"])
    b, _ = priv_l[0].accept()
    b.settimeout(WAIT)
    recv_exact(b, 64 + 100000)
    child.kill()
    child.wait()
    check("initiator killed mid-stream: the destination side is closed", closed_by_peer(b, 10),
          "still open")
    m = log.wait(r"-> dst 2 .*closed: ")
    check("initiator killed mid-stream: logged", m is not None, "no close line")
    check("initiator killed: the healthy connection still works", ping(ha, hb, b"after-kill"))
    # The destination crashes (reset) while the initiator sends.
    a, b, _ = hello(gw_pub, PUB, 1, 2, priv_l[0])
    stop = threading.Event()

    def flood():
        try:
            while not stop.is_set():
                a.sendall(b"y" * 65536)
        except OSError:
            pass

    t = threading.Thread(target=flood)
    t.start()
    recv_exact(b, 100000)
    b.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    b.close()  # RST
    m = log.wait(r"-> dst 2 .*closed: (write to|read from) .*(reset|pipe)")
    check("destination reset mid-stream: logged as a write failure", m is not None,
          "no close line")
    ok = closed_by_peer(a, 10)
    stop.set()
    t.join()
    check("destination reset mid-stream: the initiator is closed", ok, "still open")
    check("destination reset: the healthy connection still works", ping(ha, hb, b"after-rst"))

    # 5. Start-up replies: a REFUSE goes back unchanged; a bad reply closes rank 0.
    r0 = connect(gw_priv, PRIV)
    reg = register(1, 2, priv_addrs)
    r0.sendall(hdr(T_REGISTER, 1, 0, len(reg)) + reg)
    up, _ = master.accept()
    up.settimeout(WAIT)
    recv_exact(up, 64 + len(reg))
    text = b"PB 1 says npb 2, the instance has 3"
    refuse = hdr(T_REFUSE, 0, 1, len(text)) + text
    up.sendall(refuse)
    up.close()
    check("REFUSE reaches rank 0 unchanged", recv_exact(r0, len(refuse)) == refuse)
    check("REFUSE: logged", log.wait("the master refuses PB 1: PB 1 says") is not None)
    r0.close()
    r0 = connect(gw_priv, PRIV)
    r0.sendall(hdr(T_REGISTER, 1, 0, len(reg)) + reg)
    up, _ = master.accept()
    up.settimeout(WAIT)
    recv_exact(up, 64 + len(reg))
    up.sendall(hdr(T_TABLE, 0, 2, 0))  # addressed to PB 2
    check("a reply for another PB: rank 0's connection closed", closed_by_peer(r0))
    check("a reply for another PB: logged",
          log.wait("bad reply header from the master: wrong destination") is not None)
    up.close()
    r0.close()
    check("bad replies: the healthy connection still works", ping(ha, hb, b"after-replies"))

    # 6. Two private PBs behind the gateway (a new run: 3 PBs): each one's table has
    # the other's real addresses, and HELLOs reach both.
    p2 = listener(PRIV)
    pb2 = [p2.getsockname()]
    regs = [(1, priv_addrs[:2]), (2, pb2)]
    ranks0 = []
    for pbid, addrs in regs:
        r0 = connect(gw_priv, PRIV)
        reg = register(pbid, 3, addrs)
        r0.sendall(hdr(T_REGISTER, pbid, 0, len(reg)) + reg)
        ranks0.append(r0)
    ups = []
    for _ in regs:
        up, _ = master.accept()
        up.settimeout(WAIT)
        h = recv_exact(up, 64)
        ups.append((HDR.unpack(h)[6], up))
        recv_exact(up, HDR.unpack(h)[12])
    tab = table([2, 2, 1], pub_addrs + [gw_pub] * 3)
    for pbid, up in ups:
        up.sendall(hdr(T_TABLE, 0, pbid, len(tab)) + tab)
        up.close()
    want = table([2, 2, 1], [gw_priv] * 2 + priv_addrs[:2] + pb2)
    ok = all(recv_exact(r0, 64 + len(want))[64:] == want for r0 in ranks0)
    check("two private PBs: each TABLE has both PBs' real addresses", ok)
    a, b, same = hello(gw_pub, PUB, 1, 4, p2)
    check("two private PBs: public -> PB 2", same and ping(a, b, b"pb2"))
    a.close()
    b.close()
    a, b, same = hello(gw_priv, PRIV, 4, 0, pub_l[0])
    check("two private PBs: PB 2 -> public", same and ping(a, b, b"pb2-back"))
    a.close()
    b.close()

    proc.send_signal(signal.SIGUSR1)
    m = log.wait(r"totals: 1 live, .* (\d+) rejected")
    check("SIGUSR1: one live connection left, rejections counted",
          m is not None and int(m.group(1)) >= 6, "no totals line")
    ha.close()
    hb.close()


if __name__ == "__main__":
    sys.exit(main())
