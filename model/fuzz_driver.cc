// A main() for the libFuzzer entry points when built without libFuzzer (gcc
// under Bazel): feeds random byte strings and single-byte mutations of the
// seed files given as arguments, so the entry points run in every test pass.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::vector<uint8_t>> seeds;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  }
  std::mt19937 rng(20240601);
  int runs = 0;
  for (const std::vector<uint8_t>& seed : seeds) {
    LLVMFuzzerTestOneInput(seed.data(), seed.size());
    // Mutations of the head of the file (the header lives there).
    const size_t head = std::min<size_t>(seed.size(), 4096);
    for (int iter = 0; iter < 3000 && head > 0; ++iter) {
      std::vector<uint8_t> m(seed.begin(), seed.begin() + head);
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        m[rng() % m.size()] = static_cast<uint8_t>(rng());
      }
      if (rng() % 4 == 0) m.resize(rng() % (m.size() + 1));
      LLVMFuzzerTestOneInput(m.data(), m.size());
      ++runs;
    }
  }
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> r(rng() % 64);
    for (uint8_t& b : r) b = static_cast<uint8_t>(rng());
    LLVMFuzzerTestOneInput(r.data(), r.size());
    ++runs;
  }
  std::printf("%d inputs, no crash\n", runs);
  return 0;
}
