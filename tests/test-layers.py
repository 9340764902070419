#!/usr/bin/env python3
"""The layer check's own test (the `layers` suite): scripts/check-layers.py
run on small trees of its own, one problem each, so that a blind spot
shows as a failure here rather than as a check that passes.

Usage: test-layers.py PATH/TO/check-layers.py"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

CHECK = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "scripts",
                                                            "check-layers.py")

# A tree that passes: core's class A (tessera-a.c, declared in a public
# header), tessera-c.c that calls tessera-b.c, a private header; a store
# plugin (etcd, no public header) that includes the store header, and a
# resource plugin (mutex).
BASE = {
    "include/tessera/tessera-a.h": """
#include <glib-object.h>
#define TESSERA_TYPE_A (tessera_a_get_type ())
G_DECLARE_FINAL_TYPE (TesseraA, tessera_a, TESSERA, A, GObject)
TesseraA *tessera_a_new (void);
""",
    "core/tessera-a-private.h": "int _tessera_a_secret (void);\n",
    "core/tessera-pool-store-private.h": "int _tessera_pool_store_thing (void);\n",
    "core/tessera-a.c": """
#include "tessera-a.h"
struct _TesseraA { GObject parent; };
G_DEFINE_TYPE (TesseraA, tessera_a, G_TYPE_OBJECT)
static void tessera_a_class_init (TesseraAClass *klass) { }
static void tessera_a_init (TesseraA *self) { }
TesseraA *
tessera_a_new (void)
{
  return g_object_new (TESSERA_TYPE_A, NULL);
}
int
_tessera_a_secret (void)
{
  return 1;
}
""",
    "core/tessera-b.c": """
/* Not a use: tessera_c_run (), TESSERA_TYPE_A, _tessera_a_secret. */
int
tessera_b_go (void)
{
  const char *text = "tessera_c_run () TESSERA_IS_A";
  return text != NULL;
}
""",
    "core/tessera-c.c": """
int tessera_b_go (void);
int
tessera_c_run (void)
{
  return tessera_b_go ();
}
""",
    "plugins/etcd/etcd.plugin": "[Plugin]\nModule=etcd\nName=etcd store\nStores=etcd\n",
    "plugins/etcd/tessera-etcd-store.c": """
#include "tessera-pool-store-private.h"
G_DEFINE_FINAL_TYPE (TesseraEtcdStore, tessera_etcd_store, G_TYPE_OBJECT)
void *
tessera_etcd_store_new (void)
{
  return g_object_new (tessera_etcd_store_get_type (), NULL);
}
""",
    "plugins/mutex/mutex.plugin": "[Plugin]\nModule=mutex\nName=Mutexes\nResourceTypes=mutex\n",
    "plugins/mutex/tessera-mutex.c": """
#include "tessera-a.h"
int
tessera_mutex_thing (void)
{
  return tessera_a_new () != NULL;
}
""",
    "tests/test-a.c": '#include "tessera-a.h"\nint main (void) { return 0; }\n',
}

A_CALLS_C = ("core/tessera-a.c", "  return g_object_new (TESSERA_TYPE_A, NULL);",
             "  tessera_c_run ();\n  return g_object_new (TESSERA_TYPE_A, NULL);")
CYCLE_ABC = r"NEW cycle: tessera-a\.c, tessera-b\.c, tessera-c\.c use each other"

# Each case: its name, its changes to BASE (path, old, new: new replaces
# old; old None appends), the options, and what the check must say (None:
# that it passes).
CASES = [
    ("the tree as it is passes", [], [], None),
    ("a 3-file cycle closed through a type macro (TESSERA_TYPE_A)",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;",
                  "  return text != NULL && g_object_new (TESSERA_TYPE_A, NULL);")],
     [], CYCLE_ABC + r".*tessera-b\.c -> tessera-a\.c \(TESSERA_TYPE_A -> tessera_a_get_type\)"),
    ("a 3-file cycle closed through a G_DECLARE cast (TESSERA_IS_A)",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;",
                  "  return TESSERA_IS_A (text);")],
     [], CYCLE_ABC + r".*TESSERA_IS_A -> tessera_a_get_type"),
    ("a 2-file cycle closed through a data table",
     [A_CALLS_C, ("core/tessera-c.c", None, "const int _tessera_c_table[] = { 1, 2 };\n"),
      ("core/tessera-c.c", "  return tessera_b_go ();", "  return 0;"),
      ("core/tessera-c.c", None, "int\ntessera_c_first (void)\n{\n  return tessera_a_new () != NULL;\n}\n"),
      ("core/tessera-a.c", "  tessera_c_run ();", "  (void) _tessera_c_table[0];")],
     [], r"NEW cycle: tessera-a\.c, tessera-c\.c use each other.*\(_tessera_c_table\)"),
    ("a known cycle, exactly as listed, passes",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;", "  return TESSERA_IS_A (text);")],
     ["--known-cycle", "core:tessera-a.c,tessera-b.c,tessera-c.c"], None),
    ("a known cycle that grows",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;", "  return TESSERA_IS_A (text);")],
     ["--known-cycle", "core:tessera-b.c,tessera-c.c"], r"a known cycle grew .* by tessera-a\.c"),
    ("two known cycles that join",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;", "  return TESSERA_IS_A (text);")],
     ["--known-cycle", "core:tessera-b.c,tessera-c.c", "--known-cycle", "core:tessera-a.c,tessera-c.c"],
     r"\A(?!.*no longer happens).*a known cycle grew \(KNOWN_CYCLES, issue 39\): 2 known cycles joined into one"),
    ("a known cycle that shrinks",
     [A_CALLS_C, ("core/tessera-c.c", None, "const int _tessera_c_table[] = { 1, 2 };\n"),
      ("core/tessera-c.c", "  return tessera_b_go ();", "  return 0;"),
      ("core/tessera-c.c", None, "int\ntessera_c_first (void)\n{\n  return tessera_a_new () != NULL;\n}\n"),
      ("core/tessera-a.c", "  tessera_c_run ();", "  (void) _tessera_c_table[0];")],
     ["--known-cycle", "core:tessera-a.c,tessera-b.c,tessera-c.c"],
     r"\A(?!.*no longer happens).*a known cycle shrank \(good\).*\(it lost tessera-b\.c\)"),
    ("a known cycle that is gone", [], ["--known-cycle", "core:tessera-b.c,tessera-c.c"],
     r"the known cycle tessera-b\.c, tessera-c\.c no longer happens"),
    ("a cycle the public API fixes, exactly as listed, passes",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;", "  return TESSERA_IS_A (text);")],
     ["--public-api-cycle", "core:tessera-a.c,tessera-b.c,tessera-c.c"], None),
    ("a cycle the public API fixes that grows",
     [A_CALLS_C, ("core/tessera-b.c", "  return text != NULL;", "  return TESSERA_IS_A (text);")],
     ["--public-api-cycle", "core:tessera-b.c,tessera-c.c"],
     r"a known cycle grew \(PUBLIC_API_CYCLES, the public API\) by tessera-a\.c"),
    ("a cycle the public API fixes that shrinks",
     [A_CALLS_C, ("core/tessera-c.c", None, "const int _tessera_c_table[] = { 1, 2 };\n"),
      ("core/tessera-c.c", "  return tessera_b_go ();", "  return 0;"),
      ("core/tessera-c.c", None, "int\ntessera_c_first (void)\n{\n  return tessera_a_new () != NULL;\n}\n"),
      ("core/tessera-a.c", "  tessera_c_run ();", "  (void) _tessera_c_table[0];")],
     ["--public-api-cycle", "core:tessera-a.c,tessera-b.c,tessera-c.c"],
     r"\A(?!.*no longer happens).*a known cycle shrank: narrow its PUBLIC_API_CYCLES entry.*\(it lost tessera-b\.c\)"),
    ("a cycle the public API fixes that is gone", [], ["--public-api-cycle", "core:tessera-b.c,tessera-c.c"],
     r"the known cycle tessera-b\.c, tessera-c\.c no longer happens: take it off PUBLIC_API_CYCLES"),
    ("a core private header included in tests/",
     [("tests/test-a.c", None, '#include "tessera-a-private.h"\n')], [],
     r"tests/test-a\.c includes core's private tessera-a-private\.h"),
    ("the store header included by a plugin that is no store",
     [("plugins/mutex/tessera-mutex.c", None, '#include "tessera-pool-store-private.h"\n')], [],
     r"plugins/mutex/tessera-mutex\.c includes core's tessera-pool-store-private\.h, but only a store plugin"),
    ("the store header including another private header of core",
     [("core/tessera-pool-store-private.h", None, '#include "tessera-a-private.h"\n')], [],
     r"core/tessera-pool-store-private\.h includes core's private tessera-a-private\.h"),
    ("the etcd store's constructor named in core",
     [("core/tessera-c.c", None, "void *f (void) { return tessera_etcd_store_new (); }\n")], [],
     r"core/tessera-c\.c names the plugin etcd: tessera_etcd_store"),
    ("the etcd store's type macro named in core",
     [("core/tessera-c.c", None, "GType f (void) { return TESSERA_TYPE_ETCD_STORE; }\n")], [],
     r"core/tessera-c\.c names the plugin etcd: TESSERA_TYPE_ETCD_STORE"),
    ("the etcd store's scheme named in core",
     [("core/tessera-c.c", None, 'const char *f (void) { return "etcd://host:2379"; }\n')], [],
     r'core/tessera-c\.c names the plugin etcd: "etcd://host:2379"'),
    ("the mutex's resource type named in core",
     [("core/tessera-c.c", None, 'const char *f (void) { return "mutex"; }\n')], [],
     r'core/tessera-c\.c names the plugin mutex: "mutex"'),
]


def build(tree, changes):
    files = dict(BASE)
    for path, old, new in changes:
        if old is None:
            files[path] = files.get(path, "") + new
        else:
            assert old in files[path], (path, old)
            files[path] = files[path].replace(old, new)
    for path, text in files.items():
        full = os.path.join(tree, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


failures = 0
for number, (title, changes, options, expected) in enumerate(CASES, 1):
    tree = tempfile.mkdtemp(prefix="tessera-layers-")
    try:
        build(tree, changes)
        run = subprocess.run([sys.executable, CHECK, tree, "--lists-empty"] + options,
                             capture_output=True, text=True)
        out = run.stdout + run.stderr
        if expected is None:
            ok = run.returncode == 0
        else:
            ok = run.returncode == 1 and re.search(expected, out, re.S) is not None
        print("%s %d - %s" % ("ok" if ok else "not ok", number, title))
        if not ok:
            failures += 1
            print("# exit %d, expected %s; it said:" % (run.returncode, expected or "a pass"))
            print("".join("#   " + line + "\n" for line in out.splitlines()), end="")
    finally:
        shutil.rmtree(tree)
print("1..%d" % len(CASES))
sys.exit(1 if failures else 0)
