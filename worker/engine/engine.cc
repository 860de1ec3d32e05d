#include "worker/engine/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/engine/sampler.h"

namespace rollout::worker {

enum class SeqState {
  kPendingFork,  // holds a reserved slot; waits for its group's prompt
  kRunning,      // holds a slot (and KV blocks, maybe a ring)
  kSwapped,      // preempted: state and KV in `snapshot` (host memory)
  kFinished,
};

enum class GroupState {
  kWaiting,  // queued, nothing allocated
  kPrefill,  // admitted: completion 0 prefills the prompt; others reserved
  kForked,   // the n completions run independently
};

struct Engine::Sequence {
  int64_t id = 0;
  Group* group = nullptr;
  int index = 0;  // completion index in the group
  SeqState state = SeqState::kPendingFork;
  // Generated tokens, or (Score) the given completion.
  std::vector<int32_t> output;
  int num_computed = 0;  // tokens in its state / KV
  int slot = -1;
  std::vector<int32_t> blocks;
  RingCursor cursor;
  int stagger = 0;
  bool ring_refused = false;  // ON could not get a ring: plain from now on
  ReplaySsmReport replay;
  std::vector<float> logprobs;
  std::vector<std::vector<TopLogprob>> top;
  std::vector<WeightVersionSpan> versions;
  int preemptions = 0;
  std::optional<model::StateSnapshot> snapshot;
  int64_t snapshot_bytes = 0;
  absl::Time first_token = absl::InfinitePast();
  absl::Time last_token = absl::InfinitePast();
};

struct Engine::Group {
  int64_t id = 0;
  bool is_score = false;
  std::string request_id;
  std::vector<int32_t> prompt;
  int n = 1;
  SamplingParams sampling;
  LogprobOptions logprobs;
  int score_top_logprobs = 0;
  ReplayMode requested = ReplayMode::kDefault;
  ReplayMode effective = ReplayMode::kOff;
  absl::Time deadline = absl::InfiniteFuture();
  int64_t min_weight_version = 0;
  bool stream_deltas = true;
  uint64_t seed = 0;
  std::vector<int32_t> stop_ids;  // sorted: stop_token_ids + EOS (unless
                                  // ignore_eos)
  std::vector<std::unique_ptr<Sequence>> seqs;
  std::shared_ptr<ResultChannel> channel;
  GroupState state = GroupState::kWaiting;
  bool ever_admitted = false;
  bool done = false;
  absl::Status status;  // of the summary
  absl::Time arrival;
  absl::Time admitted = absl::InfinitePast();
  int prompt_computed = 0;
  int completion_tokens = 0;  // sampled (or scored) over all completions
  int finished = 0;
  int64_t prefill_version = 0;
  int prompt_len() const { return static_cast<int>(prompt.size()); }
};

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    std::unique_ptr<model::Backend> backend, EngineOptions options,
    Clock clock) {
  if (backend == nullptr) return absl::InvalidArgumentError("null backend");
  RETURN_IF_ERROR(options.Validate());
  ASSIGN_OR_RETURN(
      model::PoolFootprint fp,
      backend->Footprint(options.replay.ring_length, options.kv_block_size));
  ASSIGN_OR_RETURN(PoolPlan plan, PlanPools(options, backend->info(), fp));
  RETURN_IF_ERROR(backend->InitPools(plan.pools));
  if (!clock) clock = [] { return absl::Now(); };
  return std::unique_ptr<Engine>(new Engine(std::move(backend),
                                            std::move(options), std::move(plan),
                                            std::move(clock)));
}

Engine::Engine(std::unique_ptr<model::Backend> backend, EngineOptions options,
               PoolPlan plan, Clock clock)
    : backend_(std::move(backend)),
      options_(std::move(options)),
      plan_(std::move(plan)),
      clock_(std::move(clock)),
      slots_(plan_.pools.num_state_slots, plan_.footprint.state_slot_bytes),
      rings_(plan_.pools.num_ring_slots, plan_.footprint.ring_slot_bytes),
      kv_(plan_.pools.num_kv_blocks, plan_.footprint.kv_block_bytes) {
  sched_cfg_.max_batch_tokens = options_.max_batch_tokens;
  int rows = options_.max_rows_per_step > 0 ? options_.max_rows_per_step
                                            : options_.max_num_seqs;
  const int backend_rows = backend_->capabilities().max_rows_per_step;
  if (backend_rows > 0) rows = std::min(rows, backend_rows);
  sched_cfg_.max_rows = rows;
  sched_cfg_.prefill_chunk = options_.prefill_chunk_tokens;
  sched_cfg_.kv_block_size = options_.kv_block_size;
  sched_cfg_.admission_headroom_blocks = options_.admission_headroom_blocks;
  static_fallback_ = StaticFallback(
      options_.replay.enabled, plan_.pools.num_ring_slots,
      backend_->info().num_gdn_layers, backend_->capabilities().replay_ssm);
  eos_ids_ = backend_->info().eos_token_ids;
}

Engine::~Engine() = default;

RequestLimits Engine::limits() const {
  RequestLimits l;
  l.vocab_size = backend_->info().vocab_size;
  l.max_model_len = plan_.max_model_len;
  l.max_n = options_.max_num_seqs;
  l.max_top_logprobs = options_.max_top_logprobs;
  return l;
}

// ---- Submission ------------------------------------------------------------

absl::Status Engine::Submit(GroupRequest r,
                            std::shared_ptr<ResultChannel> channel) {
  if (absl::Status s = ValidateGroupRequest(r, limits()); !s.ok()) {
    ++stats_.rejected_requests;
    return s;
  }
  auto g = std::make_unique<Group>();
  g->request_id = std::move(r.request_id);
  g->prompt = std::move(r.prompt);
  g->n = r.n;
  g->sampling = std::move(r.sampling);
  g->logprobs = r.logprobs;
  g->requested = r.replay_ssm;
  g->effective = ResolveMode(r.replay_ssm, options_.replay.default_mode);
  g->deadline = r.deadline;
  g->min_weight_version = r.min_weight_version;
  g->stream_deltas = r.stream_deltas;
  g->seed = g->sampling.seed.has_value() ? *g->sampling.seed
                                         : absl::Uniform<uint64_t>(seed_gen_);
  g->stop_ids = g->sampling.stop_token_ids;
  if (!g->sampling.ignore_eos) {
    g->stop_ids.insert(g->stop_ids.end(), eos_ids_.begin(), eos_ids_.end());
  }
  std::sort(g->stop_ids.begin(), g->stop_ids.end());
  g->stop_ids.erase(std::unique(g->stop_ids.begin(), g->stop_ids.end()),
                    g->stop_ids.end());
  g->channel = std::move(channel);
  return SubmitGroup(std::move(g));
}

absl::Status Engine::SubmitScore(ScoreRequest r,
                                 std::shared_ptr<ResultChannel> channel) {
  if (absl::Status s = ValidateScoreRequest(r, limits()); !s.ok()) {
    ++stats_.rejected_requests;
    return s;
  }
  auto g = std::make_unique<Group>();
  g->is_score = true;
  g->request_id = std::move(r.request_id);
  g->prompt = std::move(r.prompt);
  g->n = static_cast<int>(r.completions.size());
  g->score_top_logprobs = r.top_logprobs;
  g->deadline = r.deadline;
  g->min_weight_version = r.min_weight_version;
  g->stream_deltas = false;
  g->channel = std::move(channel);
  for (int i = 0; i < g->n; ++i) {
    auto s = std::make_unique<Sequence>();
    s->output = std::move(r.completions[i]);
    g->seqs.push_back(std::move(s));
  }
  return SubmitGroup(std::move(g));
}

absl::Status Engine::SubmitGroup(std::unique_ptr<Group> g) {
  auto reject = [this](absl::Status s) {
    ++stats_.rejected_requests;
    return s;
  };
  if (g->channel == nullptr) {
    return reject(absl::InvalidArgumentError("null result channel"));
  }
  if (static_cast<int>(waiting_.size()) >= options_.max_waiting_groups) {
    return reject(absl::ResourceExhaustedError(
        absl::StrCat("waiting queue full (max_waiting_groups = ",
                     options_.max_waiting_groups, ")")));
  }
  // A group must fit the empty pools, or it would wait forever.
  const int prompt_blocks = BlocksFor(g->prompt_len(), options_.kv_block_size);
  if (prompt_blocks + g->n * options_.admission_headroom_blocks > kv_.size()) {
    return reject(absl::ResourceExhaustedError(
        absl::StrCat("group needs ", prompt_blocks, " prompt KV blocks + ",
                     options_.admission_headroom_blocks,
                     " per completion; the pool has ", kv_.size())));
  }
  if (g->request_id.empty()) {
    g->request_id = absl::StrCat("req-", next_group_id_);
  }
  if (by_request_id_.count(g->request_id) > 0) {
    return reject(absl::AlreadyExistsError(
        absl::StrCat("request_id ", g->request_id, " is live")));
  }
  g->id = next_group_id_++;
  g->arrival = clock_();
  if (g->seqs.empty()) {
    for (int i = 0; i < g->n; ++i)
      g->seqs.push_back(std::make_unique<Sequence>());
  }
  for (int i = 0; i < g->n; ++i) {
    Sequence* s = g->seqs[i].get();
    s->id = next_seq_id_++;
    s->group = g.get();
    s->index = i;
    s->stagger = StaggerOffset(i, g->n, options_.replay.ring_length);
    s->replay.requested = g->is_score ? ReplayMode::kOff : g->requested;
    s->replay.effective = g->is_score ? ReplayMode::kOff : g->effective;
  }
  Group* raw = g.get();
  by_request_id_[raw->request_id] = raw;
  groups_[raw->id] = std::move(g);
  InsertWaiting(raw);
  return absl::OkStatus();
}

void Engine::InsertWaiting(Group* g) {
  auto it = std::lower_bound(
      waiting_.begin(), waiting_.end(), g,
      [](const Group* a, const Group* b) { return a->id < b->id; });
  waiting_.insert(it, g);
}

void Engine::RemoveWaiting(Group* g) {
  auto it = std::find(waiting_.begin(), waiting_.end(), g);
  if (it != waiting_.end()) waiting_.erase(it);
}

// ---- Control ---------------------------------------------------------------

absl::Status Engine::Cancel(absl::string_view request_id, AbortCause cause) {
  auto it = by_request_id_.find(std::string(request_id));
  if (it == by_request_id_.end() || it->second->done) {
    return absl::NotFoundError(
        absl::StrCat("no live request ", std::string(request_id)));
  }
  AbortGroup(it->second, cause);
  ReapGroups();
  return absl::OkStatus();
}

void Engine::AbortAll(AbortCause cause) {
  for (auto& [id, g] : groups_) {
    if (!g->done) AbortGroup(g.get(), cause);
  }
  ReapGroups();
}

void Engine::Pause(PauseMode mode) {
  pause_ = mode;
  if (mode == PauseMode::kAbort) {
    for (auto& [id, g] : groups_) {
      if (!g->done && g->state != GroupState::kWaiting) {
        AbortGroup(g.get(), AbortCause::kPaused);
      }
    }
    ReapGroups();
  }
}

void Engine::Resume() { pause_.reset(); }

bool Engine::PauseSettled() const {
  if (!pause_.has_value()) return false;
  if (*pause_ != PauseMode::kWait) return true;
  return waiting_.size() == groups_.size();  // nothing admitted left
}

absl::Status Engine::UpdateWeights(const std::string& path,
                                   std::optional<int64_t> version) {
  if (version.has_value() && *version <= weight_version_) {
    ++stats_.weight_updates_rejected;
    return absl::InvalidArgumentError(
        absl::StrCat("version ", *version, " must exceed the serving version ",
                     weight_version_));
  }
  const absl::Time t0 = clock_();
  absl::Status s = backend_->LoadWeights(path);
  stats_.weight_update_seconds.Observe(absl::ToDoubleSeconds(clock_() - t0));
  if (!s.ok()) {
    ++stats_.weight_updates_rejected;
    return s;
  }
  weight_version_ = version.has_value() ? *version : weight_version_ + 1;
  ++stats_.weight_updates_ok;
  return absl::OkStatus();
}

absl::Status Engine::Reconfigure(const EngineReconfig& change) {
  RETURN_IF_ERROR(change.Validate());
  if (change.replay_enabled.has_value()) {
    options_.replay.enabled = *change.replay_enabled;
    static_fallback_ = StaticFallback(
        options_.replay.enabled, plan_.pools.num_ring_slots,
        backend_->info().num_gdn_layers, backend_->capabilities().replay_ssm);
  }
  if (change.replay_auto_min_batch.has_value()) {
    options_.replay.auto_min_batch = *change.replay_auto_min_batch;
  }
  if (change.replay_default_mode.has_value()) {
    options_.replay.default_mode = *change.replay_default_mode;
  }
  return absl::OkStatus();
}

// ---- Scheduling input ------------------------------------------------------

int Engine::NumTokens(const Sequence& s) const {
  const Group& g = *s.group;
  if (g.state == GroupState::kPrefill) return g.prompt_len();
  if (g.is_score) return g.prompt_len() + static_cast<int>(s.output.size()) - 1;
  return g.prompt_len() + static_cast<int>(s.output.size());
}

SchedulerInput Engine::BuildInput() const {
  SchedulerInput in;
  for (const auto& [id, s] : live_seqs_) {
    if (s->state == SeqState::kRunning) {
      RunningSeq r;
      r.id = s->id;
      r.order = s->group->id;
      r.num_computed = s->num_computed;
      r.num_tokens = NumTokens(*s);
      r.prompt_prefill = s->group->state == GroupState::kPrefill;
      r.decode = !s->group->is_score && !r.prompt_prefill;
      r.slots = r.prompt_prefill ? s->group->n : 1;
      r.blocks = s->blocks;
      in.running.push_back(std::move(r));
    } else if (s->state == SeqState::kSwapped) {
      in.swapped.push_back(
          {s->id, s->group->id, s->num_computed, NumTokens(*s)});
    }
  }
  for (const Group* g : waiting_) {
    in.waiting.push_back({g->id, g->seqs[0]->id, g->prompt_len(), g->n,
                          weight_version_ >= g->min_weight_version});
  }
  in.free_slots = slots_.free();
  in.free_blocks = kv_.free();
  in.allow_admission = !pause_.has_value();
  return in;
}

bool Engine::HasWork() const {
  if (pause_ == PauseMode::kKeep) return false;
  for (const auto& [id, s] : live_seqs_) {
    if (s->state == SeqState::kRunning || s->state == SeqState::kSwapped) {
      return true;
    }
  }
  if (pause_.has_value()) return false;
  for (const Group* g : waiting_) {
    if (weight_version_ >= g->min_weight_version) return true;
  }
  return false;
}

absl::Time Engine::NextDeadline() const {
  absl::Time t = absl::InfiniteFuture();
  for (const auto& [id, g] : groups_) {
    if (!g->done) t = std::min(t, g->deadline);
  }
  return t;
}

void Engine::ExpireDeadlines(absl::Time now) {
  for (auto& [id, g] : groups_) {
    if (!g->done && g->deadline <= now) {
      AbortGroup(g.get(), AbortCause::kDeadline);
    }
  }
}

// ---- Resources -------------------------------------------------------------

void Engine::ReleaseResources(Sequence* s) {
  if (s->cursor.ring >= 0) {
    // A finished sequence's unflushed entries are simply dropped.
    rings_.Unref(s->cursor.ring);
    s->cursor = RingCursor{};
  }
  for (int32_t b : s->blocks) kv_.Unref(b);
  s->blocks.clear();
  if (s->slot >= 0) {
    slots_.Unref(s->slot);
    s->slot = -1;
  }
  if (s->snapshot.has_value()) {
    stats_.swap_bytes -= s->snapshot_bytes;
    s->snapshot.reset();
    s->snapshot_bytes = 0;
  }
  live_seqs_.erase(s->id);
}

absl::Status Engine::EnsureFlushed(Sequence* s) {
  // Invariant (gdn_replayssm.md section 4): anything but the ring kernel that
  // reads a slot (fork, export) must see the exact checkpoint.
  if (s->cursor.ring >= 0 && s->cursor.write_pos > 0) {
    RETURN_IF_ERROR(
        backend_->FlushRing(s->slot, s->cursor.ring, s->cursor.write_pos));
    ++stats_.flushes;
    ++s->replay.flushes;
    s->cursor.write_pos = 0;
    s->cursor.on_ring = false;
  }
  return absl::OkStatus();
}

void Engine::Preempt(Sequence* s) {
  Group* g = s->group;
  ++stats_.preemptions;
  if (g->state == GroupState::kPrefill) {
    // Restart the prompt later (same chunks, identical result): free the
    // group's reserved slots and prompt blocks.
    for (auto& seq : g->seqs) {
      if (seq->slot >= 0) {
        slots_.Unref(seq->slot);
        seq->slot = -1;
      }
      for (int32_t b : seq->blocks) kv_.Unref(b);
      seq->blocks.clear();
      seq->num_computed = 0;
      seq->state = SeqState::kPendingFork;
      ++seq->preemptions;
      live_seqs_.erase(seq->id);
    }
    g->state = GroupState::kWaiting;
    InsertWaiting(g);
    return;
  }
  absl::Status st = EnsureFlushed(s);
  absl::StatusOr<model::StateSnapshot> snap =
      st.ok() ? backend_->ExportState(s->slot, s->blocks)
              : absl::StatusOr<model::StateSnapshot>(st);
  if (!snap.ok()) {
    ++stats_.step_errors;
    AbortGroup(g, AbortCause::kInternal,
               absl::InternalError(absl::StrCat("preemption failed: ",
                                                snap.status().message())));
    return;
  }
  if (s->cursor.ring >= 0) {
    rings_.Unref(s->cursor.ring);
    s->cursor = RingCursor{};
  }
  for (int32_t b : s->blocks) kv_.Unref(b);
  s->blocks.clear();
  slots_.Unref(s->slot);
  s->slot = -1;
  s->snapshot_bytes =
      static_cast<int64_t>(snap->state.size() + snap->kv.size());
  s->snapshot = std::move(*snap);
  stats_.swap_bytes += s->snapshot_bytes;
  stats_.swap_peak_bytes = std::max(stats_.swap_peak_bytes, stats_.swap_bytes);
  s->state = SeqState::kSwapped;
  ++s->preemptions;
}

absl::Status Engine::SwapIn(Sequence* s) {
  std::optional<int> slot = slots_.Allocate();
  if (!slot.has_value()) return absl::InternalError("swap-in without a slot");
  s->slot = *slot;
  const int nblocks = BlocksFor(s->num_computed, options_.kv_block_size);
  for (int i = 0; i < nblocks; ++i) {
    std::optional<int> b = kv_.Allocate();
    if (!b.has_value()) return absl::InternalError("swap-in without blocks");
    s->blocks.push_back(*b);
  }
  RETURN_IF_ERROR(backend_->ImportState(*s->snapshot, s->slot, s->blocks));
  stats_.swap_bytes -= s->snapshot_bytes;
  s->snapshot.reset();
  s->snapshot_bytes = 0;
  s->state = SeqState::kRunning;
  return absl::OkStatus();
}

absl::Status Engine::Admit(Group* g) {
  RemoveWaiting(g);
  g->state = GroupState::kPrefill;
  const absl::Time now = clock_();
  if (!g->ever_admitted) {
    g->ever_admitted = true;
    g->admitted = now;
    stats_.queue_seconds.Observe(absl::ToDoubleSeconds(now - g->arrival));
    stats_.prompt_tokens += static_cast<uint64_t>(g->n) * g->prompt_len();
    if (admission_observer_) admission_observer_(g->request_id);
  }
  for (auto& s : g->seqs) {
    std::optional<int> slot = slots_.Allocate();
    if (!slot.has_value()) return absl::InternalError("admission: no slot");
    s->slot = *slot;
  }
  Sequence* head = g->seqs[0].get();
  const int nblocks = BlocksFor(g->prompt_len(), options_.kv_block_size);
  for (int i = 0; i < nblocks; ++i) {
    std::optional<int> b = kv_.Allocate();
    if (!b.has_value()) return absl::InternalError("admission: no blocks");
    head->blocks.push_back(*b);
  }
  head->state = SeqState::kRunning;
  head->num_computed = 0;
  live_seqs_[head->id] = head;
  return backend_->ResetState(head->slot);
}

absl::Status Engine::PrepareRowBlocks(Sequence* s, const ScheduledRow& row) {
  const int bs = options_.kv_block_size;
  if (row.copy_on_write) {
    const int i = row.start / bs;
    std::optional<int> b = kv_.Allocate();
    if (!b.has_value()) return absl::InternalError("copy-on-write: no block");
    RETURN_IF_ERROR(backend_->CopyKvBlock(s->blocks[i], *b));
    kv_.Unref(s->blocks[i]);
    s->blocks[i] = *b;
  }
  const int want = BlocksFor(row.start + row.len, bs);
  while (static_cast<int>(s->blocks.size()) < want) {
    std::optional<int> b = kv_.Allocate();
    if (!b.has_value()) return absl::InternalError("row: no KV block");
    s->blocks.push_back(*b);
  }
  return absl::OkStatus();
}

// ---- ReplaySSM -------------------------------------------------------------

model::ReplayRow Engine::DecideReplay(Sequence* s, int decode_rows,
                                      RowDecision* d) {
  bool want = false;
  const ReplayMode mode = s->replay.effective;
  if (mode == ReplayMode::kOn) {
    if (!s->ring_refused) {
      if (static_fallback_ != FallbackReason::kNone) {
        s->replay.fallback = static_fallback_;
        s->ring_refused = true;
      } else if (s->cursor.ring < 0) {
        std::optional<int> ring = rings_.Allocate();
        if (ring.has_value()) {
          s->cursor.ring = *ring;
        } else {
          s->replay.fallback = FallbackReason::kRingPoolExhausted;
          s->ring_refused = true;
        }
      }
    }
    want = !s->ring_refused;
  } else if (mode == ReplayMode::kAuto &&
             static_fallback_ == FallbackReason::kNone) {
    want = decode_rows >= options_.replay.auto_min_batch;
    if (want && s->cursor.ring < 0) {
      std::optional<int> ring = rings_.Allocate();
      if (ring.has_value()) {
        s->cursor.ring = *ring;
      } else {
        want = false;  // AUTO without a ring is plain, not a fallback
      }
    }
  }
  *d = PlanRow(&s->cursor, want, s->stagger, options_.replay.ring_length);
  model::ReplayRow r;
  if (d->use_ring) {
    r.ring_slot = s->cursor.ring;
    r.write_pos = s->cursor.write_pos;
    r.flush = d->flush;
  }
  return r;
}

// ---- Outputs ---------------------------------------------------------------

absl::Status Engine::Fork(Group* g, absl::Span<const float> logits) {
  Sequence* head = g->seqs[0].get();
  RETURN_IF_ERROR(EnsureFlushed(head));
  for (int i = 1; i < g->n; ++i) {
    Sequence* s = g->seqs[i].get();
    RETURN_IF_ERROR(backend_->CopyState(head->slot, s->slot));
    s->blocks = head->blocks;
    for (int32_t b : s->blocks) kv_.Ref(b);
    s->num_computed = head->num_computed;
    s->state = SeqState::kRunning;
    live_seqs_[s->id] = s;
    ++stats_.state_forks;
  }
  g->state = GroupState::kForked;
  g->prefill_version = weight_version_;
  for (auto& s : g->seqs) {
    if (g->is_score) {
      ScoreRows(s.get(), g->prompt_len() - 1, logits, 1);
    } else {
      SampleNext(s.get(), logits, /*ring=*/false);
    }
  }
  return absl::OkStatus();
}

void Engine::SampleNext(Sequence* s, absl::Span<const float> logits,
                        bool ring) {
  const Group& g = *s->group;
  const int k = static_cast<int>(s->output.size());
  absl::Span<const int32_t> banned;
  if (k < g.sampling.min_tokens) banned = g.stop_ids;
  SampleResult r =
      SampleToken(logits, g.sampling,
                  SampleKey{g.seed, static_cast<uint32_t>(s->index),
                            static_cast<uint64_t>(k)},
                  banned, g.logprobs.top_k);
  Append(s, r.token, r.logprob, std::move(r.top), ring);
}

void Engine::Append(Sequence* s, int32_t token, float logprob,
                    std::vector<TopLogprob> top, bool ring) {
  Group& g = *s->group;
  const absl::Time now = clock_();
  const int k = static_cast<int>(s->output.size());
  s->output.push_back(token);
  ++g.completion_tokens;
  if (g.logprobs.sampled) s->logprobs.push_back(logprob);
  if (g.logprobs.top_k > 0) s->top.push_back(top);
  if (s->versions.empty() || s->versions.back().version != weight_version_) {
    s->versions.push_back({weight_version_, k});
  }
  if (k == 0) {
    s->first_token = now;
    stats_.time_to_first_token_seconds.Observe(
        absl::ToDoubleSeconds(now - g.arrival));
  }
  s->last_token = now;
  stats_.last_token_time = now;
  if (ring) {
    ++stats_.generation_tokens_ring;
  } else {
    ++stats_.generation_tokens_plain;
  }
  if (g.stream_deltas) {
    TokenDelta d;
    d.completion_index = s->index;
    d.token_ids = {token};
    if (g.logprobs.sampled) d.logprobs = {logprob};
    if (g.logprobs.top_k > 0) d.top_logprobs.push_back(std::move(top));
    g.channel->PushDelta(std::move(d));
  }
  const int produced = k + 1;
  if (produced > g.sampling.min_tokens &&
      std::binary_search(g.stop_ids.begin(), g.stop_ids.end(), token)) {
    Finish(s, FinishReason::kStop, AbortCause::kNone, token);
  } else if (produced >= g.sampling.max_tokens ||
             g.prompt_len() + produced >= plan_.max_model_len) {
    Finish(s, FinishReason::kLength, AbortCause::kNone);
  }
}

void Engine::ScoreRows(Sequence* s, int start, absl::Span<const float> logits,
                       int count) {
  Group& g = *s->group;
  const int vocab = backend_->info().vocab_size;
  for (int j = 0; j < count; ++j) {
    // Logits at position p score the token at p + 1.
    const int target = start + j + 1 - g.prompt_len();
    if (target < 0 || target >= static_cast<int>(s->output.size())) continue;
    absl::Span<const float> row = logits.subspan(static_cast<size_t>(j) * vocab,
                                                 static_cast<size_t>(vocab));
    const double lse = LogSumExp(row);
    if (s->versions.empty() || s->versions.back().version != weight_version_) {
      s->versions.push_back({weight_version_, target});
    }
    s->logprobs.push_back(RawLogprob(row, s->output[target], lse));
    if (g.score_top_logprobs > 0) {
      s->top.push_back(TopLogprobs(row, lse, g.score_top_logprobs));
    }
    ++stats_.score_tokens;
    ++g.completion_tokens;
  }
  if (s->logprobs.size() == s->output.size()) {
    Finish(s, FinishReason::kLength, AbortCause::kNone);
  }
}

void Engine::Finish(Sequence* s, FinishReason reason, AbortCause cause,
                    int32_t stop_token) {
  if (s->state == SeqState::kFinished) return;
  Group& g = *s->group;
  ReleaseResources(s);
  s->state = SeqState::kFinished;
  const absl::Time now = clock_();

  CompletionResult r;
  r.completion_index = s->index;
  r.finish_reason = reason;
  r.abort_cause = cause;
  r.stop_token_id = stop_token;
  r.num_preemptions = s->preemptions;
  r.is_score = g.is_score;
  r.seed = g.seed;
  r.e2e = now - g.arrival;
  if (s->first_token != absl::InfinitePast()) {
    r.time_to_first_token = s->first_token - g.arrival;
  }
  if (!g.is_score) {
    ReplaySsmReport& rep = s->replay;
    const bool decoded = rep.ring_steps + rep.plain_steps > 0;
    if (rep.effective == ReplayMode::kOn && !rep.applied &&
        rep.fallback == FallbackReason::kNone && !s->output.empty()) {
      rep.fallback = static_fallback_ != FallbackReason::kNone
                         ? static_fallback_
                     : decoded ? FallbackReason::kNone
                               : FallbackReason::kPrefillOnly;
    }
    if (rep.fallback != FallbackReason::kNone) {
      ++stats_.fallbacks[static_cast<int>(rep.fallback)];
    }
    ++stats_.completions_by_finish[static_cast<int>(reason)];
    ++stats_.completions_by_mode[static_cast<int>(rep.requested)];
    if (s->output.size() > 1) {
      stats_.time_per_output_token_seconds.Observe(
          absl::ToDoubleSeconds(s->last_token - s->first_token) /
          static_cast<double>(s->output.size() - 1));
    }
  }
  r.replay_ssm = s->replay;
  r.token_ids = std::move(s->output);
  r.logprobs = std::move(s->logprobs);
  r.top_logprobs = std::move(s->top);
  r.weight_versions = std::move(s->versions);
  g.channel->PushCompletion(std::move(r));
  if (++g.finished == g.n) FinishGroup(&g);
}

void Engine::AbortGroup(Group* g, AbortCause cause,
                        const absl::Status& status) {
  if (g->done) return;
  if (!status.ok() && g->status.ok()) g->status = status;
  if (g->state == GroupState::kWaiting) RemoveWaiting(g);
  for (auto& s : g->seqs) {
    Finish(s.get(), FinishReason::kAborted, cause);
  }
}

void Engine::FinishGroup(Group* g) {
  g->done = true;
  const absl::Time now = clock_();
  GroupSummary sum;
  sum.request_id = g->request_id;
  sum.status = g->status;
  sum.prompt_tokens = g->prompt_len();
  sum.prompt_tokens_computed = g->prompt_computed;
  sum.completion_tokens = g->completion_tokens;
  sum.prefill_weight_version = g->prefill_version;
  if (g->ever_admitted) sum.queue_time = g->admitted - g->arrival;
  sum.e2e = now - g->arrival;
  stats_.e2e_request_seconds.Observe(absl::ToDoubleSeconds(sum.e2e));
  ++stats_.groups_finished;
  if (g->state == GroupState::kWaiting) RemoveWaiting(g);
  by_request_id_.erase(g->request_id);
  finished_groups_.push_back(g);
  // Before the summary: a caller that sees it may reuse the request id.
  if (group_done_observer_) group_done_observer_(g->request_id);
  g->channel->PushGroupDone(std::move(sum));
}

void Engine::ReapGroups() {
  for (Group* g : finished_groups_) groups_.erase(g->id);
  finished_groups_.clear();
}

// ---- The step --------------------------------------------------------------

absl::Status Engine::Step() {
  const absl::Time t0 = clock_();
  ExpireDeadlines(t0);
  if (pause_ == PauseMode::kKeep) {
    ReapGroups();
    return absl::OkStatus();
  }
  const StepPlan plan = Schedule(BuildInput(), sched_cfg_);
  if (plan.empty()) {
    ReapGroups();
    return absl::OkStatus();
  }
  StepTrace trace;
  trace.step = stats_.steps;

  auto seq_of = [this](int64_t id) -> Sequence* {
    auto it = live_seqs_.find(id);
    return it == live_seqs_.end() ? nullptr : it->second;
  };
  for (int64_t id : plan.preempted) {
    if (Sequence* s = seq_of(id); s != nullptr) {
      trace.preempted.push_back({s->group->request_id, s->index});
      Preempt(s);
    }
  }
  for (int64_t id : plan.swapped_in) {
    Sequence* s = seq_of(id);
    if (s == nullptr) continue;
    if (absl::Status st = SwapIn(s); !st.ok()) {
      ++stats_.step_errors;
      AbortGroup(s->group, AbortCause::kInternal, st);
    }
  }
  for (const AdmittedGroup& a : plan.admitted) {
    auto it = groups_.find(a.group_id);
    if (it == groups_.end()) continue;
    if (absl::Status st = Admit(it->second.get()); !st.ok()) {
      ++stats_.step_errors;
      AbortGroup(it->second.get(), AbortCause::kInternal, st);
    }
  }

  // Rows of sequences still running, with their blocks.
  struct Row {
    Sequence* seq;
    ScheduledRow plan;
    bool decode;
    bool prompt;
    RowDecision replay;
  };
  std::vector<Row> rows;
  int decode_rows = 0;
  for (const ScheduledRow& pr : plan.rows) {
    Sequence* s = seq_of(pr.seq_id);
    if (s == nullptr || s->state != SeqState::kRunning) continue;
    if (absl::Status st = PrepareRowBlocks(s, pr); !st.ok()) {
      ++stats_.step_errors;
      AbortGroup(s->group, AbortCause::kInternal, st);
      continue;
    }
    const bool prompt = s->group->state == GroupState::kPrefill;
    const bool decode = !prompt && !s->group->is_score;
    decode_rows += decode;
    rows.push_back({s, pr, decode, prompt, {}});
  }
  // A group can have been aborted after its rows were prepared.
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [](const Row& r) {
                              return r.seq->state != SeqState::kRunning;
                            }),
             rows.end());

  model::ForwardBatch batch;
  batch.rows.reserve(rows.size());
  for (Row& r : rows) {
    Sequence* s = r.seq;
    const Group& g = *s->group;
    model::ForwardRow fr;
    const int P = g.prompt_len();
    if (r.plan.start < P) {
      fr.tokens =
          absl::MakeConstSpan(g.prompt).subspan(r.plan.start, r.plan.len);
    } else {
      fr.tokens =
          absl::MakeConstSpan(s->output).subspan(r.plan.start - P, r.plan.len);
    }
    fr.start_pos = r.plan.start;
    fr.state_slot = s->slot;
    fr.kv_blocks = s->blocks;
    if (r.prompt) {
      fr.logits = r.plan.start + r.plan.len == P ? model::LogitsWanted::kLast
                                                 : model::LogitsWanted::kNone;
    } else if (g.is_score) {
      fr.logits = model::LogitsWanted::kAll;
    } else {
      fr.logits = model::LogitsWanted::kLast;
      fr.replay = DecideReplay(s, decode_rows, &r.replay);
    }
    batch.rows.push_back(fr);
    trace.rows.push_back({g.request_id, s->index, r.plan.start, r.plan.len,
                          r.decode, fr.replay.ring_slot, fr.replay.write_pos,
                          fr.replay.ring_slot >= 0 && r.replay.flush});
  }
  trace.decode_rows = decode_rows;

  model::ForwardOutput out;
  absl::Status fs =
      batch.rows.empty() ? absl::OkStatus() : backend_->Forward(batch, &out);
  if (!fs.ok()) {
    // The rows' states are unknown now: end their requests, keep serving.
    ++stats_.step_errors;
    const absl::Status err = absl::InternalError(
        absl::StrCat("engine step failed: ", fs.ToString()));
    for (Row& r : rows) AbortGroup(r.seq->group, AbortCause::kInternal, err);
    ++stats_.steps;
    ReapGroups();
    return absl::OkStatus();
  }

  const int vocab = backend_->info().vocab_size;
  bool any_prefill = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    Row& r = rows[i];
    Sequence* s = r.seq;
    Group* g = s->group;
    if (s->state != SeqState::kRunning) continue;
    s->num_computed += r.plan.len;
    absl::Span<const float> logits =
        absl::MakeConstSpan(out.logits)
            .subspan(static_cast<size_t>(out.logits_offset[i]) * vocab,
                     static_cast<size_t>(out.logits_count[i]) * vocab);
    if (r.prompt) {
      any_prefill = true;
      g->prompt_computed += r.plan.len;
      stats_.prompt_tokens_computed += r.plan.len;
      if (s->num_computed == g->prompt_len()) {
        if (absl::Status st = Fork(g, logits); !st.ok()) {
          ++stats_.step_errors;
          AbortGroup(g, AbortCause::kInternal, st);
        }
      }
    } else if (g->is_score) {
      any_prefill = true;
      ScoreRows(s, r.plan.start, logits, out.logits_count[i]);
    } else {
      CommitRow(&s->cursor, r.replay, options_.replay.ring_length);
      if (r.replay.use_ring) {
        ++s->replay.ring_steps;
        s->replay.applied = true;
        if (r.replay.flush) {
          ++s->replay.flushes;
          ++stats_.flushes;
        }
      } else {
        ++s->replay.plain_steps;
      }
      SampleNext(s, logits, r.replay.use_ring);
    }
  }

  ++stats_.steps;
  stats_.batch_size.Observe(static_cast<double>(rows.size()));
  const double secs = absl::ToDoubleSeconds(clock_() - t0);
  if (any_prefill) {
    stats_.prefill_step_seconds.Observe(secs);
  } else {
    stats_.decode_step_seconds.Observe(secs);
  }
  if (observer_) observer_(trace);
  ReapGroups();
  return absl::OkStatus();
}

EngineStats Engine::stats() const {
  EngineStats s = stats_;
  s.requests_waiting = static_cast<int>(waiting_.size());
  s.requests_running = static_cast<int>(groups_.size() - waiting_.size());
  for (const auto& [id, seq] : live_seqs_) {
    if (seq->state == SeqState::kRunning) ++s.sequences_running;
    if (seq->state == SeqState::kSwapped) ++s.sequences_swapped;
  }
  auto pool = [](const IndexPool& p) {
    return PoolStats{p.used(), p.size(), p.used_bytes(), p.peak_bytes()};
  };
  s.state_slots = pool(slots_);
  s.rings = pool(rings_);
  s.kv_blocks = pool(kv_);
  const model::MemoryStats m = backend_->memory();
  s.device_used_bytes = m.device_used_bytes;
  s.device_peak_bytes = m.device_peak_bytes;
  s.weights_bytes = m.weights_bytes;
  s.paused = pause_.has_value() ? static_cast<int>(*pause_) + 1 : 0;
  s.weight_version = weight_version_;
  return s;
}

}  // namespace rollout::worker
