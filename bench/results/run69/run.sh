# Run 69: the documented command on the commit of the coefficient-route rule (1465435; doc/), then a
# same-call A/B of that rule (ab/: "head" = dcca3e8, "bin" = 1465435). Here:
#   rm -rf .device && git stash && tools/device_pack.sh --gzip --into head //bench:gdn_bench
#   git stash pop && tools/device_pack.sh --gzip
# then through the run tool (carry [".device"]):
bash bench/run_gdn_on_device.sh > /tmp/doc.out 2>&1
OUT=/tmp/abo bash bench/ab_on_device.sh --passes 3 head bin; cp /tmp/abo/ab.tgz $OUT/
