#!/bin/bash
# Sourced by the device scripts (run_gdn_on_device.sh, ab_on_device.sh): samples
# the GPU's SM and memory clocks, power, temperature and clock event reasons
# every 100 ms into a CSV while a benchmark runs (read only: nothing is set),
# for bench/clock_trace.py. The first line gives the machine's UTC offset,
# which nvidia-smi's local timestamps need.
#   start_gpu_samples "$OUT/smi.csv"
#   ... the benchmark ...
#   stop_gpu_samples
start_gpu_samples() {  # file
  # Older drivers name the reasons clocks_throttle_reasons.
  local reasons=clocks_event_reasons.active
  nvidia-smi --query-gpu=$reasons --format=csv,noheader > /dev/null 2>&1 ||
    reasons=clocks_throttle_reasons.active
  echo "# utc_offset $(date +%z)" > "$1"
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,$reasons \
    --format=csv,noheader,nounits -lms 100 >> "$1" 2>&1 &
  GPU_SAMPLES_PID=$!
}
stop_gpu_samples() {
  [ -n "${GPU_SAMPLES_PID:-}" ] || return 0
  kill "$GPU_SAMPLES_PID" 2> /dev/null
  wait "$GPU_SAMPLES_PID" 2> /dev/null
  GPU_SAMPLES_PID=""
}
