#!/usr/bin/env python3
"""The embedding short path from Python: a typed counter constructor, a
one-call take for this process, and nothing left behind (issue 18,
item 6: a Python run used to leave job.pid behind).
"""
import gc
import os
import tempfile
import unittest

import gi

gi.require_version("Tessera", "1.0")
from gi.repository import GLib, Tessera  # noqa: E402


class EmbeddingFromPython(unittest.TestCase):
    def test_take_and_clean(self):
        with tempfile.TemporaryDirectory(prefix="tessera-gi-") as tmp:
            state = os.environ["XDG_STATE_HOME"]
            private_jobs = os.path.join(state, "tessera", "jobs")
            os.makedirs(private_jobs, exist_ok=True)
            before = set(os.listdir(private_jobs))
            folder = os.path.join(tmp, "cpu")
            cpu = Tessera.CounterResource.new("cpu", folder, 2)
            lock = cpu.take("2", 10, None)
            self.assertEqual(cpu.get_used(), 2)
            self.assertEqual(len(set(os.listdir(private_jobs)) - before), 1)
            with self.assertRaises(GLib.Error) as raised:
                cpu.take(None, 0, None)
            self.assertTrue(raised.exception.matches(Tessera.error_quark(), Tessera.Error.TIMEOUT))
            lock.release()
            lock = None
            gc.collect()
            self.assertEqual(set(os.listdir(private_jobs)), before)
            self.assertEqual(os.listdir(os.path.join(folder, "jobs")), [])
            cpu = None


if __name__ == "__main__":
    unittest.main()
