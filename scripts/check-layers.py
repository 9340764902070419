#!/usr/bin/env python3
"""The shape docs/design.md promises, checked by the `layers` suite of
`meson test` (and by scripts/analyze.sh):

- uses go one way: no cycle, of any length, among the files of core/,
  nor among the files of one plugin (what must go up goes through a
  callback table or a virtual function), but the cycles that
  KNOWN_CYCLES (issue 39's remaining work) and PUBLIC_API_CYCLES (what
  the public API fixes) list, exactly;
- core/ names no particular plugin: none of a plugin's C prefixes
  (tessera_gpu_, TesseraMutex…, taken from its headers, its file names
  and the types its sources define) and no string that is a plugin's
  module name, name, class, resource, process type or store (nor a
  store's "NAME://");
- core's private headers stay in core: no file of tools/, plugins/,
  tests/, fuzz/, bench/ or examples/ includes one, but a store plugin
  (its .plugin lists Stores=) its one named header
  (tessera-pool-store-private.h, which includes no other private
  header of core), and the tests that compile a core
  unit in (COMPILED_IN); an exception listed below that no longer
  happens fails too (so the lists only shrink);
- the poller is private (not in include/);
- one place judges a holder: only the verdict (core/tessera-verdict.c)
  and the holder monitor that gathers its probes call the job lock
  probe, read /proc/PID, host marks or leases, or ask a lock's state
  (F_OFD_GETLK); the probes' own files define them.

A use, one file's edge to another, is any mention of a symbol that the
other file defines (not static): a call, a function passed as a
callback, a data symbol such as a table, or a macro or a header's
static inline function that expands to one — TESSERA_TYPE_X,
TESSERA_X (obj), TESSERA_IS_X, TESSERA_X_GET_CLASS call
tessera_x_get_type (), defined by G_DEFINE_*TYPE* in the class's file;
TESSERA_ERROR calls the G_DEFINE_QUARK's function. Comments are left
out, and string literals but for the plugin names. Files are cut by
purpose, never by length: there is no line cap. Prints each problem on
a line, and exits 1 if there is any.

Usage: check-layers.py [ROOT] [--lists-empty] [--known-cycle GROUP:a.c,b.c]…
       [--public-api-cycle GROUP:a.c,b.c]…
(the last three for tests/test-layers.py: it checks trees of its own,
where the lists below name nothing)."""
import glob
import os
import re
import sys

args = [a for a in sys.argv[1:]]
root = os.path.join(os.path.dirname(__file__), "..")
lists_empty = False
extra_known = []
extra_public = []
while args:
    a = args.pop(0)
    if a == "--lists-empty":
        lists_empty = True
    elif a == "--known-cycle":
        group, _, files = args.pop(0).partition(":")
        extra_known.append((group, frozenset(files.split(","))))
    elif a == "--public-api-cycle":
        group, _, files = args.pop(0).partition(":")
        extra_public.append((group, frozenset(files.split(","))))
    else:
        root = a
name = os.path.basename
# A comment, or a string or character that may hold what looks like one
# ("etcd://…"), kept.
COMMENT = re.compile(r"(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)+')|/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
CHAR = re.compile(r"'(?:[^'\\\n]|\\.)+'")
CALL = re.compile(r"\b(_?tessera_\w+)\s*\(")
WORD = re.compile(r"\b[A-Za-z_]\w*\b")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n\\]|\\.)*", re.M | re.S)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n\\]|\\.)*)", re.M | re.S)
# G_DEFINE_TYPE (TesseraJob, tessera_job, …) and its kin define
# tessera_job_get_type (); G_DEFINE_QUARK (…, tessera_error) defines
# tessera_error_quark ().
G_DEFINE = re.compile(r"\bG_DEFINE_(?:ABSTRACT_|FINAL_|DYNAMIC_|BOXED_|POINTER_)?"
                      r"(?:TYPE|INTERFACE)\w*\s*\(\s*(\w+)\s*,\s*(\w+)")
G_QUARK = re.compile(r"\bG_DEFINE_QUARK\s*\(\s*[^,]*,\s*(\w+)\s*\)")
# G_DEFINE_AUTOPTR_CLEANUP_FUNC (TesseraX, tessera_x_free): g_autoptr
# (TesseraX) uses tessera_x_free (); the same for g_auto and its
# clear function.
G_AUTO = re.compile(r"\bG_DEFINE_AUTO(?:PTR)?_CLEANUP_(?:CLEAR_)?FUNC\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
AUTO_USE = re.compile(r"\bg_auto(?:ptr|list|slist)?\s*\(\s*(\w+)\s*\)")
# G_DECLARE_FINAL_TYPE (TesseraJob, tessera_job, TESSERA, JOB, GObject)
# declares TESSERA_JOB () and TESSERA_IS_JOB (), and more for the others.
G_DECLARE = re.compile(r"\bG_DECLARE_(FINAL_TYPE|DERIVABLE_TYPE|INTERFACE)\s*\(\s*(\w+)\s*,\s*(\w+)\s*,"
                       r"\s*(\w+)\s*,\s*(\w+)")

# The named store header, the one a store plugin may include.
STORE_HEADER = "tessera-pool-store-private.h"
# Where no private header of core may be included, but as listed.
OUTSIDE_CORE = ["tools", "plugins", "tests", "fuzz", "bench", "examples"]
# Tests that compile a core unit in, and so include its private header:
# each "file: header".
COMPILED_IN = {
    # The verdict on a holder, compiled in (tests/meson.build: the
    # 'verdict' test) with the probes' answers substituted.
    "tests/test-verdict.c: tessera-verdict-private.h",
}
# Private includes outside core/ that issue 39 (core owns the pool's
# layout) is to remove; each "file: header".
KNOWN_PRIVATE_INCLUDES = set()
# The cycles that exist on main and cannot all be broken yet: each the
# exact set of files of one strongly connected component, in its group.
# Each is issue 39's remaining work (a cycle of any length among the
# files of core/ or of a plugin). A new cycle fails, and so does a known
# one that grows, shrinks or is gone (take it off or narrow it here: the
# list only shrinks).
KNOWN_CYCLES = []
# The cycles the public API fixes, which no change of the code can break
# without changing it: not remaining work, but checked the same way (one
# that grows, shrinks or is gone fails: change this list with the API).
PUBLIC_API_CYCLES = [
    # A dependency makes its lock (the default create_lock() is a
    # TesseraDynamicDependencyLock) and a lock names its dependency (its
    # "dependency" property, of TESSERA_TYPE_DYNAMIC_DEPENDENCY, which
    # gives it the resource): each class's get_type uses the other's.
    ("core", frozenset({"tessera-dynamic-dependency-lock.c", "tessera-dynamic-dependency.c"})),
]
if lists_empty:
    COMPILED_IN, KNOWN_PRIVATE_INCLUDES, KNOWN_CYCLES, PUBLIC_API_CYCLES = set(), set(), [], []
KNOWN_CYCLES = KNOWN_CYCLES + extra_known
PUBLIC_API_CYCLES = PUBLIC_API_CYCLES + extra_public
# Each listed cycle with the name of its list, for the messages.
LISTED_CYCLES = ([(g, c, "KNOWN_CYCLES, issue 39") for g, c in KNOWN_CYCLES] +
                 [(g, c, "PUBLIC_API_CYCLES, the public API") for g, c in PUBLIC_API_CYCLES])

# One place judges a holder (issue 38): what probes a holder's liveness,
# and the files that may call it.
PROBES = {
    "_tessera_job_lock_probe": "the job lock probe",
    "_tessera_job_lock_probe_at": "the job lock probe",
    "_tessera_proc_read": "/proc/PID",
    "_tessera_host_lease_expired": "a host lease",
    "_tessera_host_lease_mark_and_dup_other_host": "the hosts' marks",
    "tessera_process_check": "the pid check (/proc/PID)",
}
PROBE_PATTERNS = {
    re.compile(r"\bF_OFD_GETLK\b"): "a lock's state (F_OFD_GETLK)",
    re.compile(r'"/proc/%d'): "/proc/PID",
    # A store's liveness asked of another host, called in its class.
    re.compile(r"->\s*host_expired\s*\("): "a host's liveness (a store's host_expired)",
}
# The command's own processes, not holders: run's fence walks its
# command's process tree, which tessera-proc.c reads in /proc. The mutex
# plugin's intents: an intent is a waiter's wish (an exclusive request
# waits), not a holding, and one whose process is gone stops keeping
# shared requests out, which frees no capacity; its pid check is no
# verdict on a holder.
NOT_HOLDERS = {"tools/tessera-proc.c: /proc/PID", "plugins/mutex/tessera-mutex.c: tessera_process_check"}
# The verdict, the holder monitor that gathers its probes, and TesseraJob,
# which asks it whether a job folder's job is over (for `tessera clean`).
JUDGES = {"core/tessera-verdict.c", "core/tessera-holder-monitor.c", "core/tessera-job.c"}
# The probes' own files: where they are defined, and the pid check
# (tessera_process_check(), /proc), and the folder store, whose
# liveness's host_expired is the host lease's.
PROBE_OWNERS = {
    "core/tessera-job-lock.c", "core/tessera-process.c", "core/tessera-host-lease.c",
    "core/tessera-pool-store-folder.c",
}


def read(path):
    with open(path, encoding="utf-8") as f:
        return COMMENT.sub(lambda m: m.group(1) or " ", f.read())


def code_of(source):
    """@source (comments out) without its strings, characters and
    preprocessor lines."""
    source = STRING.sub('""', source)
    source = CHAR.sub("' '", source)
    return DIRECTIVE.sub(" ", source)


def top_level(code):
    """@code with each brace's contents emptied ({}), and the spans of
    the function bodies' contents (start, end), in order."""
    out, depth, start, bodies = [], 0, 0, []
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                out.append("{")
                start = i + 1
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                out.append("}")
                bodies.append((start, i))
        elif depth == 0:
            out.append(c)
    return "".join(out), bodies


def closing(text, i):
    """The index after the parenthesis that closes the one at @i."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def declaration_start(top, i):
    """Where the top-level declaration around @i begins."""
    return max(top.rfind(";", 0, i), top.rfind("}", 0, i)) + 1


def definitions(path):
    """The symbols @path defines, not static: its functions with a body,
    its data, and the G_DEFINE_*'s get_type and quark functions."""
    top, _ = top_level(code_of(read(path)))
    found = set()
    for m in re.finditer(r"\b(_?tessera_\w+)\s*([(=;\[])", top):
        head = top[declaration_start(top, m.start()):m.start()]
        if re.search(r"\b(static|extern|typedef)\b", head) or re.search(r"[(,]\s*$", head):
            continue
        if m.group(2) == "(":
            after = top[closing(top, m.end() - 1):].lstrip()
            if not after.startswith("{"):
                continue  # a prototype, or a macro's argument
        found.add(m.group(1))
    source = read(path)
    found |= {m.group(2) + "_get_type" for m in G_DEFINE.finditer(source)}
    found |= {m.group(1) + "_quark" for m in G_QUARK.finditer(source)}
    return found


def expansions(paths):
    """What each macro (#define) and each static inline function of
    @paths uses: name -> its words; with the macros that
    G_DECLARE_FINAL_TYPE, G_DECLARE_DERIVABLE_TYPE and
    G_DECLARE_INTERFACE declare."""
    words = {}
    for path in paths:
        source = read(path)
        for m in DEFINE.finditer(source):
            words.setdefault(m.group(1), set()).update(WORD.findall(STRING.sub('""', m.group(2))))
        for m in G_DECLARE.finditer(source):
            kind, prefix, module, obj = m.group(1), m.group(3), m.group(4), m.group(5)
            macros = ["%s_%s" % (module, obj), "%s_IS_%s" % (module, obj)]
            if kind == "DERIVABLE_TYPE":
                macros += ["%s_%s_CLASS" % (module, obj), "%s_IS_%s_CLASS" % (module, obj),
                           "%s_%s_GET_CLASS" % (module, obj)]
            elif kind == "INTERFACE":
                macros += ["%s_%s_GET_IFACE" % (module, obj)]
            for macro in macros:
                words.setdefault(macro, set()).add(prefix + "_get_type")
        for m in G_AUTO.finditer(source):
            words.setdefault("g_auto:" + m.group(1), set()).add(m.group(2))
        code = code_of(source)
        top, bodies = top_level(code)
        # Match each body to its function through the emptied text: the
        # n-th {} of top is the n-th body.
        braces = [i for i, c in enumerate(top) if c == "{"]
        for brace, (start, end) in zip(braces, bodies):
            head = top[declaration_start(top, brace):brace]
            m = re.search(r"\b(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", head)
            if m and re.search(r"\bstatic\b", head) and re.search(r"\binline\b", head):
                words.setdefault(m.group(1), set()).update(WORD.findall(code[start:end]))
    return words


def header_paths():
    return sorted(glob.glob(os.path.join(root, "include", "**", "*.h"), recursive=True) +
                  glob.glob(os.path.join(root, "core", "*.h")) +
                  glob.glob(os.path.join(root, "plugins", "*", "*.h")) +
                  glob.glob(os.path.join(root, "tools", "*.h")))


HEADER_WORDS = expansions(header_paths())


def uses(path, defined):
    """The symbols of @defined that @path mentions, each with how: the
    symbol itself, or "MACRO -> symbol"."""
    local = dict(HEADER_WORDS)
    local.update(expansions([path]))
    # A local #define's body is used where the macro is: leave the
    # directives out of the words, and follow the macros.
    found = {}
    seen = set()

    def follow(word, via, depth):
        if word in defined:
            found.setdefault(word, via + " -> " + word if via else word)
        if word in local and depth < 20 and (word, via) not in seen:
            seen.add((word, via))
            for w in local[word]:
                if w != word:
                    follow(w, via or word, depth + 1)

    code = code_of(read(path))
    # The type a G_DEFINE_* defines is named by its prefix there, which
    # is no use.
    code = G_DEFINE.sub(lambda m: m.group(0)[:-len(m.group(2))], code)
    code = G_QUARK.sub(" ", code)
    code = G_AUTO.sub(" ", code)
    for word in set(WORD.findall(code)) | {"g_auto:" + t for t in AUTO_USE.findall(code)}:
        follow(word, None, 0)
    return found


def cycles(files):
    """The use graph's strongly connected components of more than one
    file (Tarjan's algorithm), each a sorted list of names, with the
    uses that close it."""
    defined = {}
    for path in files:
        for symbol in definitions(path):
            defined.setdefault(symbol, path)
    edges = {path: {} for path in files}
    for path in files:
        for symbol, how in uses(path, defined).items():
            owner = defined[symbol]
            if owner != path:
                edges[path].setdefault(owner, set()).add(how)

    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
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
        arrows = ["%s -> %s (%s)" % (name(a), name(b), ", ".join(sorted(edges[a][b])[:2]))
                  for a in sorted(component) for b in sorted(edges[a]) if b in members]
        result.append((frozenset(name(c) for c in component), arrows))
    return result


def manifest(folder):
    """A plugin's .plugin keys: key -> list of values (split on ';')."""
    keys = {}
    for path in glob.glob(os.path.join(folder, "*.plugin")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.partition("=")
                if sep:
                    keys.setdefault(key.strip(), []).extend(v.strip() for v in value.split(";") if v.strip())
    return keys


def plugin_markers():
    """For each plugin: the strings that name it (from its .plugin
    file: module, name, classes, resource and process types, stores and
    their "NAME://") and its C prefixes (from its headers' and sources'
    names, and the types its files define or declare)."""
    markers = {}
    for folder in sorted(glob.glob(os.path.join(root, "plugins", "*", ""))):
        folder = os.path.dirname(folder)
        keys = manifest(folder)
        if not keys:
            continue
        words = set()
        for key in ("Module", "Name", "Classes", "ResourceTypes", "ProcessTypes", "Stores"):
            words.update(keys.get(key, []))
        schemes = {s + "://" for s in keys.get("Stores", [])}
        stems = set()
        for path in glob.glob(os.path.join(folder, "tessera-*.[ch]")):
            # tessera-counter-token.h: tessera_counter_token
            stem = name(path)[len("tessera-"):-2]
            stem = re.sub(r"-private$", "", stem)
            stems.add(stem.replace("-", "_"))
        for path in glob.glob(os.path.join(folder, "*.[ch]")):
            source = read(path)
            stems.update(m.group(2)[len("tessera_"):] for m in G_DEFINE.finditer(source)
                         if m.group(2).startswith("tessera_"))
            stems.update(m.group(3)[len("tessera_"):] for m in G_DECLARE.finditer(source)
                         if m.group(3).startswith("tessera_"))
        prefixes = set()
        for stem in stems:
            # tessera_counter_token, TesseraCounterToken, TESSERA_TYPE_COUNTER_TOKEN
            prefixes.add("tessera_" + stem)
            prefixes.add("Tessera" + "".join(s.capitalize() for s in stem.split("_")))
            prefixes.add("TESSERA_TYPE_" + stem.upper())
        markers[name(folder)] = (words, schemes, prefixes, keys)
    return markers


problems = []

# Cycles in core/ and in each plugin.
groups = [("core", sorted(glob.glob(os.path.join(root, "core", "*.c"))))]
for folder in sorted(glob.glob(os.path.join(root, "plugins", "*", ""))):
    groups.append(("plugins/" + name(os.path.dirname(folder)), sorted(glob.glob(os.path.join(folder, "*.c")))))
known_seen = set()


def lists_of(cycles_listed):
    """The names of the lists that hold these cycles (KNOWN_CYCLES, issue 39; …)."""
    return "; ".join(sorted({why for _, why in cycles_listed}))


def entry_of(why):
    """The list's variable: KNOWN_CYCLES of "KNOWN_CYCLES, issue 39"."""
    return why.partition(",")[0]


for group, files in groups:
    listed = [(k, why) for g, k, why in LISTED_CYCLES if g == group]
    known = [k for k, _ in listed]
    for component, arrows in cycles(files):
        if component in known:
            known_seen.add((group, component))
            continue
        overlap = [(k, why) for k, why in listed if k & component]
        known_seen.update((group, k) for k, _ in overlap)
        joined = set().union(*(k for k, _ in overlap))
        if not overlap:
            what = "a NEW cycle"
        elif all(k < component for k, _ in overlap):
            more = sorted(component - joined)
            what = "a known cycle grew (%s)%s%s" % (
                lists_of(overlap), " by " + ", ".join(more) if more else "",
                ": %d known cycles joined into one" % len(overlap) if len(overlap) > 1 else "")
        elif len(overlap) == 1 and component < overlap[0][0]:
            k, why = overlap[0]
            what = ("a known cycle shrank%s: narrow its %s entry to these files (it lost %s)" %
                    (" (good)" if why.startswith("KNOWN_CYCLES") else "", entry_of(why),
                     ", ".join(sorted(k - component))))
        else:
            what = ("a known cycle changed (%s): it gained %s and lost %s" %
                    (lists_of(overlap), ", ".join(sorted(component - joined)) or "nothing",
                     ", ".join(sorted(joined - component)) or "nothing"))
        problems.append("%s: %s: %s use each other: %s" % (group, what, ", ".join(sorted(component)),
                                                            "; ".join(arrows)))
for group, component, why in LISTED_CYCLES:
    if (group, component) not in known_seen:
        problems.append("%s: the known cycle %s no longer happens%s: take it off %s" %
                        (group, ", ".join(sorted(component)),
                         " (good)" if why.startswith("KNOWN_CYCLES") else "", entry_of(why)))

# No plugin named in core/.
core_files = sorted(glob.glob(os.path.join(root, "core", "*.[ch]")))
markers = plugin_markers()
for plugin, (words, schemes, prefixes, _) in markers.items():
    prefix_re = (re.compile(r"(?<![A-Za-z0-9])(%s)" % "|".join(re.escape(p) for p in sorted(prefixes)))
                 if prefixes else None)
    for path in core_files:
        source = read(path)
        for m in STRING.finditer(source):
            text = m.group(0)[1:-1]
            if text in words or any(s in text for s in schemes):
                problems.append("core/%s names the plugin %s: %s" % (name(path), plugin, m.group(0)))
        if prefix_re is not None:
            code = STRING.sub('""', source)
            for m in sorted(set(prefix_re.findall(code))):
                problems.append("core/%s names the plugin %s: %s" % (name(path), plugin, m))

# Core's private headers stay in core.
private = {name(h) for h in glob.glob(os.path.join(root, "core", "*private*.h"))}
store_plugins = {p for p, (_, _, _, keys) in markers.items() if keys.get("Stores")}
seen_exceptions = set()
outside = []
for top in OUTSIDE_CORE:
    outside += glob.glob(os.path.join(root, top, "**", "*.[ch]"), recursive=True)
for path in sorted(outside):
    rel = os.path.relpath(path, root)
    for header in INCLUDE.findall(read(path)):
        if name(header) not in private:
            continue
        entry = "%s: %s" % (rel, name(header))
        parts = rel.split(os.sep)
        if name(header) == STORE_HEADER and parts[0] == "plugins" and len(parts) == 3:
            if parts[1] in store_plugins:
                continue
            problems.append("%s includes core's %s, but only a store plugin may (its .plugin lists Stores=)"
                            % (rel, STORE_HEADER))
            continue
        if entry in KNOWN_PRIVATE_INCLUDES or entry in COMPILED_IN:
            seen_exceptions.add(entry)
            continue
        problems.append("%s includes core's private %s" % (rel, name(header)))
# What a store plugin includes is the store header alone: it names no
# other private header of core (what a store needs of another unit, it
# declares itself).
store_header = os.path.join(root, "core", STORE_HEADER)
if os.path.exists(store_header):
    for header in INCLUDE.findall(read(store_header)):
        if name(header) in private and name(header) != STORE_HEADER:
            problems.append("core/%s includes core's private %s: a store plugin would see it through the store header"
                            % (STORE_HEADER, name(header)))
for entry in sorted((KNOWN_PRIVATE_INCLUDES | COMPILED_IN) - seen_exceptions):
    problems.append("%s no longer happens: take it off KNOWN_PRIVATE_INCLUDES or COMPILED_IN" % entry)

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
print("layers: %d files of core/ and %d plugins: no cycle but the %d known (issue 39) and the %d the "
      "public API fixes, no plugin named "
      "in core, no private header outside core but the store header and the %d listed, no holder probed "
      "outside the judge"
      % (len(groups[0][1]), len(groups) - 1, len(KNOWN_CYCLES), len(PUBLIC_API_CYCLES),
         len(KNOWN_PRIVATE_INCLUDES | COMPILED_IN)))
