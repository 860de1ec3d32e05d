"""Chaos (issue 8.3): UpdateWeights under streaming load, with each pause mode (docs/API.md).

Each case pauses while seeded streams run, updates to the same tiny checkpoint under a new explicit
version, resumes, and then runs the same requests again:
- WAIT: Pause returns once every admitted stream has finished, in full and identical to the
  baseline, on the old version.
- KEEP: the running streams are frozen (requests_kept), survive the update, continue after Resume
  (requests_resumed) and end identical to the baseline (same weights, so the same bits); tokens
  from before the update carry the old version, those after it the new one.
- ABORT: every admitted stream ends OK; those that were running end FINISH_REASON_ABORTED with
  their partial tokens, each a prefix of the baseline's (nothing lost: an explicit end).
Requests entirely after the update equal the baseline and report the new weight version. The
workers are idle after each case.
"""

import os
import unittest

from rollout.v1 import admin_pb2
from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u

CONFIG = 'workers { count: 2 devices: "cpu" devices: "cpu" }\n'
WORKERS = 2
STREAMS = 8
N, MAX_TOKENS = 4, 128
ABORTED = rollout_pb2.FINISH_REASON_ABORTED
LENGTH = rollout_pb2.FINISH_REASON_LENGTH


class UpdateWeightsUnderLoadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = u.start_server(CONFIG)
        try:
            u.wait_ready(cls.server, workers=WORKERS)
            cls.requests = u.seeded_requests(STREAMS, n=N, max_tokens=MAX_TOKENS)
            results, errors = u.run_streams(cls.server, cls.requests)
            assert not errors, errors
            cls.baseline = {rid: r.output() for rid, r in results.items()}
        except Exception:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        u.print_server_log(cls.server)
        cls.server.stop()

    def setUp(self):
        u.wait_idle(self.server, WORKERS)
        self.version = u.info(self.server).weight_version

    def tearDown(self):
        # Each case leaves the server unpaused (also when it failed half-way).
        self.server.admin.Resume(admin_pb2.ResumeRequest(), timeout=30)

    def start_load(self):
        load = u.StreamLoad(self.server, self.requests).start()
        # Mid-run: every stream has started (2 workers take them all), most work is ahead.
        load.wait_tokens(STREAMS * N * 8)
        self.assertLess(load.tokens, STREAMS * N * MAX_TOKENS // 2)
        return load

    def update_and_resume(self, expect_resumed=None):
        updated = self.server.admin.UpdateWeights(
            admin_pb2.UpdateWeightsRequest(path=os.path.abspath(u.MODEL_DIR),
                                           version=self.version + 1), timeout=120)
        self.assertEqual(updated.weight_version, self.version + 1)
        resumed = self.server.admin.Resume(admin_pb2.ResumeRequest(), timeout=60)
        if expect_resumed is not None:
            self.assertEqual(resumed.requests_resumed, expect_resumed)
        self.assertFalse(u.info(self.server).paused)

    def assert_after_update_equals_baseline(self):
        """The same requests, entirely on the new weights: the baseline's output, new version."""
        results, errors = u.run_streams(self.server, self.requests)
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, self.baseline)
        for r in results.values():
            for versions in r.versions.values():
                self.assertEqual(set(versions), {self.version + 1})
        u.wait_idle(self.server, WORKERS)

    def test_wait(self):
        load = self.start_load()
        self.server.admin.Pause(admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_WAIT),
                                timeout=120)
        # Pause(WAIT) returned: every admitted stream has finished, in full, on the old weights.
        results, errors = load.join(timeout=30)
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, self.baseline)
        for r in results.values():
            for versions in r.versions.values():
                self.assertEqual(set(versions), {self.version})
        u.wait_idle(self.server, WORKERS)
        self.update_and_resume()
        self.assert_after_update_equals_baseline()

    def test_keep(self):
        load = self.start_load()
        kept = self.server.admin.Pause(admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_KEEP),
                                       timeout=60)
        self.assertGreater(kept.requests_kept, 0)
        self.assertLessEqual(kept.requests_kept, STREAMS)
        self.update_and_resume(expect_resumed=kept.requests_kept)
        results, errors = load.join()
        self.assertEqual(errors, {})
        self.assertEqual({rid: r.output() for rid, r in results.items()}, self.baseline)
        spanning = 0
        for r in results.values():
            for versions in r.versions.values():
                self.assertEqual(versions, sorted(versions))  # old tokens, then new ones
                self.assertTrue(set(versions) <= {self.version, self.version + 1}, versions)
                spanning += len(set(versions)) == 2
        self.assertGreater(spanning, 0)  # kept across the update, continued on the new version
        u.wait_idle(self.server, WORKERS)
        self.assert_after_update_equals_baseline()

    def test_abort(self):
        load = self.start_load()
        paused = self.server.admin.Pause(
            admin_pb2.PauseRequest(mode=admin_pb2.PAUSE_MODE_ABORT), timeout=60)
        self.assertGreater(paused.requests_aborted, 0)
        results, errors = load.join(timeout=60)
        self.assertEqual(errors, {})  # aborted streams end OK, with an explicit finish reason
        self.assertEqual(set(results), set(self.baseline))
        aborted = 0
        for rid, r in results.items():
            want = self.baseline[rid]
            self.assertEqual(set(r.finish), set(want))  # every completion ended, explicitly
            for index, (tokens, logprobs, finish) in r.output().items():
                want_tokens, want_logprobs, want_finish = want[index]
                if finish == ABORTED:
                    self.assertLess(len(tokens), MAX_TOKENS)
                else:
                    self.assertEqual(finish, want_finish)
                    self.assertEqual(len(tokens), MAX_TOKENS)
                # Partial or whole, what was streamed is the baseline's beginning.
                self.assertEqual(tokens, want_tokens[:len(tokens)])
                self.assertEqual(logprobs, want_logprobs[:len(logprobs)])
            aborted += ABORTED in r.finish.values()
        self.assertEqual(aborted, paused.requests_aborted)
        u.wait_idle(self.server, WORKERS)
        self.update_and_resume()
        self.assert_after_update_equals_baseline()


if __name__ == "__main__":
    unittest.main()
