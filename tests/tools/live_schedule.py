#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""live_schedule.py - a random schedule of writers for the live-view tests.

  live_schedule.py WORKLOAD SEED SECONDS [GO_FILE]

Waits for GO_FILE (when given), then for about SECONDS runs a schedule drawn
from SEED: bursts of 1-3 short-lived processes of tracebuf-workload at once
(1-2 threads, 20-3000 events each, pinned to a CPU, or moving between CPUs with
sched_setaffinity every 1024 events: --hop, or paced), idle gaps of 0.3-0.9 s
(longer than the recorder's flush period in the tests), and now and then a slow
writer that lives across a gap.  Prints each step, then `written: N`, the events
all its processes wrote.
"""
import os
import random
import subprocess
import sys
import time

wl, seed, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
go = sys.argv[4] if len(sys.argv) > 4 else None
rng = random.Random(seed)
ncpu = os.cpu_count() or 1
if go:
    while not os.path.exists(go):
        time.sleep(0.02)
written = 0
running = []


def start(args):
    running.append(subprocess.Popen([wl] + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    print("  start", " ".join(args), flush=True)


def reap(block):
    global written
    for p in list(running):
        if block or p.poll() is not None:
            out, _ = p.communicate()
            if p.returncode != 0:
                sys.exit(f"live_schedule: a workload exited {p.returncode}")
            for line in out.splitlines():
                if line.startswith("written: "):
                    written += int(line.split()[1])
            running.remove(p)


end = time.monotonic() + seconds
while time.monotonic() < end:
    r = rng.random()
    if r < 0.55:  # a burst of short-lived processes
        for _ in range(rng.randint(1, 3)):
            a = ["--threads", str(rng.randint(1, 2)), "--events", str(rng.randint(20, 3000))]
            how = rng.random()
            if how < 0.4:
                a += ["--pin", str(rng.randrange(ncpu))]
            elif how < 0.7:
                a += ["--hop"]
            else:
                a += ["--sleep-us", str(rng.randint(1, 300))]
            start(a)
        reap(True)
    elif r < 0.65:  # a slow writer that lives across the next gap
        start(["--threads", "1", "--events", str(rng.randint(3, 12)), "--sleep-us", "150000"])
    else:  # an idle gap, longer than the flush period
        g = rng.uniform(0.3, 0.9)
        print(f"  idle {g:.2f} s", flush=True)
        time.sleep(g)
        reap(False)
reap(True)
print(f"written: {written}", flush=True)
