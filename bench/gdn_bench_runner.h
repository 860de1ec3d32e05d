// Timing of the GDN decode steps inside CUDA graphs (gdn_bench): µs per
// call of back-to-back calls, packed steps, ReplaySSM ring cycles split into
// non-flush and flush steps, staggered cycles and mixed ON/OFF launches.
#ifndef ROLLOUT_BENCH_GDN_BENCH_RUNNER_H_
#define ROLLOUT_BENCH_GDN_BENCH_RUNNER_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "bench/gdn_bench_device.h"
#include "bench/gdn_bench_setup.h"
#include "gdn/decode.h"

namespace rollout::bench {

struct Runner {
  cudaStream_t s;
  Events ev;
  int reps = 7;

  // Median ms of one graph replay (after two warm-ups).
  double TimeGraph(cudaGraphExec_t g) {
    for (int i = 0; i < 2; ++i) BENCH_CUDA(cudaGraphLaunch(g, s));
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      t.push_back(ev.Time(s, [&] { BENCH_CUDA(cudaGraphLaunch(g, s)); }));
    }
    return Median(t);
  }

  // µs per call of a graph of `calls` back-to-back calls; `launch(i)`
  // issues call i.
  double UsPerCall(int calls, const std::function<void(int)>& launch) {
    cudaGraphExec_t g = Capture(s, [&] {
      for (int i = 0; i < calls; ++i) launch(i);
    });
    const double ms = TimeGraph(g);
    BENCH_CUDA(cudaGraphExecDestroy(g));
    return ms * 1e3 / calls;
  }

  // Calls in a graph over `nsets` rotating slot sets: every set, and at
  // least 32 calls, so that one call's launch and tail weigh little.
  static int GraphCalls(int nsets) { return std::max(nsets, 32); }

  // Packed decode: µs per call.
  double Packed(const Setup& st, const Variant& var) {
    return UsPerCall(GraphCalls(st.nsets), [&](int i) {
      BENCH_OK(gdn::LaunchGdnPackedDecode(
          StepParams(st, st.SlotSet(var.linear, var.sorted, i % st.nsets), st.B,
                     var),
          s));
    });
  }

  // The median of three packed timings: the baseline the A/B modes divide
  // by, steadier than one graph.
  double PackedMedian3(const Setup& st, const Variant& var) {
    return Median({Packed(st, var), Packed(st, var), Packed(st, var)});
  }

  struct Cycle {
    double nonflush_us = 0, flush_us = 0, cycle_us = 0;
  };

  // One full ring cycle per set, steps in order (cursor s = step s), the
  // flush step timed in its own graph of at least kMinFlushCalls calls (the
  // sets repeated: with 2 sets of 1-2 GiB at B >= 512 a graph of 2 flushes
  // varied by up to 20 % between identical timings). `launch(set, cursor)`
  // issues the launches of one layer call.
  static constexpr int kMinFlushCalls = 8;
  Cycle RingCycle(const Setup& st,
                  const std::function<void(int, const int32_t*)>& launch) {
    const int flush_calls = std::max(st.nsets, kMinFlushCalls);
    cudaGraphExec_t nf = Capture(s, [&] {
      for (int l = 0; l < kL - 1; ++l) {
        for (int set = 0; set < st.nsets; ++set) {
          launch(set, st.cursors + l * st.B);
        }
      }
    });
    cudaGraphExec_t f = Capture(s, [&] {
      for (int i = 0; i < flush_calls; ++i) {
        launch(i % st.nsets, st.cursors + (kL - 1) * st.B);
      }
    });
    for (int i = 0; i < 2; ++i) {
      BENCH_CUDA(cudaGraphLaunch(nf, s));
      BENCH_CUDA(cudaGraphLaunch(f, s));
    }
    std::vector<double> tn, tf;
    for (int i = 0; i < reps; ++i) {
      tn.push_back(ev.Time(s, [&] { BENCH_CUDA(cudaGraphLaunch(nf, s)); }));
      tf.push_back(ev.Time(s, [&] { BENCH_CUDA(cudaGraphLaunch(f, s)); }));
    }
    BENCH_CUDA(cudaGraphExecDestroy(nf));
    BENCH_CUDA(cudaGraphExecDestroy(f));
    Cycle c;
    const double mn = Median(tn), mf = Median(tf);
    c.nonflush_us = mn * 1e3 / ((kL - 1) * st.nsets);
    c.flush_us = mf * 1e3 / flush_calls;
    c.cycle_us = ((kL - 1) * c.nonflush_us + c.flush_us) / kL;
    return c;
  }

  Cycle Replay(const Setup& st, const Variant& var) {
    return RingCycle(st, [&](int set, const int32_t* cursor) {
      const int32_t* slots = st.SlotSet(var.linear, var.sorted, set);
      BENCH_OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, slots, slots, cursor, st.B, var), s));
    });
  }

  // The same ring cycle with the flush phases staggered over the rows
  // (Setup::stag_cursors, the engine's schedule): every step flushes B / L
  // rows in the same launch as the others' non-flush work. µs per step of
  // the steady state = the cycle average (each row still takes L - 1
  // non-flush steps and one flush per cycle).
  double Staggered(const Setup& st, const Variant& var) {
    // Call i = step l = i / nsets of set i % nsets (steps outer, sets inner).
    return UsPerCall(kL * st.nsets, [&](int i) {
      const int l = i / st.nsets;
      const int32_t* slots = st.SlotSet(var.linear, var.sorted, i % st.nsets);
      BENCH_OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, slots, slots, st.stag_cursors + l * st.B, st.B, var),
          s));
    });
  }

  // Half the rows OFF: in the replay launch (ring index -1) ...
  Cycle MixedSameLaunch(const Setup& st) {
    return RingCycle(st, [&](int set, const int32_t* cursor) {
      BENCH_OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, st.sets + set * st.B, st.mixed_rings + set * st.B,
                       cursor, st.B, Variant()),
          s));
    });
  }
  // ... or ON rows in the replay launch and OFF rows in a packed launch.
  Cycle MixedSplit(const Setup& st) {
    const int h = st.B / 2;
    return RingCycle(st, [&](int set, const int32_t* cursor) {
      const int32_t* on = st.half_on + set * h;
      BENCH_OK(gdn::LaunchGdnReplayDecode(
          ReplayParams(st, on, on, cursor, h, Variant()), s));
      BENCH_OK(gdn::LaunchGdnPackedDecode(
          StepParams(st, st.half_off + set * h, h, Variant()), s));
    });
  }
};

}  // namespace rollout::bench

#endif  // ROLLOUT_BENCH_GDN_BENCH_RUNNER_H_
