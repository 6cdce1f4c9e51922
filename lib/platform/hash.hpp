// platform/hash.hpp — a small stable hash (FNV-1a, 64 bit) for cache keys and tree signatures.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sinew::detail {

class Hasher {
 public:
  Hasher& add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      state_ ^= c;
      state_ *= 0x100000001b3ULL;
    }
    // A separator so ("ab","c") and ("a","bc") differ.
    state_ ^= 0xff;
    state_ *= 0x100000001b3ULL;
    return *this;
  }
  Hasher& add(std::uint64_t v) { return add(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); }
  std::uint64_t value() const { return state_; }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(state_));
    return buf;
  }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

inline std::string hash_hex(std::string_view bytes) { return Hasher().add(bytes).hex(); }

}  // namespace sinew::detail
