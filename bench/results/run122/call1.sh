#!/bin/bash
# Run 122 call 1 (forty-sixth session), H200 only, for a session with ~300 s
# of device time left (too few for the documented run, ~240 s plus the
# machine's start): the decode sweep alone (`gdn_bench --no-micro --json`,
# the figures of record's lines; ~100-120 s by run 121's 118 s on an H100)
# under the new slot-set rotation, with the clock samples; on any other card
# it stops at once (exit 3). The documented run's tests ran on the H200 in
# run 118 (the same kernels; the L2 policy rule of dd8747f since).
# Here, before: tools/device_pack.sh --gzip && bash bench/results/pending/carry.sh
# then the run tool (carry [".device"], timeout 280) runs this file. With less
# device time, LIMIT=S (default 250; the name the other call scripts use) caps
# the sweep, and the run tool's timeout is S + 20.
cd "$(dirname "$0")/../../.." || exit 2
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
if [[ "$gpu" != *H200* ]]; then
  echo "card: $gpu: not an H200, nothing run"
  exit 3
fi
source bench/results/pending/call_env.sh || exit 2
source bench/gpu_samples.sh
start_gpu_samples "$out/smi.csv"
timeout "${LIMIT:-250}" .device/bin/gdn_bench --no-micro --json="$out/gdn_bench.json" \
  > "$out/gdn_bench.log" 2>&1
rc=$?
stop_gpu_samples
echo "== sweep rc=$rc ($((SECONDS - t0)) s)"
sed -n '/^== GDN decode/,$p' "$out/gdn_bench.log" | head -24
python3 bench/clock_trace.py "$out/gdn_bench.json" "$out/smi.csv" 2>&1 | head -3
exit $rc
