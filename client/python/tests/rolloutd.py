"""A real rolloutd for the client tests, started the repository's way.

The process is run by tests/server/rolloutd_process.py (//tests/server:rolloutd_process, which
brings //server:rolloutd into the runfiles): --listen and --metrics_listen on 127.0.0.1:0, the
bound addresses read from its first two output lines, SIGTERM to stop. This wrapper adds what the
client tests need: an admin token file, model roots for UpdateWeights, and rewriting the config
file for ReloadConfig.

    with Rolloutd("admission { max_n: 8 }", admin_token="tok") as server:
        client = RolloutClient(server.endpoint, admin_token="tok")

Importing rolloutd_process also loads the Bazel-generated stubs (rollout.v1.*, health_pb2) into
the test process next to rollout_client's own: the real-server tests double as a check that both
coexist.
"""
from __future__ import annotations

import os
import tempfile
from typing import List, Optional

from tests.server.rolloutd_process import RolloutdProcess

WORKSPACE = os.environ.get("TEST_WORKSPACE", "rollout")


def runfile(rel: str) -> Optional[str]:
    """A workspace-relative path in the runfiles (None outside Bazel or when absent)."""
    srcdir = os.environ.get("TEST_SRCDIR")
    if srcdir:
        p = os.path.join(srcdir, WORKSPACE, rel)
        if os.path.exists(p):
            return p
    return None


def checkpoint(name: str = "tiny_qwen3_5") -> str:
    """Absolute, symlink-free path of a tiny checkpoint directory (tests/data/<name>)."""
    p = runfile(f"tests/data/{name}/config.json")
    if p is None:
        here = os.path.dirname(os.path.abspath(__file__))
        p = os.path.join(here, "..", "..", "..", "tests", "data", name, "config.json")
    return os.path.dirname(os.path.realpath(p))


class Rolloutd:
    """A rolloutd process; ``endpoint`` once started. ``config`` is ServerConfig text format."""

    def __init__(self, config: str = "", *, admin_token: Optional[str] = None,
                 model_roots: Optional[List[str]] = None) -> None:
        self.tmp = tempfile.mkdtemp(prefix="rolloutd-", dir=os.environ.get("TEST_TMPDIR"))
        self.token_path = os.path.join(self.tmp, "admin_token")
        if admin_token is not None:
            with open(self.token_path, "w") as f:
                f.write(admin_token + "\n")
            config += f'\nsecurity {{ admin_token_file: "{self.token_path}" }}\n'
        # UpdateWeights accepts checkpoints under model.roots. The default root is the directory
        # of the model as rolloutd found it (in its runfiles), so name the real tests/data (where
        # checkpoint() points) and this server's temporary directory explicitly.
        if model_roots is None:
            model_roots = [os.path.dirname(checkpoint()), os.path.realpath(self.tmp)]
        if model_roots and "model {" not in config:
            config += "\nmodel { " + " ".join(f'roots: "{r}"' for r in model_roots) + " }\n"
        #: The config the server started with.
        self.config_text = config
        self.process = RolloutdProcess(config_text=config)
        self.config_path: str = self.process.config_path
        self.endpoint = ""

    def write_config(self, text: str) -> None:
        """Replaces the server's config file (for ReloadConfig)."""
        with open(self.config_path, "w") as f:
            f.write(text)

    def start(self) -> "Rolloutd":
        self.process.start()
        self.endpoint = self.process.address
        return self

    def stop(self) -> Optional[int]:
        return self.process.stop()

    def __enter__(self) -> "Rolloutd":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
