#include "model/checkpoint.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/json_util.h"
#include "nlohmann/json.hpp"

namespace rollout::model {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A shard name from the index must be a plain file name in the directory.
bool IsPlainSafetensorsName(const std::string& name) {
  return !name.empty() && name.size() < 256 &&
         name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name[0] != '.' &&
         absl::EndsWith(name, ".safetensors");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Checkpoint>> Checkpoint::Open(
    const std::string& dir, const SafetensorsLimits& limits) {
  std::unique_ptr<Checkpoint> ckpt(new Checkpoint());
  ckpt->dir_ = dir;
  const std::string single = dir + "/model.safetensors";
  const std::string index_path = dir + "/model.safetensors.index.json";

  // Shard file name -> tensor names the index assigns to it (empty map for a
  // single file: take every tensor).
  std::map<std::string, std::vector<std::string>> shards;
  if (FileExists(single)) {
    shards["model.safetensors"];
  } else if (FileExists(index_path)) {
    ASSIGN_OR_RETURN(std::string text, ReadTextFile(index_path));
    ASSIGN_OR_RETURN(nlohmann::json index,
                     ParseJson(text, "model.safetensors.index.json"));
    auto map = index.is_object() ? index.find("weight_map") : index.end();
    if (!index.is_object() || map == index.end() || !map->is_object()) {
      return absl::DataLossError(absl::StrCat(
          index_path, ": missing 'weight_map' object of tensor -> shard"));
    }
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (!it->is_string() || !IsPlainSafetensorsName(it->get<std::string>())) {
        return absl::DataLossError(absl::StrCat(
            index_path, ": weight_map entry '", it.key().substr(0, 200),
            "' must name a .safetensors file in the directory, got ",
            it->dump().substr(0, 200)));
      }
      shards[it->get<std::string>()].push_back(it.key());
    }
    if (shards.empty()) {
      return absl::DataLossError(
          absl::StrCat(index_path, ": empty weight_map"));
    }
  } else {
    return absl::NotFoundError(absl::StrCat(
        dir, ": neither model.safetensors nor model.safetensors.index.json"));
  }

  for (const auto& [shard, names] : shards) {
    ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                     SafetensorsFile::Open(dir + "/" + shard, limits));
    const SafetensorsFile* f = file.get();
    for (const TensorInfo& t : f->header().tensors) {
      auto [it, inserted] = ckpt->tensors_.emplace(t.name, Entry{f, &t});
      if (!inserted) {
        return absl::DataLossError(
            absl::StrCat(dir, ": tensor '", t.name, "' is in both ",
                         it->second.file->path(), " and ", f->path()));
      }
    }
    for (const std::string& name : names) {
      auto it = ckpt->tensors_.find(name);
      if (it == ckpt->tensors_.end() || it->second.file != f) {
        return absl::DataLossError(
            absl::StrCat(index_path, ": tensor '", name, "' is mapped to ",
                         shard, " but that file does not contain it"));
      }
    }
    ckpt->files_.push_back(std::move(file));
  }
  return ckpt;
}

const Checkpoint::Entry* Checkpoint::Find(absl::string_view name) const {
  auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::vector<float>> Checkpoint::ReadFloat32(
    absl::string_view name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(dir_, ": no tensor '", name, "'"));
  }
  std::vector<float> out(static_cast<size_t>(e->info->numel()));
  absl::Status s =
      ToFloat32(e->info->dtype, e->file->Bytes(*e->info), absl::MakeSpan(out));
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", name, "': ", s.message()));
  }
  return out;
}

absl::StatusOr<absl::Span<const uint8_t>> Checkpoint::Bytes(
    absl::string_view name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(dir_, ": no tensor '", name, "'"));
  }
  return e->file->Bytes(*e->info);
}

}  // namespace rollout::model
