#include "server/serial_executor.h"

#include <utility>

namespace rollout::server {

SerialExecutor::SerialExecutor() : thread_([this] { Loop(); }) {}

SerialExecutor::~SerialExecutor() {
  {
    rollout::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void SerialExecutor::Schedule(absl::AnyInvocable<void()> task) {
  rollout::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
}

void SerialExecutor::Loop() {
  while (true) {
    absl::AnyInvocable<void()> task;
    {
      rollout::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](SerialExecutor* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stopping_ || !self->tasks_.empty();
          },
          this));
      if (tasks_.empty()) return;  // stopping, and everything ran
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace rollout::server
