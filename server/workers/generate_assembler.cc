#include "server/workers/generate_assembler.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::server::workers {
namespace {

using rollout::v1::CompletionDelta;
using rollout::worker::v1::CompletionEnd;

void SetEndFields(const CompletionEnd& end, CompletionDelta* d) {
  d->set_finish_reason(end.finish_reason());
  d->set_replay_ssm_applied(end.replay_ssm_applied());
  d->set_replay_ssm_fallback_reason(end.replay_ssm_fallback_reason());
  d->set_num_preemptions(end.num_preemptions());
}

void SetEndFields(const CompletionEnd& end, rollout::v1::Completion* c) {
  c->set_finish_reason(end.finish_reason());
  c->set_weight_version_start(end.weight_version_start());
  c->set_weight_version_end(end.weight_version_end());
  c->set_replay_ssm_applied(end.replay_ssm_applied());
  c->set_replay_ssm_fallback_reason(end.replay_ssm_fallback_reason());
  c->set_num_preemptions(end.num_preemptions());
}

// Copies tokens [from, k) of `d` (with their logprobs and top-k rows).
void CopyTail(const CompletionDelta& d, int from,
              google::protobuf::RepeatedField<int32_t>* ids,
              google::protobuf::RepeatedField<float>* logprobs,
              google::protobuf::RepeatedField<int32_t>* top_ids,
              google::protobuf::RepeatedField<float>* top_logprobs) {
  const int k = d.token_ids_size();
  for (int j = from; j < k; ++j) ids->Add(d.token_ids(j));
  if (d.logprobs_size() == k) {
    for (int j = from; j < k; ++j) logprobs->Add(d.logprobs(j));
  }
  if (k > 0 && d.top_logprob_token_ids_size() % k == 0 &&
      d.top_logprobs_size() == d.top_logprob_token_ids_size()) {
    const int width = d.top_logprob_token_ids_size() / k;
    for (int j = from * width; j < k * width; ++j) {
      top_ids->Add(d.top_logprob_token_ids(j));
      top_logprobs->Add(d.top_logprobs(j));
    }
  }
}

}  // namespace

GenerateAssembler::GenerateAssembler(int n, bool stream)
    : stream_(stream), slots_(std::max(n, 0)) {
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    slots_[i].output.set_index(i);
  }
}

void GenerateAssembler::StartAttempt() {
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    Slot& s = slots_[i];
    s.received = 0;
    s.ended = false;
    s.end.Clear();
    s.output.Clear();
    s.output.set_index(i);
  }
  done_ = false;
  group_done_.Clear();
}

absl::StatusOr<std::vector<CompletionDelta>> GenerateAssembler::Apply(
    const rollout::worker::v1::GenerateEvent& event) {
  const int n = static_cast<int>(slots_.size());
  // At most one public delta per completion and event (tokens and end
  // merged), in the order completions first appear.
  std::vector<CompletionDelta> out;
  std::map<int, int> out_of;  // completion index -> position in out
  auto delta_for = [&](int index) -> CompletionDelta* {
    auto [it, inserted] = out_of.emplace(index, static_cast<int>(out.size()));
    if (inserted) {
      CompletionDelta d;
      d.set_index(index);
      d.set_offset(static_cast<int>(slots_[index].sent.size()));
      out.push_back(std::move(d));
    }
    return &out[it->second];
  };
  for (const CompletionDelta& d : event.deltas()) {
    if (d.index() < 0 || d.index() >= n) {
      return absl::InternalError(
          absl::StrCat("worker sent completion index ", d.index(), " of ", n));
    }
    Slot& s = slots_[d.index()];
    if (d.offset() != s.received || s.ended) {
      return absl::InternalError(absl::StrCat(
          "worker delta for completion ", d.index(), " at offset ", d.offset(),
          ", expected ", s.received, s.ended ? " (after its end)" : ""));
    }
    const int k = d.token_ids_size();
    s.received += k;
    if (!stream_) {
      CopyTail(d, 0, s.output.mutable_token_ids(), s.output.mutable_logprobs(),
               s.output.mutable_top_logprob_token_ids(),
               s.output.mutable_top_logprobs());
      continue;
    }
    // Positions [d.offset(), d.offset() + k); the client has [0, sent).
    const int sent = static_cast<int>(s.sent.size());
    const int skip = std::clamp(sent - d.offset(), 0, k);
    for (int j = 0; j < skip; ++j) {
      if (d.token_ids(j) != s.sent[d.offset() + j]) {
        return absl::InternalError(absl::StrCat(
            "re-run after a worker failure diverged from the tokens already "
            "streamed (completion ",
            d.index(), ", position ", d.offset() + j, ": sent ",
            s.sent[d.offset() + j], ", re-run gave ", d.token_ids(j),
            "); did the weights change in between?"));
      }
    }
    if (skip == k) continue;
    if (s.end_sent) {
      return absl::InternalError(absl::StrCat(
          "re-run after a worker failure produced more tokens for completion ",
          d.index(), " than were streamed before it ended"));
    }
    CompletionDelta* o = delta_for(d.index());
    CopyTail(d, skip, o->mutable_token_ids(), o->mutable_logprobs(),
             o->mutable_top_logprob_token_ids(), o->mutable_top_logprobs());
    o->set_weight_version(d.weight_version());
    s.sent.insert(s.sent.end(), d.token_ids().begin() + skip,
                  d.token_ids().end());
  }
  for (const CompletionEnd& end : event.ends()) {
    if (end.index() < 0 || end.index() >= n) {
      return absl::InternalError(absl::StrCat("worker ended completion index ",
                                              end.index(), " of ", n));
    }
    Slot& s = slots_[end.index()];
    s.ended = true;
    s.end = end;
    if (!stream_) {
      SetEndFields(end, &s.output);
      continue;
    }
    if (s.end_sent) continue;  // ended in an earlier attempt already
    if (end.num_tokens() < static_cast<int>(s.sent.size()) &&
        end.finish_reason() != rollout::v1::FINISH_REASON_ABORTED) {
      return absl::InternalError(absl::StrCat(
          "re-run after a worker failure ended completion ", end.index(),
          " after ", end.num_tokens(), " tokens, but ", s.sent.size(),
          " were already streamed"));
    }
    CompletionDelta* o = delta_for(end.index());
    SetEndFields(end, o);
    if (o->token_ids_size() == 0)
      o->set_weight_version(end.weight_version_end());
    s.end_sent = true;
  }
  if (event.has_done()) {
    done_ = true;
    group_done_ = event.done();
  }
  return out;
}

std::vector<rollout::v1::Completion> GenerateAssembler::Completions() const {
  std::vector<rollout::v1::Completion> out;
  out.reserve(slots_.size());
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    const Slot& s = slots_[i];
    rollout::v1::Completion c;
    if (stream_) {
      c.set_index(i);
      c.mutable_token_ids()->Assign(s.sent.begin(), s.sent.end());
      if (s.ended) SetEndFields(s.end, &c);
    } else {
      c = s.output;
    }
    if (!s.ended) c.set_finish_reason(rollout::v1::FINISH_REASON_ABORTED);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CompletionDelta> GenerateAssembler::AbortUnfinished() {
  std::vector<CompletionDelta> out;
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
    Slot& s = slots_[i];
    if (s.end_sent) continue;
    CompletionDelta d;
    d.set_index(i);
    d.set_offset(static_cast<int>(s.sent.size()));
    d.set_finish_reason(rollout::v1::FINISH_REASON_ABORTED);
    s.end_sent = true;
    out.push_back(std::move(d));
  }
  return out;
}

bool GenerateAssembler::AnyEndedBy(
    rollout::worker::v1::AbortCause cause) const {
  for (const Slot& s : slots_) {
    if (s.ended && s.end.abort_cause() == cause) return true;
  }
  return false;
}

std::vector<CompletionEnd> GenerateAssembler::Ends() const {
  std::vector<CompletionEnd> out;
  for (const Slot& s : slots_) {
    if (s.ended) out.push_back(s.end);
  }
  return out;
}

int64_t GenerateAssembler::completion_tokens() const {
  int64_t total = 0;
  for (const Slot& s : slots_) {
    total += stream_ ? static_cast<int64_t>(s.sent.size())
                     : s.output.token_ids_size();
  }
  return total;
}

}  // namespace rollout::server::workers
