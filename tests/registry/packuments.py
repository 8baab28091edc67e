#!/usr/bin/env python3
"""packuments.py DIR: writes DIR/packuments/<name>.json (a scoped name as
@scope/name.json) for every tarball listed in DIR/index.tsv: {name,
versions: {v: <the tarball's package.json> + dist {tarball, integrity,
shasum}}, dist-tags: {latest}}.  dist.tarball is the path on the registry
(serve.py puts its own base URL in front)."""
import hashlib
import json
import os
import re
import sys
import tarfile


def vkey(v):
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)(-.*)?", v)
    if not m:
        return (0, 0, 0, 0, v)
    # A release sorts after its pre-releases.
    return (int(m[1]), int(m[2]), int(m[3]), 0 if m[4] else 1, m[4] or "")


def manifest(tgz):
    with tarfile.open(tgz, "r:gz") as t:
        for m in t:
            parts = m.name.split("/")
            if m.isfile() and len(parts) == 2 and parts[1] == "package.json":
                return json.load(t.extractfile(m))
    raise ValueError("%s: no package.json" % tgz)


def main():
    top = sys.argv[1]
    names = {}
    with open(os.path.join(top, "index.tsv")) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            path, integrity = line.split("\t")
            name = path[1:].split("/-/")[0]
            tgz = os.path.join(top, "tarballs", path[1:])
            pj = manifest(tgz)
            with open(tgz, "rb") as b:
                sha1 = hashlib.sha1(b.read()).hexdigest()
            pj.pop("readme", None)
            pj["name"] = name
            pj["_id"] = "%s@%s" % (name, pj["version"])
            pj["dist"] = {"tarball": path, "integrity": integrity, "shasum": sha1}
            names.setdefault(name, {})[pj["version"]] = pj
    out = os.path.join(top, "packuments")
    for name, versions in names.items():
        latest = max(versions, key=vkey)
        doc = {"name": name, "versions": versions, "dist-tags": {"latest": latest}}
        p = os.path.join(out, name + ".json")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p + ".tmp", "w") as f:
            json.dump(doc, f, separators=(",", ":"))
        os.replace(p + ".tmp", p)
    print("test-registry: %d packuments" % len(names))


main()
