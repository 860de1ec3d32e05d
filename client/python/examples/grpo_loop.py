#!/usr/bin/python3
"""An example GRPO rollout loop against rolloutd: the shape of a trainer's outer loop.

Each iteration:
  1. takes a batch of prompts (token ids; the service never tokenizes),
  2. samples a group of n completions per prompt (one Generate per group, all groups in flight at
     once, sampled-token logprobs returned),
  3. scores every completion with a rule-based reward (see `reward`),
  4. turns rewards into group-normalised advantages (GRPO: (r - mean(group)) / std(group)),
  5. logs throughput (generated tokens/s) and reward statistics,
  6. hands the batch to `train_step` -- THE PLACE WHERE YOUR TRAINER PLUGS IN -- which returns
     the checkpoint directory holding the updated policy,
  7. loads those weights into every rolloutd replica with Admin.UpdateWeights (between Pause and
     Resume) under an explicit version number (the same on every replica, and safe to retry),
     and asks the next iteration's groups for at least that weight version (min_weight_version),
     so that every rollout is on-policy.

Run it against a local rolloutd serving the embedded tiny model:

    bazel run //server:rolloutd &          # listens on 127.0.0.1:50051
    /usr/bin/python3 client/python/examples/grpo_loop.py --iterations 2 \\
        --checkpoint "$PWD/tests/data/tiny_qwen3_5"

The tiny checkpoint stands in for "the trainer's new weights" (same architecture, so rolloutd
accepts it); UpdateWeights only takes directories inside the server's model.roots.

The reward is a toy, verifiable rule so that the loop runs without a task or a tokenizer:
    reward = (fraction of completion tokens whose id is a multiple of --target-modulus)
             - --length-penalty x len(completion) / max_tokens
             + --stop-bonus if the completion ended with a stop token (finish_reason STOP)
Replace `reward` with your verifier (math answer check, unit tests, a reward model, ...).
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import logging
import math
import os
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence

try:
    import rollout_client  # noqa: F401
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rollout_client import (AsyncRolloutClient, Completion, FinishReason, GenerateResult,
                            RolloutError, SamplingParams)

log = logging.getLogger("grpo_loop")


# ---------------------------------------------------------------------------------------------
# Data the trainer receives
# ---------------------------------------------------------------------------------------------


@dataclass
class RolloutSample:
    """One completion, with what a GRPO trainer needs to build its loss."""

    prompt_index: int
    completion_index: int
    prompt_token_ids: List[int]
    token_ids: List[int]
    #: log pi_old(token) under the rollout engine's raw (fp32) distribution: the "old policy"
    #: log-probabilities of the importance ratio.
    logprobs: List[float]
    finish_reason: str
    weight_version: int
    reward: float = 0.0
    advantage: float = 0.0


@dataclass
class IterationStats:
    iteration: int
    groups: int
    completions: int
    generated_tokens: int
    seconds: float
    tokens_per_second: float
    reward_mean: float
    reward_std: float
    mean_length: float
    finish_reasons: Dict[str, int]
    weight_versions: List[int]
    replay_ssm_applied_fraction: float
    surrogate_loss: float = 0.0
    update_version: Optional[int] = None
    update_seconds: Optional[float] = None
    extra: Dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Reward and advantages
# ---------------------------------------------------------------------------------------------


def reward(completion: Completion, *, max_tokens: int, target_modulus: int = 7,
           length_penalty: float = 0.1, stop_bonus: float = 0.5) -> float:
    """The toy rule-based reward documented in the module docstring (replace with yours)."""
    n = len(completion.token_ids)
    if n == 0:
        return 0.0
    hits = sum(1 for t in completion.token_ids if t % target_modulus == 0) / n
    r = hits - length_penalty * n / max(1, max_tokens)
    if completion.finish_reason is FinishReason.STOP:
        r += stop_bonus
    return r


def group_advantages(rewards: Sequence[float], *, normalize_std: bool = True,
                     eps: float = 1e-6) -> List[float]:
    """GRPO advantages of one group: r_i - mean(r), divided by std(r) (population std) unless
    ``normalize_std`` is False (the "Dr. GRPO" variant). A group whose rewards are all equal
    carries no signal: all zeros."""
    if not rewards:
        return []
    mean = sum(rewards) / len(rewards)
    centred = [r - mean for r in rewards]
    if not normalize_std:
        return centred
    std = math.sqrt(sum(c * c for c in centred) / len(centred))
    if std < eps:
        return [0.0] * len(rewards)
    return [c / (std + eps) for c in centred]


# ---------------------------------------------------------------------------------------------
# ======================  YOUR TRAINER PLUGS IN HERE  ======================
# ---------------------------------------------------------------------------------------------


def train_step(samples: List[RolloutSample], iteration: int,
               args: argparse.Namespace) -> Optional[str]:
    """One optimisation step on a batch of rollouts; returns the checkpoint directory of the
    updated policy (or None to keep the current weights).

    REPLACE THIS FUNCTION with your trainer's step. A GRPO step typically:
      - recomputes log pi_theta(token) for every sample under the trainable policy,
      - forms the ratio exp(logp_theta - sample.logprobs) (sample.logprobs = rollout policy),
      - maximises mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A)) with A =
        sample.advantage (minus a KL term if you use one), averaged per token or per sequence,
      - saves the new weights as a Hugging Face checkpoint directory (config.json +
        *.safetensors, same architecture) on storage the rolloutd replicas can read, inside
        their model.roots, and returns its path.

    This placeholder trains nothing: it returns --checkpoint, as if the trainer had just
    written new weights there.
    """
    del samples, iteration
    return args.checkpoint


def onpolicy_surrogate(samples: Sequence[RolloutSample]) -> float:
    """-(1/T) sum_i A_i sum_t logp_i,t: the policy-gradient loss at ratio 1, for the log."""
    total_tokens = sum(len(s.token_ids) for s in samples) or 1
    return -sum(s.advantage * sum(s.logprobs) for s in samples) / total_tokens


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


def make_prompts(rng: random.Random, count: int, length: int, vocab_size: int,
                 avoid: Sequence[int] = ()) -> List[List[int]]:
    """Random token-id prompts (a stand-in for a tokenized dataset); ``avoid`` (EOS ids) is
    never used."""
    avoid_set = set(avoid)
    prompts = []
    for _ in range(count):
        prompt = []
        while len(prompt) < length:
            t = rng.randrange(vocab_size)
            if t not in avoid_set:
                prompt.append(t)
        prompts.append(prompt)
    return prompts


def load_prompts(path: str) -> List[List[int]]:
    """JSON lines, one list of token ids per line."""
    with open(path) as f:
        return [[int(t) for t in json.loads(line)] for line in f if line.strip()]


def to_samples(groups: Sequence[GenerateResult], args: argparse.Namespace,
               first_prompt_index: int) -> List[RolloutSample]:
    samples: List[RolloutSample] = []
    for g, group in enumerate(groups):
        rewards = [reward(c, max_tokens=args.max_tokens, target_modulus=args.target_modulus,
                          length_penalty=args.length_penalty, stop_bonus=args.stop_bonus)
                   for c in group.completions]
        advantages = group_advantages(rewards, normalize_std=not args.no_std_normalize)
        for c, r, a in zip(group.completions, rewards, advantages):
            samples.append(RolloutSample(
                prompt_index=first_prompt_index + g, completion_index=c.index,
                prompt_token_ids=list(group.prompt_token_ids), token_ids=list(c.token_ids),
                logprobs=list(c.logprobs), finish_reason=c.finish_reason.value,
                weight_version=c.weight_version_end, reward=r, advantage=a))
    return samples


def iteration_stats(iteration: int, groups: Sequence[GenerateResult],
                    samples: Sequence[RolloutSample], seconds: float) -> IterationStats:
    tokens = sum(g.completion_tokens for g in groups)
    completions = [c for g in groups for c in g.completions]
    rewards = [s.reward for s in samples]
    mean = sum(rewards) / max(1, len(rewards))
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / max(1, len(rewards)))
    return IterationStats(
        iteration=iteration, groups=len(groups), completions=len(completions),
        generated_tokens=tokens, seconds=seconds,
        tokens_per_second=tokens / seconds if seconds > 0 else 0.0,
        reward_mean=mean, reward_std=std,
        mean_length=tokens / max(1, len(completions)),
        finish_reasons=dict(collections.Counter(c.finish_reason.value for c in completions)),
        weight_versions=sorted({v for g in groups for v in g.weight_versions}),
        replay_ssm_applied_fraction=(sum(c.replay_ssm_applied for c in completions)
                                     / max(1, len(completions))))


async def run(args: argparse.Namespace) -> List[IterationStats]:
    token = args.admin_token or os.environ.get("ROLLOUT_ADMIN_TOKEN")
    async with AsyncRolloutClient(args.endpoint, admin_token=token,
                                  timeout=args.timeout) as client:
        if args.wait_ready:
            await client.wait_ready(args.wait_ready)
        infos = await client.server_infos()
        info = next(iter(infos.values()))
        if info.model is None:
            raise SystemExit(f"{info.endpoint}: no model is known yet (no ready worker?)")
        vocab = info.model.vocab_size
        # Weight version every replica serves at least; updates below name the next version
        # explicitly, so all replicas agree on it and a retried update cannot bump it twice.
        version = min(i.weight_version for i in infos.values())
        next_version = max(i.weight_version for i in infos.values()) + 1
        log.info("server %s: model %s (%s, vocab %d), weight version %d, %d ready worker(s)",
                 info.endpoint, info.model.name, info.model.model_type, vocab, version,
                 info.ready_workers)

        rng = random.Random(args.seed)
        if args.prompts_file:
            prompts = load_prompts(args.prompts_file)
        else:
            prompts = make_prompts(rng, args.batch_size * args.iterations, args.prompt_len,
                                   vocab, avoid=info.model.eos_token_ids)
        sampling = dict(max_tokens=args.max_tokens, temperature=args.temperature,
                        top_p=args.top_p)

        history: List[IterationStats] = []
        for it in range(args.iterations):
            start = (it * args.batch_size) % max(1, len(prompts))
            batch = [prompts[(start + i) % len(prompts)] for i in range(args.batch_size)]
            t0 = time.monotonic()
            # One Generate per group, all in flight at once (rolloutd batches them); a distinct
            # seed per group keeps the whole iteration reproducible.
            groups = await asyncio.gather(*(
                client.generate(prompt, n=args.group_size,
                                sampling=SamplingParams(**sampling,
                                                        seed=args.seed * 1_000_003
                                                        + it * 10_007 + i),
                                logprobs=True, replay_ssm=args.replay_ssm,
                                min_weight_version=version,
                                request_id=f"grpo-{args.run_id}-it{it}-g{i}")
                for i, prompt in enumerate(batch)))
            seconds = time.monotonic() - t0
            samples = to_samples(groups, args, start)
            stats = iteration_stats(it, groups, samples, seconds)
            stale = [s for s in samples if s.weight_version < version]
            if stale:
                log.warning("%d completions came from weights older than v%d", len(stale),
                            version)

            # ---- the trainer's step (replace train_step) ----
            new_checkpoint = train_step(samples, it, args)
            stats.surrogate_loss = onpolicy_surrogate(samples)

            log.info("iter %d/%d: %d groups x %d = %d completions, %d tokens in %.2f s "
                     "(%.1f tokens/s); reward mean %.4f std %.4f; mean length %.1f; "
                     "finish %s; weights %s; replay_ssm applied %.0f%%; surrogate %.4f",
                     it + 1, args.iterations, stats.groups, args.group_size,
                     stats.completions, stats.generated_tokens, stats.seconds,
                     stats.tokens_per_second, stats.reward_mean, stats.reward_std,
                     stats.mean_length, stats.finish_reasons,
                     ",".join(f"v{v}" for v in stats.weight_versions),
                     100 * stats.replay_ssm_applied_fraction, stats.surrogate_loss)

            # ---- weight update between iterations ----
            if it + 1 < args.iterations:
                if new_checkpoint:
                    t1 = time.monotonic()
                    if args.pause_mode != "none":
                        await client.pause(args.pause_mode)
                    try:
                        updated = await client.update_weights(os.path.abspath(new_checkpoint),
                                                              version=next_version)
                    finally:
                        if args.pause_mode != "none":
                            await client.resume()
                    version = min(r.weight_version for r in updated.values())
                    next_version = max(r.weight_version for r in updated.values()) + 1
                    stats.update_version = version
                    stats.update_seconds = time.monotonic() - t1
                    log.info("weights: %s loaded on %d endpoint(s) as v%d in %.2f s",
                             new_checkpoint, len(updated), version, stats.update_seconds)
                else:
                    log.info("train_step returned no checkpoint: weights unchanged (v%d)",
                             version)
            history.append(stats)
        return history


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--endpoint", action="append",
                   help="rolloutd address (repeat for several; default $ROLLOUT_ENDPOINTS or "
                        "127.0.0.1:50051)")
    p.add_argument("--admin-token", help="admin bearer token (default $ROLLOUT_ADMIN_TOKEN)")
    p.add_argument("--checkpoint",
                   help="checkpoint directory loaded with UpdateWeights between iterations "
                        "(what train_step returns; e.g. tests/data/tiny_qwen3_5)")
    p.add_argument("--iterations", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=4, help="prompts per iteration")
    p.add_argument("--group-size", type=int, default=4, help="completions per prompt (n)")
    p.add_argument("--prompt-len", type=int, default=8)
    p.add_argument("--prompts-file", help="JSON lines of token-id lists (default: random)")
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--replay-ssm", choices=("on", "off", "auto"), default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target-modulus", type=int, default=7)
    p.add_argument("--length-penalty", type=float, default=0.1)
    p.add_argument("--stop-bonus", type=float, default=0.5)
    p.add_argument("--no-std-normalize", action="store_true",
                   help="advantages r - mean only (Dr. GRPO)")
    p.add_argument("--pause-mode", choices=("none", "wait", "keep", "abort"), default="wait",
                   help="Admin.Pause mode around the weight update")
    p.add_argument("--timeout", type=float, default=600.0, help="deadline per Generate, s")
    p.add_argument("--wait-ready", type=float, default=60.0,
                   help="wait this long for rollout.v1.Rollout to be SERVING (0: don't)")
    p.add_argument("--run-id", default=None, help="request id prefix (default: random)")
    p.add_argument("--json-summary", help="write the per-iteration stats here as JSON")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.run_id is None:
        args.run_id = f"{random.randrange(16 ** 6):06x}"
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.checkpoint is None:
        log.info("no --checkpoint: the weight-update step is skipped")
    try:
        history = asyncio.run(run(args))
    except RolloutError as e:
        log.error("%s", e)
        return 1
    if args.json_summary:
        with open(args.json_summary, "w") as f:
            json.dump([asdict(s) for s in history], f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
