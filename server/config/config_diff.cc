#include "server/config/config_diff.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace rollout::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using rollout::v1::ReloadPolicy;

bool IsLeaf(const FieldDescriptor* f) {
  return f->is_repeated() || f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE;
}

ReloadPolicy OwnPolicy(const FieldDescriptor* f) {
  return f->options().GetExtension(rollout::v1::reload);
}

// Text of a leaf: "" when an optional is absent, "[a, b]" for repeated.
std::string LeafText(const Message& m, const FieldDescriptor* f) {
  const Reflection* r = m.GetReflection();
  std::string out;
  if (f->is_repeated()) {
    std::vector<std::string> items;
    for (int i = 0; i < r->FieldSize(m, f); ++i) {
      std::string item;
      google::protobuf::TextFormat::PrintFieldValueToString(m, f, i, &item);
      items.push_back(std::move(item));
    }
    return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  }
  if (f->has_presence() && !r->HasField(m, f)) return "";
  google::protobuf::TextFormat::PrintFieldValueToString(m, f, -1, &out);
  return out;
}

void Diff(const Message& a, const Message& b, const std::string& prefix,
          ReloadPolicy inherited, std::vector<FieldDiff>* out) {
  const Descriptor* d = a.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path =
        prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
    const ReloadPolicy own = OwnPolicy(f);
    const ReloadPolicy policy =
        own != rollout::v1::RELOAD_POLICY_UNSPECIFIED ? own : inherited;
    if (!IsLeaf(f)) {
      Diff(a.GetReflection()->GetMessage(a, f),
           b.GetReflection()->GetMessage(b, f), path, policy, out);
      continue;
    }
    std::string old_text = LeafText(a, f);
    std::string new_text = LeafText(b, f);
    if (old_text != new_text) {
      out->push_back({path, std::move(old_text), std::move(new_text), policy});
    }
  }
}

void Leaves(const Descriptor* d, const std::string& prefix,
            std::vector<std::string>* out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path =
        prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
    if (IsLeaf(f)) {
      out->push_back(path);
    } else {
      Leaves(f->message_type(), path, out);
    }
  }
}

// Resolves `path` to the chain of fields from ServerConfig down to a leaf.
bool FieldChain(absl::string_view path,
                std::vector<const FieldDescriptor*>* chain) {
  const Descriptor* d = rollout::v1::ServerConfig::descriptor();
  const std::vector<std::string> parts = absl::StrSplit(path, '.');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (d == nullptr) return false;  // walked past a leaf
    const FieldDescriptor* f = d->FindFieldByName(parts[i]);
    if (f == nullptr) return false;
    chain->push_back(f);
    d = IsLeaf(f) ? nullptr : f->message_type();
  }
  return !chain->empty() && IsLeaf(chain->back());
}

}  // namespace

std::vector<FieldDiff> DiffServerConfigs(
    const rollout::v1::ServerConfig& before,
    const rollout::v1::ServerConfig& after) {
  std::vector<FieldDiff> out;
  Diff(before, after, "", rollout::v1::RELOAD_POLICY_UNSPECIFIED, &out);
  return out;
}

std::vector<std::string> ServerConfigLeafPaths() {
  std::vector<std::string> out;
  Leaves(rollout::v1::ServerConfig::descriptor(), "", &out);
  return out;
}

ReloadPolicy ReloadPolicyOf(absl::string_view path) {
  std::vector<const FieldDescriptor*> chain;
  if (!FieldChain(path, &chain)) return rollout::v1::RELOAD_POLICY_UNSPECIFIED;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (OwnPolicy(*it) != rollout::v1::RELOAD_POLICY_UNSPECIFIED) {
      return OwnPolicy(*it);
    }
  }
  return rollout::v1::RELOAD_POLICY_UNSPECIFIED;
}

absl::Status CopyConfigField(const rollout::v1::ServerConfig& from,
                             absl::string_view path,
                             rollout::v1::ServerConfig* to) {
  std::vector<const FieldDescriptor*> chain;
  if (!FieldChain(path, &chain)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a leaf field of ServerConfig: ", path));
  }
  const Message* src = &from;
  Message* dst = to;
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    src = &src->GetReflection()->GetMessage(*src, chain[i]);
    dst = dst->GetReflection()->MutableMessage(dst, chain[i]);
  }
  const FieldDescriptor* leaf = chain.back();
  // Copy through a message holding only this field: MergeFrom then handles
  // every type, presence and repetition correctly.
  std::unique_ptr<Message> only(src->New());
  only->CopyFrom(*src);
  const Reflection* r = only->GetReflection();
  std::vector<const FieldDescriptor*> present;
  r->ListFields(*only, &present);
  for (const FieldDescriptor* f : present) {
    if (f != leaf) r->ClearField(only.get(), f);
  }
  dst->GetReflection()->ClearField(dst, leaf);
  dst->MergeFrom(*only);
  return absl::OkStatus();
}

}  // namespace rollout::server
