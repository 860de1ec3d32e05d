"""The client against the real rolloutd binary: the control plane and the error paths (health,
GetServerInfo, request validation, the admin token, ReloadConfig, Pause/Resume, Abort, model-root
checks, TLS), through the sync client, the asyncio client and the command line.

Generation itself (a group of n on the embedded model, streaming, Score, UpdateWeights, the GRPO
loop) is in e2e_workers_test.py.
"""
import asyncio
import json
import os
import subprocess
import sys

import grpc
import pytest

import rollout_client
from rollout_client import (AsyncRolloutClient, ChannelConfig, ConfigChangeOutcome, HealthStatus,
                            RetryPolicy, RolloutClient, RolloutError)
from rollout_client.proto import config_pb2
from rolloutd import Rolloutd, checkpoint

TOKEN = "client-test-token"
BASE_CONFIG = "shutdown_grace_seconds: 2\n"
INVALID = grpc.StatusCode.INVALID_ARGUMENT
FAST = RetryPolicy(max_attempts=3, initial_backoff=0.05, jitter=0.0)


@pytest.fixture(scope="module")
def server():
    with Rolloutd(BASE_CONFIG, admin_token=TOKEN) as s:
        yield s


@pytest.fixture
def client(server):
    with RolloutClient(server.endpoint, admin_token=TOKEN, retry=FAST, timeout=30) as c:
        yield c


def test_health(client):
    assert client.health() is HealthStatus.SERVING
    client.wait_ready(120)  # "rollout.v1.Rollout": a worker has loaded the model
    assert client.health("rollout.v1.Rollout") is HealthStatus.SERVING
    assert client.health("no.such.Service") is HealthStatus.SERVICE_UNKNOWN


def test_server_info(client):
    info = client.server_info()
    assert info.version and info.config_generation >= 1 and not info.paused
    assert info.model.name == "tiny_qwen3_5" and info.model.model_type == "qwen3_5"
    assert info.model.vocab_size == 1031
    assert set(info.model.layer_types) == {"GATED_DELTANET", "FULL_ATTENTION"}
    assert info.model.num_gdn_layers + info.model.num_attention_layers == info.model.num_layers
    assert info.limits.max_n == 64 and info.limits.max_top_logprobs == 20
    assert info.default_sampling.max_tokens == 1024
    # The client's default limits match what the server sends and accepts.
    assert ChannelConfig().max_receive_message_bytes >= info.limits.max_send_message_bytes
    assert ChannelConfig().max_send_message_bytes <= info.limits.max_receive_message_bytes
    assert {m.value for m in info.replay_ssm.supported_modes} == {"ON", "OFF", "AUTO"}


@pytest.mark.parametrize("kwargs, field", [
    (dict(prompt_token_ids=[1, 2], n=0), "n"),
    (dict(prompt_token_ids=[1, 2], n=65), "n"),
    (dict(prompt_token_ids=[]), "prompt_token_ids"),
    (dict(prompt_token_ids=[1, 5000]), "prompt_token_ids"),
    (dict(prompt_token_ids=[1], sampling={"top_p": 2.0}), "sampling.top_p"),
    (dict(prompt_token_ids=[1], sampling={"temperature": -1.0}), "sampling.temperature"),
    (dict(prompt_token_ids=[1], sampling={"max_tokens": 5000}), "sampling.max_tokens"),
    (dict(prompt_token_ids=[1], top_logprobs=21), "logprobs.top_k"),
    (dict(prompt_token_ids=[1], request_id="x" * 257), "request_id"),
])
def test_validation_errors_name_the_field_and_are_not_retried(client, kwargs, field):
    with pytest.raises(RolloutError) as err:
        client.generate(**kwargs)
    assert err.value.code == INVALID, err.value
    assert err.value.message.startswith(field + ":"), err.value.message
    assert err.value.attempts == 1


def test_stream_and_score_validation(client):
    with pytest.raises(RolloutError) as err:
        list(client.generate_stream([1], n=0))
    assert err.value.code == INVALID and err.value.message.startswith("n:")
    with pytest.raises(RolloutError) as err:
        client.score([1, 2], [[1, 5000]])
    assert err.value.code == INVALID and "completions.token_ids" in err.value.message



@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_admin_calls_need_the_token(server, token):
    with RolloutClient(server.endpoint, admin_token=token, retry=FAST) as c:
        for call in (lambda: c.reload_config(dry_run=True), lambda: c.pause("wait"),
                     lambda: c.resume(), lambda: c.update_weights(checkpoint(), version=9)):
            with pytest.raises(RolloutError) as err:
                call()
            assert err.value.code == grpc.StatusCode.UNAUTHENTICATED, err.value
            assert err.value.attempts == 1
            assert TOKEN not in err.value.message


def test_reload_with_token(server, client):
    result = client.reload_config()[server.endpoint]
    assert not result.applied and result.changes == []
    assert result.source == server.config_path


def test_reload_applies_hot_fields_and_reports_them():
    with Rolloutd(BASE_CONFIG, admin_token=TOKEN) as server, \
            RolloutClient(server.endpoint, admin_token=TOKEN, retry=FAST) as client:
        generation = client.server_info().config_generation
        server.write_config(server.config_text + "admission { max_n: 8 }\n")
        dry = client.reload_config(dry_run=True)[server.endpoint]
        assert dry.dry_run and not dry.applied and dry.generation == generation
        assert [(c.field, c.outcome) for c in dry.changes] == [
            ("admission.max_n", ConfigChangeOutcome.WOULD_APPLY)]
        result = client.reload_config()[server.endpoint]
        assert result.applied and result.generation == generation + 1
        change = result.changes[0]
        assert (change.field, change.old_value, change.new_value, change.outcome) == (
            "admission.max_n", "64", "8", ConfigChangeOutcome.APPLIED)
        assert client.server_info().limits.max_n == 8
        with pytest.raises(RolloutError) as err:
            client.generate([1], n=9)
        assert err.value.code == INVALID and "8" in err.value.message

        # An invalid inline config is rejected; the report comes in the trailing metadata.
        bad = config_pb2.ServerConfig()
        bad.admission.max_n = 5000
        with pytest.raises(RolloutError) as err:
            client.reload_config(bad)
        assert err.value.code == INVALID and "admission.max_n" in err.value.message
        report = err.value.reload_report()
        assert report is not None
        assert any(c.field == "admission.max_n" and c.outcome is ConfigChangeOutcome.REJECTED
                   for c in report.changes)
        assert client.server_info().limits.max_n == 8  # the previous config stays


def test_pause_and_resume(server, client):
    paused = client.pause("abort")[server.endpoint]
    assert paused.requests_aborted == 0
    try:
        assert client.server_info().paused
        with pytest.raises(RolloutError) as err:
            client.generate([1, 2])
        assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert err.value.attempts == 1  # not retryable
    finally:
        client.resume()
    assert not client.server_info().paused


def test_update_weights_checks_model_roots(client, tmp_path):
    with pytest.raises(RolloutError) as err:
        client.update_weights(str(tmp_path))
    assert err.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "model roots" in err.value.message and err.value.attempts == 1
    with pytest.raises(RolloutError) as err:
        client.update_weights("relative/path")
    assert err.value.code == INVALID



def test_abort(client):
    with pytest.raises(RolloutError) as err:
        client.abort("nothing-runs-with-this-id")
    assert err.value.code == grpc.StatusCode.NOT_FOUND
    assert client.abort(all=True).request_ids == []


def test_async_client(server):
    async def main():
        async with AsyncRolloutClient(server.endpoint, admin_token=TOKEN, retry=FAST) as c:
            health = await c.health()
            info = await c.server_info()
            with pytest.raises(RolloutError) as err:
                await c.generate([1], sampling={"top_p": 0.0})
            reload = await c.reload_config(dry_run=True)
            return health, info, err.value, reload
    health, info, err, reload = asyncio.run(main())
    assert health is HealthStatus.SERVING and info.model.vocab_size == 1031
    assert err.code == INVALID and err.message.startswith("sampling.top_p:")
    assert reload[server.endpoint].dry_run


def test_tls(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    config = BASE_CONFIG + f'security {{ tls {{ cert_file: "{cert}" key_file: "{key}" }} }}\n'
    with Rolloutd(config) as server:
        tls = ChannelConfig(root_certificates=cert.read_bytes())
        with RolloutClient(server.endpoint, channel=tls) as client:
            assert client.health() is HealthStatus.SERVING
            assert client.server_info().model.vocab_size == 1031
        with RolloutClient(server.endpoint, retry=FAST) as plain:
            with pytest.raises(RolloutError) as err:
                plain.health(timeout=5)
            assert err.value.code == grpc.StatusCode.UNAVAILABLE
        r = _cli("-e", server.endpoint, "--ca", str(cert), "info")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["model"]["name"] == "tiny_qwen3_5"


def test_coexists_with_the_repository_stubs():
    """rolloutd_process loaded Bazel's rollout.v1 stubs and top-level health_pb2 into this
    process; rollout_client's own stubs share the descriptors (same canonical file names)."""
    import health_pb2
    from rollout.v1 import rollout_pb2 as bazel_rollout_pb2
    from rollout_client.proto import rollout_pb2
    assert rollout_pb2.GenerateRequest.DESCRIPTOR.full_name == \
        bazel_rollout_pb2.GenerateRequest.DESCRIPTOR.full_name
    wire = rollout_pb2.GenerateRequest(prompt_token_ids=[1, 2], n=3).SerializeToString()
    assert bazel_rollout_pb2.GenerateRequest.FromString(wire).n == 3
    assert health_pb2.HealthCheckResponse.SERVING == 1


def _cli(*args, env=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(rollout_client.__file__)))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ROLLOUT_")}
    environ["PYTHONPATH"] = root
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "rollout_client", *args], capture_output=True,
                          text=True, env=environ, timeout=60)


def test_cli(server):
    r = _cli("-e", server.endpoint, "info")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["model"]["name"] == "tiny_qwen3_5"
    r = _cli("-e", server.endpoint, "health")
    assert r.returncode == 0 and json.loads(r.stdout) == {"status": "SERVING"}
    r = _cli("-e", server.endpoint, "generate", "--prompt", "1,2", "-n", "0")
    assert r.returncode == 64 + 3
    assert "INVALID_ARGUMENT: n: must be in [1, 64]" in r.stderr
    r = _cli("-e", server.endpoint, "reload", "--dry-run")
    assert r.returncode == 64 + 16 and "UNAUTHENTICATED" in r.stderr
    r = _cli("-e", server.endpoint, "reload", "--dry-run", env={"ROLLOUT_ADMIN_TOKEN": TOKEN})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["dry_run"] is True


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider", "-rs"]))
