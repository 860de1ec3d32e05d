#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "model/json_util.h"
#include "nlohmann/json.hpp"

namespace rollout::model {
namespace {

using nlohmann::json;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("safetensors: ", what));
}

// A JSON value that is a non-negative integer fitting in int64.
bool AsNonNegative(const json& v, int64_t* out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(kInt64Max)) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  const int64_t i = v.get<int64_t>();
  if (i < 0) return false;
  *out = i;
  return true;
}

absl::StatusOr<TensorInfo> ParseEntry(const std::string& name, const json& e,
                                      int64_t data_size,
                                      const SafetensorsLimits& limits) {
  const std::string where = absl::StrCat("tensor '", name.substr(0, 200), "'");
  if (!e.is_object()) return Corrupt(absl::StrCat(where, " is not an object"));
  TensorInfo t;
  t.name = name;
  auto dtype = e.find("dtype");
  if (dtype == e.end() || !dtype->is_string()) {
    return Corrupt(absl::StrCat(where, ": missing or non-string 'dtype'"));
  }
  absl::StatusOr<Dtype> d = DtypeFromName(dtype->get<std::string>());
  if (!d.ok()) return Corrupt(absl::StrCat(where, ": ", d.status().message()));
  t.dtype = *d;

  auto shape = e.find("shape");
  if (shape == e.end() || !shape->is_array()) {
    return Corrupt(absl::StrCat(where, ": missing or non-list 'shape'"));
  }
  if (static_cast<int64_t>(shape->size()) > limits.max_rank) {
    return Corrupt(absl::StrCat(where, ": rank ", shape->size(),
                                " exceeds the limit ", limits.max_rank));
  }
  // numel * element size must fit in int64 (and so in the file).
  int64_t bytes = DtypeSize(t.dtype);
  bool overflow = false;
  for (const json& dim : *shape) {
    int64_t n;
    if (!AsNonNegative(dim, &n)) {
      return Corrupt(absl::StrCat(where, ": shape entry ", dim.dump(),
                                  " is not a non-negative integer"));
    }
    t.shape.push_back(n);
    if (n != 0 && bytes > kInt64Max / n) overflow = true;
    if (!overflow) bytes *= n;
  }
  const bool empty =
      std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end();
  if (overflow && !empty) {
    return Corrupt(absl::StrCat(where, ": shape ", t.ShapeString(),
                                " overflows the byte count"));
  }
  if (empty) bytes = 0;

  auto offsets = e.find("data_offsets");
  if (offsets == e.end() || !offsets->is_array() || offsets->size() != 2 ||
      !AsNonNegative((*offsets)[0], &t.begin) ||
      !AsNonNegative((*offsets)[1], &t.end)) {
    return Corrupt(absl::StrCat(
        where, ": 'data_offsets' must be two non-negative integers"));
  }
  if (t.begin > t.end) {
    return Corrupt(absl::StrCat(where, ": data_offsets [", t.begin, ", ", t.end,
                                "] are reversed"));
  }
  if (t.end > data_size) {
    return Corrupt(absl::StrCat(where, ": data_offsets [", t.begin, ", ", t.end,
                                "] reach past the data section of ", data_size,
                                " bytes (truncated file?)"));
  }
  if (t.end - t.begin != bytes) {
    return Corrupt(absl::StrCat(
        where, ": ", DtypeName(t.dtype), " ", t.ShapeString(), " needs ", bytes,
        " bytes but data_offsets span ", t.end - t.begin));
  }
  return t;
}

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // validated not to overflow at parse time
  return n;
}

std::string TensorInfo::ShapeString() const {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

const TensorInfo* SafetensorsHeader::Find(absl::string_view name) const {
  auto it = std::lower_bound(
      tensors.begin(), tensors.end(), name,
      [](const TensorInfo& t, absl::string_view n) { return t.name < n; });
  if (it == tensors.end() || it->name != name) return nullptr;
  return &*it;
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(
    absl::Span<const uint8_t> file, const SafetensorsLimits& limits) {
  if (file.size() < 8) {
    return Corrupt(absl::StrCat("file is ", file.size(),
                                " bytes, too short for the 8-byte header "
                                "length"));
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | file[i];
  if (n > static_cast<uint64_t>(limits.max_header_bytes)) {
    return Corrupt(absl::StrCat("header length ", n, " exceeds the limit of ",
                                limits.max_header_bytes, " bytes"));
  }
  if (n > file.size() - 8) {
    return Corrupt(absl::StrCat("header length ", n, " exceeds the file (",
                                file.size(), " bytes; truncated file?)"));
  }
  if (n < 2 || file[8] != '{') {
    return Corrupt("header does not start with a JSON object");
  }
  SafetensorsHeader header;
  header.data_offset = 8 + static_cast<int64_t>(n);
  header.data_size = static_cast<int64_t>(file.size()) - header.data_offset;

  absl::string_view text(reinterpret_cast<const char*>(file.data() + 8), n);
  absl::StatusOr<json> root = ParseJson(text, "safetensors header");
  if (!root.ok()) return Corrupt(root.status().message());
  if (!root->is_object()) return Corrupt("header is not a JSON object");
  if (static_cast<int64_t>(root->size()) > limits.max_tensors + 1) {
    return Corrupt(absl::StrCat("header lists ", root->size(),
                                " entries, more than the limit of ",
                                limits.max_tensors));
  }
  for (auto it = root->begin(); it != root->end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (!it->is_object()) return Corrupt("__metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (!m->is_string()) {
          return Corrupt(absl::StrCat("__metadata__ value of '",
                                      m.key().substr(0, 200),
                                      "' is not a string"));
        }
        header.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    if (name.empty() ||
        static_cast<int64_t>(name.size()) > limits.max_name_bytes) {
      return Corrupt(absl::StrCat("tensor name of ", name.size(),
                                  " bytes is empty or too long"));
    }
    ASSIGN_OR_RETURN(TensorInfo t,
                     ParseEntry(name, *it, header.data_size, limits));
    header.tensors.push_back(std::move(t));
  }
  // No two tensors may share bytes.
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : header.tensors) {
    if (t.nbytes() > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) {
              return a->begin < b->begin;
            });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      return Corrupt(absl::StrCat(
          "tensors '", by_offset[i - 1]->name.substr(0, 200), "' and '",
          by_offset[i]->name.substr(0, 200), "' overlap in the data section"));
    }
  }
  // JSON object keys come out sorted already; keep the guarantee explicit.
  std::sort(
      header.tensors.begin(), header.tensors.end(),
      [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  return header;
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(
    const std::string& path, const SafetensorsLimits& limits) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return absl::Status(
        err == ENOENT ? absl::StatusCode::kNotFound
                      : absl::StatusCode::kPermissionDenied,
        absl::StrCat("cannot open ", path, ": ", std::strerror(err)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file"));
  }
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot mmap ", path, ": ", std::strerror(err)));
    }
    // Loaders read each tensor once, front to back: ask for readahead.
    ::madvise(p, file->size_, MADV_SEQUENTIAL);
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsHeader(
      absl::MakeConstSpan(file->data_, file->size_), limits);
  if (!header.ok()) {
    return absl::Status(header.status().code(),
                        absl::StrCat(path, ": ", header.status().message()));
  }
  file->header_ = *std::move(header);
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

absl::Span<const uint8_t> SafetensorsFile::Bytes(
    const TensorInfo& tensor) const {
  return absl::MakeConstSpan(data_ + header_.data_offset + tensor.begin,
                             static_cast<size_t>(tensor.nbytes()));
}

absl::Status ToFloat32(Dtype dtype, absl::Span<const uint8_t> bytes,
                       absl::Span<float> out) {
  if (!IsFloatConvertible(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot convert ", DtypeName(dtype), " to float32"));
  }
  const size_t size = static_cast<size_t>(DtypeSize(dtype));
  if (bytes.size() != out.size() * size) {
    return absl::InvalidArgumentError(
        absl::StrCat("ToFloat32: ", bytes.size(), " bytes of ",
                     DtypeName(dtype), " for ", out.size(), " floats"));
  }
  const uint8_t* p = bytes.data();
  switch (dtype) {
    case Dtype::kF32:
      std::memcpy(out.data(), p, bytes.size());
      break;
    case Dtype::kBF16:
      for (size_t i = 0; i < out.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = Bf16ToFloat(h);
      }
      break;
    case Dtype::kF16:
      for (size_t i = 0; i < out.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = Fp16ToFloat(h);
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

}  // namespace rollout::model
