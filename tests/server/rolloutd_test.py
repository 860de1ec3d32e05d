"""rolloutd end to end: the real binary on port 0, called through stubs generated in the build.

Checks health ("" and rollout.v1.Rollout), the reflection listing, validation errors that name the
field, GetServerInfo, the honest answer without workers, and that /metrics passes
`promtool check metrics`.
"""

import subprocess
import unittest

import grpc

import health_pb2
import reflection_pb2
from rollout.v1 import rollout_pb2
from tests.server.rolloutd_process import (ROLLOUTD, RolloutdProcess, metric_value, wait_for,
                                          write_temp)

VOCAB = 1031  # tests/data/tiny_qwen3_5


def generate_request(**sampling):
    request = rollout_pb2.GenerateRequest(prompt_token_ids=[1, 2, 3], n=2)
    request.sampling.max_tokens = 8
    for key, value in sampling.items():
        setattr(request.sampling, key, value)
    return request


class RolloutdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # No --config: the built-in defaults (the embedded tiny model).
        cls.server = RolloutdProcess()
        cls.server.start()

    @classmethod
    def tearDownClass(cls):
        status = cls.server.stop()
        assert status == 0, "rolloutd exited with %s on SIGTERM" % status

    def info(self):
        return self.server.rollout.GetServerInfo(rollout_pb2.GetServerInfoRequest(), timeout=10)

    def test_prints_real_addresses(self):
        for address in (self.server.address, self.server.metrics_address):
            host, _, port = address.rpartition(":")
            self.assertEqual(host, "127.0.0.1")
            self.assertGreater(int(port), 0)

    def test_health(self):
        process = self.server.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        self.assertEqual(process.status, health_pb2.HealthCheckResponse.SERVING)
        # "rollout.v1.Rollout" is SERVING exactly when a worker is ready.
        ready = self.info().ready_workers > 0
        service = self.server.health.Check(
            health_pb2.HealthCheckRequest(service="rollout.v1.Rollout"), timeout=10)
        self.assertEqual(service.status, health_pb2.HealthCheckResponse.SERVING if ready
                         else health_pb2.HealthCheckResponse.NOT_SERVING)
        with self.assertRaises(grpc.RpcError) as e:
            self.server.health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"),
                                     timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_reflection_lists_the_services(self):
        responses = self.server.reflection.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
        names = {s.name for r in responses for s in r.list_services_response.service}
        self.assertLessEqual({"rollout.v1.Rollout", "rollout.v1.Admin", "grpc.health.v1.Health"},
                             names)

    def test_reflection_serves_the_api_descriptors(self):
        responses = self.server.reflection.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="rollout.v1.Rollout")]), timeout=10)
        files = [f for r in responses for f in r.file_descriptor_response.file_descriptor_proto]
        self.assertTrue(files)

    def assert_invalid(self, request, field, allowed):
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(request, timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn(field, e.exception.details())
        self.assertIn(allowed, e.exception.details())

    def test_top_p_two_names_top_p(self):
        self.assert_invalid(generate_request(top_p=2.0), "top_p", "(0, 1]")

    def test_empty_prompt_names_the_prompt_field(self):
        request = generate_request()
        del request.prompt_token_ids[:]
        self.assert_invalid(request, "prompt_token_ids", "must not be empty")

    def test_more_bad_fields(self):
        self.assert_invalid(rollout_pb2.GenerateRequest(prompt_token_ids=[1], n=0), "n", "[1, 64]")
        self.assert_invalid(generate_request(temperature=-1.0), "sampling.temperature", ">= 0")
        self.assert_invalid(generate_request(min_p=2.0), "sampling.min_p", "[0, 1]")
        self.assert_invalid(generate_request(max_tokens=0), "sampling.max_tokens", "[1, 32768]")
        request = generate_request()
        request.prompt_token_ids.append(VOCAB)  # the model is known from its config.json
        self.assert_invalid(request, "prompt_token_ids", "[0, %d)" % VOCAB)
        request = generate_request()
        request.sampling.stop_token_ids.append(-5)
        self.assert_invalid(request, "sampling.stop_token_ids", "[0, %d)" % VOCAB)
        request = generate_request()
        request.replay_ssm = 9  # unknown enum value
        self.assert_invalid(request, "replay_ssm", "got 9")

    def test_stream_validates_too(self):
        with self.assertRaises(grpc.RpcError) as e:
            list(self.server.rollout.GenerateStream(generate_request(top_p=0.0), timeout=10))
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("sampling.top_p", e.exception.details())

    def test_valid_generate_is_served_or_honestly_unavailable(self):
        if self.info().ready_workers > 0:
            self.skipTest("workers are serving: covered by the worker end-to-end tests")
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Generate(generate_request(), timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(e.exception.details(), "no worker is serving")

    def test_server_info(self):
        info = self.info()
        self.assertEqual(info.config_generation, 1)
        self.assertEqual(info.model.model_type, "qwen3_5")
        self.assertEqual(info.model.vocab_size, VOCAB)
        self.assertEqual(list(info.model.layer_types).count(rollout_pb2.LAYER_TYPE_GATED_DELTANET),
                         info.model.num_gdn_layers)
        self.assertEqual(info.limits.max_n, 64)
        self.assertEqual(info.default_sampling.max_tokens, 1024)
        self.assertEqual(info.replay_ssm.default_mode, rollout_pb2.REPLAY_SSM_MODE_AUTO)
        self.assertEqual(info.replay_ssm.ring_length, 16)
        self.assertTrue(info.version)

    def test_abort_unknown_request_is_not_found(self):
        with self.assertRaises(grpc.RpcError) as e:
            self.server.rollout.Abort(rollout_pb2.AbortRequest(request_id="nope"), timeout=10)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.server.rollout.Abort(rollout_pb2.AbortRequest(all=True), timeout=10)

    def test_metrics_pass_promtool_and_count_requests(self):
        with self.assertRaises(grpc.RpcError):
            self.server.rollout.Generate(generate_request(top_p=2.0), timeout=10)
        # Wait for the default worker's first snapshot, so that promtool also sees the series
        # merged from it (the pool-size gauges among them, named *_capacity: a gauge named
        # *_total would fail promtool's lint).
        self.assertTrue(wait_for(lambda: (metric_value(
            self.server.metrics_text(), "rollout_state_slots_capacity", {"worker": "0"}) or 0) > 0,
            timeout=60), "no worker snapshot merged into /metrics")
        text = self.server.metrics_text()
        check = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                               capture_output=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertGreaterEqual(metric_value(text, "rollout_requests_total",
                                             {"rpc": "Generate", "code": "INVALID_ARGUMENT"}), 1)
        self.assertGreaterEqual(metric_value(text, "rollout_request_validation_failures_total",
                                             {"field": "sampling.top_p"}), 1)
        self.assertEqual(metric_value(text, "rollout_config_generation"), 1)
        # Families whose values come from workers are there from the start.
        self.assertIn("# TYPE rollout_replayssm_fallbacks_total counter", text)
        self.assertIn("# TYPE rollout_generation_tokens_total counter", text)
        for gauge in ("rollout_state_slots_capacity", "rollout_kv_blocks_capacity",
                      "rollout_replayssm_rings_capacity"):
            self.assertIn("# TYPE %s gauge" % gauge, text)
            self.assertIsNotNone(metric_value(text, gauge, {"worker": "0"}), gauge)


class CheckConfigTest(unittest.TestCase):
    """rolloutd --check_config: validate a file and print it with the defaults filled in."""

    def run_check(self, text):
        path = write_temp("check.textproto", text)
        return subprocess.run([ROLLOUTD, "--check_config", "--config=" + path], text=True,
                              capture_output=True, timeout=60)

    def test_valid_config_prints_every_default(self):
        result = self.run_check("admission { max_n: 7 }\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("max_n: 7", result.stdout)
        self.assertIn('path: "tests/data/tiny_qwen3_5"', result.stdout)
        self.assertIn("ring_length: 16", result.stdout)

    def test_invalid_config_names_the_field(self):
        result = self.run_check("replay_ssm { ring_length: 999 }\n")
        self.assertEqual(result.returncode, 1)
        self.assertIn("replay_ssm.ring_length: must be in [1, 256], got 999", result.stderr)

    def test_unknown_field_is_an_error(self):
        result = self.run_check("admision { max_n: 7 }\n")
        self.assertEqual(result.returncode, 1)
        self.assertIn("admision", result.stderr)


if __name__ == "__main__":
    unittest.main()
