#!/usr/bin/env python3
"""The seed's acquire/release cycle in Python (standard library only), as a
reference line for the benchmark: under ipc.lock (flock + lockf), re-read
every lock file, check the count, write the lock file in place; release
deletes it. Prints "median=… p10=… p90=… p99=… n=…" in microseconds.

    python_peer.py FOLDER OTHERS CYCLES
"""
import fcntl
import json
import os
import sys
import time


def cycle(folder, total):
    jobs = os.path.join(folder, "jobs")
    with open(os.path.join(folder, "ipc.lock"), "a+") as ipc:
        fcntl.flock(ipc, fcntl.LOCK_EX)
        fcntl.lockf(ipc, fcntl.LOCK_EX)
        used = 0
        for name in os.listdir(jobs):
            if name.endswith(".json"):
                with open(os.path.join(jobs, name)) as fp:
                    used += json.load(fp).get("information", {}).get("count", 0)
        assert used + 1 <= total
        path = os.path.join(jobs, "python@peer.json")
        with open(path, "wt") as fp:
            json.dump({"job_uri": "/x/peer", "information": {"count": 1}}, fp)
        fcntl.lockf(ipc, fcntl.LOCK_UN)
        fcntl.flock(ipc, fcntl.LOCK_UN)
    os.unlink(path)


def main():
    folder, others, cycles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    jobs = os.path.join(folder, "jobs")
    os.makedirs(jobs, exist_ok=True)
    for i in range(others):
        with open(os.path.join(jobs, f"other@{i}.json"), "wt") as fp:
            json.dump({"job_uri": "/x/other", "information": {"count": 1}}, fp)
    times = []
    for _ in range(cycles):
        start = time.monotonic_ns()
        cycle(folder, 10**6)
        times.append((time.monotonic_ns() - start) // 1000)
    times.sort()
    n = len(times)
    print(f"median={times[n // 2]} p10={times[n // 10]} p90={times[n * 9 // 10]} "
          f"p99={times[min(n - 1, n * 99 // 100)]} n={n}")


if __name__ == "__main__":
    main()
