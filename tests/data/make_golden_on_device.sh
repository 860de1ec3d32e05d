#!/bin/bash
# Runs make_golden.py on the GPU machine (which has torch + transformers; this one has not) and
# packs the result for the trip back. The device tool runs it from the repo root with $OUT set:
#   bash tests/data/make_golden_on_device.sh
# Back here: tar xzf <files_at>/golden.tgz -C tests/data
set -uo pipefail
: "${OUT:?OUT must name the folder whose files come back}"
export PYTHONUNBUFFERED=1
nproc; python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__)'
python3 tests/data/make_golden.py --out /tmp/golden 2>&1 | tee "$OUT/golden.log"
rc=${PIPESTATUS[0]}
tar czf "$OUT/golden.tgz" -C /tmp/golden .
# The exact transformers model code the goldens came from, for reading (not committed).
TF=$(python3 -c 'import os, transformers; print(os.path.dirname(transformers.__file__))')
tar czf "$OUT/hf_src.tgz" -C "$TF" models/qwen3_next models/qwen3_5 models/qwen3_5_moe \
  modeling_rope_utils.py $(cd "$TF" && ls conversion_mapping.py core_model_loading.py 2>/dev/null)
ls -la /tmp/golden/*
exit $rc
