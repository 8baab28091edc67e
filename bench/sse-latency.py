#!/usr/bin/env python3
"""bench/sse-latency.py: latency from a fake agent's output line to a client.

  sse-latency.py sse URL TOKEN
      follows a task's event stream; for each message event whose text is
      "line K t=NS" (the fake agent's clock, CLOCK_REALTIME, taken just before
      it wrote the line) prints the delay in ms until the event arrived here.
  sse-latency.py file PATH COUNT
      the reference: tails the agent's output file directly (polling every
      millisecond) and prints the same delays for COUNT lines.
"""
import http.client
import os
import re
import sys
import time
import urllib.parse

LINE = re.compile(rb'line (\d+) t=(\d+)')


def follow_sse(url, token):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    conn.request('GET', u.path, headers={'Authorization': 'Bearer ' + token})
    resp = conn.getresponse()
    if resp.status != 200:
        sys.exit(f'sse: HTTP {resp.status}')
    event = b''
    while True:
        line = resp.fp.readline()
        if not line:
            return
        now = time.time_ns()
        if line.startswith(b'event: '):
            event = line[7:].strip()
        elif line.startswith(b'data: ') and event == b'message':
            m = LINE.search(line)
            if m:
                print(f'{(now - int(m.group(2))) / 1e6:.3f}', flush=False)
        elif line.startswith(b'data: ') and event == b'done':
            return


def follow_file(path, count):
    while not os.path.exists(path):
        time.sleep(0.001)
    seen = 0
    with open(path, 'rb') as f:
        buf = b''
        while seen < count:
            chunk = f.read()
            if not chunk:
                time.sleep(0.001)
                continue
            now = time.time_ns()
            buf += chunk
            *lines, buf = buf.split(b'\n')
            for ln in lines:
                m = LINE.search(ln)
                if m:
                    print(f'{(now - int(m.group(2))) / 1e6:.3f}')
                    seen += 1


if __name__ == '__main__':
    if sys.argv[1] == 'sse':
        follow_sse(sys.argv[2], sys.argv[3])
    else:
        follow_file(sys.argv[2], int(sys.argv[3]))
