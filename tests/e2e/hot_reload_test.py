"""The hot engine settings of a config reload reach running workers (and ones that start later):
replay_ssm.enabled false makes a request asking ON decode plainly with fallback DISABLED_BY_CONFIG,
true again gives it the ring; replay_ssm.auto_min_batch_size 1 lets a lone AUTO request use the
ring. Seeded outputs stay identical to ReplaySSM OFF throughout (the ring is exact)."""

import signal
import unittest

from rollout.v1 import admin_pb2
from rollout.v1 import rollout_pb2
from tests.e2e import e2e_util as u

ON = rollout_pb2.REPLAY_SSM_MODE_ON
OFF = rollout_pb2.REPLAY_SSM_MODE_OFF
AUTO = rollout_pb2.REPLAY_SSM_MODE_AUTO
DISABLED = rollout_pb2.REPLAY_SSM_FALLBACK_REASON_DISABLED_BY_CONFIG
NONE = rollout_pb2.REPLAY_SSM_FALLBACK_REASON_NONE


class HotReloadTest(unittest.TestCase):
    def setUp(self):
        self.base = 'workers { count: 1 devices: "cpu" }\n'
        self.server = u.start_server(self.base + "replay_ssm { auto_min_batch_size: 64 }\n")
        self.addCleanup(self.server.stop)
        u.wait_ready(self.server)

    def reload(self, replay):
        with open(self.server.config_path, "w") as f:
            f.write(self.base + "replay_ssm { %s }\n" % replay)
        self.server.admin.ReloadConfig(admin_pb2.ReloadConfigRequest(), timeout=30)

    def generate(self, mode):
        request = u.generate_request([5, 6, 7], n=2, max_tokens=24, seed=11, ignore_eos=True,
                                     logprobs=True, replay_ssm=mode)
        return self.server.rollout.Generate(request, timeout=60)

    def tokens(self, response):
        return [list(c.token_ids) for c in response.completions]

    def check(self, response, applied, reason, reference):
        for c in response.completions:
            self.assertEqual(c.replay_ssm_applied, applied)
            self.assertEqual(c.replay_ssm_fallback_reason, reason)
        self.assertEqual(self.tokens(response), reference)

    def test_enabled_and_auto_threshold_apply_without_restart(self):
        reference = self.tokens(self.generate(OFF))
        self.check(self.generate(ON), True, NONE, reference)
        self.check(self.generate(AUTO), False, NONE, reference)  # 2 rows < 64

        self.reload("enabled: false auto_min_batch_size: 64")
        self.check(self.generate(ON), False, DISABLED, reference)

        self.reload("enabled: true auto_min_batch_size: 1")
        self.check(self.generate(ON), True, NONE, reference)
        self.check(self.generate(AUTO), True, NONE, reference)  # 2 rows >= 1

        # A worker that starts after the reload has the reloaded settings too.
        self.reload("enabled: false auto_min_batch_size: 1")
        victim = u.worker_pids(self.server)[0]
        u.os.kill(victim, signal.SIGKILL)
        u.wait_metric(self.server, "rollout_worker_restarts_total", {"worker": "0"},
                      lambda v: v == 1)
        u.wait_ready(self.server)
        self.check(self.generate(ON), False, DISABLED, reference)
        self.assertEqual(u.metric(self.server, "rollout_worker_restarts_total", {"worker": "0"}), 1)


if __name__ == "__main__":
    unittest.main()
