// exec/byte_ranges.hpp — a set of byte ranges [first, end) of one array, kept sorted, disjoint
// and merged: where a resident array's copy is up to date (exec/resident_array.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace sinew::detail {

class ByteRanges {
 public:
  using Range = std::pair<std::size_t, std::size_t>;  // [first, end)

  ByteRanges() = default;
  ByteRanges(std::size_t first, std::size_t end) { add(first, end); }

  const std::vector<Range>& ranges() const { return ranges_; }
  bool empty() const { return ranges_.empty(); }

  void add(std::size_t first, std::size_t end) {
    if (first >= end) return;
    std::vector<Range> out;
    for (const Range& r : ranges_) {
      if (r.second < first || r.first > end) out.push_back(r);
      else {
        first = std::min(first, r.first);
        end = std::max(end, r.second);
      }
    }
    out.emplace_back(first, end);
    std::sort(out.begin(), out.end());
    ranges_ = std::move(out);
  }
  void add(const ByteRanges& other) {
    for (const Range& r : other.ranges_) add(r.first, r.second);
  }
  void remove(std::size_t first, std::size_t end) {
    if (first >= end) return;
    std::vector<Range> out;
    for (const Range& r : ranges_) {
      if (r.second <= first || r.first >= end) {
        out.push_back(r);
        continue;
      }
      if (r.first < first) out.emplace_back(r.first, first);
      if (r.second > end) out.emplace_back(end, r.second);
    }
    ranges_ = std::move(out);
  }
  void remove(const ByteRanges& other) {
    for (const Range& r : other.ranges_) remove(r.first, r.second);
  }
  // The part of [first, end) in the set.
  ByteRanges within(std::size_t first, std::size_t end) const {
    ByteRanges out;
    for (const Range& r : ranges_) {
      const std::size_t a = std::max(first, r.first), b = std::min(end, r.second);
      if (a < b) out.ranges_.emplace_back(a, b);
    }
    return out;
  }
  // The part of [first, end) not in the set.
  ByteRanges missing(std::size_t first, std::size_t end) const {
    ByteRanges out(first, end);
    out.remove(*this);
    return out;
  }
  bool covers(std::size_t first, std::size_t end) const { return missing(first, end).empty(); }
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const Range& r : ranges_) n += r.second - r.first;
    return n;
  }

 private:
  std::vector<Range> ranges_;
};

}  // namespace sinew::detail
