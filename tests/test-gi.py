#!/usr/bin/env python3
"""Tessera from Python through GObject Introspection (PyGObject).

Configures a counter token in a temporary folder, acquires it, sees a
second acquire time out, releases, and reads a locks.json through the
registry; sees a pool's cleaning say what went. Run by `meson test` against the built typelib.
"""
import os
import tempfile
import unittest

import gi

gi.require_version("Tessera", "1.0")
from gi.repository import GLib, Tessera  # noqa: E402


class TesseraFromPython(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tessera-gi-")
        self.folder = os.path.join(self.tmp.name, "cpu")
        registry = Tessera.Registry.get_default()
        self.cpu = registry.create_resource(
            "countertoken", "cpu", ["lock-folder", "total"], [self.folder, "1"]
        )

    def tearDown(self):
        self.cpu = None
        self.tmp.cleanup()

    def job(self, identifier):
        uri = os.path.join(self.tmp.name, "jobs", identifier, "py")
        return Tessera.Job.new("py", identifier, uri)

    def test_acquire_timeout_release_locks_json(self):
        self.assertIsInstance(self.cpu, Tessera.TrackedDynamicResource)
        first = self.cpu.create_dependency(self.job("one"), "1")
        lock = first.lock(0, None)
        self.assertEqual(lock.get_level(), 1)
        lock_file = lock.dup_lock_file_path()
        self.assertTrue(os.path.isfile(lock_file))

        # The only token is held: a second job times out.
        second = self.cpu.create_dependency(self.job("two"), None)
        with self.assertRaises(GLib.Error) as raised:
            second.lock(0.2, None)
        self.assertTrue(raised.exception.matches(Tessera.error_quark(), Tessera.Error.TIMEOUT))

        # Hand the holding to a "job process" through locks.json.
        locks = Tessera.DynamicDependencyLocks.new()
        locks.append(lock)
        path = os.path.join(self.tmp.name, "locks.json")
        locks.save(path)
        lock.detach()
        job_locks = Tessera.JobDependencyLocks.load(path)
        self.assertEqual(len(job_locks.get_locks()), 1)
        data = job_locks.get_locks()[0].get_data()
        self.assertEqual(data.get_string_member("module"), "tessera.countertoken")
        self.assertEqual(data.get_string_member("class"), "CounterTokenLock")
        job_locks.acquire()
        job_locks.release()
        self.assertFalse(os.path.exists(lock_file))

        # The token is back.
        again = second.lock(0, None)
        again.release()

    def test_bad_request_is_a_gerror(self):
        with self.assertRaises(GLib.Error) as raised:
            self.cpu.create_dependency(self.job("bad"), "many")
        self.assertTrue(
            raised.exception.matches(Tessera.error_quark(), Tessera.Error.INVALID_CONFIGURATION)
        )


    def test_cleaning_says_what_went(self):
        # A holder whose lock file went since the cleaning began.
        lock = self.cpu.create_dependency(self.job("gone"), "1").lock(0, None)
        lock_file = lock.dup_lock_file_path()
        cleaning = Tessera.PoolCleaning.new(self.folder)
        job = os.path.basename(lock_file)[: -len(".json")]
        self.assertTrue(cleaning.had_holder(job))
        os.remove(lock_file)
        gone = cleaning.list_gone_holders()
        self.assertEqual([c.get_name() for c in gone], [job])
        self.assertEqual(gone[0].get_kind(), Tessera.CleanedKind.HOLDER)
        self.assertTrue(gone[0].get_removed())
        self.assertEqual(gone[0].get_path(), lock_file)
        self.assertEqual(len(cleaning.list_left_holders(self.cpu)), 0)
        lock.detach()

        # An ended job folder of `tessera run` in a state folder: its job
        # lock free, the lock files its locks.json names gone.
        state = os.path.join(self.tmp.name, "state")
        folder = os.path.join(state, "jobs", "node7-12-0123abcd")
        os.makedirs(folder, mode=0o750)
        with open(os.path.join(folder, "py.lock"), "w"):
            pass
        with open(os.path.join(folder, "locks.json"), "w") as out:
            out.write('{"dynamic_locks": [{"lock_file_path": "%s"}]}' % lock_file)
        cleaned = Tessera.clean_state_job_folders(state)
        self.assertEqual([c.get_path() for c in cleaned], [folder])
        self.assertEqual(cleaned[0].get_kind(), Tessera.CleanedKind.JOB_FOLDER)
        self.assertFalse(os.path.exists(folder))
        self.assertEqual(len(Tessera.pool_clean_fence_parts(self.folder, False)), 0)

if __name__ == "__main__":
    unittest.main(verbosity=2)
