#!/usr/bin/env python3
"""The embedding short path from Python: a typed counter constructor, a
one-call take for this process, and nothing left behind (issue 18,
item 6: a Python run used to leave job.pid behind).
"""
import gc
import os
import subprocess
import sys
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

    def test_take_async(self):
        """take_async() from a main loop, as examples/tessera-embed.py does."""
        with tempfile.TemporaryDirectory(prefix="tessera-gi-") as tmp:
            state = os.environ["XDG_STATE_HOME"]
            private_jobs = os.path.join(state, "tessera", "jobs")
            os.makedirs(private_jobs, exist_ok=True)
            before = set(os.listdir(private_jobs))
            folder = os.path.join(tmp, "cpu")
            cpu = Tessera.CounterResource.new("cpu", folder, 2)
            loop = GLib.MainLoop()
            results = []

            def on_taken(source, result):
                try:
                    results.append(source.take_finish(result))
                except GLib.Error as error:
                    results.append(error)
                loop.quit()

            guard = GLib.timeout_add_seconds(60, loop.quit)
            cpu.take_async("2", 10, None, on_taken)
            loop.run()
            lock = results.pop()
            self.assertIsInstance(lock, Tessera.DynamicDependencyLock)
            self.assertEqual(cpu.get_used(), 2)
            cpu.take_async(None, 0, None, on_taken)
            loop.run()
            error = results.pop()
            self.assertIsInstance(error, GLib.Error)
            self.assertTrue(error.matches(Tessera.error_quark(), Tessera.Error.TIMEOUT))
            GLib.source_remove(guard)
            lock.release()
            lock = None
            gc.collect()
            self.assertEqual(set(os.listdir(private_jobs)), before)
            cpu = None

    def test_example(self):
        """examples/tessera-embed.py runs and leaves nothing behind."""
        with tempfile.TemporaryDirectory(prefix="tessera-gi-") as tmp:
            folder = os.path.join(tmp, "cpu")
            example = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   "..", "examples", "tessera-embed.py")
            done = subprocess.run([sys.executable, example, folder],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("took 2 of cpu", done.stdout)
            self.assertEqual(os.listdir(os.path.join(folder, "jobs")), [])


if __name__ == "__main__":
    unittest.main()
