#!/usr/bin/env python3
"""The shape docs/design.md promises for core/, checked on every run of
scripts/analyze.sh:

- no two files of core/ call each other (each arrow goes one way; what
  must go up goes through a callback table);
- no file of core/ over 800 lines, the registry under 600;
- the poller is private (not in include/).

A call is a use of a function defined (not static) in another file of
core/; comments are left out. Prints the offending pairs and files, and
exits 1 if there are any."""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
core = sorted(glob.glob(os.path.join(root, "core", "*.c")))
DEF = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\n?(_?tessera_\w+)\s*\(", re.M)
CALL = re.compile(r"\b(_?tessera_\w+)\s*\(")

defined, text = {}, {}
for path in core:
    with open(path, encoding="utf-8") as f:
        source = f.read()
    text[path] = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    for m in DEF.finditer(text[path]):
        defined.setdefault(m.group(1), path)

calls = {}
for path, source in text.items():
    for m in CALL.finditer(source):
        owner = defined.get(m.group(1))
        if owner is not None and owner != path:
            calls.setdefault(path, {}).setdefault(owner, set()).add(m.group(1))

problems = []
name = os.path.basename
for a, targets in calls.items():
    for b in targets:
        if a < b and a in calls.get(b, {}):
            problems.append("%s and %s call each other: %s / %s" % (
                name(a), name(b), ", ".join(sorted(targets[b])[:3]), ", ".join(sorted(calls[b][a])[:3])))
for path in core:
    lines = sum(1 for _ in open(path, encoding="utf-8"))
    limit = 600 if name(path) == "tessera-registry.c" else 800
    if lines > limit:
        problems.append("%s has %d lines (at most %d)" % (name(path), lines, limit))
for path in glob.glob(os.path.join(root, "include", "tessera", "*poller*")):
    problems.append("%s: the poller is private" % path)

for p in problems:
    print("layers: " + p)
if problems:
    sys.exit(1)
print("layers: %d files of core/, no cycle, none too long" % len(core))
