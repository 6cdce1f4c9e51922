// Every sample at its small size on PoCL, through the same descriptor the sample program,
// the benchmarks and training use. On several devices (POCL_DEVICES) the samples also run split
// over all of them and must give the single-device answer.
#include "common/sample.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace sinew;

class Samples : public ::testing::TestWithParam<std::string> {};

TEST_P(Samples, SmallSizeMatchesTheReference) {
  Runtime rt;
  auto s = samples::find(GetParam());
  ASSERT_TRUE(s) << GetParam();
  s->prepare(s->sizes().small);
  samples::Check c;
  for (const auto& dev : rt.devices()) {  // each device alone
    Report r = s->run(rt, RunOptions{.device = dev.index});
    c = s->check();
    EXPECT_TRUE(c.ok) << GetParam() << " on " << dev.id() << ": " << c.message << " (max error " << c.max_error
                      << ", tolerance " << c.tolerance << ")";
    EXPECT_GT(r.wall_ms, 0.0);
  }
  if (rt.devices().size() > 1) {
    Config cfg;
    cfg.shares.assign(rt.devices().size(), 1.0 / rt.devices().size());
    s->run(rt, RunOptions{.config = cfg});
    c = s->check();
    EXPECT_TRUE(c.ok) << GetParam() << " split: " << c.message;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Samples, ::testing::ValuesIn(samples::names()),
                         [](const auto& info) { return info.param; });

TEST(SamplesRegistry, UnknownNameAndBadSize) {
  EXPECT_EQ(samples::find("no_such_sample"), nullptr);
  EXPECT_GE(samples::names().size(), 5u);
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  EXPECT_THROW(s->prepare(63), std::invalid_argument);  // the mirror needs an even side
  EXPECT_FALSE(s->check().ok);                           // nothing ran yet
}

// ----- filter_pipeline on non-square images ---------------------------------------------------
// WIDTHxHEIGHT reaches the sample through Sample::prepare(string), as `--size` and `sinew train
// --size` give it. Each shape is checked against the C++ reference, on each device alone and
// split half and half over two devices (POCL_DEVICES="pthread pthread"; skipped on one).

namespace {
// The shapes: wider than tall, taller than wide (with a line count no split divides evenly).
const char* const kShapes[] = {"96x40", "34x151"};

std::size_t width_of(const std::string& shape) { return std::stoul(shape.substr(0, shape.find('x'))); }
std::size_t height_of(const std::string& shape) { return std::stoul(shape.substr(shape.find('x') + 1)); }

std::size_t bound_pixels(samples::Sample& s) {
  auto b = s.bindings();
  return b.size() == 1 ? b.front().elements : 0;
}
}  // namespace

TEST(FilterPipelineShapes, NonSquareImageOnEachDeviceMatchesTheReference) {
  Runtime rt;
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  for (const char* shape : kShapes) {
    s->prepare(std::string(shape));
    EXPECT_EQ(s->size_text(), shape);
    const std::size_t width = width_of(shape), height = height_of(shape);
    EXPECT_EQ(s->size(), width);
    EXPECT_EQ(bound_pixels(*s), width * height);
    for (const auto& dev : rt.devices()) {
      Report r = s->run(rt, RunOptions{.device = dev.index});
      samples::Check c = s->check();
      EXPECT_TRUE(c.ok) << shape << " on " << dev.id() << ": " << c.message;
      ASSERT_EQ(r.partitions.size(), 1u);
      EXPECT_EQ(r.partitions[0].units, height);  // one unit is one line of `width` pixels
    }
  }
  s->prepare(std::string("64"));  // a plain number stays a square
  EXPECT_EQ(s->size_text(), "64");
  EXPECT_EQ(bound_pixels(*s), 64u * 64u);
}

TEST(FilterPipelineShapes, NonSquareImageSplitHalfAndHalfMatchesTheReference) {
  Runtime rt;
  if (rt.devices().size() < 2) GTEST_SKIP() << "needs two devices (POCL_DEVICES=\"pthread pthread\")";
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  for (const char* shape : kShapes) {
    s->prepare(std::string(shape));
    Config cfg;
    cfg.shares.assign(rt.devices().size(), 0.0);
    cfg.shares[0] = cfg.shares[1] = 0.5;
    Report r = s->run(rt, RunOptions{.config = cfg});
    samples::Check c = s->check();
    EXPECT_TRUE(c.ok) << shape << " split 50/50: " << c.message;
    std::size_t lines = 0;
    std::set<std::size_t> devices;
    for (const auto& p : r.partitions) {
      lines += p.units;
      devices.insert(p.device);
    }
    EXPECT_EQ(lines, height_of(shape));
    EXPECT_EQ(devices.size(), 2u) << r.decomposition;
  }
}

TEST(FilterPipelineShapes, BadSizeTextIsRejectedClearly) {
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  for (const char* bad : {"1024x", "x512", "1024x2048x2", "12ax4", "0x64", "64x0", "-4x8", "big"}) {
    try {
      s->prepare(std::string(bad));
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("filter_pipeline"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << "the message quotes the size: " << what;
    }
  }
  try {  // well formed, but the mirror needs an even width
    s->prepare(std::string("63x64"));
    ADD_FAILURE() << "an odd width was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("even"), std::string::npos) << e.what();
  }
  // A rejected size leaves the sample as it was: the last good size still runs and checks.
  s->prepare(std::string("32x8"));
  EXPECT_THROW(s->prepare(std::string("32x")), std::invalid_argument);
  EXPECT_EQ(s->size_text(), "32x8");
  // Other samples take plain numbers only, with a message that says so.
  auto saxpy = samples::find("saxpy");
  ASSERT_TRUE(saxpy);
  EXPECT_THROW(saxpy->prepare(std::string("1024x2")), std::invalid_argument);
}

// The knowledge base must tell shapes apart: 64x32 and 32x64 have as many pixels (the same
// image.size), but the width, a marked feature, differs, so the second is derived, not a hit.
TEST(FilterPipelineShapes, KnowledgeBaseTellsShapesOfOneSizeApart) {
  RuntimeOptions o;
  o.kb_path = ":memory:";
  o.progress = false;
  o.unseen = "derive";
  o.training.max_executions = 8;
  Runtime rt(o);
  auto s = samples::find("filter_pipeline");
  ASSERT_TRUE(s);
  s->prepare(std::string("64x32"));
  Report wide = s->run(rt, RunOptions{.balance = false});
  EXPECT_EQ(wide.provenance, "trained");
  EXPECT_TRUE(s->check().ok);

  s->prepare(std::string("32x64"));
  Report tall = s->run(rt, RunOptions{.balance = false});
  EXPECT_EQ(tall.provenance, "derived");
  EXPECT_EQ(tall.derived_from, wide.kb_entry);
  EXPECT_NE(tall.kb_entry, wide.kb_entry);
  EXPECT_TRUE(s->check().ok) << s->check().message;

  s->prepare(std::string("64x32"));
  Report again = s->run(rt, RunOptions{.balance = false});
  EXPECT_EQ(again.provenance, "kb");
  EXPECT_EQ(again.kb_entry, wide.kb_entry);
}
