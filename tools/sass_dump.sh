#!/bin/bash
# Disassembles the sm_90a SASS of one CUDA source here, without a GPU: what
# ptxas made of a kernel (instruction order, where loads and waits landed),
# for the sessions that cannot run ncu.
#
#   tools/sass_dump.sh gdn/decode_replay_f32.cu > /tmp/f32.sass
#   tools/sass_dump.sh gdn/decode_replay_f32.cu \
#     'Tile<(int)2, (int)1, (int)1>, (rollout::gdn::internal::DecodeMode)1'
#       only the kernels whose demangled name contains the filter (here the
#       bv8 ReplaySSM step: fp32 ring, staged and not)
#
# The CUDA toolkit here (/usr/local/cuda, nvcc 13.0) has no disassembler.
# Debian 12's non-free nvidia-cuda-toolkit (11.8) has nvdisasm; its .deb is
# fetched once from deb.debian.org (apt-get download, ~84 MB, nothing is
# installed) into $SASS_TOOLS (default ~/.cache/rollout-sass) and only
# nvdisasm and cu++filt are kept. nvdisasm 11.8 reads the older cubin header,
# so the header of the nvcc 13.0 cubin is rewritten to it (ELF ABI version 7,
# e_flags = SM90 | virtual SM90 | 64-bit addresses | unified texture mode);
# the instructions themselves decode (checked against run 63's ncu SASS of
# the same kernels: same opcodes and operands). A tool for reading, not for
# builds: nothing in the repository's build depends on it.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: tools/sass_dump.sh SRC.cu [NAME_FILTER]}
filter=${2:-}
tools=${SASS_TOOLS:-$HOME/.cache/rollout-sass}
if [ ! -x "$tools/nvdisasm" ]; then
  echo "sass_dump.sh: fetching nvdisasm (Debian 12 non-free nvidia-cuda-toolkit)" >&2
  work=$(mktemp -d)
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$tools"
  echo "deb http://deb.debian.org/debian bookworm non-free" > "$work/sources.list"
  apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=-
            -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
  apt-get "${apt_opts[@]}" update > /dev/null 2>&1
  (cd "$work" && apt-get "${apt_opts[@]}" download nvidia-cuda-toolkit > /dev/null 2>&1)
  dpkg-deb -x "$work"/nvidia-cuda-toolkit_*.deb "$work/x"
  cp "$work/x/usr/bin/nvdisasm" "$work/x/usr/bin/cu++filt" "$tools/"
  rm -rf "$work"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -O3 -I. \
  -cubin -o "$tmp/k.cubin" "$src"
python3 - "$tmp/k.cubin" <<'EOF'
import struct, sys
path = sys.argv[1]
b = bytearray(open(path, 'rb').read())
assert b[:4] == b'\x7fELF', 'not an ELF file'
b[8] = 7  # EI_ABIVERSION of the cubins nvdisasm 11.8 reads
struct.pack_into('<I', b, 0x30, 0x005a055a)  # e_flags (64-bit ELF)
open(path, 'wb').write(b)
EOF
"$tools/nvdisasm" -c "$tmp/k.cubin" > "$tmp/k.sass"
if [ -z "$filter" ]; then
  cat "$tmp/k.sass"
  exit 0
fi
# Keep the sections of the kernels whose demangled name contains the filter.
python3 - "$tmp/k.sass" "$filter" "$tools/cu++filt" <<'EOF'
import subprocess, sys
path, filt, cxxfilt = sys.argv[1:]
lines = open(path).readlines()
def kernel_name(line):  # '.text.NAME:' -> NAME
    return line[len('.text.'):].rstrip(':\n')
names = [kernel_name(l) for l in lines if l.startswith('.text.')]
# One cu++filt call for every kernel name (it demangles one per input line).
demangled = dict(zip(names, subprocess.run(
    [cxxfilt], input='\n'.join(names) + '\n', capture_output=True,
    text=True).stdout.splitlines()))
keep = False
for line in lines:
    if line.startswith('//----'):  # the next section's header
        keep = False
    if line.startswith('.text.'):
        dem = demangled[kernel_name(line)]
        keep = filt in dem
        if keep:
            print('// ' + dem)
    if keep:
        sys.stdout.write(line)
EOF
