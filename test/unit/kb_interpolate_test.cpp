// test/unit/kb_interpolate_test.cpp — derivation: the nearest neighbour over normalised
// features (a feature with a huge range must not dominate), ties, skipped entries, and the
// inverse-distance weights.
#include <sinew/error.hpp>
#include <sinew/kb.hpp>

#include "kb/kb_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using kbtest::config;
using kbtest::key;
using sinew::KbEntry;
using sinew::KbFeatures;

KbEntry known(std::int64_t id, KbFeatures features, sinew::Config c, std::string updated = "2024-01-01T00:00:00.000Z") {
  auto e = kbtest::entry(key(), std::move(features), std::move(c), 1);
  e.id = id;
  e.updated = std::move(updated);
  return e;
}

TEST(KbNearestNeighbour, PicksTheClosestSize) {
  std::vector<KbEntry> kb = {
      known(1, {{"n", 1000}}, config({0.1, 0.9})),
      known(2, {{"n", 2000}}, config({0.2, 0.8}, "L2", 2)),
      known(3, {{"n", 4000}}, config({0.4, 0.6})),
  };
  sinew::NearestNeighbour nn;
  auto d = nn.derive(kb, {{"n", 2100}});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->source, 2);
  EXPECT_EQ(d->config, config({0.2, 0.8}, "L2", 2));
  EXPECT_EQ(d->method, "nearest");
  EXPECT_NEAR(d->distance, 100.0 / 3000.0, 1e-12);  // normalised by the range 1000..4000

  EXPECT_EQ(nn.derive(kb, {{"n", 10}})->source, 1);
  EXPECT_EQ(nn.derive(kb, {{"n", 1e9}})->source, 3);
  auto exact = nn.derive(kb, {{"n", 4000}});
  EXPECT_EQ(exact->source, 3);
  EXPECT_EQ(exact->distance, 0);
}

TEST(KbNearestNeighbour, HugeRangeFeatureDoesNotDominate) {
  // "bytes" spans 0..5.1e8, "iterations" 0..10. In raw units entry 1 is nearest (it differs by
  // 1e7 bytes and 10 iterations); relative to each feature's range entry 2 is (it differs by a
  // fifth of the byte range and not at all in iterations, while entry 1 is the whole iteration
  // range away).
  std::vector<KbEntry> kb = {
      known(1, {{"bytes", 5.0e8}, {"iterations", 0}}, config({0.1, 0.9})),
      known(2, {{"bytes", 4.0e8}, {"iterations", 10}}, config({0.2, 0.8})),
      known(3, {{"bytes", 0}, {"iterations", 5}}, config({0.3, 0.7})),
  };
  KbFeatures query = {{"bytes", 5.1e8}, {"iterations", 10}};
  double raw1 = std::hypot(5.1e8 - 5.0e8, 10.0), raw2 = std::hypot(5.1e8 - 4.0e8, 0.0);
  ASSERT_LT(raw1, raw2);  // the trap is real
  auto d = sinew::NearestNeighbour().derive(kb, query);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->source, 2);
  EXPECT_NEAR(d->distance, 1.1e8 / 5.1e8, 1e-12);
}

TEST(KbNearestNeighbour, FeaturesMatchByNameAndIncompleteEntriesAreSkipped) {
  std::vector<KbEntry> kb = {
      known(1, {{"height", 100}, {"width", 100}}, config({0.1, 0.9})),
      known(2, {{"width", 500}}, config({0.2, 0.8})),  // no height: skipped even though closer
      known(3, {{"width", 900}, {"height", 900}, {"depth", 3}}, config({0.3, 0.7})),  // extra: ignored
  };
  auto d = sinew::NearestNeighbour().derive(kb, {{"width", 500}, {"height", 500}});
  ASSERT_TRUE(d.has_value());
  EXPECT_NE(d->source, 2);
  // Order of the query's features does not matter either.
  auto d2 = sinew::NearestNeighbour().derive(kb, {{"height", 800}, {"width", 800}});
  EXPECT_EQ(d2->source, 3);

  EXPECT_FALSE(sinew::NearestNeighbour().derive(kb, {{"colour", 1}}).has_value());
  EXPECT_FALSE(sinew::NearestNeighbour().derive({}, {{"width", 1}}).has_value());
}

TEST(KbNearestNeighbour, TiesGoToTheMostRecentlyUpdated) {
  std::vector<KbEntry> kb = {
      known(1, {{"n", 1000}}, config({0.1, 0.9}), "2024-01-01T00:00:00.000Z"),
      known(2, {{"n", 3000}}, config({0.3, 0.7}), "2024-06-01T00:00:00.000Z"),
      known(3, {{"n", 1000}}, config({0.5, 0.5}), "2023-01-01T00:00:00.000Z"),  // same place as 1, older
  };
  EXPECT_EQ(sinew::NearestNeighbour().derive(kb, {{"n", 2000}})->source, 2);
  EXPECT_EQ(sinew::NearestNeighbour().derive(kb, {{"n", 1000}})->source, 1);
  std::swap(kb[0].updated, kb[1].updated);
  EXPECT_EQ(sinew::NearestNeighbour().derive(kb, {{"n", 2000}})->source, 1);
}

TEST(KbInverseDistance, WeightsSharesByInverseSquaredDistance) {
  std::vector<KbEntry> kb = {
      known(1, {{"n", 1000}}, config({0.2, 0.8}, "L2", 3)),
      known(2, {{"n", 4000}}, config({0.6, 0.4}, "none", 1)),
  };
  // Query at 1750: distances 750 and 2250 (ratio 1:3), weights 9:1.
  auto d = sinew::InverseDistance(4, 2).derive(kb, {{"n", 1750}});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->method, "inverse_distance");
  EXPECT_EQ(d->source, 1);
  EXPECT_EQ(d->config.fission, "L2");  // from the nearest
  EXPECT_EQ(d->config.overlap, 3u);
  ASSERT_EQ(d->config.shares.size(), 2u);
  EXPECT_NEAR(d->config.shares[0], (9 * 0.2 + 1 * 0.6) / 10, 1e-12);
  EXPECT_NEAR(d->config.shares[1], (9 * 0.8 + 1 * 0.4) / 10, 1e-12);
  EXPECT_NEAR(d->distance, 750.0 / 3000.0, 1e-12);

  // Midway: the plain average. Power 1 at 1:3 gives weights 3:1.
  auto mid = sinew::InverseDistance().derive(kb, {{"n", 2500}});
  EXPECT_NEAR(mid->config.shares[0], 0.4, 1e-12);
  auto p1 = sinew::InverseDistance(4, 1).derive(kb, {{"n", 1750}});
  EXPECT_NEAR(p1->config.shares[0], (3 * 0.2 + 1 * 0.6) / 4, 1e-12);

  // An exact match is returned as is.
  auto exact = sinew::InverseDistance().derive(kb, {{"n", 4000}});
  EXPECT_EQ(exact->config, config({0.6, 0.4}, "none", 1));
  EXPECT_EQ(exact->distance, 0);
}

TEST(KbInverseDistance, UsesTheKNearestWithTheSameDeviceCount) {
  std::vector<KbEntry> kb = {
      known(1, {{"n", 1000}}, config({0.2, 0.8})),
      known(2, {{"n", 2200}}, config({0.5, 0.25, 0.25})),  // another device count than the nearest: skipped
      known(3, {{"n", 3000}}, config({0.6, 0.4})),
      known(4, {{"n", 9000}}, config({1.0, 0.0})),  // beyond k = 2
  };
  auto d = sinew::InverseDistance(2, 2).derive(kb, {{"n", 1500}});
  ASSERT_TRUE(d.has_value());
  ASSERT_EQ(d->config.shares.size(), 2u);
  // Distances 500 and 1500 (k = 2 of the two-device entries): weights 9:1.
  EXPECT_NEAR(d->config.shares[0], (9 * 0.2 + 1 * 0.6) / 10, 1e-12);
  EXPECT_NEAR(d->config.shares[0] + d->config.shares[1], 1.0, 1e-12);
}

// One spelling per interpolator (RuntimeOptions::interpolation, $SINEW_INTERPOLATOR): its name.
TEST(KbInterpolator, MadeByName) {
  using sinew::Interpolation;
  auto by_name = [](const char* name) {
    return sinew::make_interpolator(sinew::parse::choice<Interpolation>(name, "SINEW_INTERPOLATOR"));
  };
  EXPECT_EQ(by_name("nearest")->name(), "nearest");
  EXPECT_EQ(by_name("inverse_distance")->name(), "inverse_distance");
  EXPECT_EQ(sinew::make_interpolator(Interpolation::nearest)->name(), "nearest");
  EXPECT_EQ(sinew::make_interpolator(Interpolation::inverse_distance)->name(), "inverse_distance");
  try {
    by_name("spline");
    FAIL() << "no error";
  } catch (const sinew::Error& e) {
    EXPECT_EQ(e.code(), sinew::errc::invalid_argument);
    EXPECT_NE(e.message().find("spline"), std::string::npos);
  }
}

TEST(KbInterpolator, DerivesFromAStoredKnowledgeBase) {
  auto kb = sinew::KnowledgeBase::memory();
  auto k = key();
  auto a = kb->store_entry(kbtest::entry(k, {{"n", 1 << 20}}, config({0.3, 0.7}), 2));
  kb->store_entry(kbtest::entry(k, {{"n", 1 << 24}}, config({0.45, 0.55}), 30));
  auto d = sinew::NearestNeighbour().derive(kb->entries(k), {{"n", 1 << 21}});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->source, a);
  // The caller stores it with its provenance.
  auto derived = kbtest::entry(k, {{"n", 1 << 21}}, d->config, 2, sinew::Provenance::derived);
  derived.source = d->source;
  auto id = kb->store_entry(derived);
  EXPECT_EQ(kb->entry(id)->source, a);
}

}  // namespace
