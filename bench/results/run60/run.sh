# Run 60: the --overlap sweep with the ReplaySSM tiles (a build of 3c96945's parent with that sweep).
bash bench/unpack_device.sh; export LD_LIBRARY_PATH=$PWD/.device/lib
timeout 400 .device/ov2/gdn_bench --overlap > $OUT/overlap2.log 2>&1
