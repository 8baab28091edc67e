#!/usr/bin/env python3
"""A terminal's WebSocket client for the tests (docs/api.md, "Terminal").

wsterm.py API_URL TICKET [--send TEXT]... [--after S] [--read-for S]
          [--slow BYTES_PER_S] [--resize COLSxROWS] [--origin O]
          [--pause-for S]

Opens GET /v1/terminal?ticket=TICKET, sends a resize and each TEXT as
stdin (channel 0) after S seconds, then reads for --read-for seconds
(or until the exit message), at most BYTES_PER_S when --slow.  Prints
the output (channel 1 and 2) to stdout, and on stderr "status:", "exit:"
lines with the control messages, and "http: CODE" when the upgrade is
refused.  --pause-for S: sends {"type":"pause"} at once and
{"type":"resume"} S seconds later, then prints "paused-bytes: N" (the
output that came from 1 s after the pause until the resume) and at the
end "resumed-bytes: N" (the output after the resume).  Exit status 0
once upgraded.
"""
import base64, json, os, socket, struct, sys, time, urllib.parse

def frame(op, data):
    mask = os.urandom(4)
    n = len(data)
    if n < 126:
        head = struct.pack("!BB", 0x80 | op, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | op, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | op, 0x80 | 127, n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))

def main():
    a = sys.argv[1:]
    url, ticket = a[0], a[1]
    sends, after, read_for, slow, resize, origin = [], 1.0, 5.0, 0, None, None
    pause_for = None
    i = 2
    while i < len(a):
        k, v = a[i], a[i + 1]
        if k == "--send": sends.append(v.encode().decode("unicode_escape").encode())
        elif k == "--after": after = float(v)
        elif k == "--read-for": read_for = float(v)
        elif k == "--slow": slow = int(v)
        elif k == "--resize": resize = v
        elif k == "--origin": origin = v
        elif k == "--pause-for": pause_for = float(v)
        i += 2
    u = urllib.parse.urlparse(url)
    s = socket.create_connection((u.hostname, u.port or 80))
    key = base64.b64encode(os.urandom(16)).decode()
    req = (f"GET /v1/terminal?ticket={ticket} HTTP/1.1\r\nHost: {u.netloc}\r\n"
           "Upgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n")
    if origin: req += f"Origin: {origin}\r\n"
    s.sendall((req + "\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d: break
        buf += d
    head, _, buf = buf.partition(b"\r\n\r\n")
    code = int(head.split()[1]) if head else 0
    if code != 101:
        print(f"http: {code}", file=sys.stderr)
        return 1
    if resize:
        c, r = resize.split("x")
        s.sendall(frame(1, json.dumps({"type": "resize", "cols": int(c), "rows": int(r)}).encode()))
    if pause_for is not None:
        s.sendall(frame(1, b'{"type":"pause"}'))
    start = time.time()
    paused_bytes = resumed_bytes = 0
    resumed = False
    sent = False
    got = 0
    s.settimeout(0.2)
    out = sys.stdout.buffer
    while time.time() - start < read_for:
        if pause_for is not None and not resumed and time.time() - start >= pause_for:
            print(f"paused-bytes: {paused_bytes}", file=sys.stderr, flush=True)
            s.sendall(frame(1, b'{"type":"resume"}'))
            resumed = True
        if not sent and time.time() - start >= after:
            for t in sends:
                s.sendall(frame(2, b"\x00" + t))
            sent = True
        if slow and got > slow * (time.time() - start):
            time.sleep(0.05)
            continue
        while len(buf) >= 2:
            op, n = buf[0] & 0x0f, buf[1] & 0x7f
            h = 2
            if n == 126:
                if len(buf) < 4: break
                n, h = struct.unpack("!H", buf[2:4])[0], 4
            elif n == 127:
                if len(buf) < 10: break
                n, h = struct.unpack("!Q", buf[2:10])[0], 10
            if len(buf) < h + n: break
            p, buf = buf[h:h + n], buf[h + n:]
            if op == 2 and p:
                if not slow: out.write(p[1:]); out.flush()
                if pause_for is not None:
                    el = time.time() - start
                    if el >= pause_for: resumed_bytes += len(p) - 1
                    elif el >= 1: paused_bytes += len(p) - 1
            elif op == 1:
                m = json.loads(p)
                print(f"{m['type']}: {json.dumps(m)}", file=sys.stderr, flush=True)
                if m["type"] == "exit": read_for = 0
            elif op == 8:
                read_for = 0
        if read_for == 0:
            break
        try:
            d = s.recv(4096 if slow else 65536)
        except socket.timeout:
            continue
        if not d: break
        got += len(d)
        buf += d
    s.close()
    if pause_for is not None:
        print(f"resumed-bytes: {resumed_bytes}", file=sys.stderr, flush=True)
    return 0

sys.exit(main())
