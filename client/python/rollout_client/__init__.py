"""Python client of rolloutd, the GRPO rollout service (gRPC API rollout.v1).

    from rollout_client import RolloutClient, SamplingParams

    with RolloutClient("127.0.0.1:50051") as client:
        group = client.generate([1, 2, 3], n=8, logprobs=True,
                                sampling=SamplingParams(max_tokens=64, temperature=1.0, seed=7),
                                timeout=120)

- :class:`RolloutClient` (sync, thread-safe) and :class:`AsyncRolloutClient` (asyncio): Generate,
  GenerateStream (an iterator), Score, Abort, GetServerInfo, health, and the Admin calls
  (reload_config, update_weights, pause, resume) with a bearer token.
- Typed results (:mod:`rollout_client.results`), errors (:class:`RolloutError` with the gRPC
  status code), retries with back-off on UNAVAILABLE / RESOURCE_EXHAUSTED only
  (:class:`RetryPolicy`), several endpoints with least-loaded or round-robin choice.
- Command line: ``python -m rollout_client --help``.
"""
from rollout_client._version import __version__
from rollout_client._base import DEFAULT, ROLLOUT_SERVICE
from rollout_client.aio import AsyncGenerateStream, AsyncRolloutClient
from rollout_client.client import GenerateStream, RolloutClient
from rollout_client.endpoints import (DEFAULT_ENDPOINT, LEAST_LOADED, ROUND_ROBIN, ChannelConfig,
                                      EndpointPicker)
from rollout_client.errors import FanOutError, RolloutError
from rollout_client.params import (SamplingParams, build_abort_request, build_generate_request,
                                   build_score_request, new_request_id)
from rollout_client.results import (AbortResult, Completion, CompletionDelta, ConfigChangeOutcome,
                                    ConfigFieldChange, FinishReason, GenerateResult, HealthStatus,
                                    Limits, ModelInfo, PauseMode, PauseResult, ReloadResult,
                                    ReplaySsmFallbackReason, ReplaySsmInfo, ReplaySsmMode,
                                    ResumeResult, SamplingDefaults, ScoredCompletion, ScoreResult,
                                    ServerInfo, StreamAccumulator, StreamChunk, Timing,
                                    UpdateWeightsResult, Usage, WorkerInfo, WorkerState)
from rollout_client.retry import NO_RETRY, RETRYABLE_CODES, RetryPolicy

__all__ = [
    "AbortResult", "AsyncGenerateStream", "AsyncRolloutClient", "ChannelConfig", "Completion",
    "CompletionDelta", "ConfigChangeOutcome", "ConfigFieldChange", "DEFAULT", "DEFAULT_ENDPOINT",
    "EndpointPicker", "FanOutError", "FinishReason", "GenerateResult", "GenerateStream",
    "HealthStatus", "LEAST_LOADED", "Limits", "ModelInfo", "NO_RETRY", "PauseMode", "PauseResult",
    "RETRYABLE_CODES", "ROLLOUT_SERVICE", "ROUND_ROBIN", "ReloadResult", "ReplaySsmFallbackReason",
    "ReplaySsmInfo", "ReplaySsmMode", "ResumeResult", "RetryPolicy", "RolloutClient",
    "RolloutError", "SamplingDefaults", "SamplingParams", "ScoreResult", "ScoredCompletion",
    "ServerInfo", "StreamAccumulator", "StreamChunk", "Timing", "UpdateWeightsResult", "Usage",
    "WorkerInfo", "WorkerState", "__version__", "build_abort_request", "build_generate_request",
    "build_score_request", "new_request_id",
]
