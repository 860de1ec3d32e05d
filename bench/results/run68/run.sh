# Run 68: the decode conv kernel (ConvUpdateKernel) and the ReplaySSM overlap rule (kLaunch up to 128
# pairs), A/B in one call. Here: build "new" (the commit) and "oldconv" (the same with gdn/conv.cu of
# run 67's "trig" build: CausalConvKernel for decode too, with the trigger)
#   rm -rf .device && tools/device_pack.sh --gzip --into new //bench:gdn_bench //gdn:decode_test //gdn:conv_test
#   tools/device_pack.sh --gzip --into oldconv //bench:gdn_bench
# then through the run tool (carry [".device"]):
bash bench/unpack_device.sh >/dev/null 2>&1; export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p $OUT/l
timeout 200 .device/new/decode_test > $OUT/l/decode_test.log 2>&1; timeout 60 .device/new/conv_test > $OUT/l/conv_test.log 2>&1
for n in oldconv new new oldconv; do
  timeout 120 .device/$n/gdn_bench --no-micro --layer > $OUT/l/tmp.log 2>&1; cat $OUT/l/tmp.log >> $OUT/l/$n.log; done
timeout 200 .device/new/gdn_bench --no-micro --overlap > $OUT/l/overlap.log 2>&1; rm $OUT/l/tmp.log
