// kb/features.hpp — input features as the knowledge base stores them: `features`, a JSON object
// in the caller's order, and `feature_key`, the same object sorted by name (exact matching).
// Shared by the store (kb/store.cpp, exchange.cpp) and the migrations (migrate.cpp), which must
// write the same text.
#pragma once

#include <sinew/kb.hpp>

#include "kb/json.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail::kb {

inline json::Value features_value(const KbFeatures& features) {
  json::Value v{json::Value::Object{}};
  for (const auto& [name, value] : features) v.set(name, json::Value(value));
  return v;
}

inline std::string features_text(const KbFeatures& features) { return json::dump(features_value(features)); }

// The exact-match key: the features sorted by name.
inline std::string feature_key(KbFeatures features) {
  std::sort(features.begin(), features.end());
  return features_text(features);
}

// A stored features column read back without throwing: nothing when it is not a JSON object of
// numbers, with what is wrong in `why` when given.
inline std::optional<KbFeatures> parse_features(const std::string& text, std::string* why = nullptr) {
  auto refuse = [&](std::string what) -> std::optional<KbFeatures> {
    if (why) *why = std::move(what);
    return std::nullopt;
  };
  json::Value v;
  try {
    v = json::parse(text);
  } catch (const std::invalid_argument& e) {
    return refuse(std::string("features (") + e.what() + ")");
  }
  if (!v.is_object()) return refuse("features is not a JSON object");
  KbFeatures out;
  for (const auto& [name, value] : v.object()) {
    if (!value.is_number()) return refuse("feature '" + name + "' is not a number");
    out.emplace_back(name, value.number());
  }
  return out;
}

// Whether a feature says where the data lies ("<vector>.resident": bound to a resident array).
inline bool residency_feature(const std::string& name) {
  constexpr std::string_view suffix = ".resident";
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether two inputs' data lies in the same places: the same vectors resident, no other.
// Residency is a kind of input, not a distance: what was learned for data on the devices does not
// serve data on the host, nor the reverse (docs/decisions/148).
inline bool same_residency(const KbFeatures& a, const KbFeatures& b) {
  auto resident = [](const KbFeatures& features) {
    std::vector<std::string> names;
    for (const auto& [name, value] : features)
      if (residency_feature(name) && value != 0) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
  };
  return resident(a) == resident(b);
}

}  // namespace sinew::detail::kb
