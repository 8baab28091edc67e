#!/usr/bin/env python3
"""A nodelink client for the tests (src/nodelink/nodelink.h): one request.

nlclient.py ADDR [--ca F] [--cert F --key F] [--plain] [--no-verify]
            [--req JSON] [--len N] [--timeout S]

Connects to ADDR (host:port) with TLS (the server's certificate checked
against --ca unless --no-verify; a client certificate when --cert/--key),
or over plain TCP with --plain, sends the frame (u32 big-endian length,
then the JSON header --req), or with --len N a length of N followed by as
many bytes as the server takes within the timeout, and prints one line:
  answer <json>            the server's framed answer
  closed <ms> <sent>       the server closed without an answer (after
                           <sent> bytes of ours)
  tls-error <ms> <why>     the handshake failed
  error <why>              anything else
"""
import argparse, json, socket, ssl, struct, sys, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("--ca")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--req", default='{"op":"facts"}')
    ap.add_argument("--len", type=int)
    ap.add_argument("--timeout", type=float, default=10)
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    t0 = time.monotonic()
    ms = lambda: int((time.monotonic() - t0) * 1000)
    try:
        raw = socket.create_connection((host, int(port)), timeout=a.timeout)
    except OSError as e:
        print("error connect:%s" % e)
        return
    s = raw
    if not a.plain:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        if a.no_verify or not a.ca:
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx.load_verify_locations(a.ca)
        if a.cert:
            ctx.load_cert_chain(a.cert, a.key)
        try:
            s = ctx.wrap_socket(raw, server_hostname=host)
            s.do_handshake()
        except (ssl.SSLError, OSError) as e:
            print("tls-error %d %s" % (ms(), str(e).replace(" ", "_")[:200]))
            return
    sent = 0
    try:
        if a.len is not None:
            s.sendall(struct.pack(">I", a.len))
            sent = 4
            chunk = b"{" + b" " * 65535
            while sent < a.len + 4:
                s.sendall(chunk)
                sent += len(chunk)
        else:
            body = a.req.encode()
            s.sendall(struct.pack(">I", len(body)) + body)
            sent = 4 + len(body)
    except (ssl.SSLError, OSError):
        pass
    try:
        head = b""
        while len(head) < 4:
            d = s.recv(4 - len(head))
            if not d:
                break
            head += d
        if len(head) < 4:
            print("closed %d %d" % (ms(), sent))
            return
        (n,) = struct.unpack(">I", head)
        if n > (1 << 20):
            print("error answer-too-long:%d" % n)
            return
        body = b""
        while len(body) < n:
            d = s.recv(n - len(body))
            if not d:
                break
            body += d
        try:
            print("answer " + json.dumps(json.loads(body)))
        except ValueError:
            print("error not-json:%r" % body[:100])
    except (ssl.SSLError, OSError) as e:
        print("closed %d %d %s" % (ms(), sent, str(e).replace(" ", "_")[:100]))


if __name__ == "__main__":
    main()
