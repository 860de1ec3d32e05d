// Conversions between the worker's wire types (rollout.worker.v1, which embeds
// rollout.v1 messages) and the engine's protobuf-free types
// (worker/engine/request.h, result.h, stats.h).
//
// rolloutd resolves every request before it reaches a worker (all sampling
// fields set, seed set, ReplaySSM mode ON/OFF/AUTO), so these functions only
// map fields; the engine validates ranges itself (INVALID_ARGUMENT naming the
// field).
#ifndef ROLLOUT_WORKER_SERVICE_CONVERSIONS_H_
#define ROLLOUT_WORKER_SERVICE_CONVERSIONS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "rollout/v1/rollout.pb.h"
#include "rollout/worker/v1/worker.pb.h"
#include "worker/engine/request.h"
#include "worker/engine/result.h"
#include "worker/engine/stats.h"

namespace rollout::worker::service {

// 0 = no deadline.
absl::Time DeadlineFromUnixMicros(int64_t micros);

GroupRequest ToGroupRequest(const rollout::v1::GenerateRequest& request,
                            int64_t deadline_unix_micros);
ScoreRequest ToScoreRequest(const rollout::v1::ScoreRequest& request,
                            int64_t deadline_unix_micros);

rollout::v1::FinishReason ToProto(FinishReason reason);
rollout::v1::ReplaySsmFallbackReason ToProto(FallbackReason reason);
rollout::worker::v1::AbortCause ToProto(AbortCause cause);

// Appends `delta` as a CompletionDelta whose first token is at `offset` in
// its completion, produced under `weight_version`. Top logprobs are
// flattened row-major [tokens, k].
void AppendDelta(const TokenDelta& delta, int offset, int64_t weight_version,
                 rollout::worker::v1::GenerateEvent* event);

rollout::worker::v1::CompletionEnd ToCompletionEnd(
    const CompletionResult& result);
rollout::worker::v1::GroupDone ToGroupDone(const GroupSummary& summary);

// A Score completion (CompletionResult with is_score).
rollout::v1::ScoredCompletion ToScoredCompletion(
    const CompletionResult& result);

// `now` turns the engine's last token time into an age.
rollout::worker::v1::WorkerStats ToWorkerStats(const EngineStats& stats,
                                               absl::Time now);

}  // namespace rollout::worker::service

#endif  // ROLLOUT_WORKER_SERVICE_CONVERSIONS_H_
