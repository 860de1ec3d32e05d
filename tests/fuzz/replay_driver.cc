// main() for a libFuzzer entry point in builds without libFuzzer (gcc, TSan):
// replays every seed file and a few thousand deterministic mutations of each,
// plus random inputs, so the entry points and their corpora (regression
// inputs included) run in every test pass in seconds.
//
//   replay_driver <file or directory>...   (arguments starting with '-' are
//                                            libFuzzer flags: ignored)
// Prints "N inputs (F files), no crash"; a crash or sanitizer report is the
// failure (bazel/fuzz_test_runner.sh checks both).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv)
    __attribute__((weak));

namespace {

using Bytes = std::vector<uint8_t>;

// Mutations per seed: enough to leave the happy path of every seed, small
// enough that a corpus of a hundred files replays in seconds under ASan.
constexpr int kMutationsPerSeed = 2000;
constexpr int kRandomInputs = 3000;
// Mutations touch the head only: formats keep their header there, and long
// inputs (a safetensors file) stay cheap.
constexpr size_t kMutatedHead = 4096;

void AddFile(const std::string& path, std::vector<Bytes>* seeds) {
  std::ifstream in(path, std::ios::binary);
  seeds->emplace_back(std::istreambuf_iterator<char>(in),
                      std::istreambuf_iterator<char>());
}

// Regular files of `path` (a file, or a directory and its subdirectories),
// sorted so that runs are reproducible.
void AddPath(const std::string& path, std::vector<Bytes>* seeds) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay_driver: cannot stat %s\n", path.c_str());
    std::exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    AddFile(path, seeds);
    return;
  }
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) AddPath(path + "/" + name, seeds);
}

Bytes Mutate(const Bytes& seed, std::mt19937& rng) {
  Bytes m(seed.begin(), seed.begin() + std::min(seed.size(), kMutatedHead));
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 5) {
      case 0:  // truncate
        m.resize(rng() % (m.size() + 1));
        break;
      case 1:  // insert a byte
        m.insert(m.begin() + rng() % (m.size() + 1),
                 static_cast<uint8_t>(rng()));
        break;
      case 2:  // flip one bit
        if (!m.empty()) m[rng() % m.size()] ^= uint8_t{1} << (rng() % 8);
        break;
      case 3:  // an interesting byte
        if (!m.empty()) {
          static constexpr uint8_t kInteresting[] = {
              0, 1, 0x7f, 0x80, 0xff, '"', '{', '}', '\\', '\n', ':', '-'};
          m[rng() % m.size()] = kInteresting[rng() % sizeof(kInteresting)];
        }
        break;
      default:  // a random byte
        if (!m.empty()) m[rng() % m.size()] = static_cast<uint8_t>(rng());
        break;
    }
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<Bytes> seeds;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    AddPath(argv[i], &seeds);
  }
  std::mt19937 rng(20240601);
  long runs = 0;
  for (const Bytes& seed : seeds) {
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    ++runs;
  }
  for (const Bytes& seed : seeds) {
    for (int i = 0; i < kMutationsPerSeed; ++i) {
      const Bytes m = Mutate(seed, rng);
      LLVMFuzzerTestOneInput(m.data(), m.size());
      ++runs;
    }
  }
  for (int i = 0; i < kRandomInputs; ++i) {
    Bytes r(rng() % 256);
    for (uint8_t& b : r) b = static_cast<uint8_t>(rng());
    LLVMFuzzerTestOneInput(r.data(), r.size());
    ++runs;
  }
  std::printf("%ld inputs (%zu files), no crash\n", runs, seeds.size());
  return 0;
}
