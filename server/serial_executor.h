// SerialExecutor: one thread that runs tasks in order. Admin RPCs use it for
// their blocking parts (reading config and token files, resolving weight
// paths) so that gRPC callback threads never block, and so that two reloads
// never run at the same time.
//
//   SerialExecutor executor("admin");
//   executor.Schedule([reactor] { ...; reactor->Finish(status); });
//
// The destructor runs every task already scheduled, then joins.
#ifndef ROLLOUT_SERVER_SERIAL_EXECUTOR_H_
#define ROLLOUT_SERVER_SERIAL_EXECUTOR_H_

#include <deque>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "common/mutex.h"

namespace rollout::server {

class SerialExecutor {
 public:
  SerialExecutor();
  ~SerialExecutor();
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  // Any thread; never blocks. Tasks scheduled after destruction began are
  // still run.
  void Schedule(absl::AnyInvocable<void()> task) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop();

  rollout::Mutex mu_;
  std::deque<absl::AnyInvocable<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace rollout::server

#endif  // ROLLOUT_SERVER_SERIAL_EXECUTOR_H_
