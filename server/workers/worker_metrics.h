// WorkerMetrics: one worker's series in rolloutd's registry, fed from its
// stats snapshots (rollout.worker.v1.WorkerStats) and from the supervisor.
//
// Worker counters are cumulative per process. Merge adds the increase since
// the previous snapshot of the same process, so rolloutd's counters keep
// growing across worker restarts (NewProcess() starts a new baseline).
// Gauges are set; histograms (engine buckets, labelled by worker) get the
// per-bucket increase. Series are resolved once and kept (Family::Add locks
// and hashes).
//
// Not thread-safe: the owner serialises calls for one worker.
#ifndef ROLLOUT_SERVER_WORKERS_WORKER_METRICS_H_
#define ROLLOUT_SERVER_WORKERS_WORKER_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "metrics/rollout_metrics.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "rollout/worker/v1/worker.pb.h"

namespace rollout::server::workers {

class WorkerMetrics {
 public:
  WorkerMetrics(metrics::RolloutMetrics* metrics, int index);

  // A new worker process: its counters start from zero.
  void NewProcess();
  // The device label of the memory gauges ("cpu", "cuda:0").
  void SetDevice(const std::string& device);

  void Merge(const rollout::worker::v1::WorkerStats& stats);

  // Supervisor state.
  void SetReady(bool ready);
  void SetCrashLoop(bool looping);
  void CountRestart();
  void SetLastTokenAge(double seconds);
  void SetWeightVersion(uint64_t version);
  // The process is gone: its use gauges drop to zero (totals and peaks stay).
  void ProcessGone();

 private:
  // Adds the increase of a worker counter since the last snapshot.
  void Add(prometheus::Counter& counter, const std::string& key,
           uint64_t value);
  void AddHistogram(prometheus::Family<prometheus::Histogram>& family,
                    const std::string& key,
                    const rollout::worker::v1::Histogram& h);

  metrics::RolloutMetrics* const metrics_;
  const std::string label_;
  std::string device_ = "cpu";
  // Last value seen per counter / histogram of the current process.
  std::map<std::string, uint64_t> counters_;
  std::map<std::string, rollout::worker::v1::Histogram> histograms_;
  std::map<std::string, prometheus::Histogram*> histogram_series_;
};

}  // namespace rollout::server::workers

#endif  // ROLLOUT_SERVER_WORKERS_WORKER_METRICS_H_
