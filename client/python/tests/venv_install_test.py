"""`pip install --no-build-isolation ./client/python` works offline in a virtualenv that uses the
system site packages (Debian's grpcio and protobuf), and the installed package imports and runs
its command line from outside the source tree."""
import os
import shutil
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM_PYTHON = "/usr/bin/python3"


def _package_source():
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        p = os.path.join(srcdir, os.environ.get("TEST_WORKSPACE", "rollout"), "client/python")
        if os.path.exists(os.path.join(p, "pyproject.toml")):
            return p
    return os.path.normpath(os.path.join(HERE, ".."))


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


class VenvInstallTest(unittest.TestCase):
    def test_pip_install_offline_into_a_system_site_packages_venv(self):
        tmp = os.environ.get("TEST_TMPDIR") or self._tmpdir()
        work = os.path.join(tmp, "venv_install")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        # A copy with real files (runfiles are symlinks; pip writes build/ into the source).
        src = os.path.join(work, "src")
        shutil.copytree(_package_source(), src, symlinks=False,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__",
                                                      "tests", "BUILD"))
        venv = os.path.join(work, "venv")
        _run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv])
        py = os.path.join(venv, "bin", "python")
        env = {"PATH": os.path.join(venv, "bin") + ":/usr/bin:/bin", "HOME": work,
               "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
               "PIP_NO_INPUT": "1", "LANG": "C.UTF-8"}
        _run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", src],
             env=env, cwd=work)
        # Import from the venv, not from the source tree or the Bazel runfiles.
        probe = ("import rollout_client, grpc, google.protobuf;"
                 "from rollout_client.proto import rollout_pb2;"
                 "print(rollout_client.__file__); print(rollout_client.__version__);"
                 "print(rollout_pb2.GenerateRequest.DESCRIPTOR.file.name)")
        out = _run([py, "-c", probe], env=env, cwd=work).stdout.split()
        self.assertTrue(out[0].startswith(os.path.join(venv, "lib")), out[0])
        self.assertEqual(out[2], "rollout/v1/rollout.proto")
        with open(os.path.join(_package_source(), "pyproject.toml")) as f:
            self.assertIn(f'version = "{out[1]}"', f.read())
        help_text = _run([py, "-m", "rollout_client", "--help"], env=env, cwd=work).stdout
        for command in ("health", "info", "generate", "reload", "update-weights"):
            self.assertIn(command, help_text)
        script = _run([os.path.join(venv, "bin", "rollout-client"), "generate", "--help"],
                      env=env, cwd=work).stdout
        self.assertIn("--prompt", script)

    def _tmpdir(self):
        import tempfile
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        return d


if __name__ == "__main__":
    unittest.main()
