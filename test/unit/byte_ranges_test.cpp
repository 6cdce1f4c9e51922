// ByteRanges (lib/exec/byte_ranges.hpp): where a resident array's copy is up to date. Adding
// merges touching and overlapping ranges, removing splits them, within() and missing() cut a range.
#include "exec/byte_ranges.hpp"

#include <gtest/gtest.h>

using sinew::detail::ByteRanges;
using Ranges = std::vector<ByteRanges::Range>;

TEST(ByteRanges, AddMergesTouchingAndOverlapping) {
  ByteRanges r;
  r.add(10, 20);
  r.add(30, 40);
  EXPECT_EQ(r.ranges(), (Ranges{{10, 20}, {30, 40}}));
  r.add(20, 25);
  EXPECT_EQ(r.ranges(), (Ranges{{10, 25}, {30, 40}}));
  r.add(24, 31);
  EXPECT_EQ(r.ranges(), (Ranges{{10, 40}}));
  r.add(5, 5);  // empty: nothing
  EXPECT_EQ(r.bytes(), 30u);
}

TEST(ByteRanges, RemoveSplits) {
  ByteRanges r(0, 100);
  r.remove(40, 60);
  EXPECT_EQ(r.ranges(), (Ranges{{0, 40}, {60, 100}}));
  r.remove(0, 10);
  r.remove(90, 200);
  EXPECT_EQ(r.ranges(), (Ranges{{10, 40}, {60, 90}}));
  r.remove(ByteRanges(0, 1000));
  EXPECT_TRUE(r.empty());
}

TEST(ByteRanges, WithinAndMissing) {
  ByteRanges r(0, 10);
  r.add(20, 30);
  EXPECT_EQ(r.within(5, 25).ranges(), (Ranges{{5, 10}, {20, 25}}));
  EXPECT_EQ(r.missing(5, 25).ranges(), (Ranges{{10, 20}}));
  EXPECT_TRUE(r.covers(20, 30));
  EXPECT_FALSE(r.covers(9, 21));
  EXPECT_TRUE(r.missing(0, 10).empty());
}
