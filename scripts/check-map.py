#!/usr/bin/env python3
"""The map of the house stays whole, checked by the `layers` suite of
`meson test`: every source file of core/, tools/ and plugins/ is named in
docs/design.md, so a newcomer who reads the map finds each file's one
job there.

A file counts as named when its name is in backquotes in the page, on
its own or in a list (`tools/tessera-status.c`, `-watch.c`: a name that
starts with a dash names the file of its row's family that ends so); a
header by its unit's file (tessera-host-private.h by tessera-host.c,
tessera-etcd-lease.h by tessera-etcd-lease.c, a .h by its .c.in). In a
plugin, the files every resource type has (its class, its dependency,
its lock, its lock file, its header and its module's entry point) are
named by the plugins' row once for all; anything else there needs its
own words.

Usage: check-map.py [ROOT]; prints each unnamed file on a line and
exits 1 if there is any."""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
with open(os.path.join(root, "docs", "design.md"), encoding="utf-8") as f:
    page = f.read()

names, endings = set(), set()
for quoted in re.findall(r"`([^`\n]+)`", page):
    for word in re.split(r"[\s,;()]+", quoted):
        word = word.strip(".:")
        if word.startswith("-") and "." in word:
            endings.add(word)
        elif word:
            names.add(os.path.basename(word))


def named(name):
    return name in names or any(name.endswith(e) for e in endings)


def unit_named(header):
    stem = header[:-len(".h")]
    if stem.endswith("-private"):
        stem = stem[:-len("-private")]
    return named(stem + ".c") or named(stem + ".c.in")


def family(folder):
    """What every plugin has, named by the plugins' row once for all: its
    module's entry point, and for each class header tessera-X.h with its
    tessera-X.c, X's dependency, lock and lock file."""
    files = {os.path.basename(p) for p in glob.glob(os.path.join(folder, "*"))}
    members = {n for n in files if n.endswith("-module.c")}
    for header in files:
        stem = header[:-len(".h")]
        if header.startswith("tessera-") and header.endswith(".h") and stem + ".c" in files:
            members |= {stem + end for end in (".c", ".h", "-dependency.c", "-lock.c", "-lock-file.c")}
    return members


unnamed = []
for pattern in ("core/*.c", "core/*.h", "core/*.c.in", "tools/*.c",
                "tools/*.h", "tools/*.c.in", "plugins/*/*.c", "plugins/*/*.h"):
    for path in sorted(glob.glob(os.path.join(root, pattern))):
        name = os.path.basename(path)
        if named(name) or (name.endswith(".h") and unit_named(name)):
            continue
        if pattern.startswith("plugins/") and name in family(os.path.dirname(path)):
            continue
        unnamed.append(os.path.relpath(path, root))

for path in unnamed:
    print(f"{path}: named nowhere in docs/design.md (its map names each file's job)")
sys.exit(1 if unnamed else 0)
