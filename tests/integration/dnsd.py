#!/usr/bin/env python3
"""A small authoritative DNS responder for the custom-domain tests.

    dnsd.py ADDR PORT ZONEFILE

Answers UDP queries on ADDR:PORT from ZONEFILE, read again at every query
so that a test changes an answer by rewriting it (whole, then renamed):
a JSON object {name: {"A": [addr, ...], "AAAA": [...], "CNAME": target}}.
A CNAME is answered with the target's records after it when the file has
them (as a recursive resolver does), else alone; with "alone": true it is
answered alone always (the asker must follow it with a query of its own).  A name not in the file
is NXDOMAIN; a name in it without the type asked is NOERROR with no
answer.  Prints "ready" once it listens.
"""
import ipaddress
import json
import socket
import struct
import sys

A, AAAA, CNAME = 1, 28, 5


def read_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels), off
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


def rr(name, rtype, rdata):
    return encode_name(name) + struct.pack("!HHIH", rtype, 1, 30, len(rdata)) + rdata


def answers(zone, name, qtype, depth=0):
    entry = zone.get(name.lower().rstrip("."))
    if entry is None or depth > 8:
        return None
    out = []
    if "CNAME" in entry and qtype != CNAME:
        target = entry["CNAME"]
        out.append(rr(name, CNAME, encode_name(target)))
        if entry.get("alone"):
            return out
        more = answers(zone, target, qtype, depth + 1)
        out += more or []
        return out
    key = {A: "A", AAAA: "AAAA"}.get(qtype)
    for addr in entry.get(key, []) if key else []:
        out.append(rr(name, qtype, ipaddress.ip_address(addr).packed))
    return out


def main():
    addr, port, zonefile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, port))
    print("ready", flush=True)
    while True:
        msg, peer = s.recvfrom(4096)
        try:
            qid, _flags, qd = struct.unpack("!HHH", msg[:6])
            name, off = read_name(msg, 12)
            qtype, _qclass = struct.unpack("!HH", msg[off:off + 4])
            question = msg[12:off + 4]
            with open(zonefile) as f:
                zone = json.load(f)
        except (ValueError, IndexError, struct.error, OSError):
            continue
        got = answers(zone, name, qtype)
        rcode = 3 if got is None else 0
        got = got or []
        head = struct.pack("!HHHHHH", qid, 0x8580 | rcode, 1, len(got), 0, 0)
        s.sendto(head + question + b"".join(got), peer)


if __name__ == "__main__":
    main()
