#!/usr/bin/env python3
"""Runs every benchmark of bench/ and prints one markdown table.

Run through bench/run.sh (which builds, installs the peers' packages and
uses the build tree's `tessera`, plugins and tessera-bench). Figures are
medians with their spread, measured in one run on this machine; ratios are
what the targets are about.
"""
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# bench/cold_start.py imports the helpers below: no build named then.
# --quick: only the rows of issue 43's targets, with fewer rounds.
# --etcd: only the etcd store's rows (and the folder's figures they are
# compared with).
ARGS = sys.argv[1:] if __name__ == "__main__" else []
QUICK = "--quick" in ARGS
ETCD_ONLY = "--etcd" in ARGS
BUILD = ([a for a in ARGS if a not in ("--quick", "--etcd")] or [""])[0]
HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(BUILD, "bench", "tessera-bench")
FLOOR = os.path.join(BUILD, "bench", "tessera-floor")
TESSERA = os.path.join(BUILD, "tools", "tessera")
# A one-member etcd on free loopback ports, as the etcd tests start it.
FIXTURE = os.path.join(HERE, "..", "tests", "etcd-fixture.sh")
ETCD_LEASE = 3
rows = []
# Issue 43's targets, each beside its floor measured in the same run:
# (target number, what, figure, floor, figure of the floor, goal, ratio and
# whether met).
targets = []
folder_store = {}   # the folder store's figures the etcd rows compare with


def parse(text):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def row(what, median, spread, target="", met=""):
    rows.append((what, median, spread, target, met))


def target(number, what, figure, floor, floor_figure, goal, ratio, limit):
    """A row of issue 43's table: RATIO (figure over floor) against LIMIT."""
    targets.append((str(number), what, figure, floor, floor_figure, goal,
                    f"{ratio:.2f}× — {'met' if ratio <= limit else 'not met'}"))


def stats_us(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2], values[n // 10], values[n * 9 // 10], values[min(n - 1, n * 99 // 100)]


def cycle():
    base = None
    for others in (0, 10000) if QUICK else (0, 100, 1000, 10000):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run([BENCH, "cycle", os.path.join(tmp, "tok"), str(others), "100" if QUICK else "300"],
                                 check=True, capture_output=True, text=True).stdout
        s = parse(out)
        if others == 0:
            base = folder_store["cycle"] = s["median"]
            row("1. acquire+release, C API, 0 other holders", f"{s['median']} µs", f"p10 {s['p10']}, p90 {s['p90']} µs")
        else:
            ratio = s["median"] / base
            row(f"1. acquire+release, C API, {others} other holders", f"{s['median']} µs",
                f"p10 {s['p10']}, p90 {s['p90']} µs",
                "10 000 within 2× of 0" if others == 10000 else "",
                (f"{ratio:.2f}× — {'met' if ratio <= 2 else 'missed'}") if others == 10000 else f"{ratio:.2f}×")
            if others == 10000:
                target(5, "warm process: acquire+release, C API, 10 000 other holders", f"{s['median']} µs",
                       "the same with 0 other holders", f"{base} µs", "within 2×", ratio, 2)


def handover_latencies(env=None):
    """Two processes pass a 1-token countertoken back and forth: the µs
    from one's release to the other's acquisition."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log")
        folder = os.path.join(tmp, "tok")
        procs = [subprocess.Popen([BENCH, "handover", folder, role, "120", log], env=env) for role in ("a", "b")]
        for p in procs:
            p.wait()
        events = sorted((int(t), k, r) for k, t, r in (line.split() for line in open(log)))
    latencies = []
    last_release = None
    for t, kind, role in events:
        if kind == "R":
            last_release = (t, role)
        elif last_release is not None and last_release[1] != role:
            latencies.append(t - last_release[0])
            last_release = None
    return latencies


def handover():
    latencies = handover_latencies()
    p50, p10, p90, p99 = stats_us(latencies)
    folder_store["handover"] = p50
    row(f"2. hand-over latency between processes ({len(latencies)} hand-overs)",
        f"p50 {p50 / 1000:.2f} ms", f"p10 {p10 / 1000:.2f}, p99 {p99 / 1000:.2f} ms",
        "p50 < 2 ms, p99 < 20 ms", "met" if p50 < 2000 and p99 < 20000 else "missed")
    targets.append(("5", "hand-over p50 between processes", f"{p50 / 1000:.2f} ms", "", "", "p50 < 0.5 ms",
                    "met" if p50 < 500 else "not met"))


def throughput_in(where=None, seconds=5, raw=False):
    """16 processes on a capacity of 4 for SECONDS in a pool under WHERE:
    Tessera's countertoken, or (RAW) tessera-floor's raw flock(2) on 4
    files; each process's line (count, context switches, CPU µs)."""
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        log = os.path.join(tmp, "log")
        folder = os.path.join(tmp, "tok")
        procs = [subprocess.Popen([BENCH, "throughput", folder, str(seconds), log] if not raw else
                                  [FLOOR, "flock", folder, str(seconds), log]) for _ in range(16)]
        for p in procs:
            p.wait()
        lines = [[int(x) for x in line.split()] for line in open(log)]
    return lines


def throughput():
    """On the disk's file system (as /tmp is here) and, to tell Tessera's
    cost from the file system's (ext4 allocates an inode per lock file,
    a cost that grows with recent deletions), on a tmpfs."""
    places = [(None, "pool in " + tempfile.gettempdir())]
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        places.append(("/dev/shm", "pool on tmpfs (/dev/shm)"))
    seconds = 2 if QUICK else 5
    for where, label in places:
        # Tessera and raw flock(2), one after the other on the same file system.
        lines = throughput_in(where, seconds)
        raw = [line[0] for line in throughput_in(where, seconds, raw=True)]
        raw_rate = sum(raw) / seconds
        raw_spread = max(raw) / max(1, min(raw))
        counts = [line[0] for line in lines]
        total = sum(counts)
        rate = total / seconds
        spread = max(counts) / max(1, min(counts))
        # Where the time goes: context switches and CPU of all 16 processes
        # (their poller threads included) per acquisition.
        switches = sum(line[1] for line in lines) / max(1, total)
        cpu_us = sum(line[2] for line in lines) / max(1, total)
        met = rate >= 1500 and spread <= 1.5
        row(f"3. throughput, 16 processes on a capacity-4 token, {seconds} s, {label}", f"{rate:.0f} acquisitions/s",
            f"per process {min(counts)}–{max(counts)} (max/min {spread:.2f}); "
            f"per acquisition {switches:.0f} context switches, {cpu_us:.0f} µs of CPU",
            "≥ 1 500/s, slowest ≥ ⅔ of the fastest (max/min ≤ 1.5)", "met" if met else "missed")
        row(f"3. the same 16 processes sharing a count of 4 under raw flock(2), {label}", f"{raw_rate:.0f} takes/s",
            f"per process {min(raw)}–{max(raw)} (max/min {raw_spread:.2f})")
        targets.append(("5", f"16 processes on a capacity-4 token, {label}",
                        f"{rate:.0f}/s, max/min {spread:.2f}", "the same with raw flock(2)",
                        f"{raw_rate:.0f}/s, max/min {raw_spread:.2f}",
                        "at least as fast; busiest within 1.5× of the least busy",
                        f"{raw_rate / max(1, rate):.2f}× — {'met' if rate >= raw_rate and spread <= 1.5 else 'not met'}"))


def polling():
    """A waiter on a network file system (no inotify): ipc.lock takes per
    second once its back-off has grown (seconds 10 to 20)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TESSERA_NO_INOTIFY="1")
        out = subprocess.run([BENCH, "polling", os.path.join(tmp, "tok")], env=env,
                             capture_output=True, text=True, check=True).stdout
    rate = parse(out)["millirate"] / 1000
    row("7. ipc.lock takes per second of a waiter without inotify, after 10 s", f"{rate:.2f}/s",
        "one take per poll; the interval grows to 2 s", "≤ 1/s", "met" if rate <= 1 else "missed")


ROUNDS = 10 if QUICK else 30   # of each whole command, interleaved
PATIENCE = 2
BIG_REQUESTS = 5
# Each request: a second's pause, then at most patience + 1 s to be
# served; the 1-token stream outlasts them all with a margin, so every one
# is served among it, not by its end.
STREAM_SECONDS = BIG_REQUESTS * (1 + PATIENCE + 1) + 5


def large_among_small():
    """Starvation: 4-token requests, one after the other, among 16
    processes cycling on 1 token each of a 4-token countertoken; and how
    evenly those 16 were served meanwhile."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log")
        folder = os.path.join(tmp, "tok")
        # A 2 s patience instead of 60 s, so the row takes seconds.
        env = dict(os.environ, TESSERA_PATIENCE=str(PATIENCE))
        start = time.monotonic()
        procs = [subprocess.Popen([BENCH, "throughput", folder, str(STREAM_SECONDS), log], env=env)
                 for _ in range(16)]
        waits = []
        for _ in range(BIG_REQUESTS):
            time.sleep(1)
            s = parse(subprocess.run([BENCH, "big", folder, "4", "10"], capture_output=True, text=True,
                                     check=True, env=env).stdout)
            waits.append(s["wait"] if s["served"] else -1)
        among = time.monotonic() - start < STREAM_SECONDS
        if any(p.wait() != 0 for p in procs):
            raise RuntimeError("a 1-token process of row 8 failed")
        counts = [int(line.split()[0]) for line in open(log)]
    served = sorted(w for w in waits if w >= 0)
    longest = max(waits) if len(served) == len(waits) else -1
    row(f"8. longest wait of a 4-token request among 1-token requests ({BIG_REQUESTS} requests)",
        f"longest {longest / 1e6:.2f} s" if longest >= 0 else f"{len(waits) - len(served)} not served in 10 s",
        f"median {served[len(served) // 2] / 1e6:.2f} s" if served else "",
        f"≤ patience + 1 s (patience {PATIENCE} s here, 60 s by default)",
        "met" if among and 0 <= longest <= (PATIENCE + 1) * 1e6 else "missed")
    spread = max(counts) / max(1, min(counts))
    row(f"8. per-process spread: acquisitions of each of those 16 processes in {STREAM_SECONDS} s",
        f"max/min {spread:.2f}", f"per process {min(counts)}–{max(counts)}",
        "slowest ≥ ⅔ of the fastest (max/min ≤ 1.5)", "met" if spread <= 1.5 else "missed")


_installed = {}


def installed_tessera():
    """The `tessera` of `meson install --destdir` into a temporary folder,
    with the environment it runs in as installed (no TESSERA_PLUGIN_PATH,
    no LD_LIBRARY_PATH): the build tree's copy carries a padded run path
    (`$ORIGIN/../core:XXXX…`) whose folders the loader searches in vain at
    every start, which an installed binary does not. None when it cannot
    be had (then the build tree's copy is timed)."""
    if "tool" not in _installed:
        dest = tempfile.mkdtemp(prefix="tessera-bench-install-")
        _installed["dest"] = dest
        _installed["tool"] = None
        try:
            subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", dest],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            info = json.loads(subprocess.run(["meson", "introspect", "--buildoptions", BUILD], check=True,
                                             capture_output=True, text=True).stdout)
            opts = {o["name"]: o["value"] for o in info}
            bindir = opts["bindir"]
            if not os.path.isabs(bindir):
                bindir = os.path.join(opts["prefix"], bindir)
            tool = os.path.join(dest + bindir, "tessera")
            if os.access(tool, os.X_OK):
                _installed["tool"] = tool
        except (OSError, subprocess.CalledProcessError, KeyError, ValueError):
            pass
    return _installed["tool"]


def run_path(path):
    """The DT_RUNPATH (or DT_RPATH) of the ELF file PATH, as readelf shows it; None without."""
    try:
        out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.search(r"Library (?:runpath|rpath): \[([^]]*)\]", out)
    return m.group(1) if m else None


def installed_floor():
    """tessera-floor as the installed `tessera` is: a copy beside it whose
    run path is the installed one's, rewritten in place as `meson install`
    rewrites a program's (the build tree's is padded, and its folders are
    searched in vain at every start). The build tree's copy when there is
    no installed `tessera` or its run path cannot be rewritten."""
    tool = installed_tessera()
    if tool is None:
        return FLOOR
    if "floor" not in _installed:
        _installed["floor"] = FLOOR
        old, new = run_path(FLOOR), run_path(tool) or ""
        with open(FLOOR, "rb") as fp:
            data = bytearray(fp.read())
        at = data.find(old.encode() + b"\0") if old else -1
        if old is None or (at >= 0 and len(new) <= len(old)):
            if at >= 0:
                data[at:at + len(old)] = new.encode() + b"\0" * (len(old) - len(new))
            copy = os.path.join(os.path.dirname(tool), "tessera-floor")
            with open(copy, "wb") as fp:
                fp.write(data)
            os.chmod(copy, 0o755)
            _installed["floor"] = copy
    return _installed["floor"]


def installed_env(env):
    env = dict(env)
    for name in ("TESSERA_PLUGIN_PATH", "LD_LIBRARY_PATH"):
        env.pop(name, None)
    return env


def command_overhead():
    tool = installed_tessera() or TESSERA
    where = "installed" if tool != TESSERA else "build tree"
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "tessera.conf")
        with open(conf, "w") as fp:
            fp.write(f"[resource x]\ntype=countertoken\npath={tmp}/x\ntotal=1\n")
        lockfile = os.path.join(tmp, "flock")
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"))
        if tool != TESSERA:
            env = installed_env(env)
        commands = {"tessera": [tool, "--config", conf, "run", "--need", "x=1", "--", "true"],
                    "floor": [installed_floor() if tool != TESSERA else FLOOR, "exec", "true"]}
        if shutil.which("flock"):
            commands["flock"] = ["flock", lockfile, "true"]
        if shutil.which("sem"):
            commands["sem"] = ["sem", "--will-cite", "--id", "tessera-bench", "true"]
        times = {name: [] for name in commands}
        for _ in range(3):   # warm caches
            for cmd in commands.values():
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(ROUNDS):  # interleaved
            for name, cmd in commands.items():
                start = time.monotonic_ns()
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                times[name].append((time.monotonic_ns() - start) / 1e6)
    med = {name: statistics.median(v) for name, v in times.items()}
    run_what = f"`tessera run --need x=1 -- true` ({where})"
    for name, values in times.items():
        values.sort()
        spread = f"p10 {values[len(values) // 10]:.2f}, p90 {values[len(values) * 9 // 10]:.2f} ms"
        if name == "tessera":
            row(f"4. {run_what}", f"{med[name]:.2f} ms", spread)
        elif name == "floor":
            ratio = med["tessera"] / med["floor"]
            row(f"4. empty program linked as `tessera`, fork+exec of `true` ({where})", f"{med[name]:.2f} ms",
                spread, "tessera within 1.4× of it", f"{ratio:.2f}× — {'met' if ratio <= 1.4 else 'missed'}")
            target(1, run_what, f"{med['tessera']:.2f} ms",
                   "an empty program linked against the same libraries, fork+exec of `true`",
                   f"{med[name]:.2f} ms", "within 1.4×", ratio, 1.4)
        elif name == "flock":
            ratio = med["tessera"] / med["flock"]
            row("4. `flock FILE true` (util-linux)", f"{med[name]:.2f} ms", spread,
                "tessera within 2× of flock", f"{ratio:.2f}× — {'met' if ratio <= 2 else 'missed'}")
            target(1, run_what, f"{med['tessera']:.2f} ms", "`flock FILE true`", f"{med[name]:.2f} ms",
                   "within 2×", ratio, 2)
        else:
            ratio = med["tessera"] / med["sem"]
            row("4. `sem --id x true` (GNU parallel)", f"{med[name]:.2f} ms", spread,
                "tessera far below sem", f"tessera/sem {ratio:.2f}× — {'met' if ratio < 0.5 else 'missed'}")
    if "sem" not in med:
        row("4. `sem --id x true` (GNU parallel)", "n/a", "sem not installed")


def no_wait_overhead():
    """`tessera run --no-wait` on a busy resource against `flock -n` on a
    held lock: both give up at once (exit 75 and 1). Whole processes,
    interleaved."""
    tool = installed_tessera() or TESSERA
    where = "installed" if tool != TESSERA else "build tree"
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "tessera.conf")
        with open(conf, "w") as fp:
            fp.write(f"[resource x]\ntype=countertoken\npath={tmp}/x\ntotal=1\n")
        lockfile = os.path.join(tmp, "flock")
        open(lockfile, "w").close()
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"))
        if tool != TESSERA:
            env = installed_env(env)
        # The holders: a run that keeps x, a flock that keeps the file.
        ready = os.path.join(tmp, "ready")
        holders = [subprocess.Popen([tool, "--config", conf, "run", "--need", "x=1", "--",
                                     "sh", "-c", f": > {ready}; exec sleep 600"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        commands = {"tessera": ([tool, "--config", conf, "run", "--no-wait", "--need", "x=1", "--", "true"], 75),
                    "floor": ([installed_floor() if tool != TESSERA else FLOOR, "none"], 0)}
        if shutil.which("flock"):
            # flock(1) does not pass SIGTERM on to its command: a group of
            # its own, ended whole, so no sleep outlives the bench.
            holders.append(subprocess.Popen(["flock", lockfile, "sleep", "600"], start_new_session=True))
            commands["flock"] = (["flock", "-n", lockfile, "true"], 1)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(ready) and time.monotonic() < deadline:
                time.sleep(0.01)
            times = {name: [] for name in commands}
            for _ in range(3):   # warm caches, and check that both refuse
                for name, (cmd, refused) in commands.items():
                    status = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL).returncode
                    if status != refused:
                        raise RuntimeError(f"{name} --no-wait exited {status}, not {refused}")
            for _ in range(ROUNDS):  # interleaved
                for name, (cmd, _) in commands.items():
                    start = time.monotonic_ns()
                    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    times[name].append((time.monotonic_ns() - start) / 1e6)
        finally:
            for p in holders:
                if p.args[0] == "flock":
                    os.killpg(p.pid, signal.SIGTERM)
                else:
                    p.terminate()
                p.wait()
    med = {name: statistics.median(v) for name, v in times.items()}
    run_what = f"`tessera run --no-wait --need x=1 -- true`, x busy ({where})"
    for name, values in times.items():
        values.sort()
        spread = f"p10 {values[len(values) // 10]:.2f}, p90 {values[len(values) * 9 // 10]:.2f} ms"
        if name == "tessera":
            row(f"4. {run_what}", f"{med[name]:.2f} ms", spread)
        elif name == "floor":
            ratio = med["tessera"] / med["floor"]
            row(f"4. empty program linked as `tessera`, no command ({where})", f"{med[name]:.2f} ms", spread,
                "tessera --no-wait within 1.4× of it", f"{ratio:.2f}× — {'met' if ratio <= 1.4 else 'missed'}")
            target(1, run_what, f"{med['tessera']:.2f} ms",
                   "an empty program linked against the same libraries (it starts no command either)",
                   f"{med[name]:.2f} ms", "within 1.4×", ratio, 1.4)
        else:
            ratio = med["tessera"] / med["flock"]
            row("4. `flock -n FILE true` (util-linux), FILE locked", f"{med[name]:.2f} ms", spread,
                "tessera within 2× of flock -n", f"{ratio:.2f}× — {'met' if ratio <= 2 else 'missed'}")
            target(1, run_what, f"{med['tessera']:.2f} ms", "`flock -n FILE true`, FILE locked",
                   f"{med[name]:.2f} ms", "within 2×", ratio, 2)


def memory():
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "tessera.conf")
        with open(conf, "w") as fp:
            fp.write(f"[resource x]\ntype=countertoken\npath={tmp}/x\ntotal=1\n")
        env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"))
        if shutil.which("/usr/bin/time") or os.path.exists("/usr/bin/time"):
            out = subprocess.run(["/usr/bin/time", "-f", "%M", TESSERA, "--config", conf, "run", "--need", "x=1",
                                  "--", "true"], env=env, capture_output=True, text=True).stderr
            row("5. peak RSS of `tessera run … -- true`", f"{int(out.strip().splitlines()[-1]) / 1024:.1f} MiB",
                "one run (the command's own RSS not included)")
        out = subprocess.run([BENCH, "hold", os.path.join(tmp, "held")], env=env, check=True,
                             capture_output=True, text=True).stdout
        row("5. peak RSS of a process holding one token through the API",
            f"{parse(out)['maxrss_kib'] / 1024:.1f} MiB", "one run")


def python_peer():
    results = {}
    for others, cycles in ((0, 300), (10000, 20)):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run([sys.executable, os.path.join(HERE, "python_peer.py"), os.path.join(tmp, "p"),
                                  str(others), str(cycles)], check=True, capture_output=True, text=True).stdout
        s = parse(out)
        results[others] = s["median"]
        row(f"6. reference: the seed's cycle in Python, {others} other holders", f"{s['median']} µs",
            f"p10 {s['p10']}, p90 {s['p90']} µs", "", f"{s['median'] / results[0]:.0f}×" if others else "")


def self_process():
    """This script's process spec, start time included: holders it plants
    are alive while it runs."""
    st = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    return {"type": "local", "pid": os.getpid(), "start_time": int(st[19])}


def holders_pool(tmp, holders, process):
    """A countertoken pool under TMP with HOLDERS lock files naming
    PROCESS, and its key file: (pool folder, key file)."""
    pool = os.path.join(tmp, f"pool{holders}")
    os.makedirs(os.path.join(pool, "jobs"))
    for i in range(holders):
        with open(os.path.join(pool, "jobs", f"other@{i}.json"), "w") as fp:
            json.dump({"job_uri": os.path.join(tmp, "jobs", f"other{i}", "x"), "information": {"count": 1},
                       "process": process}, fp)
    conf = os.path.join(tmp, f"pool{holders}.conf")
    with open(conf, "w") as fp:
        fp.write(f"[resource r]\ntype=countertoken\npath={pool}\ntotal=1000000\n")
    return pool, conf


def interleaved(commands, env_of, rounds, warm=2, times=None, outputs=None):
    """Runs each command of COMMANDS (key → argv, environment
    ENV_OF(key)) WARM times untimed (indexes written, caches warm), then
    ROUNDS times timed, interleaved; adds the times in ms to TIMES
    (key → list, made if None) and returns it. For a key of OUTPUTS (key →
    list), the timed runs' standard outputs are added to its list."""
    times = times if times is not None else {key: [] for key in commands}
    outputs = outputs if outputs is not None else {}
    for _ in range(warm):
        for key, cmd in commands.items():
            subprocess.run(cmd, env=env_of(key), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(rounds):
        for key, cmd in commands.items():
            start = time.monotonic_ns()
            done = subprocess.run(cmd, env=env_of(key), check=True, stderr=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE if key in outputs else subprocess.DEVNULL)
            times[key].append((time.monotonic_ns() - start) / 1e6)
            if key in outputs:
                outputs[key].append(done.stdout.decode())
    return times


def cold_start():
    """A fresh `tessera run` and a fresh `tessera status` on a pool of
    10 000 holders (alive: this script) against an empty one, once each
    pool's lock file index is written (issue 16, item 2); and against
    their floors of issue 43, in the same rounds: the run with none plus
    reading jobs/ once (its names and a stat of each, timed inside
    tessera-floor), and `ls -l jobs/` plus reading each file once (timed
    inside tessera-floor). The installed `tessera`, as row 4's."""
    process = self_process()
    tool = installed_tessera() or TESSERA
    where = "installed" if tool != TESSERA else "build tree"
    rounds = 7 if QUICK else 15
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_CACHE_HOME=os.path.join(tmp, "cache"))
        if tool != TESSERA:
            env = installed_env(env)
        commands = {}
        for holders in (0, 10000):
            pool, conf = holders_pool(tmp, holders, process)
            commands[("run", holders)] = [tool, "--config", conf, "run", "--need", "r=1", "--", "true"]
            commands[("status", holders)] = [tool, "--config", conf, "status"]
        jobs = os.path.join(pool, "jobs")
        commands[("ls", 10000)] = ["ls", "-l", jobs]
        commands[("scan", 10000)] = [FLOOR, "scan", jobs]
        commands[("read", 10000)] = [FLOOR, "read", jobs]
        outputs = {("scan", 10000): [], ("read", 10000): []}
        time.sleep(0.1)   # older than a clock tick of the file system: the index may hold them
        times = interleaved(commands, lambda key: env, rounds, outputs=outputs)
    med = {key: statistics.median(values) for key, values in times.items()}
    inside = {key[0]: statistics.median(parse(text)["us"] / 1000 for text in texts) for key, texts in outputs.items()}
    for what, label in (("run", "`tessera run --need r=1 -- true`"), ("status", "`tessera status`")):
        for holders in (0, 10000):
            values = sorted(times[(what, holders)])
            spread = f"p10 {values[len(values) // 10]:.2f}, p90 {values[len(values) * 9 // 10]:.2f} ms"
            if holders == 0:
                row(f"9. fresh {label}, 0 holders ({where})", f"{med[(what, 0)]:.2f} ms", spread)
            else:
                ratio = med[(what, holders)] / med[(what, 0)]
                row(f"9. fresh {label}, 10 000 holders (lock file index, {where})", f"{med[(what, holders)]:.2f} ms",
                    spread, "10 000 within 1.5× of 0", f"{ratio:.2f}× — {'met' if ratio <= 1.5 else 'missed'}")
    run_floor = med[("run", 0)] + inside["scan"]
    row("9. floor of a run: reading jobs/ of 10 000 holders once (names and a stat of each, in tessera-floor)",
        f"{inside['scan']:.2f} ms", f"plus the run with 0 holders: {run_floor:.2f} ms")
    target(2, f"fresh `tessera run --need r=1 -- true`, 10 000 holders, one live process ({where})",
           f"{med[('run', 10000)]:.2f} ms", "the run with 0 holders plus reading jobs/ once (readdir, a stat of each)",
           f"{med[('run', 0)]:.2f} + {inside['scan']:.2f} ms", "within 1.5×", med[("run", 10000)] / run_floor, 1.5)
    status_floor = med[("ls", 10000)] + inside["read"]
    row("9. `ls -l jobs/`, 10 000 holders", f"{med[('ls', 10000)]:.2f} ms", "")
    row("9. floor of status: reading each of the 10 000 lock files once (in tessera-floor)",
        f"{inside['read']:.2f} ms", f"plus `ls -l jobs/`: {status_floor:.2f} ms")
    target(3, f"fresh `tessera status`, 10 000 holders ({where})", f"{med[('status', 10000)]:.2f} ms",
           "`ls -l jobs/` plus reading each file once", f"{med[('ls', 10000)]:.2f} + {inside['read']:.2f} ms",
           "within 2×", med[("status", 10000)] / status_floor, 2)


def crash_back(env, kills):
    """Seconds from the SIGKILL of a 1-token countertoken's holder to the
    moment a waiter (already waiting) has the token, KILLS times, each on
    a pool of its own."""
    delays = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(kills):
            folder = os.path.join(tmp, f"tok{i}")
            pool_env = dict(env, TESSERA_BENCH_ETCD_PREFIX=f"/bench-crash-{i}/")
            holder = subprocess.Popen([BENCH, "crash", folder, "holder"], env=pool_env, stdout=subprocess.PIPE,
                                      text=True)
            waiter = None
            try:
                if holder.stdout.readline().strip() != "held":
                    raise RuntimeError("the crash holder did not take the token")
                waiter = subprocess.Popen([BENCH, "crash", folder, "waiter"], env=pool_env,
                                          stdout=subprocess.PIPE, text=True)
                if waiter.stdout.readline().strip() != "waiting":
                    raise RuntimeError("the crash waiter did not wait")
                killed = time.monotonic_ns() // 1000   # CLOCK_MONOTONIC, as g_get_monotonic_time
                holder.kill()
                holder.wait()
                got = parse(waiter.stdout.readline()).get("got")
                if waiter.wait() != 0 or got is None:
                    raise RuntimeError("the crash waiter did not get the token")
                delays.append((got - killed) / 1e6)
            finally:
                for p in (holder, waiter):
                    if p is not None and p.poll() is None:
                        p.kill()
                        p.wait()
    return sorted(delays)


def crash():
    """Crash → capacity back on a folder: the waiter watches the holder's
    process (pidfd)."""
    delays = crash_back(dict(os.environ), 10)
    folder_store["crash"] = statistics.median(delays)
    row("10. crash → capacity back, folder store: SIGKILL of a holder, until a waiter has its token (10 kills)",
        f"{statistics.median(delays) * 1000:.1f} ms", f"min {delays[0] * 1000:.1f}, max {delays[-1] * 1000:.1f} ms")


def etcd_store():
    """The etcd store beside the folder store, on a one-member etcd on
    free loopback ports in a temporary folder (the tests' fixture), stopped
    after: rows 1, 2, 9 (a fresh run) and 10 again."""
    if shutil.which("etcd") is None or not os.path.isdir(os.path.join(BUILD, "plugins", "etcd")):
        row("11. etcd store", "n/a", "etcd-server or the etcd plugin (libsoup 3) not installed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        cluster = os.path.join(tmp, "etcd")
        # Its data on a disk, as a real cluster's (the tests put it on a tmpfs).
        subprocess.run(["bash", FIXTURE, "start", cluster, "1"], check=True,
                       env=dict(os.environ, ETCD_FIXTURE_DATA=tmp))
        try:
            with open(os.path.join(cluster, "endpoints")) as fp:
                endpoints = fp.read().strip()
            env = dict(os.environ, TESSERA_BENCH_ETCD=endpoints, TESSERA_BENCH_ETCD_LEASE=str(ETCD_LEASE))
            label = "11. etcd store (1 local member)"

            out = subprocess.run([BENCH, "cycle", os.path.join(tmp, "tok"), "0", "300"], check=True,
                                 capture_output=True, text=True,
                                 env=dict(env, TESSERA_BENCH_ETCD_PREFIX="/bench-cycle/")).stdout
            s = parse(out)
            row(f"{label}: acquire+release, C API, 0 other holders", f"{s['median']} µs",
                f"p10 {s['p10']}, p90 {s['p90']} µs", "", f"{s['median'] / folder_store['cycle']:.2f}× the folder's")
            raw = raw_transactions(endpoints.split(",")[0], 100)
            row(f"{label}: floor: one raw transaction's round trip (a compare-and-put, one HTTP request "
                "to the same member, timed inside curl)", f"{raw[len(raw) // 2]} µs",
                f"p10 {raw[len(raw) // 10]}, p90 {raw[len(raw) * 9 // 10]} µs", "cycle within 2× of two",
                f"cycle {s['median'] / (2 * raw[len(raw) // 2]):.2f}× two")
            target(4, "etcd store (1 local member): acquire+release, C API, 0 other holders",
                   f"{s['median']} µs", "two raw transactions (compare-and-put) to the same member, timed inside curl",
                   f"2 × {raw[len(raw) // 2]} µs", "within 2×", s["median"] / (2 * raw[len(raw) // 2]), 2)

            latencies = handover_latencies(dict(env, TESSERA_BENCH_ETCD_PREFIX="/bench-handover/"))
            p50, p10, p90, p99 = stats_us(latencies)
            row(f"{label}: hand-over latency between processes ({len(latencies)} hand-overs, woken by the watch)",
                f"p50 {p50 / 1000:.2f} ms", f"p10 {p10 / 1000:.2f}, p99 {p99 / 1000:.2f} ms", "",
                f"{p50 / folder_store['handover']:.2f}× the folder's")

            # A fresh `tessera run`, interleaved with the same on a folder.
            commands = {}
            for store in ("folder", "etcd"):
                conf = os.path.join(tmp, f"{store}.conf")
                with open(conf, "w") as fp:
                    fp.write(f"[resource r]\ntype=countertoken\npath={tmp}/{store}\ntotal=1\n")
                    if store == "etcd":
                        fp.write(f"store=etcd\nendpoints={endpoints}\nprefix=/bench-run/\nlease={ETCD_LEASE}\n")
                commands[store] = [TESSERA, "--config", conf, "run", "--need", "r=1", "--", "true"]
            run_env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"))
            times = interleaved(commands, lambda key: run_env, 30, warm=3)
            values = sorted(times["etcd"])
            med = statistics.median(values)
            row(f"{label}: fresh `tessera run --need r=1 -- true`", f"{med:.2f} ms",
                f"p10 {values[3]:.2f}, p90 {values[27]:.2f} ms", "",
                f"{med / statistics.median(times['folder']):.2f}× the folder's in the same runs")

            delays = crash_back(env, 3)
            row(f"{label}: crash → capacity back, lease {ETCD_LEASE} s (3 kills)",
                f"{statistics.median(delays):.2f} s", f"min {delays[0]:.2f}, max {delays[-1]:.2f} s",
                f"≤ lease ({ETCD_LEASE} s) + 1 s",
                "met" if delays[-1] <= ETCD_LEASE + 1 else "missed")
        finally:
            subprocess.run(["bash", FIXTURE, "stop", cluster], check=False)


def raw_transactions(endpoint, count):
    """COUNT transactions, each a compare-and-put of a new key (as an
    acquire's commit: a compare, a write to the log), each one HTTP
    request to ENDPOINT's JSON gateway on a new connection (as the client
    makes them), timed inside curl (its start-up not counted): µs,
    sorted."""
    import base64

    def b64(text):
        return base64.b64encode(text.encode()).decode()

    times = []
    for i in range(count + 3):
        key = b64(f"/bench-raw/{os.getpid()}-{i}")
        body = json.dumps({"compare": [{"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}],
                           "success": [{"request_put": {"key": key, "value": b64("{}")}}]})
        out = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{time_total}",
                              "-X", "POST", "--data-binary", body, f"{endpoint}/v3/kv/txn"],
                             check=True, capture_output=True, text=True).stdout.split()
        if out[0] != "200":
            raise RuntimeError(f"etcd refused a raw transaction: HTTP {out[0]}")
        if i >= 3:   # the first ones warm the member
            times.append(int(float(out[1]) * 1e6))
    return sorted(times)


def taken_back(conf, env, loops=3, runs=20):
    """LOOPS processes each running RUNS `tessera run --need r=1` one
    after the other on CONF's 1-token pool (each command holds it 50 ms):
    how often a loop's next run was granted the token straight after its
    own release while another loop's request had been waiting since
    before that release (the issue 40 hand-over to the head of the
    queue), of how many grants. Times are the requests' (just before
    `tessera run` starts) and the grants' (its command's first act), on
    the real-time clock."""
    events = []   # (grant ns, request ns, loop)
    lock = threading.Lock()

    def loop(index):
        for _ in range(runs):
            requested = time.time_ns()
            done = subprocess.run([TESSERA, "--config", conf, "run", "--need", "r=1", "--", "sh", "-c",
                                   "date +%s%N; sleep 0.05"], env=env, capture_output=True, text=True)
            if done.returncode == 0 and done.stdout.strip().isdigit():
                with lock:
                    events.append((int(done.stdout.strip()), requested, index))

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(loops)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events.sort()
    taken = 0
    for previous, grant in zip(events, events[1:]):
        if grant[2] != previous[2]:
            continue
        # Another loop's request, made before this loop's release (its
        # own next request), granted only after this grant.
        if any(other[2] != grant[2] and other[1] < grant[1] and other[0] > grant[0] for other in events):
            taken += 1
    return taken, len(events)


def etcd_members():
    """Three members on loopback (the tests' fixture, data on a disk): a
    fresh `tessera run` while all answer, then with the member first in
    `endpoints` stopped (SIGSTOP: each process starts with a member
    chosen at random, and one that misses the 2 s request deadline is
    tried last); and a `tessera run --no-wait` against a cluster none of
    whose endpoints listens, until it fails (exit 68)."""
    if shutil.which("etcd") is None or not os.path.isdir(os.path.join(BUILD, "plugins", "etcd")):
        row("12. etcd store, three members", "n/a", "etcd-server or the etcd plugin (libsoup 3) not installed")
        return
    label = "12. etcd store (3 local members)"
    runs = 15
    with tempfile.TemporaryDirectory() as tmp:
        cluster = os.path.join(tmp, "etcd")
        subprocess.run(["bash", FIXTURE, "start", cluster, "3"], check=True,
                       env=dict(os.environ, ETCD_FIXTURE_DATA=tmp))
        stopped = False
        try:
            with open(os.path.join(cluster, "endpoints")) as fp:
                endpoints = fp.read().strip()
            conf = os.path.join(tmp, "members.conf")
            with open(conf, "w") as fp:
                fp.write(f"[resource r]\ntype=countertoken\npath={tmp}/pool\ntotal=1\nstore=etcd\n"
                         f"endpoints={endpoints}\nprefix=/bench-members/\nlease={ETCD_LEASE}\n")
            run_env = dict(os.environ, HOME=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"))
            command = [TESSERA, "--config", conf, "run", "--need", "r=1", "--", "true"]
            for state in ("all members answering", "the first endpoint's member stopped (SIGSTOP)"):
                if state != "all members answering":
                    with open(os.path.join(cluster, "pid-1")) as fp:
                        os.kill(int(fp.read()), 19)   # SIGSTOP
                    stopped = True
                    started = time.monotonic()
                times = sorted(interleaved({"run": command}, lambda key: run_env, runs, warm=1)["run"])
                row(f"{label}: fresh `tessera run --need r=1 -- true` (its grant, command and release), {state}"
                    f" ({runs} runs)", f"{statistics.median(times):.2f} ms",
                    f"min {times[0]:.2f}, max {times[-1]:.2f} ms" +
                    (f"; {sum(1 for t in times if t > 1000)} of {runs} over 1 s, all {runs} done "
                     f"{time.monotonic() - started:.1f} s after the stop" if stopped else ""))
            with open(os.path.join(cluster, "pid-1")) as fp:
                os.kill(int(fp.read()), 18)   # SIGCONT
            stopped = False
            time.sleep(2)
            taken, grants = taken_back(conf, run_env)
            with open(os.path.join(tmp, "order.conf"), "w") as fp:
                fp.write(f"[resource r]\ntype=countertoken\npath={tmp}/order\ntotal=1\n")
            folder_taken, folder_grants = taken_back(os.path.join(tmp, "order.conf"), run_env)
            row(f"{label}: a loop's run granted again straight after its own release while another loop's "
                f"request waited (3 loops of `tessera run`, 50 ms commands)", f"{taken} of {grants} grants",
                f"a folder pool, the same loops: {folder_taken} of {folder_grants}",
                "as a folder (was 11 to 23 of 119)", "met" if taken <= max(1, folder_taken) else "missed")
        finally:
            if stopped:
                with open(os.path.join(cluster, "pid-1")) as fp:
                    os.kill(int(fp.read()), 18)   # SIGCONT
            subprocess.run(["bash", FIXTURE, "stop", cluster], check=False)
        # Nothing listens: two ports bound, then let go.
        import socket
        sockets = [socket.socket() for _ in range(2)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        dead = ",".join(f"http://127.0.0.1:{sock.getsockname()[1]}" for sock in sockets)
        for sock in sockets:
            sock.close()
        conf = os.path.join(tmp, "dead.conf")
        with open(conf, "w") as fp:
            fp.write(f"[resource r]\ntype=countertoken\npath={tmp}/dead\ntotal=1\nstore=etcd\n"
                     f"endpoints={dead}\nprefix=/bench-dead/\n")
        times, statuses = [], set()
        for _ in range(3):
            start = time.monotonic_ns()
            done = subprocess.run([TESSERA, "--config", conf, "run", "--no-wait", "--need", "r=1", "--", "true"],
                                  env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append((time.monotonic_ns() - start) / 1e9)
            statuses.add(done.returncode)
        times.sort()
        row("12. etcd store, unreachable cluster (2 endpoints, nothing listening): `tessera run --no-wait` "
            "until it fails (3 runs)", f"{statistics.median(times):.2f} s",
            f"min {times[0]:.2f}, max {times[-1]:.2f} s; exit {', '.join(str(c) for c in sorted(statuses))}",
            "fails within a few seconds, exit 68 (was 30.6 s, exit 74)",
            "met" if times[-1] < 10 and statuses == {68} else "missed")


def folder_base():
    """The folder store's figures the etcd rows are compared with (rows 1
    and 2 at 0 other holders), for an --etcd run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([BENCH, "cycle", os.path.join(tmp, "tok"), "0", "300"],
                             check=True, capture_output=True, text=True).stdout
    s = parse(out)
    folder_store["cycle"] = s["median"]
    row("1. acquire+release, C API, 0 other holders", f"{s['median']} µs", f"p10 {s['p10']}, p90 {s['p90']} µs")
    latencies = handover_latencies()
    p50, p10, p90, p99 = stats_us(latencies)
    folder_store["handover"] = p50
    row(f"2. hand-over latency between processes ({len(latencies)} hand-overs)",
        f"p50 {p50 / 1000:.2f} ms", f"p10 {p10 / 1000:.2f}, p99 {p99 / 1000:.2f} ms")


def main():
    steps = (cycle, handover, throughput, command_overhead, no_wait_overhead, cold_start) if QUICK else \
        (folder_base, etcd_store, etcd_members) if ETCD_ONLY else \
        (cycle, handover, throughput, polling, large_among_small, command_overhead, no_wait_overhead,
         memory, python_peer, cold_start, crash, etcd_store, etcd_members)
    try:
        for step in steps:
            step()
    finally:
        if _installed.get("dest"):
            shutil.rmtree(_installed["dest"], ignore_errors=True)
    cpu = "?"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"Machine: {platform.node()}, {os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}, "
          f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f} at the end"
          f"{' (quick run)' if QUICK else ''}{' (etcd rows only)' if ETCD_ONLY else ''}\n")
    print("| measure | median | spread | target | ratio |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\nIssue 43's targets, each against its floor measured in the same run:\n")
    print("| target | measure | median | floor | floor's median | goal | ratio |")
    print("|---|---|---|---|---|---|---|")
    for t in sorted(targets, key=lambda t: t[0]):
        print("| " + " | ".join(t) + " |")


if __name__ == "__main__":
    main()
