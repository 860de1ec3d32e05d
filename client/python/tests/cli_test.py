"""`python -m rollout_client ...` as a subprocess against an in-process fake server: JSON output,
error messages with the status code, exit codes, the admin token from flags and environment."""
import json
import os
import subprocess
import sys

import grpc
import pytest

import rollout_client
from fakes import Fail, FakeServer

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(rollout_client.__file__)))
COMMANDS = ["health", "info", "generate", "score", "abort", "reload", "pause", "resume",
            "update-weights"]


def cli(*args, env=None, stdin=None):
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("ROLLOUT_")}  # no endpoint/token from the caller
    environ["PYTHONPATH"] = PACKAGE_ROOT + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "rollout_client", *args], capture_output=True,
                          text=True, env=environ, input=stdin, timeout=60)


@pytest.fixture
def server():
    with FakeServer(admin_token="tok") as s:
        yield s


def test_help_for_every_command():
    top = cli("--help")
    assert top.returncode == 0
    for command in COMMANDS:
        assert command in top.stdout
        r = cli(command, "--help")
        assert r.returncode == 0, (command, r.stderr)
        assert "usage:" in r.stdout


def test_usage_errors_exit_2(server):
    assert cli("frobnicate").returncode == 2
    r = cli("-e", server.endpoint, "generate")
    assert r.returncode == 2 and "--prompt" in r.stderr
    r = cli("-e", server.endpoint, "generate", "--prompt", "1,x")
    assert r.returncode == 2 and "token ids" in r.stderr
    r = cli("-e", server.endpoint, "abort")
    assert r.returncode == 2


def test_info_and_health(server):
    r = cli("-e", server.endpoint, "info")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["model"]["vocab_size"] == 1031 and info["workers"][0]["state"] == "READY"
    r = cli("-e", server.endpoint, "health", "--service", "rollout.v1.Rollout")
    assert r.returncode == 0 and json.loads(r.stdout) == {"status": "SERVING"}
    server.health_status["rollout.v1.Rollout"] = 2
    r = cli("-e", server.endpoint, "--compact", "health", "--service", "rollout.v1.Rollout")
    assert r.returncode == 1 and r.stdout.strip() == '{"status":"NOT_SERVING"}'


def test_generate_json(server):
    r = cli("-e", server.endpoint, "generate", "--prompt", "[10, 11]", "-n", "2",
            "--max-tokens", "3", "--seed", "5", "--logprobs", "--top-logprobs", "2",
            "--replay-ssm", "off", "--request-id", "cli-1", "--stop", "3,4")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["request_id"] == "cli-1" and out["seed"] == 5 and out["replay_ssm_mode"] == "OFF"
    assert out["completions"][1]["token_ids"] == [12, 13, 14]
    assert out["completions"][0]["finish_reason"] == "LENGTH"
    assert len(out["completions"][0]["top_logprobs"][0]) == 2
    sent = server.calls["Generate"][0].request
    assert list(sent.sampling.stop_token_ids) == [3, 4] and sent.logprobs.sampled


def test_generate_from_json_data_with_flag_override(server):
    data = json.dumps({"promptTokenIds": [1, 2], "n": 3, "sampling": {"maxTokens": 2,
                                                                        "temperature": 0.5}})
    r = cli("-e", server.endpoint, "generate", "-d", "@-", "-n", "2", stdin=data)
    assert r.returncode == 0, r.stderr
    sent = server.calls["Generate"][0].request
    assert sent.n == 2 and sent.sampling.max_tokens == 2 and sent.sampling.temperature == 0.5
    r = cli("-e", server.endpoint, "generate", "-d", "{not json")
    assert r.returncode == 2 and "GenerateRequest" in r.stderr


def test_generate_stream_prints_json_lines(server):
    r = cli("-e", server.endpoint, "generate", "--prompt", "1", "-n", "2", "--max-tokens", "4",
            "--stream")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert lines[-1]["done"] is True and lines[0]["done"] is False
    assert sum(len(d["token_ids"]) for line in lines for d in line["deltas"]) == 8


def test_score_and_abort(server):
    r = cli("-e", server.endpoint, "score", "--prompt", "1,2", "--completion", "3,4",
            "--completion", "5", "--top-logprobs", "1")
    assert r.returncode == 0, r.stderr
    assert [len(c["logprobs"]) for c in json.loads(r.stdout)["completions"]] == [2, 1]
    r = cli("-e", server.endpoint, "abort", "--all")
    assert r.returncode == 0 and json.loads(r.stdout)["request_ids"] == []
    r = cli("-e", server.endpoint, "abort", "--request-id", "ghost")
    assert r.returncode == 64 + 5  # NOT_FOUND
    assert "NOT_FOUND" in r.stderr and "ghost" in r.stderr


def test_rpc_errors_print_code_and_message_and_exit_64_plus_code(server):
    server.plan("Generate", Fail(grpc.StatusCode.INVALID_ARGUMENT,
                                 "n: must be in [1, 64] (admission.max_n), got 0"))
    r = cli("-e", server.endpoint, "generate", "--prompt", "1", "-n", "0")
    assert r.returncode == 64 + 3
    assert "INVALID_ARGUMENT: n: must be in [1, 64] (admission.max_n), got 0" in r.stderr
    assert f"rollout.v1.Rollout/Generate on {server.endpoint}" in r.stderr
    server.plan("Generate", *[Fail(grpc.StatusCode.UNAVAILABLE, "no worker is serving")] * 3)
    r = cli("-e", server.endpoint, "--max-attempts", "3", "generate", "--prompt", "1")
    assert r.returncode == 64 + 14 and "3 attempts" in r.stderr
    r = cli("-e", "127.0.0.1:1", "--max-attempts", "1", "--timeout", "5", "info")
    assert r.returncode == 64 + 14 and "UNAVAILABLE" in r.stderr


def test_admin_commands_and_token(server, tmp_path):
    r = cli("-e", server.endpoint, "pause", "--mode", "abort")
    assert r.returncode == 64 + 16 and "UNAUTHENTICATED" in r.stderr
    r = cli("-e", server.endpoint, "--token", "tok", "pause", "--mode", "abort")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests_aborted"] == 1
    r = cli("-e", server.endpoint, "resume", env={"ROLLOUT_ADMIN_TOKEN": "tok"})
    assert r.returncode == 0, r.stderr
    token_file = tmp_path / "token"
    token_file.write_text("tok\n")
    r = cli("-e", server.endpoint, "--token-file", str(token_file), "update-weights",
            "--path", "/models/step-1", "--version", "9")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["weight_version"] == 9
    config = tmp_path / "rolloutd.textproto"
    config.write_text("admission { max_n: 8 }\n")
    r = cli("-e", server.endpoint, "reload", "--dry-run", "--config-file", str(config),
            env={"ROLLOUT_ADMIN_TOKEN_FILE": str(token_file)})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["changes"][0]["outcome"] == "WOULD_APPLY"
    sent = server.calls["ReloadConfig"][-1].request
    assert sent.dry_run and sent.config.admission.max_n == 8
    for call in server.calls["Resume"] + server.calls["UpdateWeights"]:
        assert call.metadata["authorization"] == "Bearer tok"
    bad = tmp_path / "bad.textproto"
    bad.write_text("admission { no_such_field: 1 }\n")
    r = cli("-e", server.endpoint, "--token", "tok", "reload", "--config-file", str(bad))
    assert r.returncode == 2 and "no_such_field" in r.stderr


def test_several_endpoints_print_per_endpoint_results():
    with FakeServer() as a, FakeServer() as b:
        r = cli("-e", a.endpoint, "-e", b.endpoint, "update-weights", "--path", "/m",
                "--version", "3")
        assert r.returncode == 0, r.stderr
        assert set(json.loads(r.stdout)) == {a.endpoint, b.endpoint}
        b.plan("Resume", Fail(grpc.StatusCode.INTERNAL, "boom"))
        r = cli("-e", a.endpoint, "-e", b.endpoint, "resume")
        assert r.returncode == 64 + 13
        assert f"{b.endpoint}: INTERNAL: boom" in r.stderr and f"{a.endpoint}: OK" in r.stderr
        r = cli("info", env={"ROLLOUT_ENDPOINTS": f"{a.endpoint},{b.endpoint}"})
        assert set(json.loads(r.stdout)) == {a.endpoint, b.endpoint}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))


def test_client_id_flag(server):
    r = cli("-e", server.endpoint, "--client-id", "trainer-7", "info")
    assert r.returncode == 0, r.stderr
    assert server.calls["GetServerInfo"][0].metadata["x-client-id"] == "trainer-7"
    r = cli("-e", server.endpoint, "--client-id", "x" * 257, "info")
    assert r.returncode == 2 and "--client-id" in r.stderr
