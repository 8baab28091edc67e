#!/usr/bin/env python3
"""bench/placement/sim.py: 1,000 apps placed by Swarm's own rule over N
simulated nodes, then a simulated day of wakes and sleeps (about 20 % of
the apps awake at any moment).  Swarm has no dry-run API, so this is "on
paper", but executable: it models what the scheduler of the engine we
run (swarmkit as vendored in Docker 20.10) does with one 1-replica
service per sandbox, as sandboxd makes them.

Swarm's rule (swarmkit manager/scheduler, v20.10):
  1. filters: the node is ready and active, the service's constraints
     hold (node.labels.sandboxd.agent==1, sandboxd.drain!=1,
     sandboxd.disk!=full, and once placed sandboxd.node==<its node>), and
     the task's memory reservation fits what the node has not reserved
     yet (ResourceFilter);
  2. among the nodes left, nodeLess (scheduler.go): fewer recent failures,
     then fewer tasks of this service (always 0 or 1 here: one replica),
     then FEWER ACTIVE TASKS IN TOTAL.  Nothing looks at free memory or
     disk when choosing.  A service at 0 replicas has no task: a sleeping
     sandbox counts nothing; a paused (frozen) one counts as active.
sandboxd then pins the sandbox to the node holding its workspace, so a
wake can only go there: when the node's reservations are full the task
stays pending ("no suitable node"), the per-node pressure reaper stops the
least recently active sandbox there and the wake is asked once more;
counted as "evictions", and as "refused" when even that does not help.

Nodes are heterogeneous: memory classes 1:2:4 (16/32/64 GiB at N=3 scale)
and disk classes 4:1:2, independent of memory, both scaled so the whole
cluster holds the day's awake apps with 25 % headroom and every workspace
with 30 %.  Apps: memory limit 512 MiB (60 %), 1 GiB (30 %), 2 GiB (10 %),
reservation half the limit (SANDBOXD_MEMORY_RESERVE_MB=0); workspace sizes
log-normal, median 150 MB.  Each app's wake rate follows a Zipf-like
popularity (a few apps wake often); an awake app sleeps after 30 min on
average.

Runs with the disk fence off, with it on at creation only (the placement
probe's constraint), and on every service as COMMON decision 5 writes it
(so a pinned sandbox on a full node cannot wake at all).

  bench/placement/sim.py [--apps 1000] [--nodes 2,5,10,50] [--seed 31]
"""
import argparse
import math
import random

GIB = 1024 ** 3
MIB = 1024 ** 2
MB = 1000 ** 2


class Node:
    def __init__(self, name, mem, disk):
        self.name = name
        self.mem = mem          # reservable memory, bytes
        self.disk = disk        # bytes for workspaces
        self.reserved = 0
        self.active = 0         # Swarm's ActiveTasksCount
        self.disk_used = 0
        self.workspaces = 0
        self.peak_active = 0
        self.active_minutes = 0

    def disk_full(self):
        return self.disk_used >= 0.9 * self.disk


def make_apps(rng, n):
    apps = []
    for i in range(n):
        r = rng.random()
        limit = 512 * MIB if r < 0.6 else (GIB if r < 0.9 else 2 * GIB)
        ws = int(min(rng.lognormvariate(math.log(150 * MB), 0.9), 5000 * MB))
        apps.append({"id": i, "res": limit // 2, "ws": ws, "node": None,
                     "awake": False, "last": 0.0})
    # Zipf-like popularity, shuffled over the apps.
    weights = [1.0 / (k + 1) ** 0.8 for k in range(n)]
    rng.shuffle(weights)
    s = sum(weights)
    for a, w in zip(apps, weights):
        a["w"] = w / s
    return apps


def make_nodes(n, apps, awake_frac):
    mem_cls = [1, 2, 4]
    disk_cls = [4, 1, 2]
    mean_res = sum(a["res"] for a in apps) / len(apps)
    need_mem = awake_frac * len(apps) * mean_res * 1.25
    need_disk = sum(a["ws"] for a in apps) * 1.3
    mw = [mem_cls[i % 3] for i in range(n)]
    dw = [disk_cls[i % 3] for i in range(n)]
    return [Node("n%d" % (i + 1), int(need_mem * mw[i] / sum(mw)),
                 int(need_disk * dw[i] / sum(dw))) for i in range(n)]


def pick(nodes, app, fence_create, rng):
    """Swarm's filters then nodeLess; ties at random (swarmkit's node set
    has no order of its own)."""
    ok = [nd for nd in nodes
          if nd.mem - nd.reserved >= app["res"]
          and not (fence_create and nd.disk_full())]
    if not ok:
        return None
    best = min(nd.active for nd in ok)
    return rng.choice([nd for nd in ok if nd.active == best])


def run(n_nodes, n_apps, fence, seed, awake_frac=0.2, minutes=1440):
    """fence: "off", "create" (placement only) or "every" (every service)."""
    rng = random.Random(seed)
    apps = make_apps(rng, n_apps)
    nodes = make_nodes(n_nodes, apps, awake_frac)
    st = {"create_refused": 0, "disk_overflow": 0, "wakes": 0,
          "evictions": 0, "refused": 0, "fence_refused": 0}

    def wake(a, now):
        nd = a["node"]
        if fence == "every" and nd.disk_full():
            st["fence_refused"] += 1
            return False
        if nd.mem - nd.reserved < a["res"]:
            # the pressure reaper: stop the least recently active on nd
            cands = [b for b in apps if b["awake"] and b["node"] is nd]
            cands.sort(key=lambda b: b["last"])
            freed = nd.mem - nd.reserved
            victims = []
            for b in cands:
                if freed >= a["res"]:
                    break
                victims.append(b)
                freed += b["res"]
            if freed < a["res"]:
                st["refused"] += 1
                return False
            for b in victims:
                sleep(b)
                st["evictions"] += 1
        nd.reserved += a["res"]
        nd.active += 1
        nd.peak_active = max(nd.peak_active, nd.active)
        a["awake"] = True
        a["last"] = now
        return True

    def sleep(a):
        nd = a["node"]
        nd.reserved -= a["res"]
        nd.active -= 1
        a["awake"] = False

    # Creation: one after the other, each created awake (a create starts
    # its sandbox); the oldest awake one sleeps when more than the awake
    # share would be up.
    order = []
    for a in apps:
        nd = pick(nodes, a, fence in ("create", "every"), rng)
        if nd is None:
            # no reservation fits: the reaper frees the LRU awake app
            while order and nd is None:
                b = order.pop(0)
                if b["awake"]:
                    sleep(b)
                nd = pick(nodes, a, fence in ("create", "every"), rng)
        if nd is None:
            st["create_refused"] += 1
            continue
        a["node"] = nd
        nd.workspaces += 1
        nd.disk_used += a["ws"]
        if nd.disk_used > nd.disk:
            st["disk_overflow"] += 1
        nd.reserved += a["res"]
        nd.active += 1
        nd.peak_active = max(nd.peak_active, nd.active)
        a["awake"] = True
        order.append(a)
        while sum(1 for b in order if b["awake"]) > awake_frac * n_apps:
            b = order.pop(0)
            if b["awake"]:
                sleep(b)
    placed = [a for a in apps if a["node"] is not None]
    for nd in nodes:
        nd.peak_active = nd.active

    # The day: each minute an awake app sleeps with p 1/30; wakes arrive
    # Poisson with a mean that keeps the awake share, by popularity.
    lam = awake_frac * len(placed) / 30.0
    ws_ids = [a["id"] for a in placed]
    ws_w = [a["w"] for a in placed]
    awake_sum = {nd.name: 0 for nd in nodes}
    for m in range(minutes):
        for a in placed:
            if a["awake"] and rng.random() < 1 / 30.0:
                sleep(a)
        k = poisson(rng, lam)
        for i in rng.choices(ws_ids, weights=ws_w, k=k):
            a = apps[i]
            if a["awake"]:
                a["last"] = m
                continue
            st["wakes"] += 1
            wake(a, m)
        for nd in nodes:
            awake_sum[nd.name] += nd.active
            nd.peak_active = max(nd.peak_active, nd.active)
    return nodes, st, {k: v / minutes for k, v in awake_sum.items()}


def poisson(rng, lam):
    # Knuth for small means, normal approximation for large ones
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    l, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= l:
            return k
        k += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--apps", type=int, default=1000)
    ap.add_argument("--nodes", default="2,5,10,50")
    ap.add_argument("--seed", type=int, default=31)
    args = ap.parse_args()
    print("placement of %d apps by Swarm's rule (filters, then fewest active "
          "tasks), a simulated day, ~20 %% awake; seed %d" % (args.apps, args.seed))
    print("  awake = mean awake sandboxes per node over the day (peak in "
          "brackets); per GiB = mean awake per GiB of reservable memory")
    hdr = ("%-3s %-7s %-19s %-15s %-9s %-7s %-8s %-6s %-9s %-15s %-13s %-8s"
           % ("N", "fence", "awake min/max", "per GiB min/max", "wakes",
              "evict", "refused", "fenced", "no-place", "workspaces", "disk %",
              "overflow"))
    print(hdr)
    for n in [int(x) for x in args.nodes.split(",")]:
        for fence in ("off", "create", "every"):
            nodes, st, mean = run(n, args.apps, fence, args.seed)
            aw = [mean[nd.name] for nd in nodes]
            pk = [nd.peak_active for nd in nodes]
            pg = [mean[nd.name] / (nd.mem / GIB) for nd in nodes]
            wsn = [nd.workspaces for nd in nodes]
            du = [100.0 * nd.disk_used / nd.disk for nd in nodes]
            print("%-3d %-7s %-19s %-15s %-9d %-7d %-8d %-6d %-9d %-15s %-13s %-8d" % (
                n, fence,
                "%.1f/%.1f [%d/%d]" % (min(aw), max(aw), min(pk), max(pk)),
                "%.2f/%.2f" % (min(pg), max(pg)),
                st["wakes"], st["evictions"], st["refused"],
                st["fence_refused"], st["create_refused"],
                "%d/%d" % (min(wsn), max(wsn)),
                "%.0f/%.0f" % (min(du), max(du)), st["disk_overflow"]))
    print("  evict = sandboxes the per-node pressure reaper stopped so a pinned "
          "wake fits; refused = wakes that did not fit even so; fenced = wakes "
          "refused because their node is labelled sandboxd.disk=full; no-place = "
          "creates with no node; overflow = workspaces placed on a node whose "
          "disk they overflow")


if __name__ == "__main__":
    main()
