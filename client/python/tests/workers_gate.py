"""Whether the tests may expect rolloutd to serve Generate (rollout workers behind it).

Until issue 5 (worker processes behind rolloutd) lands, rolloutd answers every valid Generate,
GenerateStream, Score and UpdateWeights with UNAVAILABLE "no worker is serving". The end-to-end
tests (e2e_workers_test.py: a group of n on the embedded tiny model, stream/score/abort,
UpdateWeights, the example GRPO loop for two iterations with one weight update) are skipped with
REASON until then, and the "no worker yet" checks in rolloutd_test.py run instead.

They switch on by themselves when the rollout-worker binary (//worker:rollout-worker, which
//server:rolloutd will carry as data once it starts workers) is in the test's runfiles. To force
them on or off:
  - WORKERS_SERVE below: True (on), False (off), None (detect: the default);
  - or `--test_env=ROLLOUT_CLIENT_E2E=1` (on) / `=0` (off), e.g.
      bazel --output_base=/root/.cache/bazel/ob_client test \\
          --test_env=ROLLOUT_CLIENT_E2E=1 //client/python:e2e_workers_test
"""
import os
from typing import Optional

WORKERS_SERVE: Optional[bool] = None

#: Where the worker binary appears in the runfiles once rolloutd carries it.
WORKER_RUNFILES = ("worker/rollout-worker", "worker/rollout_worker")

REASON = ("needs rollout workers behind rolloutd (issue 5): until then Generate answers "
          "UNAVAILABLE 'no worker is serving'. Runs by itself once //worker:rollout-worker is in "
          "rolloutd's runfiles; force with --test_env=ROLLOUT_CLIENT_E2E=1 or WORKERS_SERVE = "
          "True in client/python/tests/workers_gate.py")


def _worker_in_runfiles() -> bool:
    srcdir = os.environ.get("TEST_SRCDIR")
    if not srcdir:
        return False
    root = os.path.join(srcdir, os.environ.get("TEST_WORKSPACE", "rollout"))
    return any(os.path.exists(os.path.join(root, rel)) for rel in WORKER_RUNFILES)


def workers_serve() -> bool:
    """True when the tests should expect rolloutd to serve Generate."""
    env = os.environ.get("ROLLOUT_CLIENT_E2E")
    if env in ("0", "1"):
        return env == "1"
    if WORKERS_SERVE is not None:
        return WORKERS_SERVE
    return _worker_in_runfiles()
