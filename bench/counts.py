#!/usr/bin/env python3
"""Targets 2 and 3 of issue 43 in counts rather than times: on a shared
machine times drift by a factor of two within minutes, where the number of
instructions a command executes (callgrind) and of system calls it makes
(strace -c) do not. On the pools of bench/run.py's row 9 (an empty one and
one of 10 000 experimaestro-style holders naming a live process, each with
its lock file index written), for each build given: a fresh
`tessera run --need r=1 -- true` and a fresh `tessera status`, their
instructions and system calls; the difference between the two pools is
what the 10 000 holders cost. With two builds (a before and an after),
the second's counts beside the first's.
    python3 bench/counts.py BUILD [BUILD...]
Needs valgrind and strace; the build trees' tessera, library and plugins
(a debugoptimized build names the functions for callgrind_annotate: the
profiles are kept when --keep DIR is given first)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cold_start import build_env
from run import holders_pool, interleaved


def instructions(argv, env, keep, name):
    """Instructions executed by ARGV's own process (not its children),
    counted by callgrind; its profile kept in KEEP as NAME when given."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(keep or tmp, f"callgrind.{name}")
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def system_calls(argv, env):
    """System calls made by ARGV and its children (strace -c -f's total)."""
    with tempfile.NamedTemporaryFile("r") as summary:
        subprocess.run(["strace", "-f", "-c", "-o", summary.name] + argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        total = [line for line in summary.read().splitlines() if line.rstrip().endswith("total")]
    return int(total[-1].split()[3]) if total else -1


def main():
    args = sys.argv[1:]
    keep = None
    if args[:1] == ["--keep"]:
        keep, args = os.path.abspath(args[1]), args[2:]
        os.makedirs(keep, exist_ok=True)
    builds = [os.path.abspath(b) for b in args]
    if not builds or not shutil.which("valgrind") or not shutil.which("strace"):
        sys.exit(__doc__)
    # A live process the holders name, for as long as the counts last.
    sleeper = subprocess.Popen(["sleep", "3600"])
    try:
        stat = open(f"/proc/{sleeper.pid}/stat").read().rsplit(")", 1)[1].split()
        process = {"type": "local", "pid": sleeper.pid, "start_time": int(stat[19])}
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"),
                       XDG_CACHE_HOME=os.path.join(tmp, "cache"))
            commands = {}
            for holders in (0, 10000):
                _, conf = holders_pool(tmp, holders, process)
                for build in builds:
                    tessera = os.path.join(build, "tools", "tessera")
                    commands[(build, "run", holders)] = [tessera, "--config", conf, "run", "--need", "r=1", "--",
                                                         "true"]
                    commands[(build, "status", holders)] = [tessera, "--config", conf, "status"]
            envs = {build: build_env(build, env) for build in builds}
            # Indexes written, as the bench's warm rounds leave them.
            interleaved(commands, lambda key: envs[key[0]], 0)
            counts = {}
            for (build, what, holders), argv in commands.items():
                name = f"{os.path.basename(build)}-{what}-{holders}"
                counts[(build, what, holders)] = (instructions(argv, envs[build], keep, name),
                                                  system_calls(argv, envs[build]))
    finally:
        sleeper.kill()
        sleeper.wait()
    first = builds[0]
    for build in builds:
        print(build)
        for what in ("run", "status"):
            zero, many = counts[(build, what, 0)], counts[(build, what, 10000)]
            line = (f"  {what:6}  instructions {zero[0]:>13,} / {many[0]:>13,} (0 / 10 000 holders)"
                    f"   system calls {zero[1]:>6,} / {many[1]:>6,}")
            if build != first:
                before = counts[(first, what, 10000)][0]
                line += f"   10 000 holders: {many[0] / before:.3f}× the first build's instructions"
            print(line)


if __name__ == "__main__":
    main()
