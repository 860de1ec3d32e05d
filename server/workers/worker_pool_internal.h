// Private parts of WorkerPool shared by worker_pool.cc (processes, control,
// metrics) and worker_pool_calls.cc (Generate/Score/Abort, dispatch, re-runs).
// Not for other users.
#ifndef ROLLOUT_SERVER_WORKERS_WORKER_POOL_INTERNAL_H_
#define ROLLOUT_SERVER_WORKERS_WORKER_POOL_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/time/time.h"
#include "common/mutex.h"
#include "server/workers/generate_assembler.h"
#include "server/workers/worker_client.h"
#include "server/workers/worker_pool.h"

namespace rollout::server::workers {

namespace wv1 = ::rollout::worker::v1;

// What Admin.Pause is doing to the pool.
enum class WorkerPool::Hold {
  kNone,   // dispatching
  kWait,   // Pause(WAIT): dispatching until nothing is left
  kKeep,   // Pause(KEEP): workers frozen, queue held, watchdog off
  kAbort,  // Pause(ABORT): everything aborted, queue held
};

// One run of a call on one worker process.
struct WorkerPool::Attempt {
  int number = 0;
  int worker = -1;
  uint64_t incarnation = 0;
  std::shared_ptr<WorkerConnection> connection;
  std::string id;  // the worker's request id: <client id>#<serial>.<number>
  absl::Time dispatched = absl::InfinitePast();
  // Guarded by the pool's mu_.
  bool accepted = false;    // Generate: the worker queued it
  bool abort_sent = false;  // Generate: the worker was asked to abort it
  bool done = false;        // Generate: the done event arrived
  bool ended = false;       // the worker call ended
  double worker_queue_seconds = 0;
  std::shared_ptr<WorkerGenerateCall> stream;
  std::shared_ptr<UnaryCall<wv1::ScoreRequest, wv1::ScoreResult>> score;
};

// One Generate, GenerateStream or Score call, from admission to finish.
struct WorkerPool::Call {
  Call(uint64_t serial, bool is_score, bool stream, int n)
      : serial(serial),
        is_score(is_score),
        stream(stream),
        assembler(n, stream) {}

  const uint64_t serial;
  const bool is_score;
  const bool stream;
  std::shared_ptr<const rollout::v1::GenerateRequest> generate;
  std::shared_ptr<const rollout::v1::ScoreRequest> score;
  CallContext context;
  std::string public_id;
  uint64_t min_weight_version = 0;
  int64_t cost = 0;  // tokens at most (routing weight)
  GenerateSink* sink = nullptr;
  Callback<rollout::v1::ScoreResponse> score_done;

  // Guarded by the pool's mu_ (clang cannot check a mutex of another
  // object here; every access is in a *Locked method or under mu_).
  std::shared_ptr<Attempt> attempt;  // null while waiting for a worker
  int attempts = 0;
  int reruns = 0;                // attempts lost with their worker
  int64_t charged = 0;           // tokens counted in the attempt's worker load
  bool cancelled = false;        // client cancel or deadline
  bool abort_requested = false;  // Rollout.Abort / Admin.Pause(ABORT)
  bool retired = false;          // left the pool; being finished
  absl::Time first_token = absl::InfinitePast();
  // How it ends (set when retired).
  enum class End { kResult, kError, kCancelled, kAborted };
  End end = End::kError;
  absl::Status error;
  std::shared_ptr<wv1::ScoreResult> score_result;
  int final_worker = -1;
  double queue_seconds = 0;
  std::vector<std::shared_ptr<AbortCollector>> abort_waiters;

  // Output side: one thread at a time. May be held while taking the pool's
  // mu_ (a sink's Write can cancel its call), never the other way round.
  rollout::Mutex out_mu;
  GenerateAssembler assembler ABSL_GUARDED_BY(out_mu);
  bool first_chunk_sent ABSL_GUARDED_BY(out_mu) = false;
  bool finished ABSL_GUARDED_BY(out_mu) = false;
};

struct WorkerPool::Worker {
  // The ready process (0: none): older attempts and replies are ignored.
  uint64_t incarnation = 0;
  bool process_ready = false;  // answered GetInfo
  bool ready = false;          // routable: process ready, weights current
  bool suspect = false;        // a call to it failed: not routable until it
                               // answers a stats poll or is replaced
  bool full = false;           // it refused a call: until one of its calls ends
  bool updating = false;       // UpdateWeights running on it (watchdog off)
  std::shared_ptr<WorkerConnection> connection;
  rollout::worker::v1::WorkerInfo info;
  // Calls assigned to it and the tokens they may still produce.
  int outstanding = 0;
  int64_t outstanding_tokens = 0;
  // Progress (watchdog): busy since, last token seen, last step counted.
  absl::Time busy_since = absl::InfinitePast();
  absl::Time last_token = absl::InfinitePast();
  absl::Time last_step_change = absl::InfinitePast();
  uint64_t last_steps = 0;
  bool stats_in_flight = false;
  absl::Time next_stats = absl::InfinitePast();
  // Last time it answered (ready, or a stats poll): an idle worker that
  // stops answering is replaced too.
  absl::Time last_answer = absl::InfinitePast();
  // Calls whose run on this process broke (re-run elsewhere), for the log.
  int lost_calls = 0;
  // From its last stats.
  int running = 0;
  int waiting = 0;
  uint64_t weight_version = 0;

  absl::Time Progress() const {
    return std::max(busy_since, std::max(last_token, last_step_change));
  }
};

// Work decided under the lock, done after it.
struct WorkerPool::Actions {
  std::vector<std::pair<std::shared_ptr<Call>, std::shared_ptr<Attempt>>>
      starts;
  std::vector<std::shared_ptr<Call>> finishes;
  std::vector<absl::AnyInvocable<void()>> later;
  bool state_changed = false;
};

// Gathers the partial results of aborted calls for one Abort (or
// Pause(ABORT)) and answers once every one of them has finished.
class WorkerPool::AbortCollector {
 public:
  using Done = absl::AnyInvocable<void(rollout::v1::AbortResponse)>;
  explicit AbortCollector(Done done) : done_(std::move(done)) {}

  void Expect() ABSL_LOCKS_EXCLUDED(mu_) {
    rollout::MutexLock lock(&mu_);
    ++expected_;
  }
  // A call finished: its id, and its (partial) response for Generate calls.
  void Add(const std::string& id,
           std::optional<rollout::v1::GenerateResponse> response)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Every call is registered: answer when they have all finished.
  void Arm() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The answer, when it is complete and not given yet (then given here).
  std::optional<rollout::v1::AbortResponse> TakeIfDoneLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  rollout::Mutex mu_;
  Done done_ ABSL_GUARDED_BY(mu_);
  rollout::v1::AbortResponse response_ ABSL_GUARDED_BY(mu_);
  int expected_ ABSL_GUARDED_BY(mu_) = 0;
  int finished_ ABSL_GUARDED_BY(mu_) = 0;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
};

// absl::Status of a worker call.
absl::Status FromGrpc(const grpc::Status& status);

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_WORKER_POOL_INTERNAL_H_
