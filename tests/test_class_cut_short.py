"""Tests of the class check's cut_short(): only an honest stop cuts a loop short (a note, no hold back); a loop
left `running`, killed outright, is none.

Split from tests/test_class_check.py; SharedWorkspaceTestCase (one copy of the workspace per class) is
tests/test_loop_lab.py's.
"""
import contextlib
import io

from classroom import check as class_check
import harness
import loop_lab
from verifier.check import checked_loop
from tests.test_loop_lab import SharedWorkspaceTestCase


class CutShortTest(SharedWorkspaceTestCase):
    """Only an honest stop cuts a loop short (a note, no hold back); a loop left `running`, killed outright, is none."""

    def stopped(self, name, error):
        def run_child(root, run_name, sample):
            harness.run_harness(root, run_name, sample)
            raise error  # after the child ended, before the loop wrote the attempt's end
        with contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
            loop_lab.run_loop(self.root, name, "repair", run_child=run_child)
        return checked_loop(self.root / "loop-runs" / name)

    def test_an_interrupted_loop_is_cut_short_and_a_killed_one_is_not(self):
        self.assertEqual(class_check.cut_short(self.stopped("ctrl-c", KeyboardInterrupt)),
                         "interrupted/keyboard_interrupt")
        killed = self.stopped("killed", SystemExit(137))  # the process ended with the record left `running`
        self.assertEqual((killed.record["status"], killed.result()["result"]), ("running", "needs_human"))
        self.assertIsNone(class_check.cut_short(killed))


if __name__ == "__main__":
    unittest.main()
