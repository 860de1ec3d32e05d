#!/bin/bash
# Builds ThreadSanitizer-instrumented copies of the Debian 12 abseil and gRPC shared libraries that our
# binaries load, for `bazel test --config=tsan_full` (docs/TESTING.md, "TSan and gRPC").
#
# Why: Debian's libabsl_* / libgrpc* are not built with TSan, so the happens-before edges of their
# internal synchronisation (absl::Mutex, gRPC's completion queues and combiners) are invisible to it and
# in-process gRPC tests show hundreds of false reports. These copies are built from Debian's own source
# packages of exactly the installed versions (Debian patches applied by dpkg-source), with Debian's
# CMake options (debian/rules), so sonames, the absl inline namespace (`debian3`, a Debian patch to
# absl/base/options.h) and the exported symbols are those our binaries were linked against. Only
# the compiler and its flags differ: clang-14 -fsanitize=thread -O1.
#
#   bash tools/tsan_libs.sh      # one time per machine; idempotent (a re-run checks and exits)
#
# Needs: what tools/setup.sh installs (clang-14; libabsl-dev, libprotobuf-dev, libgrpc++-dev and
# through it libssl-dev, libc-ares-dev, libre2-dev, zlib1g-dev; protobuf-compiler-grpc), plus cmake
# and ninja-build, and network access to deb.debian.org (source packages only). Nothing outside the two places below is
# written (no /etc/apt change: apt-get runs with its own source list and lists directory).
#   work dir (sources, build trees):  $TSAN_LIBS_WORK, default /tmp/rollout_tsan_libs
#   output (the .so files):          .tools/tsan/lib   (git-ignored; .bazelrc's tsan_full points there)
# Parallelism: $TSAN_LIBS_JOBS (default 2), run under `nice -n 10`; measured duration in docs/TESTING.md.
set -euo pipefail

# All in one function, so bash parses the whole file before running any of it: editing (or
# updating) the script while a long build runs cannot change what the running copy does.
main() {
cd "$(dirname "$0")/.."
REPO=$(pwd)

WORK=${TSAN_LIBS_WORK:-/tmp/rollout_tsan_libs}
OUT=$REPO/.tools/tsan/lib
JOBS=${TSAN_LIBS_JOBS:-2}
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
START=$(date +%s)

stage() { echo "tsan_libs: [$(($(date +%s) - START)) s] $*"; }
die() {
  echo "tsan_libs: error: $*" >&2
  exit 1
}

for tool in clang-14 clang++-14 cmake ninja dpkg-source apt-get nm; do
  command -v "$tool" >/dev/null || die "'$tool' not found (tools/setup.sh; cmake and ninja-build for this script)"
done

# The installed binary package -> its source package version. gRPC's binary is a binNMU
# (1.51.1-3+b1): same source as 1.51.1-3, rebuilt; the "+bN" suffix is not part of the source version.
installed_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null || die "package $1 is not installed"
}
ABSL_VERSION=$(installed_version libabsl20220623)
GRPC_VERSION=$(installed_version libgrpc29)
ABSL_SRC_VERSION=${ABSL_VERSION%+b[0-9]*}
GRPC_SRC_VERSION=${GRPC_VERSION%+b[0-9]*}
STAMP="abseil=$ABSL_SRC_VERSION grpc=$GRPC_SRC_VERSION flags=tsan-O1-v1"

# The absolute rpath of --config=tsan_full (.bazelrc try-imports this file). Resolved, so that a
# worktree whose .tools is a symlink writes the path of the real directory.
write_bazelrc() {
  cat >"$REPO/.tools/tsan/tsan.bazelrc" <<EOF
# Written by tools/tsan_libs.sh: where --config=tsan_full binaries load absl and gRPC from.
build:tsan_full --linkopt=-Wl,-rpath,$(realpath "$OUT")
# The libraries are no Bazel input: their stamp in the tests' environment makes a rebuild of them
# invalidate cached tsan_full test results.
build:tsan_full --test_env=ROLLOUT_TSAN_LIBS=$(sed 's/ /,/g' "$OUT/.stamp")
EOF
}

if [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$STAMP" ]; then
  write_bazelrc
  stage "up to date in $OUT ($STAMP)"
  exit 0
fi

# ---- 1. sources: Debian's source packages of exactly the installed versions ----
mkdir -p "$WORK/apt/lists/partial" "$WORK/src"
cat >"$WORK/apt/sources.list" <<'EOF'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm-updates main
deb-src http://deb.debian.org/debian-security bookworm-security main
EOF
APT=(apt-get -q -o Dir::Etc::SourceList="$WORK/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o Dir::State::Lists="$WORK/apt/lists" -o Dir::Cache="$WORK/apt/cache" -o APT::Sandbox::User=root)
fetch() { # package version -> extracted directory name printed
  local pkg=$1 ver=$2 upstream=${2%-*}
  local dir="$WORK/src/$pkg-$upstream"
  if [ ! -f "$dir/.extracted" ]; then
    (cd "$WORK/src" && "${APT[@]}" source --download-only "$pkg=$ver" >/dev/null) ||
      die "apt-get source $pkg=$ver failed (network, or the archive no longer serves this version)"
    rm -rf "$dir"
    # -x applies debian/patches (3.0 quilt), as a Debian build would.
    (cd "$WORK/src" && dpkg-source -q -x "${pkg}_${ver#*:}.dsc" "$dir" 2>&1 | grep -v '^gpgv:' || true)
    # (gpgv cannot check the maintainer's signature without debian-keyring; the files' hashes were
    # checked by apt-get against the archive's signed Release file.)
    touch "$dir/.extracted"
  fi
}
stage "fetching sources: abseil $ABSL_SRC_VERSION, grpc $GRPC_SRC_VERSION (deb.debian.org)"
"${APT[@]}" update >/dev/null || die "apt-get update of the deb-src lists failed (network?)"
fetch abseil "$ABSL_SRC_VERSION"
fetch grpc "$GRPC_SRC_VERSION"
ABSL_DIR="$WORK/src/abseil-${ABSL_SRC_VERSION%-*}"
GRPC_DIR="$WORK/src/grpc-${GRPC_SRC_VERSION%-*}"
cmp -s "$ABSL_DIR/absl/base/options.h" /usr/include/absl/base/options.h ||
  die "$ABSL_DIR/absl/base/options.h differs from the installed one: the ABI would not match"

# ---- common compiler settings ----
# -O1 and frame pointers: as our own --config=tsan code. -gline-tables-only: TSan's reports need file and
# line only; full -g would double the build time of gRPC for nothing a report shows.
SAN_FLAGS="-fsanitize=thread -O1 -gline-tables-only -fno-omit-frame-pointer"
CMAKE_COMMON=(
  -G Ninja
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
  -DCMAKE_BUILD_TYPE=None
  "-DCMAKE_C_FLAGS=$SAN_FLAGS" "-DCMAKE_CXX_FLAGS=$SAN_FLAGS"
  # The runtime lives in the executable (clang links it there); shared libraries leave the
  # __tsan_* symbols undefined, so no -fsanitize=thread at link time and no -z defs.
  # No RPATH/RUNPATH in the libraries: a RUNPATH would stop the loader from using the executable's
  # DT_RPATH (.bazelrc tsan_full) for their own dependencies, e.g. libgrpc.so -> libabsl_*.
  -DCMAKE_SKIP_RPATH=ON
  -DCMAKE_INSTALL_LIBDIR="lib/$MULTIARCH"
)
build() { # dir target...
  local dir=$1
  shift
  nice -n 10 ninja -C "$dir" -j "$JOBS" "$@" >"$dir/ninja.log" 2>&1 ||
    die "build failed in $dir (tail of $dir/ninja.log:)$(echo && tail -30 "$dir/ninja.log")"
}

# ---- 2. abseil: debian/rules' shared configuration ----
stage "abseil: configure (debian/rules: -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON)"
cmake -S "$ABSL_DIR" -B "$WORK/build/abseil" "${CMAKE_COMMON[@]}" \
  -DCMAKE_INSTALL_PREFIX="$WORK/install/abseil" \
  -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF >"$WORK/abseil-cmake.log" 2>&1 ||
  die "abseil cmake failed: $WORK/abseil-cmake.log"
stage "abseil: build (-j$JOBS, nice 10)"
build "$WORK/build/abseil"
ninja -C "$WORK/build/abseil" install >/dev/null

# ---- 3. gRPC: debian/rules' COMMON_BUILD_FLAGS (shared), only the libraries our binaries load ----
# Against the installed abseil/protobuf/re2/c-ares/openssl/zlib headers (gRPC_*_PROVIDER=package, as
# Debian); at run time the loader picks the instrumented absl from the same directory.
GRPC_TARGETS=(gpr upb address_sorting grpc grpc++ grpc++_reflection)
# libgrpc++_reflection's sources are generated by protoc + grpc_cpp_plugin. Building the plugin needs
# libprotoc-dev, which our build does not otherwise need, so the installed plugin of the same version
# (protobuf-compiler-grpc) is used: gRPC's CMakeLists looks the plugin up with find_program when
# CMAKE_CROSSCOMPILING is set, which an explicit CMAKE_SYSTEM_NAME does. Protobuf_PROTOC_LIBRARY only
# satisfies the configure check of the (unbuilt) plugin targets.
stage "grpc: configure (debian/rules COMMON_BUILD_FLAGS, -DBUILD_SHARED_LIBS=ON, no tests)"
cmake -S "$GRPC_DIR" -B "$WORK/build/grpc" "${CMAKE_COMMON[@]}" \
  -DCMAKE_INSTALL_PREFIX="$WORK/install/grpc" \
  -DBUILD_SHARED_LIBS=ON -DgRPC_BUILD_TESTS=OFF \
  -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package -DgRPC_BENCHMARK_PROVIDER=package \
  -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_RE2_PROVIDER=package -DgRPC_SSL_PROVIDER=package \
  -DgRPC_ZLIB_PROVIDER=package -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF \
  -DgRPC_INSTALL_LIBDIR="lib/$MULTIARCH" \
  -DgRPC_BUILD_GRPC_CSHARP_PLUGIN=OFF -DgRPC_BUILD_GRPC_NODE_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_OBJECTIVE_C_PLUGIN=OFF -DgRPC_BUILD_GRPC_PHP_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_PYTHON_PLUGIN=OFF -DgRPC_BUILD_GRPC_RUBY_PLUGIN=OFF \
  -DgRPC_BUILD_GRPC_CPP_PLUGIN=OFF -DCMAKE_SYSTEM_NAME=Linux \
  -DProtobuf_PROTOC_LIBRARY="$(ls /usr/lib/"$MULTIARCH"/libprotoc.so.* | head -1)" \
  >"$WORK/grpc-cmake.log" 2>&1 || {
  rm -rf "$WORK/build/grpc" # CMAKE_SYSTEM_NAME etc. are only read by a fresh configure
  die "grpc cmake failed: $WORK/grpc-cmake.log"
}
stage "grpc: build ${GRPC_TARGETS[*]} (-j$JOBS, nice 10)"
build "$WORK/build/grpc" "${GRPC_TARGETS[@]}"

# ---- 4. install into .tools/tsan/lib and check the ABI ----
stage "installing into $OUT"
rm -rf "$OUT.new"
mkdir -p "$OUT.new"
cp -a "$WORK/install/abseil/lib/$MULTIARCH"/libabsl_*.so.* "$OUT.new/"
for t in "${GRPC_TARGETS[@]}"; do
  cp -a "$WORK/build/grpc/lib$t.so".* "$OUT.new/"
done
# Every soname must be the system one, and every symbol the system library exports must be exported
# by ours: a binary linked against Debian's library may reference any of them, and a missing one
# would fail at load or call time. Not compared, because gcc (Debian's build) and clang emit them
# differently and no binary can need them from the library:
#   V/W (weak): inline functions and template instances; a binary that uses one emits its own copy;
#   u (gnu_unique, gcc only) and _ZGV*: inline statics and their guards, likewise in every user;
#   _ZGR*: the temporary a static reference is bound to, used only by its defining file;
#   C1 (complete-object constructor) whose C2 (base-object) we export: clang omits C1 for abstract
#   classes, which are never complete objects.
for lib in "$OUT.new"/*.so.*; do
  [ -L "$lib" ] && continue
  soname=$(objdump -p "$lib" | awk '/SONAME/{print $2}')
  sys=/usr/lib/$MULTIARCH/$soname
  [ -e "$sys" ] || die "$(basename "$lib"): soname $soname has no system counterpart $sys"
  ours=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
  missing=$(comm -23 <(nm -D --defined-only "$sys" | awk '$2 !~ /^[vVwWu]$/ && $3 !~ /^_ZG[RV]/ {print $3}' | sort -u) \
    <(echo "$ours") | while read -r sym; do
    if [[ $sym == *C1E* ]] && grep -qxF "${sym/C1E/C2E}" <<<"$ours"; then continue; fi
    echo "$sym"
  done)
  [ -z "$missing" ] || die "$soname lacks $(echo "$missing" | wc -l) symbols of $sys, e.g. $(echo "$missing" | head -3 | tr '\n' ' ')"
done
for sys in /usr/lib/"$MULTIARCH"/libabsl_*.so.20220623; do
  [ -e "$OUT.new/$(basename "$sys")" ] || die "no instrumented $(basename "$sys")"
done
echo "$STAMP" >"$OUT.new/.stamp"
rm -rf "$OUT"
mv "$OUT.new" "$OUT"
write_bazelrc
stage "done: $(ls "$OUT" | grep -c '\.so\.[0-9]*$') sonames in $OUT ($STAMP)"
}

main "$@"; exit # one line: nothing after it is ever read
