#!/usr/bin/env python3
"""Row 9 of bench/run.py alone: a fresh `tessera run` and a fresh
`tessera status` on a pool of 10 000 holders (alive: this script) against
an empty one, interleaved, medians and ratios.
    meson devenv -C BUILD python3 bench/cold_start.py BUILD [ROUNDS] [--keep DIR]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    build = os.path.abspath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    tessera = os.path.join(build, "tools", "tessera")
    st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    process = {"type": "local", "pid": os.getpid(), "start_time": int(st[19])}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        commands = {}
        for holders in (0, 10000):
            pool = os.path.join(tmp, f"pool{holders}")
            os.makedirs(os.path.join(pool, "jobs"))
            for i in range(holders):
                with open(os.path.join(pool, "jobs", f"other@{i}.json"), "w") as fp:
                    json.dump({"job_uri": os.path.join(tmp, "jobs", f"other{i}", "x"), "information": {"count": 1},
                               "process": process}, fp)
            conf = os.path.join(tmp, f"pool{holders}.conf")
            with open(conf, "w") as fp:
                fp.write(f"[resource r]\ntype=countertoken\npath={pool}\ntotal=1000000\n")
            commands[("run", holders)] = [tessera, "--config", conf, "run", "--need", "r=1", "--", "true"]
            commands[("status", holders)] = [tessera, "--config", conf, "status"]
        time.sleep(0.1)
        times = {key: [] for key in commands}
        for _ in range(2):
            for cmd in commands.values():
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if "--keep" in sys.argv:
            print("pool kept: interrupt to end;", " ".join(commands[("run", 10000)]), "env", tmp, flush=True)
            time.sleep(3600)
        for _ in range(rounds):
            for key, cmd in commands.items():
                start = time.monotonic_ns()
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[key].append((time.monotonic_ns() - start) / 1e6)
    for what in ("run", "status"):
        zero = statistics.median(times[(what, 0)])
        many = statistics.median(times[(what, 10000)])
        print(f"{what:6}  0 holders {zero:8.2f} ms   10 000 holders {many:8.2f} ms   ratio {many / zero:6.2f}×")


if __name__ == "__main__":
    main()
