"""Switch for the tests that need rollout workers behind rolloutd.

Until issue 5 (worker processes behind rolloutd) lands, rolloutd answers every valid Generate,
GenerateStream, Score and UpdateWeights with UNAVAILABLE "no worker is serving", so the end-to-end
tests (a group of n on the embedded tiny model, the example GRPO loop with one UpdateWeights) are
skipped with REASON.

To enable them: set WORKERS_SERVE = True below (the permanent switch, once rolloutd serves
Generate on main), or try them early with
    bazel --output_base=/root/.cache/bazel/ob_client test \
        --test_env=ROLLOUT_CLIENT_E2E=1 //client/python:e2e_workers_test
The few "no worker yet" checks in rolloutd_test.py flip the other way at the same time.
"""
import os

WORKERS_SERVE = False

REASON = ("needs rollout workers behind rolloutd (issue 5): until then Generate answers "
          "UNAVAILABLE 'no worker is serving'. Enable with WORKERS_SERVE = True in "
          "client/python/tests/workers_gate.py (or --test_env=ROLLOUT_CLIENT_E2E=1)")


def workers_serve() -> bool:
    """True when the tests should expect rolloutd to serve Generate."""
    return WORKERS_SERVE or os.environ.get("ROLLOUT_CLIENT_E2E") == "1"
