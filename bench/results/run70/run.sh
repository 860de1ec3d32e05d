# Run 70: the layer pair (gdn/layer_decode.h) and the ring-dtype route rule: the tests, then
# gdn_bench --layer (conv -> decode at B = 1-512, each overlap and the pair). Here (working tree of
# the commit that added gdn/layer_decode): rm -rf .device && tools/device_pack.sh --gzip
# then through the run tool (carry [".device"]):
bash bench/unpack_device.sh >/dev/null 2>&1; export LD_LIBRARY_PATH=$PWD/.device/lib; mkdir -p $OUT/l
for t in layer_decode_test conv_test decode_test; do timeout 250 .device/bin/$t > $OUT/l/$t.log 2>&1; done
timeout 250 .device/bin/gdn_bench --no-micro --layer > $OUT/l/layer.log 2>&1
