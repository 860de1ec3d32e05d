"""Command line: ``python -m rollout_client [options] COMMAND ...`` (what grpcurl would do, typed).

Commands: health, info, generate, score, abort, reload, pause, resume, update-weights.
Output is JSON on stdout (the typed result; field names are the proto's). With several
``--endpoint``s, per-endpoint commands (health, info, admin calls) print an object keyed by
endpoint. Errors go to stderr as ``CODE: message`` with the RPC and endpoint.

Exit status: 0 success; 1 health is not SERVING; 2 bad usage; 64 + the gRPC status code number on
an RPC error (as grpcurl: e.g. 67 INVALID_ARGUMENT, 78 UNAVAILABLE, 80 UNAUTHENTICATED).

Environment: ROLLOUT_ENDPOINTS (comma-separated endpoints), ROLLOUT_ADMIN_TOKEN or
ROLLOUT_ADMIN_TOKEN_FILE (admin bearer token).
"""
from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import grpc
from google.protobuf import json_format, text_format

from rollout_client._version import __version__
from rollout_client.client import RolloutClient
from rollout_client.endpoints import DEFAULT_ENDPOINT, ENDPOINTS_ENV, ChannelConfig
from rollout_client.errors import FanOutError, RolloutError
from rollout_client.params import build_generate_request, build_score_request
from rollout_client.proto import config_pb2, rollout_pb2
from rollout_client.results import HealthStatus
from rollout_client.retry import NO_RETRY, RetryPolicy

TOKEN_ENV = "ROLLOUT_ADMIN_TOKEN"
TOKEN_FILE_ENV = "ROLLOUT_ADMIN_TOKEN_FILE"

EXIT_NOT_SERVING = 1
EXIT_USAGE = 2
EXIT_RPC_BASE = 64


class UsageError(Exception):
    """A bad command line (exit 2)."""


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """Typed results as JSON-ready values (enums by name; ServerInfo.raw left out)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name))
                for f in dataclasses.fields(value) if f.name != "raw"}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def _print(value: Any, compact: bool) -> None:
    data = to_jsonable(value)
    if compact:
        print(json.dumps(data, separators=(",", ":")))
    else:
        print(json.dumps(data, indent=2))
    sys.stdout.flush()


def _per_endpoint(results: Dict[str, Any]) -> Any:
    """One endpoint: its result; several: {endpoint: result}."""
    return next(iter(results.values())) if len(results) == 1 else results


# ---------------------------------------------------------------------------------------------
# Parsing helpers
# ---------------------------------------------------------------------------------------------


def _token_ids(text: str, what: str) -> List[int]:
    """"1,2,3", "1 2 3" or a JSON list."""
    text = text.strip()
    try:
        if text.startswith("["):
            values = json.loads(text)
        else:
            values = [v for v in text.replace(",", " ").split() if v]
        return [int(v) for v in values]
    except (ValueError, TypeError):
        raise UsageError(f"{what}: expected token ids like 1,2,3 or [1, 2, 3], got {text!r}")


def _read_data(arg: str) -> str:
    """grpcurl's -d: inline JSON, @FILE, or @- for stdin."""
    if arg == "@-":
        return sys.stdin.read()
    if arg.startswith("@"):
        try:
            return Path(arg[1:]).read_text()
        except OSError as e:
            raise UsageError(f"-d {arg}: {e}")
    return arg


def _parse_json_message(text: str, message: Any, what: str) -> Any:
    try:
        return json_format.Parse(text, message)
    except json_format.ParseError as e:
        raise UsageError(f"{what}: not a valid {message.DESCRIPTOR.full_name} in JSON: {e}")


def _load_config(path: str) -> config_pb2.ServerConfig:
    """A ServerConfig from a text-format file, or proto3 JSON when it ends in .json."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UsageError(f"--config-file: {e}")
    config = config_pb2.ServerConfig()
    if path.endswith(".json"):
        return _parse_json_message(text, config, "--config-file")
    try:
        return text_format.Parse(text, config)
    except text_format.ParseError as e:
        raise UsageError(f"--config-file {path}: {e}")


# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------


def cmd_health(client: RolloutClient, args: argparse.Namespace) -> int:
    statuses = {ep: client.health(args.service, ep, timeout=args.timeout)
                for ep in client.endpoints}
    _print(_per_endpoint({ep: {"status": s} for ep, s in statuses.items()}), args.compact)
    return 0 if all(s is HealthStatus.SERVING for s in statuses.values()) else EXIT_NOT_SERVING


def cmd_info(client: RolloutClient, args: argparse.Namespace) -> int:
    _print(_per_endpoint(client.server_infos(timeout=args.timeout)), args.compact)
    return 0


def _generate_request(args: argparse.Namespace) -> rollout_pb2.GenerateRequest:
    request = rollout_pb2.GenerateRequest()
    if args.data is not None:
        _parse_json_message(_read_data(args.data), request, "-d")
    if args.prompt is not None:
        request.ClearField("prompt_token_ids")
        request.prompt_token_ids.extend(_token_ids(args.prompt, "--prompt"))
    if not request.prompt_token_ids:
        raise UsageError("generate: give the prompt with --prompt 1,2,3 (or -d JSON)")
    sampling = {}
    for name in ("temperature", "top_p", "top_k", "min_p", "max_tokens", "min_tokens", "seed"):
        value = getattr(args, name)
        if value is not None:
            sampling[name] = value
    if args.stop is not None:
        sampling["stop_token_ids"] = _token_ids(args.stop, "--stop")
    if args.ignore_eos:
        sampling["ignore_eos"] = True
    built = build_generate_request(
        request.prompt_token_ids, args.n if args.n is not None else (request.n or 1),
        sampling=sampling, logprobs=args.logprobs, top_logprobs=args.top_logprobs or 0,
        replay_ssm=args.replay_ssm,
        request_id=args.request_id if args.request_id is not None else (
            request.request_id or None),
        min_weight_version=args.min_weight_version or 0)
    # Flags override; fields only in -d are kept.
    if args.data is not None:
        merged = request
        merged.n = built.n
        merged.request_id = built.request_id
        if args.stop is not None:
            merged.sampling.ClearField("stop_token_ids")
        merged.sampling.MergeFrom(built.sampling)
        if args.logprobs or args.top_logprobs:
            merged.logprobs.CopyFrom(built.logprobs)
        if args.replay_ssm is not None:
            merged.replay_ssm = built.replay_ssm
        if args.min_weight_version is not None:
            merged.min_weight_version = built.min_weight_version
        return merged
    return built


def cmd_generate(client: RolloutClient, args: argparse.Namespace) -> int:
    request = _generate_request(args)
    if not args.stream:
        _print(client.generate_request(request, timeout=args.timeout), args.compact)
        return 0
    from rollout_client.client import GenerateStream
    stream = GenerateStream(client, request, timeout=client._data_timeout(args.timeout),
                            retry=client._retry, endpoint=None)
    with stream:
        for chunk in stream:
            _print(chunk, compact=True)
    return 0


def cmd_score(client: RolloutClient, args: argparse.Namespace) -> int:
    if args.data is not None:
        request = _parse_json_message(_read_data(args.data), rollout_pb2.ScoreRequest(), "-d")
        prompt = list(request.prompt_token_ids)
        completions = [list(c.token_ids) for c in request.completions]
        top = request.top_logprobs
        request_id = request.request_id or None
        min_version = request.min_weight_version
    else:
        prompt, completions, top, request_id, min_version = [], [], 0, None, 0
    if args.prompt is not None:
        prompt = _token_ids(args.prompt, "--prompt")
    if args.completion:
        completions = [_token_ids(c, "--completion") for c in args.completion]
    if not prompt or not completions:
        raise UsageError("score: give --prompt 1,2,3 and at least one --completion 4,5 "
                         "(or -d JSON)")
    build_score_request(prompt, completions)  # type checks
    result = client.score(prompt, completions,
                          top_logprobs=args.top_logprobs if args.top_logprobs is not None else top,
                          request_id=args.request_id or request_id,
                          min_weight_version=args.min_weight_version or min_version,
                          timeout=args.timeout)
    _print(result, args.compact)
    return 0


def cmd_abort(client: RolloutClient, args: argparse.Namespace) -> int:
    if bool(args.request_id) == bool(args.all):
        raise UsageError("abort: give exactly one of --request-id ID or --all")
    _print(client.abort(args.request_id, all=args.all, timeout=args.timeout), args.compact)
    return 0


def cmd_reload(client: RolloutClient, args: argparse.Namespace) -> int:
    config = _load_config(args.config_file) if args.config_file else None
    _print(_per_endpoint(client.reload_config(config, dry_run=args.dry_run,
                                              timeout=args.timeout)), args.compact)
    return 0


def cmd_pause(client: RolloutClient, args: argparse.Namespace) -> int:
    _print(_per_endpoint(client.pause(args.mode, timeout=args.timeout)), args.compact)
    return 0


def cmd_resume(client: RolloutClient, args: argparse.Namespace) -> int:
    _print(_per_endpoint(client.resume(timeout=args.timeout)), args.compact)
    return 0


def cmd_update_weights(client: RolloutClient, args: argparse.Namespace) -> int:
    path = args.path
    if not path.startswith("/") and not args.keep_relative:
        path = os.path.abspath(path)  # the server wants an absolute path
    _print(_per_endpoint(client.update_weights(path, args.version, timeout=args.timeout)),
           args.compact)
    return 0


# ---------------------------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog="rollout-client" if invoked == "rollout-client" else "python -m rollout_client",
        description="Talk to rolloutd (rollout.v1) from the shell: health, server info, "
                    "generate, score, abort and the admin calls. Prints JSON.",
        epilog="Exit status: 0 ok, 1 not SERVING (health), 2 usage, 64 + gRPC code on an RPC "
               "error (67 INVALID_ARGUMENT, 78 UNAVAILABLE, 80 UNAUTHENTICATED, ...).")
    parser.add_argument("--version", action="version", version=f"rollout_client {__version__}")
    parser.add_argument("-e", "--endpoint", action="append", dest="endpoints", metavar="TARGET",
                        help=f"rolloutd address host:port, unix:PATH or dns:///name:port; "
                             f"repeat for several (default ${ENDPOINTS_ENV} or {DEFAULT_ENDPOINT})")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="deadline of the call, retries included (default: 30 s for "
                             "control calls, none for generate/score)")
    parser.add_argument("--token", help=f"admin bearer token (default ${TOKEN_ENV})")
    parser.add_argument("--token-file", help=f"file holding the admin token "
                                             f"(default ${TOKEN_FILE_ENV})")
    parser.add_argument("--max-attempts", type=int, default=None,
                        help="tries per call on UNAVAILABLE / RESOURCE_EXHAUSTED (default 6; "
                             "1 = no retry)")
    parser.add_argument("--balancing", choices=("least_loaded", "round_robin"),
                        default="least_loaded", help="endpoint choice for generate/score")
    parser.add_argument("--client-id", help="x-client-id sent with every call (the server's "
                        "admission.max_requests_per_client counts per client id)")
    parser.add_argument("--tls", action="store_true", help="use TLS (system roots unless --ca)")
    parser.add_argument("--ca", help="PEM CA bundle that signed the server certificate")
    parser.add_argument("--cert", help="PEM client certificate (mTLS)")
    parser.add_argument("--key", help="PEM client private key (mTLS)")
    parser.add_argument("--server-name", help="TLS server name override")
    parser.add_argument("--compact", action="store_true", help="one-line JSON")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("health", help="grpc.health.v1 Check (exit 1 unless SERVING)")
    p.add_argument("--service", default="",
                   help='service name: "" = the process (default), "rollout.v1.Rollout" = can '
                        'generate (a worker is ready, no stall)')
    p.set_defaults(func=cmd_health)

    p = sub.add_parser("info", help="Rollout.GetServerInfo: model, limits, workers, versions")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("generate", help="Rollout.Generate (or GenerateStream with --stream)")
    p.add_argument("--prompt", help="prompt token ids: 1,2,3 or [1,2,3]")
    p.add_argument("-n", type=int, default=None, help="group size (default 1)")
    p.add_argument("-d", "--data", help="GenerateRequest as proto3 JSON, @FILE or @- (stdin); "
                                        "flags override its fields")
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--min-tokens", type=int)
    p.add_argument("--temperature", type=float)
    p.add_argument("--top-p", type=float)
    p.add_argument("--top-k", type=int)
    p.add_argument("--min-p", type=float)
    p.add_argument("--seed", type=int)
    p.add_argument("--stop", help="extra stop token ids: 5,6")
    p.add_argument("--ignore-eos", action="store_true")
    p.add_argument("--logprobs", action="store_true", help="return sampled-token logprobs")
    p.add_argument("--top-logprobs", type=int, help="also return the k most likely per position")
    p.add_argument("--replay-ssm", choices=("default", "on", "off", "auto"))
    p.add_argument("--request-id")
    p.add_argument("--min-weight-version", type=int)
    p.add_argument("--stream", action="store_true",
                   help="use GenerateStream: one JSON line per chunk")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("score", help="Rollout.Score: teacher-forced logprobs of completions")
    p.add_argument("--prompt", help="prompt token ids: 1,2,3")
    p.add_argument("--completion", action="append", help="a continuation to score (repeat)")
    p.add_argument("-d", "--data", help="ScoreRequest as proto3 JSON, @FILE or @-")
    p.add_argument("--top-logprobs", type=int)
    p.add_argument("--request-id")
    p.add_argument("--min-weight-version", type=int)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("abort", help="Rollout.Abort of one request or all (on every endpoint)")
    p.add_argument("--request-id")
    p.add_argument("--all", action="store_true")
    p.set_defaults(func=cmd_abort)

    p = sub.add_parser("reload", help="Admin.ReloadConfig on every endpoint")
    p.add_argument("--dry-run", action="store_true", help="validate and report, change nothing")
    p.add_argument("--config-file", help="send this ServerConfig inline (text format, or JSON "
                                         "if it ends in .json) instead of re-reading the "
                                         "server's --config file")
    p.set_defaults(func=cmd_reload)

    p = sub.add_parser("pause", help="Admin.Pause on every endpoint")
    p.add_argument("--mode", choices=("abort", "wait", "keep"), default="wait")
    p.set_defaults(func=cmd_pause)

    p = sub.add_parser("resume", help="Admin.Resume on every endpoint")
    p.set_defaults(func=cmd_resume)

    p = sub.add_parser("update-weights", help="Admin.UpdateWeights on every endpoint")
    p.add_argument("--path", required=True,
                   help="checkpoint directory on the server (made absolute here)")
    p.add_argument("--version", type=int, default=0,
                   help="new weight version (default 0 = current + 1)")
    p.add_argument("--keep-relative", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_update_weights)
    return parser


def _read_file(path: Optional[str], what: str) -> Optional[bytes]:
    if not path:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"{what}: {e}")


def make_client(args: argparse.Namespace) -> RolloutClient:
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    token_file = args.token_file or (None if token else os.environ.get(TOKEN_FILE_ENV))
    if args.token is not None and args.token_file:
        raise UsageError("give --token or --token-file, not both")
    retry = RetryPolicy()
    if args.max_attempts is not None:
        if args.max_attempts < 1:
            raise UsageError("--max-attempts: must be >= 1")
        retry = NO_RETRY if args.max_attempts == 1 else RetryPolicy(max_attempts=args.max_attempts)
    channel = ChannelConfig(tls=args.tls, root_certificates=_read_file(args.ca, "--ca"),
                            certificate_chain=_read_file(args.cert, "--cert"),
                            private_key=_read_file(args.key, "--key"),
                            tls_server_name=args.server_name)
    try:
        return RolloutClient(args.endpoints, admin_token=token, admin_token_file=token_file,
                             balancing=args.balancing, retry=retry, channel=channel,
                             client_id=args.client_id)
    except ValueError as e:
        raise UsageError(f"--client-id: {e}") from e


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from rollout_client._base import DEFAULT
    if args.timeout is None:
        args.timeout = DEFAULT
    try:
        with make_client(args) as client:
            return args.func(client, args)
    except UsageError as e:
        print(f"{parser.prog} {args.command}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError) as e:
        print(f"{parser.prog} {args.command}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except FanOutError as e:
        for ep, err in e.errors.items():
            print(f"{parser.prog} {args.command}: {ep}: {err.code.name}: {err.message}",
                  file=sys.stderr)
        for ep in e.results:
            print(f"{parser.prog} {args.command}: {ep}: OK", file=sys.stderr)
        return EXIT_RPC_BASE + e.code.value[0]
    except RolloutError as e:
        where = f"{e.method} on {e.endpoint}" if e.endpoint else e.method
        tries = f", {e.attempts} attempts" if e.attempts > 1 else ""
        print(f"{parser.prog} {args.command}: {e.code.name}: {e.message}\n  ({where}{tries})",
              file=sys.stderr)
        return EXIT_RPC_BASE + e.code.value[0]
    except KeyboardInterrupt:
        return EXIT_RPC_BASE + grpc.StatusCode.CANCELLED.value[0]
