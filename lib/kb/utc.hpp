// kb/utc.hpp — the knowledge base's time stamps: UTC, ISO 8601 with milliseconds (created,
// updated, exported), or compact to the second for a file name (a corrupt file moved aside).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <string>

namespace sinew::detail::kb {

inline std::string utc_now(bool compact = false) {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
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

}  // namespace sinew::detail::kb
