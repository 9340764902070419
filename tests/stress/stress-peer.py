#!/usr/bin/env python3
"""A peer of the stress run in another language: one experimaestro-style
holder of a counter token, in Python 3 with the standard library only.

It follows the on-disk protocol of the user's reference document
(experimaestro's locking.py), not Tessera's code:

- ipc.lock is taken with flock (filelock, newer experimaestro) and then
  lockf (fasteners, older experimaestro), released in reverse;
- under it, every jobs/*.json is read (a file that does not parse is read
  again a few times, then left out, as locking.py's DynamicLockFile does),
  "information.count" of the files with a "job_uri" are added up and
  compared with informations.json's "total";
- the lock file is written in place with json.dump, as
  DynamicLockFile.create does (not atomically);
- the job lock <job_uri>.lock (lockf) is held while the job runs, and
  <job_uri>.pid says {"type": "local", "pid": N}, as experimaestro's job
  launcher does; the lock file is deleted on release under ipc.lock.

Holders that are gone are cleaned up the way locking.py's watcher thread
does (its process has ended, so its lock file goes), with one guard
locking.py lacks: a lock file with no process at all is only removed once
older than MIN_AGE and nobody holds its job lock.

    stress-peer.py ROOT ID LOG MIN_AGE HOLD_MS COUNT [die-late] [greedy]

ROOT/cpu is the counter token's folder. The log lines are those of
tessera-stress-holder (S, A, R and K, times in µs of CLOCK_MONOTONIC).
die-late: SIGKILL itself after writing the lock file and before the .pid.
greedy: ignore the capacity, taking one more than all of it (a broken peer,
        to show the auditor catches it, whatever else is held).
"""
import errno
import fcntl
import json
import os
import random
import signal
import socket
import sys
import time


def log(fd, kind, rest):
    line = f"{kind} {time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000} {rest}\n"
    os.write(fd, line.encode())


def read_json(path, attempts=3):
    for attempt in range(attempts):
        try:
            with open(path, "rt") as fp:
                return json.load(fp)
        except FileNotFoundError:
            return None
        except (ValueError, OSError):
            if attempt + 1 < attempts:
                time.sleep(0.01)
    return None


def proc_stat(pid):
    """(state, start time in clock ticks) of a local pid, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rt") as fp:
            data = fp.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return fields[0], int(fields[19])


def process_alive(process):
    if not isinstance(process, dict) or process.get("type") != "local":
        return True  # not ours to judge
    host = process.get("host")
    if host is not None and host != socket.gethostname():
        return True
    pid = process.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True
    stat = proc_stat(pid)
    if stat is None or stat[0] in ("Z", "X", "x"):
        return False
    start = process.get("start_time")
    return not (isinstance(start, int) and start > 0 and start != stat[1])


def job_lock_held(job_uri):
    """Whether someone holds <job_uri>.lock (the job is starting or runs)."""
    try:
        fd = os.open(job_uri + ".lock", os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EAGAIN):
            return True
        raise
    finally:
        os.close(fd)  # also drops the lock if we got it
    return False


def holding(path, data, min_age):
    """Whether the lock file at path still holds; removes it when not."""
    job_uri = data.get("job_uri")
    process = data.get("process")
    if process is None:
        pid_data = read_json(job_uri + ".pid", attempts=1)
        if isinstance(pid_data, dict):
            process = pid_data
    if process is not None:
        alive = process_alive(process)
    else:
        try:
            age = time.time() - os.lstat(path).st_mtime
        except FileNotFoundError:
            return False
        alive = job_lock_held(job_uri) or age < min_age
    if not alive:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    return alive


class IpcLock:
    def __init__(self, folder):
        self.path = os.path.join(folder, "ipc.lock")

    def __enter__(self):
        self.fp = open(self.path, "a+")
        fcntl.flock(self.fp, fcntl.LOCK_EX)
        fcntl.lockf(self.fp, fcntl.LOCK_EX)
        return self

    def __exit__(self, *args):
        fcntl.lockf(self.fp, fcntl.LOCK_UN)
        fcntl.flock(self.fp, fcntl.LOCK_UN)
        self.fp.close()


def try_acquire(folder, path, job_uri, count, min_age, greedy):
    jobs = os.path.join(folder, "jobs")
    with IpcLock(folder):
        informations = read_json(os.path.join(folder, "informations.json")) or {}
        total = informations.get("total", 0) if isinstance(informations, dict) else 0
        used = 0
        for name in os.listdir(jobs):
            if not name.endswith(".json"):
                continue
            other = os.path.join(jobs, name)
            data = read_json(other)
            if not isinstance(data, dict) or not isinstance(data.get("job_uri"), str):
                continue
            information = data.get("information")
            n = information.get("count", 0) if isinstance(information, dict) else 0
            if holding(other, data, min_age):
                used += n if isinstance(n, int) else 0
        # A greedy peer takes one more than the whole capacity: each of
        # its grants is over capacity whatever else is held, so the run
        # that checks the auditor does not depend on chance and load.
        if greedy:
            count = max(count, total + 1)
        elif used + count > total:
            return 0
        with open(path, "wt") as fp:
            json.dump({"job_uri": job_uri, "information": {"count": count}}, fp)
        return count


def main():
    root, ident, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
    min_age, hold_ms, count = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    die_late = "die-late" in sys.argv[7:]
    greedy = "greedy" in sys.argv[7:]
    folder = os.path.join(root, "cpu")
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    job_uri = os.path.join(root, "jobs", ident, "job")
    os.makedirs(os.path.dirname(job_uri), exist_ok=True)
    os.makedirs(os.path.join(folder, "jobs"), exist_ok=True)
    job_lock = open(job_uri + ".lock", "a+")
    fcntl.lockf(job_lock, fcntl.LOCK_EX)
    path = os.path.join(folder, "jobs", f"peer@{ident}.json")

    log(log_fd, "S", f"{ident} cpu {count}")
    deadline = time.monotonic() + 600
    while (taken := try_acquire(folder, path, job_uri, count, min_age, greedy)) == 0:
        if time.monotonic() > deadline:
            print(f"stress-peer {ident}: not granted", file=sys.stderr)
            return 1
        time.sleep(random.uniform(0.01, 0.05))
    if die_late:
        time.sleep(random.uniform(0, 0.05))
        log(log_fd, "K", ident)
        os.kill(os.getpid(), signal.SIGKILL)
    with open(job_uri + ".pid", "wt") as fp:
        json.dump({"type": "local", "pid": os.getpid()}, fp)

    count = taken
    log(log_fd, "A", f"{ident} cpu {count}")
    time.sleep(random.uniform(hold_ms / 2, hold_ms) / 1000)
    log(log_fd, "R", f"{ident} cpu {count}")
    with IpcLock(folder):
        os.unlink(path)
    os.unlink(job_uri + ".pid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
