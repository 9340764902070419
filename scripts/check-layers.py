#!/usr/bin/env python3
"""The shape docs/design.md promises, checked by the `layers` suite of
`meson test` (and by scripts/analyze.sh):

- calls go one way: no cycle, of any length, among the files of core/,
  nor among the files of one plugin (what must go up goes through a
  callback table or a virtual function);
- core/ names no particular plugin: none of a plugin's C prefixes
  (tessera_gpu_, TesseraMutex…) and no string that is a plugin's module
  name;
- core's private headers stay in core: a file outside core/ includes
  none, but the store plugins their one named header
  (tessera-pool-store-private.h); an exception listed below that no
  longer happens fails too (so the list only shrinks; it is empty now);
- the poller is private (not in include/);
- one place judges a holder: only the verdict (core/tessera-verdict.c)
  and the holder monitor that gathers its probes call the job lock
  probe, read /proc/PID, host marks or leases, or ask a lock's state
  (F_OFD_GETLK); the probes' own files define them.

A call is a use of a function defined (not static) in another file;
comments are left out, and string literals for the plugin names. Files
are cut by purpose, never by length: there is no line cap. Prints each
problem on a line, and exits 1 if there is any."""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
name = os.path.basename
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\n?(_?tessera_\w+)\s*\(", re.M)
CALL = re.compile(r"\b(_?tessera_\w+)\s*\(")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)

# The named store header, the one a store plugin may include.
STORE_HEADER = "tessera-pool-store-private.h"
# Private includes outside core/ that issue 39 (core owns the pool's
# layout) is to remove; each "file: header".
KNOWN_PRIVATE_INCLUDES = set()

# One place judges a holder (issue 38): what probes a holder's liveness,
# and the files that may call it.
PROBES = {
    "_tessera_job_lock_probe": "the job lock probe",
    "_tessera_job_lock_probe_at": "the job lock probe",
    "_tessera_proc_stat": "/proc/PID",
    "_tessera_proc_read": "/proc/PID",
    "_tessera_host_lease_expired": "a host lease",
    "_tessera_host_lease_mark_and_dup_other_host": "the hosts' marks",
    "_tessera_pool_store_host_expired": "a host lease",
    "tessera_process_check": "the pid check (/proc/PID)",
}
PROBE_PATTERNS = {
    re.compile(r"\bF_OFD_GETLK\b"): "a lock's state (F_OFD_GETLK)",
    re.compile(r'"/proc/%d'): "/proc/PID",
}
# The command's own processes, not holders: run's fence walks its
# command's process tree in /proc. The mutex plugin's intents: an intent
# is a waiter's wish (an exclusive request waits), not a holding, and
# one whose process is gone stops keeping shared requests out, which
# frees no capacity; its pid check is no verdict on a holder.
NOT_HOLDERS = {"tools/tessera-fence.c: /proc/PID", "plugins/mutex/tessera-mutex.c: tessera_process_check"}
# The verdict, the holder monitor that gathers its probes, and TesseraJob,
# which asks it whether a job folder's job is over (for `tessera clean`).
JUDGES = {"core/tessera-verdict.c", "core/tessera-holder-monitor.c", "core/tessera-job.c"}
# The probes' own files: where they are defined, and the pid check
# (tessera_process_check(), /proc) and the stores' lease dispatch.
PROBE_OWNERS = {
    "core/tessera-job-lock.c", "core/tessera-process.c", "core/tessera-host-lease.c",
    "core/tessera-pool-store.c", "core/tessera-pool-store-folder.c",
}



def read(path):
    with open(path, encoding="utf-8") as f:
        return COMMENT.sub(" ", f.read())


def cycles(files):
    """The call graph's strongly connected components of more than one
    file (Tarjan's algorithm), each a sorted list of names, with the
    calls that close it."""
    text = {path: read(path) for path in files}
    defined = {}
    for path, source in text.items():
        for m in DEF.finditer(source):
            defined.setdefault(m.group(1), path)
    calls = {path: {} for path in files}
    for path, source in text.items():
        for m in CALL.finditer(source):
            owner = defined.get(m.group(1))
            if owner is not None and owner != path:
                calls[path].setdefault(owner, set()).add(m.group(1))

    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in calls[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    result = []
    for component in found:
        members = set(component)
        arrows = ["%s -> %s (%s)" % (name(a), name(b), ", ".join(sorted(calls[a][b])[:2]))
                  for a in sorted(component) for b in sorted(calls[a]) if b in members]
        result.append((sorted(name(c) for c in component), arrows))
    return result


def plugin_markers():
    """For each plugin: its module name (from its .plugin file) and the
    C prefixes its headers declare."""
    markers = {}
    for manifest in glob.glob(os.path.join(root, "plugins", "*", "*.plugin")):
        folder = os.path.dirname(manifest)
        words = set()
        with open(manifest, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip() in ("Module", "Name"):
                    words.add(value.strip())
        prefixes = set()
        for header in glob.glob(os.path.join(folder, "tessera-*.h")):
            stem = name(header)[len("tessera-"):-2].split("-")
            # tessera-counter-token.h: tessera_counter_token, TesseraCounterToken
            prefixes.add("tessera_" + "_".join(stem))
            prefixes.add("Tessera" + "".join(s.capitalize() for s in stem))
            prefixes.add("TESSERA_TYPE_" + "_".join(stem).upper())
        markers[name(folder)] = (words, prefixes)
    return markers


problems = []

# Cycles in core/ and in each plugin.
groups = [("core", sorted(glob.glob(os.path.join(root, "core", "*.c"))))]
for folder in sorted(glob.glob(os.path.join(root, "plugins", "*", ""))):
    groups.append(("plugins/" + name(os.path.dirname(folder)), sorted(glob.glob(os.path.join(folder, "*.c")))))
for group, files in groups:
    for component, arrows in cycles(files):
        problems.append("%s: %s call each other: %s" % (group, ", ".join(component), "; ".join(arrows)))

# No plugin named in core/.
core_files = sorted(glob.glob(os.path.join(root, "core", "*.[ch]")))
for plugin, (words, prefixes) in plugin_markers().items():
    prefix_re = re.compile(r"\b(%s)" % "|".join(re.escape(p) for p in sorted(prefixes))) if prefixes else None
    for path in core_files:
        source = read(path)
        for m in STRING.finditer(source):
            if m.group(0)[1:-1] in words:
                problems.append("core/%s names the plugin %s: %s" % (name(path), plugin, m.group(0)))
        if prefix_re is not None:
            code = STRING.sub('""', source)
            for m in sorted(set(prefix_re.findall(code))):
                problems.append("core/%s names the plugin %s: %s" % (name(path), plugin, m))

# Core's private headers stay in core.
private = {name(h) for h in glob.glob(os.path.join(root, "core", "*private*.h"))}
seen_exceptions = set()
for path in sorted(glob.glob(os.path.join(root, "tools", "*.[ch]")) +
                   glob.glob(os.path.join(root, "plugins", "*", "*.[ch]"))):
    rel = os.path.relpath(path, root)
    for header in INCLUDE.findall(read(path)):
        if name(header) not in private:
            continue
        entry = "%s: %s" % (rel, name(header))
        if name(header) == STORE_HEADER and rel.startswith("plugins/"):
            continue
        if entry in KNOWN_PRIVATE_INCLUDES:
            seen_exceptions.add(entry)
            continue
        problems.append("%s includes core's private %s" % (rel, name(header)))
for entry in sorted(KNOWN_PRIVATE_INCLUDES - seen_exceptions):
    problems.append("%s no longer happens: take it off KNOWN_PRIVATE_INCLUDES" % entry)

# Only the judge probes a holder.
for path in sorted(glob.glob(os.path.join(root, "core", "*.c")) + glob.glob(os.path.join(root, "tools", "*.c")) +
                   glob.glob(os.path.join(root, "plugins", "*", "*.c"))):
    rel = os.path.relpath(path, root)
    if rel in JUDGES or rel in PROBE_OWNERS:
        continue
    source = read(path)
    code = STRING.sub('""', source)
    found = {m.group(1) for m in CALL.finditer(code) if m.group(1) in PROBES}
    found |= {what for pattern, what in PROBE_PATTERNS.items() if pattern.search(source)}
    for what in sorted(found):
        entry = "%s: %s" % (rel, what)
        if entry in NOT_HOLDERS:
            continue
        problems.append("%s probes a holder (%s): only the verdict and the holder monitor may" %
                        (rel, PROBES.get(what, what)))

for path in glob.glob(os.path.join(root, "include", "tessera", "*poller*")):
    problems.append("%s: the poller is private" % path)

for p in problems:
    print("layers: " + p)
if problems:
    sys.exit(1)
print("layers: %d files of core/ and %d plugins: no cycle, no plugin named in core, "
      "no private header outside core but the %d listed, no holder probed outside the judge"
      % (len(groups[0][1]), len(groups) - 1, len(KNOWN_PRIVATE_INCLUDES)))
