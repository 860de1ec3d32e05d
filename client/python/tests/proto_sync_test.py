"""rollout_client/_proto (committed, generated) matches what tools/gen_protos.py makes from the
repository's proto/ today; on failure the diff and the command that fixes it are printed."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def _path(rel_in_workspace, rel_here):
    """A runfile under Bazel, else the checkout's file."""
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        p = os.path.join(srcdir, os.environ.get("TEST_WORKSPACE", "rollout"), rel_in_workspace)
        if os.path.exists(p):
            return p
    return os.path.normpath(os.path.join(HERE, rel_here))


class ProtoSyncTest(unittest.TestCase):
    def test_generated_stubs_are_up_to_date(self):
        script = _path("client/python/tools/gen_protos.py", "../tools/gen_protos.py")
        proto_root = os.path.dirname(os.path.dirname(os.path.dirname(
            _path("proto/rollout/v1/rollout.proto", "../../../proto/rollout/v1/rollout.proto"))))
        out = os.path.dirname(_path("client/python/rollout_client/_proto/rollout_pb2.py",
                                    "../rollout_client/_proto/rollout_pb2.py"))
        proc = subprocess.run([sys.executable, script, "--check", "--proto-root", proto_root,
                               "--out", out], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("up to date", proc.stdout)


if __name__ == "__main__":
    unittest.main()
