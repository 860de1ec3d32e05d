# Sourced from the repository root by a device call script
# (bench/results/run1*/call*.sh) on the GPU machine: sets out ($OUT or /tmp),
# t0 and gpu (the card's name, printed), unpacks .device
# (bench/unpack_device.sh) and puts .device/lib on LD_LIBRARY_PATH. Returns 2
# when the unpacking fails.
out=${OUT:-/tmp}
t0=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -1)
echo "card: $gpu"
bash bench/unpack_device.sh > /dev/null 2>&1 || return 2
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
