#!/usr/bin/env python3
"""An application with a main loop takes 2 tokens of a pool for itself,
without blocking, works, and gives them back (examples/tessera-embed.c in
Python; run by tests/test-gi-embed.py).

    python3 examples/tessera-embed.py [FOLDER]

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import sys

import gi

gi.require_version("Tessera", "1.0")
from gi.repository import GLib, Tessera  # noqa: E402


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/var/lib/tessera/cpu"
    loop = GLib.MainLoop()
    status = 0

    def on_taken(cpu, result):
        nonlocal status
        try:
            lock = cpu.take_finish(result)
        except GLib.Error as error:  # Tessera.Error.TIMEOUT, …
            print(error.message, file=sys.stderr)
            status = 1
        else:
            print(f"took 2 of {cpu.get_name()}", flush=True)
            # … work … then give the tokens back: the private job Tessera
            # made for the request goes with them.
            lock.release()
        loop.quit()

    # A pool of 8 tokens in a folder (created if missing).
    cpu = Tessera.CounterResource.new("cpu", folder, 8)
    # Take 2 for this process, waiting at most 60 s; the main loop runs
    # meanwhile. A job holds a resource once: ask for more in one request.
    cpu.take_async("2", 60, None, on_taken)
    loop.run()
    return status


if __name__ == "__main__":
    sys.exit(main())
