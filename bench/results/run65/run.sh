# Run 65: cur = d824bfd, rel = d824bfd + index_loads_relaxed.patch (shipped in aea4a54 for the
# ReplaySSM and fold kernels only; their PTX is identical to rel's, the packed kernels' to cur's).
OUT=$OUT bash bench/ab_on_device.sh --tests rel --passes 3 cur rel
cuobjdump -sass -fun '_ZN7rollout3gdn8internal15GdnDecodeKernelINS1_4TileILi2ELi1ELi1EEELNS1_10DecodeModeE1EfLb1EEEvNS1_10DecodeArgsE' \
  .device/rel/gdn_bench | grep "LDG" | head -5
