# Run 67: the conv kernel's early trigger (griddepcontrol.launch_dependents), A/B in one call.
# Here (on 4418d34+ with the --layer mode of gdn_bench): build "trig" (conv.cu with the trigger)
#   rm -rf .device && tools/device_pack.sh --gzip --into trig //bench:gdn_bench //gdn:decode_test //gdn:conv_test
# and "notrig" (the same with the GridLaunchDependents() line of CausalConvKernel removed)
#   tools/device_pack.sh --gzip --into notrig //bench:gdn_bench
# then through the run tool (carry [".device"]):
bash bench/unpack_device.sh >/dev/null 2>&1; export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p $OUT/l
timeout 200 .device/trig/decode_test > $OUT/l/decode_test.log 2>&1; timeout 60 .device/trig/conv_test > $OUT/l/conv_test.log 2>&1
for p in 1 2; do for n in notrig trig; do [ $p = 2 ] && n=$([ $n = trig ] && echo notrig || echo trig)
  timeout 120 .device/$n/gdn_bench --no-micro --layer > $OUT/l/${n}_p$p.log 2>&1; done; done
