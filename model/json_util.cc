#include "model/json_util.h"

#include <cmath>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace rollout::model {
namespace {

using nlohmann::json;

// Maximum nesting depth of `text`, counting brackets outside strings. Malformed
// text is fine here: the parser reports it afterwards.
int MaxDepth(absl::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

const json* Find(const json& obj, absl::string_view key) {
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string TypeName(const json& v) { return v.type_name(); }

absl::Status WrongType(absl::string_view where, absl::string_view key,
                       absl::string_view want, const json& got) {
  return absl::InvalidArgumentError(absl::StrCat(
      where, ": field '", key, "' must be ", want, ", got ", TypeName(got)));
}

absl::StatusOr<int64_t> AsInt(const json& v, absl::string_view key,
                              absl::string_view where) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": field '", key, "' is out of range"));
    }
    return v.get<int64_t>();
  }
  // Some writers emit integral values as 4096.0.
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<int64_t>(d);
    }
  }
  return WrongType(where, key, "an integer", v);
}

}  // namespace

absl::StatusOr<json> ParseJson(absl::string_view text, absl::string_view what,
                               const JsonParseOptions& options) {
  if (MaxDepth(text) > options.max_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": JSON nested deeper than ", options.max_depth, " levels"));
  }
  // Keys seen per open object, innermost last (bounded by max_depth).
  std::vector<std::set<std::string>> open_objects;
  std::string duplicate;
  json::parser_callback_t check_keys =
      [&](int /*depth*/, json::parse_event_t event, json& parsed) {
        switch (event) {
          case json::parse_event_t::object_start:
            open_objects.emplace_back();
            break;
          case json::parse_event_t::object_end:
            if (!open_objects.empty()) open_objects.pop_back();
            break;
          case json::parse_event_t::key:
            if (!open_objects.empty() &&
                !open_objects.back().insert(parsed.get<std::string>()).second &&
                duplicate.empty()) {
              duplicate = parsed.get<std::string>();
            }
            break;
          default:
            break;
        }
        return true;
      };
  json result;
  try {
    result = json::parse(text.begin(), text.end(),
                         options.reject_duplicate_keys ? check_keys : nullptr);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": invalid JSON: ", e.what()));
  }
  if (!duplicate.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": key '", duplicate.substr(0, 200),
                     "' appears twice in one object"));
  }
  return result;
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path,
                                         int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::DataLossError(absl::StrCat("cannot read ", path));
  if (size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is ", size, " bytes, more than the limit of ", max_bytes));
  }
  in.seekg(0, std::ios::beg);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) {
    return absl::DataLossError(absl::StrCat("cannot read ", path));
  }
  return text;
}

absl::StatusOr<int64_t> GetInt(const json& obj, absl::string_view key,
                               absl::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": missing required field '", key, "'"));
  }
  return AsInt(*v, key, where);
}

absl::StatusOr<std::optional<int64_t>> GetOptionalInt(const json& obj,
                                                      absl::string_view key,
                                                      absl::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  absl::StatusOr<int64_t> i = AsInt(*v, key, where);
  if (!i.ok()) return i.status();
  return std::optional<int64_t>(*i);
}

absl::StatusOr<std::optional<double>> GetOptionalDouble(
    const json& obj, absl::string_view key, absl::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<double>();
  if (!v->is_number()) return WrongType(where, key, "a number", *v);
  return std::optional<double>(v->get<double>());
}

absl::StatusOr<std::optional<bool>> GetOptionalBool(const json& obj,
                                                    absl::string_view key,
                                                    absl::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return WrongType(where, key, "a boolean", *v);
  return std::optional<bool>(v->get<bool>());
}

absl::StatusOr<std::optional<std::string>> GetOptionalString(
    const json& obj, absl::string_view key, absl::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(where, key, "a string", *v);
  return std::optional<std::string>(v->get<std::string>());
}

absl::StatusOr<std::optional<std::vector<int64_t>>> GetOptionalIntOrIntList(
    const json& obj, absl::string_view key, absl::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<std::vector<int64_t>>();
  std::vector<int64_t> out;
  if (v->is_array()) {
    for (size_t i = 0; i < v->size(); ++i) {
      absl::StatusOr<int64_t> x =
          AsInt((*v)[i], absl::StrCat(key, "[", i, "]"), where);
      if (!x.ok()) return x.status();
      out.push_back(*x);
    }
  } else {
    absl::StatusOr<int64_t> x = AsInt(*v, key, where);
    if (!x.ok()) return x.status();
    out.push_back(*x);
  }
  return std::optional<std::vector<int64_t>>(std::move(out));
}

}  // namespace rollout::model
