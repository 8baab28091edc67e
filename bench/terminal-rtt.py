#!/usr/bin/env python3
"""bench/terminal's keystroke-to-echo round trip (not a benchmark alone).

terminal-rtt.py ws API_URL TICKET N   through the daemon's WebSocket
terminal-rtt.py docker CONTAINER N    `docker exec -it` in a local pty

Both run `cat` on a PTY in the sandbox and time N single keystrokes from
the write to the echo of that byte coming back; prints the round trips
in microseconds, one a line.
"""
import base64, os, pty, select, socket, struct, sys, time, urllib.parse

KEYS = b"abcdefghijklmnopqrstuvwxyz"

def frame(op, data):
    mask = os.urandom(4)
    n = len(data)
    head = struct.pack("!BB", 0x80 | op, 0x80 | n) if n < 126 else struct.pack("!BBH", 0x80 | op, 0xFE, n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

def ws(url, ticket, n):
    u = urllib.parse.urlparse(url)
    s = socket.create_connection((u.hostname, u.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall((f"GET /v1/terminal?ticket={ticket} HTTP/1.1\r\nHost: {u.netloc}\r\n"
               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    buf = buf.partition(b"\r\n\r\n")[2]
    def output(timeout):
        nonlocal buf
        out = b""
        end = time.time() + timeout
        while True:
            while len(buf) >= 2:
                ln, h = buf[1] & 0x7F, 2
                if ln == 126:
                    if len(buf) < 4: break
                    ln, h = struct.unpack("!H", buf[2:4])[0], 4
                elif ln == 127:
                    if len(buf) < 10: break
                    ln, h = struct.unpack("!Q", buf[2:10])[0], 10
                if len(buf) < h + ln: break
                p, buf = buf[h:h + ln], buf[h + ln:]
                if buf is not None and (p[:1] == b"\x01"):
                    out += p[1:]
            if out or time.time() > end:
                return out
            r, _, _ = select.select([s], [], [], max(0, end - time.time()))
            if r:
                d = s.recv(65536)
                if not d: return out
                buf += d
    output(1.5)  # the status message and the shell's first output
    rtts = []
    for i in range(n):
        k = KEYS[i % len(KEYS):i % len(KEYS) + 1]
        t0 = time.perf_counter()
        s.sendall(frame(2, b"\x00" + k))
        got = b""
        while k not in got:
            got += output(5)
        rtts.append((time.perf_counter() - t0) * 1e6)
    s.close()
    return rtts

def docker(container, n):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("docker", ["docker", "exec", "-it", "-u", "1000:1000", container, "cat"])
    time.sleep(1.5)
    while select.select([fd], [], [], 0.2)[0]:
        os.read(fd, 65536)
    rtts = []
    for i in range(n):
        k = KEYS[i % len(KEYS):i % len(KEYS) + 1]
        t0 = time.perf_counter()
        os.write(fd, k)
        got = b""
        while k not in got:
            select.select([fd], [], [], 5)
            got += os.read(fd, 65536)
        rtts.append((time.perf_counter() - t0) * 1e6)
    os.write(fd, b"\x04")
    os.close(fd)
    os.waitpid(pid, 0)
    return rtts

if sys.argv[1] == "ws":
    r = ws(sys.argv[2], sys.argv[3], int(sys.argv[4]))
else:
    r = docker(sys.argv[2], int(sys.argv[3]))
print("\n".join(f"{v:.0f}" for v in r))
