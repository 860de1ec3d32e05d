#!/bin/bash
# Builds binaries here with `-c opt` and packs them, with the shared libraries
# the GPU machine lacks, into the git-ignored .device/ folder, for the device
# `run` tool (carry: [".device"]). See ../shared/docs/device.md.
#
#   tools/device_pack.sh                      # the GDN tests + benchmark
#   tools/device_pack.sh //pkg:target ...     # any cc_binary / cc_test
#
# The GPU machine (Ubuntu 24.04, CUDA 13) has glibc, libstdc++, libgcc_s and
# the CUDA libraries; everything else that ldd resolves (Abseil, Bazel's
# _solib_* libraries of our own cc_library targets, ...) is copied to
# .device/lib. Run there with LD_LIBRARY_PATH=$PWD/.device/lib.
set -euo pipefail
cd "$(dirname "$0")/.."

OUTPUT_BASE="${BAZEL_OUTPUT_BASE:-/root/.cache/bazel/ob_gdn}"
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(//gdn:reference_test //gdn:decode_test //gdn:conv_test
           //gdn:prefill_test //bench:gdn_bench)
fi

bazel --output_base="$OUTPUT_BASE" build -c opt --jobs=2 "${TARGETS[@]}"
BIN="$(bazel --output_base="$OUTPUT_BASE" info -c opt bazel-bin 2>/dev/null)"

rm -rf .device/bin .device/lib
mkdir -p .device/bin .device/lib
for t in "${TARGETS[@]}"; do
  path="${t#//}"
  path="${path/://}"
  cp "$BIN/$path" .device/bin/
  chmod u+w ".device/bin/$(basename "$path")"
  ldd "$BIN/$path" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | \
        ld-linux* | libstdc++.so* | libgcc_s.so* | libcuda.so* | \
        libcudart.so* | libcublas*.so*) continue ;;
    esac
    cp -L "$lib" .device/lib/
  done
done
chmod -R u+w .device
echo "packed into .device: $(ls .device/bin | tr '\n' ' ')"
du -sh .device
