#!/bin/bash
# Builds binaries here with `-c opt` and packs them, with the shared libraries
# the GPU machine lacks, into the git-ignored .device/ folder, for the device
# `run` tool (carry: [".device"]). See ../shared/docs/device.md.
#
#   tools/device_pack.sh                      # the GDN tests + benchmark
#   tools/device_pack.sh //pkg:target ...     # any cc_binary / cc_test
#   tools/device_pack.sh --into NAME [//pkg:target ...]
#       binaries into .device/NAME instead of .device/bin, keeping the other
#       folders and adding to .device/lib: one folder per build for A/B runs
#       (bench/ab_on_device.sh). .device/lib is shared: a library of our own
#       (today only the tests' CPU reference) comes from the last build packed.
#       The carry limit is 64 MiB (~10-12 MB per gdn_bench).
#   tools/device_pack.sh --gzip [--into NAME] [//pkg:target ...]   (either order)
#       the binaries gzipped (3-4x smaller: ~3.5 MB per gdn_bench), for A/B
#       runs of several builds; bench/unpack_device.sh (which the device
#       scripts call first) unpacks them on the GPU machine.
#
# The GPU machine (Ubuntu 24.04, CUDA 13) has glibc, libstdc++, libgcc_s and
# the CUDA libraries; everything else that ldd resolves (Abseil, Bazel's
# _solib_* libraries of our own cc_library targets, ...) is copied to
# .device/lib. Run there with LD_LIBRARY_PATH=$PWD/.device/lib.
set -euo pipefail
cd "$(dirname "$0")/.."

OUTPUT_BASE="${BAZEL_OUTPUT_BASE:-/root/.cache/bazel/ob_gdn}"
DEST=bin
GZIP_BINS=0
while [ $# -gt 0 ]; do
  case "$1" in
    --gzip) GZIP_BINS=1; shift ;;
    --into)
      DEST="${2:?--into needs a folder name}"
      case "$DEST" in
        lib | */* | .*) echo "device_pack: bad folder name '$DEST'" >&2; exit 2 ;;
      esac
      shift 2
      ;;
    *) break ;;
  esac
done
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(//gdn:reference_test //gdn:decode_test //gdn:conv_test
           //gdn:layer_decode_test //gdn:prefill_test //gdn:lifecycle_test
           //bench:gdn_bench)
fi

# The sources the build sees (written beside the binaries below; carry.sh
# warns when bin's differ from the tree's).
STAMP="$(tools/gdn_sources_stamp.sh)"
bazel --output_base="$OUTPUT_BASE" build -c opt --jobs=2 "${TARGETS[@]}"
BIN="$(bazel --output_base="$OUTPUT_BASE" info -c opt bazel-bin 2>/dev/null)"

if [ "$DEST" = bin ]; then
  rm -rf .device/bin .device/lib
else
  rm -rf ".device/$DEST"
fi
mkdir -p ".device/$DEST" .device/lib
for t in "${TARGETS[@]}"; do
  path="${t#//}"
  path="${path/://}"
  bin=".device/$DEST/$(basename "$path")"
  cp "$BIN/$path" "$bin"
  chmod u+w "$bin"
  if [ "$GZIP_BINS" = 1 ]; then gzip -f -6 "$bin"; fi
  ldd "$BIN/$path" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | \
        ld-linux* | libstdc++.so* | libgcc_s.so* | libcuda.so* | \
        libcudart.so* | libcublas*.so*) continue ;;
    esac
    cp -L "$lib" .device/lib/
  done
done
echo "$STAMP" > ".device/$DEST/sources.stamp"
chmod -R u+w .device
echo "packed into .device/$DEST: $(ls ".device/$DEST" | tr '\n' ' ')"
du -sh .device
