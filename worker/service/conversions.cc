#include "worker/service/conversions.h"

#include <string>
#include <utility>

namespace rollout::worker::service {
namespace {

ReplayMode FromProto(rollout::v1::ReplaySsmMode mode) {
  switch (mode) {
    case rollout::v1::REPLAY_SSM_MODE_ON:
      return ReplayMode::kOn;
    case rollout::v1::REPLAY_SSM_MODE_OFF:
      return ReplayMode::kOff;
    case rollout::v1::REPLAY_SSM_MODE_AUTO:
      return ReplayMode::kAuto;
    default:
      return ReplayMode::kDefault;
  }
}

void FlattenTop(const std::vector<std::vector<TopLogprob>>& rows,
                google::protobuf::RepeatedField<int32_t>* ids,
                google::protobuf::RepeatedField<float>* logprobs) {
  for (const auto& row : rows) {
    for (const TopLogprob& t : row) {
      ids->Add(t.token_id);
      logprobs->Add(t.logprob);
    }
  }
}

void ToProto(const Histogram& h, rollout::worker::v1::Histogram* out) {
  out->mutable_bounds()->Assign(h.bounds.begin(), h.bounds.end());
  out->mutable_counts()->Assign(h.counts.begin(), h.counts.end());
  out->set_sum(h.sum);
  out->set_count(h.count);
}

void ToProto(const PoolStats& p, rollout::worker::v1::PoolUse* out) {
  out->set_used(p.used);
  out->set_total(p.total);
  out->set_used_bytes(p.used_bytes);
  out->set_peak_bytes(p.peak_bytes);
}

}  // namespace

absl::Time DeadlineFromUnixMicros(int64_t micros) {
  return micros <= 0 ? absl::InfiniteFuture() : absl::FromUnixMicros(micros);
}

GroupRequest ToGroupRequest(const rollout::v1::GenerateRequest& request,
                            int64_t deadline_unix_micros) {
  GroupRequest g;
  g.request_id = request.request_id();
  g.prompt.assign(request.prompt_token_ids().begin(),
                  request.prompt_token_ids().end());
  g.n = request.n();
  const rollout::v1::SamplingParams& s = request.sampling();
  if (s.has_temperature()) g.sampling.temperature = s.temperature();
  if (s.has_top_k()) g.sampling.top_k = s.top_k();
  if (s.has_top_p()) g.sampling.top_p = s.top_p();
  if (s.has_min_p()) g.sampling.min_p = s.min_p();
  if (s.has_max_tokens()) g.sampling.max_tokens = s.max_tokens();
  g.sampling.min_tokens = s.min_tokens();
  g.sampling.stop_token_ids.assign(s.stop_token_ids().begin(),
                                   s.stop_token_ids().end());
  g.sampling.ignore_eos = s.ignore_eos();
  if (s.has_seed()) g.sampling.seed = s.seed();
  g.logprobs.sampled = request.logprobs().sampled();
  g.logprobs.top_k = request.logprobs().top_k();
  g.replay_ssm = FromProto(request.replay_ssm());
  g.deadline = DeadlineFromUnixMicros(deadline_unix_micros);
  g.min_weight_version = static_cast<int64_t>(request.min_weight_version());
  g.stream_deltas = true;
  return g;
}

ScoreRequest ToScoreRequest(const rollout::v1::ScoreRequest& request,
                            int64_t deadline_unix_micros) {
  ScoreRequest s;
  s.request_id = request.request_id();
  s.prompt.assign(request.prompt_token_ids().begin(),
                  request.prompt_token_ids().end());
  for (const auto& c : request.completions()) {
    s.completions.emplace_back(c.token_ids().begin(), c.token_ids().end());
  }
  s.top_logprobs = request.top_logprobs();
  s.deadline = DeadlineFromUnixMicros(deadline_unix_micros);
  return s;
}

rollout::v1::FinishReason ToProto(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return rollout::v1::FINISH_REASON_STOP;
    case FinishReason::kLength:
      return rollout::v1::FINISH_REASON_LENGTH;
    case FinishReason::kAborted:
      return rollout::v1::FINISH_REASON_ABORTED;
  }
  return rollout::v1::FINISH_REASON_UNSPECIFIED;
}

rollout::v1::ReplaySsmFallbackReason ToProto(FallbackReason reason) {
  switch (reason) {
    case FallbackReason::kNone:
      return rollout::v1::REPLAY_SSM_FALLBACK_REASON_NONE;
    case FallbackReason::kNoGdnLayers:
      return rollout::v1::REPLAY_SSM_FALLBACK_REASON_NO_GDN_LAYERS;
    case FallbackReason::kRingPoolExhausted:
      return rollout::v1::REPLAY_SSM_FALLBACK_REASON_RING_POOL_EXHAUSTED;
    case FallbackReason::kBackendUnsupported:
      return rollout::v1::REPLAY_SSM_FALLBACK_REASON_BACKEND_UNSUPPORTED;
    case FallbackReason::kDisabledByConfig:
      return rollout::v1::REPLAY_SSM_FALLBACK_REASON_DISABLED_BY_CONFIG;
    case FallbackReason::kPrefillOnly:
      return rollout::v1::REPLAY_SSM_FALLBACK_REASON_PREFILL_ONLY;
  }
  return rollout::v1::REPLAY_SSM_FALLBACK_REASON_NONE;
}

rollout::worker::v1::AbortCause ToProto(AbortCause cause) {
  switch (cause) {
    case AbortCause::kNone:
      return rollout::worker::v1::ABORT_CAUSE_NONE;
    case AbortCause::kCancelled:
      return rollout::worker::v1::ABORT_CAUSE_CANCELLED;
    case AbortCause::kDeadline:
      return rollout::worker::v1::ABORT_CAUSE_DEADLINE;
    case AbortCause::kPaused:
      return rollout::worker::v1::ABORT_CAUSE_PAUSED;
    case AbortCause::kShutdown:
      return rollout::worker::v1::ABORT_CAUSE_SHUTDOWN;
    case AbortCause::kInternal:
      return rollout::worker::v1::ABORT_CAUSE_INTERNAL;
  }
  return rollout::worker::v1::ABORT_CAUSE_NONE;
}

void AppendDelta(const TokenDelta& delta, int offset, int64_t weight_version,
                 rollout::worker::v1::GenerateEvent* event) {
  rollout::v1::CompletionDelta* d = event->add_deltas();
  d->set_index(delta.completion_index);
  d->set_offset(offset);
  d->mutable_token_ids()->Assign(delta.token_ids.begin(),
                                 delta.token_ids.end());
  d->mutable_logprobs()->Assign(delta.logprobs.begin(), delta.logprobs.end());
  FlattenTop(delta.top_logprobs, d->mutable_top_logprob_token_ids(),
             d->mutable_top_logprobs());
  d->set_weight_version(static_cast<uint64_t>(weight_version));
}

rollout::worker::v1::CompletionEnd ToCompletionEnd(
    const CompletionResult& result) {
  rollout::worker::v1::CompletionEnd end;
  end.set_index(result.completion_index);
  end.set_finish_reason(ToProto(result.finish_reason));
  end.set_abort_cause(ToProto(result.abort_cause));
  end.set_num_tokens(static_cast<int32_t>(result.token_ids.size()));
  if (!result.weight_versions.empty()) {
    end.set_weight_version_start(
        static_cast<uint64_t>(result.weight_versions.front().version));
    end.set_weight_version_end(
        static_cast<uint64_t>(result.weight_versions.back().version));
  }
  end.set_replay_ssm_applied(result.replay_ssm.applied);
  end.set_replay_ssm_fallback_reason(ToProto(result.replay_ssm.fallback));
  end.set_num_preemptions(result.num_preemptions);
  end.set_time_to_first_token_seconds(
      absl::ToDoubleSeconds(result.time_to_first_token));
  end.set_e2e_seconds(absl::ToDoubleSeconds(result.e2e));
  return end;
}

rollout::worker::v1::GroupDone ToGroupDone(const GroupSummary& summary) {
  rollout::worker::v1::GroupDone done;
  done.set_code(static_cast<int32_t>(summary.status.code()));
  done.set_message(std::string(summary.status.message()));
  done.set_prompt_tokens(summary.prompt_tokens);
  done.set_prompt_tokens_computed(summary.prompt_tokens_computed);
  done.set_completion_tokens(summary.completion_tokens);
  done.set_queue_seconds(absl::ToDoubleSeconds(summary.queue_time));
  done.set_e2e_seconds(absl::ToDoubleSeconds(summary.e2e));
  return done;
}

rollout::v1::ScoredCompletion ToScoredCompletion(
    const CompletionResult& result) {
  rollout::v1::ScoredCompletion c;
  c.set_index(result.completion_index);
  c.mutable_logprobs()->Assign(result.logprobs.begin(), result.logprobs.end());
  FlattenTop(result.top_logprobs, c.mutable_top_logprob_token_ids(),
             c.mutable_top_logprobs());
  return c;
}

rollout::worker::v1::WorkerStats ToWorkerStats(const EngineStats& s,
                                               absl::Time now) {
  rollout::worker::v1::WorkerStats out;
  out.set_generation_tokens_ring(s.generation_tokens_ring);
  out.set_generation_tokens_plain(s.generation_tokens_plain);
  out.set_prompt_tokens(s.prompt_tokens);
  out.set_prompt_tokens_computed(s.prompt_tokens_computed);
  out.set_score_tokens(s.score_tokens);
  out.set_completions_stop(
      s.completions_by_finish[static_cast<int>(FinishReason::kStop)]);
  out.set_completions_length(
      s.completions_by_finish[static_cast<int>(FinishReason::kLength)]);
  out.set_completions_aborted(
      s.completions_by_finish[static_cast<int>(FinishReason::kAborted)]);
  out.set_preemptions(s.preemptions);
  out.set_state_forks(s.state_forks);
  out.set_steps(s.steps);
  out.set_step_errors(s.step_errors);
  out.set_groups_finished(s.groups_finished);
  for (int i = 0; i < kNumReplayModes; ++i) {
    (*out.mutable_completions_by_mode())[std::string(
        ReplayModeName(static_cast<ReplayMode>(i)))] = s.completions_by_mode[i];
  }
  // [0] is kNone: not a fallback.
  for (int i = 1; i < kNumFallbackReasons; ++i) {
    (*out.mutable_fallbacks())[std::string(
        FallbackReasonName(static_cast<FallbackReason>(i)))] = s.fallbacks[i];
  }
  out.set_flushes(s.flushes);
  out.set_requests_running(s.requests_running);
  out.set_requests_waiting(s.requests_waiting);
  out.set_sequences_running(s.sequences_running);
  ToProto(s.state_slots, out.mutable_state_slots());
  ToProto(s.rings, out.mutable_rings());
  ToProto(s.kv_blocks, out.mutable_kv_blocks());
  out.set_device_used_bytes(s.device_used_bytes);
  out.set_device_peak_bytes(s.device_peak_bytes);
  out.set_weights_bytes(s.weights_bytes);
  out.set_weight_version(static_cast<uint64_t>(s.weight_version));
  out.set_weight_update_in_progress(s.weight_update_in_progress);
  out.set_paused(s.paused);
  out.set_last_token_age_seconds(
      s.last_token_time == absl::InfinitePast()
          ? -1.0
          : absl::ToDoubleSeconds(now - s.last_token_time));
  ToProto(s.batch_size, out.mutable_batch_size());
  ToProto(s.prefill_step_seconds, out.mutable_prefill_step_seconds());
  ToProto(s.decode_step_seconds, out.mutable_decode_step_seconds());
  return out;
}

}  // namespace rollout::worker::service
