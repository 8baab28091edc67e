#!/usr/bin/env python3
"""bench/proxy-client.py: runs inside a sandbox; times streamed answers.

  proxy-client.py ROUNDS DIRECT_URL DIRECT_KEY PROXY_URL PROXY_TOKEN

Alternates a streaming Anthropic Messages request sent straight to the
(fake) provider with the same request through the credential proxy, and
prints one line per request: "direct|proxy TTFB_MS TOTAL_MS BYTES".
A URL of "-" leaves that side out (e.g. "- -" for the proxy alone).
"""
import http.client
import json
import sys
import time
import urllib.parse

BODY = json.dumps({
    "model": "fake-model",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "Say hello."}],
}).encode()


def once(url, key):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    t0 = time.perf_counter()
    conn.request("POST", u.path, body=BODY, headers={
        "x-api-key": key,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    })
    resp = conn.getresponse()
    first = None
    n = 0
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        if first is None:
            first = time.perf_counter()
        n += len(chunk)
    end = time.perf_counter()
    conn.close()
    if resp.status != 200:
        sys.exit(f"{url}: HTTP {resp.status}")
    return (first - t0) * 1000, (end - t0) * 1000, n


def main():
    rounds = int(sys.argv[1])
    direct, dkey, proxy, ptoken = sys.argv[2:6]
    for _ in range(rounds):
        for name, url, key in (("direct", direct, dkey), ("proxy", proxy, ptoken)):
            if url == "-":
                continue
            ttfb, total, n = once(url, key)
            print(f"{name} {ttfb:.3f} {total:.3f} {n}", flush=True)


if __name__ == "__main__":
    main()
