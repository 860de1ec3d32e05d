#!/bin/bash
# make_checkpoint writes a loadable sharded checkpoint of a real layer shape.
set -euo pipefail
bin=model/tools/make_checkpoint
out="${TEST_TMPDIR}/q35"
"$bin" --list | grep -q qwen3-next-80b-a3b
# Qwen3.5-0.8B layer shapes, 1 layer, small vocabulary, 20 MB shards.
"$bin" --preset=qwen3.5-0.8b --num_layers=1 --vocab_size=1000 \
  --shard_gb=0.02 --out="$out" 2> "${TEST_TMPDIR}/log"
grep -q "wrote" "${TEST_TMPDIR}/log"
grep -q "GB (100.0%)" "${TEST_TMPDIR}/log"
test -f "$out/config.json"
test -f "$out/model.safetensors.index.json"
ls "$out"/model-0000*-of-0000*.safetensors > /dev/null
# Unknown preset: a clear error, exit 1.
if "$bin" --preset=nope --out="$out" 2> "${TEST_TMPDIR}/err"; then exit 1; fi
grep -q "unknown preset 'nope'" "${TEST_TMPDIR}/err"
echo PASS
