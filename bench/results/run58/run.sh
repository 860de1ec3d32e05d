# Run 58 (2026-12-04, thirteenth session): one device call (run tool, nvidia-h200, carry [".device"]).
# Builds here: head = e0a9424; wpdl = e0a9424 + a wait-first PDL flag and a WPDL line in --replay-only;
# raw = wpdl + the packed step on unnormalised q, k (rejected). Each packed with
#   tools/device_pack.sh --into NAME //bench:gdn_bench //gdn:decode_test, binaries gzipped.
OUT=$OUT bash bench/ab_on_device.sh --tests raw --passes 3 head wpdl raw
