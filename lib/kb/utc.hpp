// kb/utc.hpp — the knowledge base's time stamps: UTC, ISO 8601 with milliseconds (created,
// updated, exported), or compact to the second for a file name (a corrupt file moved aside).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <string>

namespace sinew::detail::kb {

// `at` in the knowledge base's format (the planner stamps execution runs written later than taken).
inline std::string utc_text(std::chrono::system_clock::time_point at, bool compact = false) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  std::time_t seconds = std::time_t(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[40];
  if (compact) {
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  } else {
    std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(buf + n, sizeof buf - n, ".%03dZ", int(ms % 1000));
  }
  return buf;
}

inline std::string utc_now(bool compact = false) { return utc_text(std::chrono::system_clock::now(), compact); }

}  // namespace sinew::detail::kb
