#!/usr/bin/env python3
"""Row 9 of bench/run.py alone: a fresh `tessera run` and a fresh
`tessera status` on a pool of 10 000 holders (alive: this script) against
an empty one, interleaved, medians and ratios; with several build
directories (a before and an after), all of them interleaved too. Also
timed alongside: `find` listing jobs/ (one readdir), and with a stat of
each file (what any check of every lock file's size and times costs, as a
whole process), and
`true` (what starting a process costs), so the floor a design that looks
at every file stands on is seen on the same machine in the same minutes.
    python3 bench/cold_start.py [--rounds N] [--keep] BUILD [BUILD...]"""
import os
import statistics
import sys
import tempfile
import time

from run import holders_pool, interleaved, self_process


def build_env(build, env):
    """The environment `meson devenv` gives: this build's plugins and library."""
    plugins = os.path.join(build, "plugins")
    return dict(env, TESSERA_PLUGIN_PATH=":".join(os.path.join(plugins, d) for d in sorted(os.listdir(plugins))
                                                  if os.path.isdir(os.path.join(plugins, d))),
                LD_LIBRARY_PATH=os.path.join(build, "core"))


def main():
    args = sys.argv[1:]
    rounds = 15
    if args[:1] == ["--rounds"]:
        rounds, args = int(args[1]), args[2:]
    keep = args[:1] == ["--keep"]
    builds = [os.path.abspath(b) for b in (args[1:] if keep else args)]
    process = self_process()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        commands = {}
        envs = {build: build_env(build, env) for build in builds}
        envs["floor"] = env
        for holders in (0, 10000):
            pool, conf = holders_pool(tmp, holders, process)
            commands[("floor", "find", holders)] = ["find", os.path.join(pool, "jobs"), "-maxdepth", "1", "-name",
                                                    "*.json", "-printf", "%i %s %T@ %C@\n"]
            commands[("floor", "list", holders)] = ["find", os.path.join(pool, "jobs"), "-maxdepth", "1", "-name",
                                                    "*.json"]
            commands[("floor", "true", holders)] = ["true"]
            for build in builds:
                tessera = os.path.join(build, "tools", "tessera")
                commands[(build, "run", holders)] = [tessera, "--config", conf, "run", "--need", "r=1", "--", "true"]
                commands[(build, "status", holders)] = [tessera, "--config", conf, "status"]
        time.sleep(0.1)
        times = interleaved(commands, lambda key: envs[key[0]], 0)
        if keep:   # for perf: the pools stay until interrupted
            print("pools and indexes kept in", tmp, "(HOME, XDG_CACHE_HOME=cache); interrupt to end", flush=True)
            time.sleep(3600)
        interleaved(commands, lambda key: envs[key[0]], rounds, warm=0, times=times)
    for build in builds:
        print(build)
        for what in ("run", "status"):
            zero = statistics.median(times[(build, what, 0)])
            many = statistics.median(times[(build, what, 10000)])
            print(f"  {what:6}  0 holders {zero:8.2f} ms   10 000 holders {many:8.2f} ms   ratio {many / zero:6.2f}×")
    print("floor (same runs): `true`; `find jobs/`, names only (list) and with a stat of each file (find)")
    for what in ("true", "list", "find"):
        zero = statistics.median(times[("floor", what, 0)])
        many = statistics.median(times[("floor", what, 10000)])
        print(f"  {what:6}  0 holders {zero:8.2f} ms   10 000 holders {many:8.2f} ms   ratio {many / zero:6.2f}×")


if __name__ == "__main__":
    main()
