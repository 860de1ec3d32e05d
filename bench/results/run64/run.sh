# Run 64: cur = d824bfd, idx = d824bfd + index_loads_volatile.patch (rejected).
OUT=$OUT bash bench/ab_on_device.sh --tests idx --passes 3 cur idx
cuobjdump -sass -fun '_ZN7rollout3gdn8internal15GdnDecodeKernelINS1_4TileILi2ELi1ELi1EEELNS1_10DecodeModeE1EfLb1EEEvNS1_10DecodeArgsE' \
  .device/idx/gdn_bench | grep -n "LDG\|BRA\|LDGSTS" | head -14
