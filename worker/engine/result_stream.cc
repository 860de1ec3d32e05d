#include "worker/engine/result_stream.h"

#include <algorithm>
#include <utility>

namespace rollout::worker {

ResultChannel::ResultChannel(std::string request_id, int num_completions)
    : request_id_(std::move(request_id)),
      pending_(num_completions),
      has_delta_(num_completions, false) {}

void ResultChannel::PushDelta(TokenDelta delta) {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    const int c = delta.completion_index;
    if (c < 0 || c >= static_cast<int>(pending_.size())) return;
    buffered_tokens_ += static_cast<int64_t>(delta.token_ids.size());
    TokenDelta& p = pending_[c];
    if (!has_delta_[c]) {
      p = std::move(delta);
      has_delta_[c] = true;
      order_.push_back({Kind::kDelta, c});
    } else {
      // Merge into the delta the reader has not taken yet.
      p.token_ids.insert(p.token_ids.end(), delta.token_ids.begin(),
                         delta.token_ids.end());
      p.logprobs.insert(p.logprobs.end(), delta.logprobs.begin(),
                        delta.logprobs.end());
      for (auto& top : delta.top_logprobs) {
        p.top_logprobs.push_back(std::move(top));
      }
    }
  }
  Notify();
}

void ResultChannel::PushCompletion(CompletionResult result) {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    buffered_tokens_ += static_cast<int64_t>(result.token_ids.size());
    order_.push_back({Kind::kCompletion, result.completion_index});
    completions_.push_back(std::move(result));
  }
  Notify();
}

void ResultChannel::PushGroupDone(GroupSummary summary) {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    summary_ = std::move(summary);
    order_.push_back({Kind::kSummary, -1});
  }
  Notify();
}

std::optional<StreamEvent> ResultChannel::PopLocked() {
  if (order_.empty()) return std::nullopt;
  const Entry e = order_.front();
  order_.pop_front();
  switch (e.kind) {
    case Kind::kDelta: {
      has_delta_[e.completion_index] = false;
      buffered_tokens_ -=
          static_cast<int64_t>(pending_[e.completion_index].token_ids.size());
      StreamEvent ev = std::move(pending_[e.completion_index]);
      pending_[e.completion_index] = TokenDelta{};
      return ev;
    }
    case Kind::kCompletion: {
      buffered_tokens_ -=
          static_cast<int64_t>(completions_.front().token_ids.size());
      StreamEvent ev = std::move(completions_.front());
      completions_.pop_front();
      return ev;
    }
    case Kind::kSummary:
      done_ = true;
      return StreamEvent(std::move(*summary_));
  }
  return std::nullopt;
}

std::optional<StreamEvent> ResultChannel::TryPop() {
  MutexLock lock(&mu_);
  return PopLocked();
}

absl::StatusOr<StreamEvent> ResultChannel::Next(absl::Duration timeout) {
  MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !order_.empty() || done_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  if (done_ && order_.empty()) {
    return absl::OutOfRangeError("stream done");
  }
  std::optional<StreamEvent> ev = PopLocked();
  if (!ev.has_value()) return absl::DeadlineExceededError("no event yet");
  return std::move(*ev);
}

bool ResultChannel::done() const {
  MutexLock lock(&mu_);
  return done_;
}

int64_t ResultChannel::buffered_tokens() const {
  MutexLock lock(&mu_);
  return buffered_tokens_;
}

bool ResultChannel::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

void ResultChannel::SetListener(std::function<void()> listener) {
  bool has_events;
  {
    MutexLock lock(&mu_);
    listener_ = std::make_shared<std::function<void()>>(std::move(listener));
    has_events = !order_.empty();
  }
  if (has_events) Notify();
}

void ResultChannel::Notify() {
  std::shared_ptr<std::function<void()>> listener;
  {
    MutexLock lock(&mu_);
    listener = listener_;
  }
  // Called without the lock so the listener may pop.
  if (listener != nullptr && *listener) (*listener)();
}

ResultStream::ResultStream(std::shared_ptr<ResultChannel> channel,
                           std::function<void()> cancel)
    : channel_(std::move(channel)), cancel_(std::move(cancel)) {}

ResultStream::~ResultStream() {
  if (!channel_->closed()) Cancel();
}

void ResultStream::Cancel() {
  if (cancel_) cancel_();
}

absl::StatusOr<CollectedResults> CollectAll(ResultStream& stream,
                                            absl::Duration timeout) {
  CollectedResults out;
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<StreamEvent> ev = stream.Next(deadline - absl::Now());
    if (absl::IsOutOfRange(ev.status())) break;
    if (!ev.ok()) return ev.status();
    if (auto* d = std::get_if<TokenDelta>(&*ev)) {
      out.deltas.push_back(std::move(*d));
    } else if (auto* c = std::get_if<CompletionResult>(&*ev)) {
      out.completions.push_back(std::move(*c));
    } else {
      out.summary = std::get<GroupSummary>(std::move(*ev));
    }
  }
  std::sort(out.completions.begin(), out.completions.end(),
            [](const CompletionResult& a, const CompletionResult& b) {
              return a.completion_index < b.completion_index;
            });
  return out;
}

}  // namespace rollout::worker
