// Where a request's plan comes from (runtime/plan_source.hpp): sources tried in order, the first
// that answers giving the plan (runtime/source_chain.hpp, with fake sources), and the runtime's
// chain in its order — given config, given plan, pinned device, given device, runtime default,
// knowledge base — each checked as a request's offers are, before any device work (no device
// here: a prepared tree over synthetic devices, and a planner that must not be asked).
#include "runtime/plan_source.hpp"
#include "schedule/prepared.hpp"

#include "unit/expect_error.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace sinew;
using namespace sinew::detail;

namespace {

struct FakeRequest {
  std::vector<std::string> answering;  // the names of the sources that answer
};

class FakeSource {
 public:
  FakeSource(std::string name, std::vector<std::string>& asked) : name_(std::move(name)), asked_(asked) {}
  std::string_view name() const { return name_; }
  std::optional<std::string> offer(const FakeRequest& r) const {
    asked_.push_back(name_);
    for (const auto& a : r.answering)
      if (a == name_) return "plan of " + name_;
    return std::nullopt;
  }

 private:
  std::string name_;
  std::vector<std::string>& asked_;
};

SourceChain<FakeSource> fake_chain(std::vector<std::string>& asked) {
  SourceChain<FakeSource> chain;
  for (const char* name : {"given", "default", "pinned", "knowledge base"})
    chain.add(std::make_unique<FakeSource>(name, asked));
  return chain;
}

}  // namespace

TEST(SourceChain, TheFirstSourceThatAnswersGivesThePlan) {
  std::vector<std::string> asked;
  const auto chain = fake_chain(asked);
  const auto answered = chain.first(FakeRequest{{"pinned", "default"}});
  EXPECT_EQ(answered.answer, "plan of default");
  EXPECT_EQ(answered.source->name(), "default");
  EXPECT_EQ(asked, (std::vector<std::string>{"given", "default"}));  // the later ones are not asked
}

TEST(SourceChain, SourcesAreAskedInTheOrderTheyWereAdded) {
  std::vector<std::string> asked;
  const auto chain = fake_chain(asked);
  EXPECT_EQ(chain.names(), (std::vector<std::string_view>{"given", "default", "pinned", "knowledge base"}));
  EXPECT_EQ(chain.first(FakeRequest{{"knowledge base"}}).answer, "plan of knowledge base");
  EXPECT_EQ(asked, (std::vector<std::string>{"given", "default", "pinned", "knowledge base"}));
  asked.clear();
  EXPECT_EQ(chain.first(FakeRequest{{"knowledge base", "given"}}).answer, "plan of given");
  EXPECT_EQ(asked, (std::vector<std::string>{"given"}));
}

TEST(SourceChain, NoAnswerIsTheLibrarysError) {
  std::vector<std::string> asked;
  const auto chain = fake_chain(asked);
  try {
    chain.first(FakeRequest{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::library));
  }
  EXPECT_EQ(asked.size(), 4u);
}

namespace {

const char* kSrc = R"(__kernel void scale(__global float* y) {})";

// A CPU without fissions (no levels), a CPU with two, a discrete GPU with overlap levels.
std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> d(3);
  for (std::size_t i = 0; i < d.size(); ++i) d[i].index = i;
  d[0].kind = d[1].kind = DeviceKind::cpu;
  d[0].kind_index = 0;
  d[1].kind_index = 1;
  d[0].fission_configs = {{"none", {}, "", {}}};
  d[1].fission_configs = {{"none", {}, "", {}}, {"L2", {2, 2}, "equally", {}}};
  d[2].kind = DeviceKind::gpu;
  d[2].discrete = true;
  d[2].overlap_levels = {1, 2, 3, 4};
  for (auto& x : d) x.global_memory = x.max_alloc = 1ull << 30;
  return d;
}

struct Fixture {
  Vector<cl_float> y = sinew::vector<cl_float>().name("y");
  std::vector<float> host = std::vector<float>(4096, 1.0f);
  Node tree = map(kernel_source(kSrc, "scale", "s.cl").args(inout(y)));
  std::vector<Binding> bindings{Binding(y, host)};
  std::vector<DeviceInfo> infos = devices();
  std::shared_ptr<const PreparedTree> prepared = prepare_tree(tree, bindings, infos, std::nullopt, 0);
  int planner_asked = 0;
  Planner* no_planner = nullptr;

  PlanSources chain(std::optional<Config> default_config = std::nullopt) {
    return plan_sources(std::move(default_config), [this]() -> Planner& {
      ++planner_asked;
      return *no_planner;
    });
  }
  // The source that answers `options`, and its offer.
  std::pair<std::string, PlanOffer> answer(const PlanSources& sources, const RunOptions& options, bool part = false) {
    const auto a = sources.first(PlanRequest{*prepared, bindings, options, infos, part, false});
    return {std::string(a.source->name()), a.answer};
  }
};

}  // namespace

TEST(PlanSources, TheRuntimesChainInOrder) {
  Fixture f;
  EXPECT_EQ(f.chain().names(), (std::vector<std::string_view>{"given config", "given plan", "pinned device",
                                                               "given device", "runtime default", "knowledge base"}));
}

TEST(PlanSources, EachRequestMeetsTheFirstSourceThatPlansIt) {
  Fixture f;
  const auto sources = f.chain(Config{{0.5, 0.25, 0.25}});
  const Config given{{0.2, 0.3, 0.5}};
  // A given config beats a plan text, a device and the runtime's default.
  auto [name, offer] = f.answer(sources, {.device = 1, .config = given, .plan = "cpu:0=1"});
  EXPECT_EQ(name, "given config");
  EXPECT_EQ(*offer.config, given);
  EXPECT_EQ(offer.provenance, Provenance::manual);
  EXPECT_FALSE(offer.knowledge_base);
  // A plan text beats a device and the default.
  std::tie(name, offer) = f.answer(sources, {.device = 1, .plan = "cpu:0=1"});
  EXPECT_EQ(name, "given plan");
  EXPECT_EQ(*offer.config, Config::parse("cpu:0=1", f.infos));
  // A device with levels to choose from: pinned (its best level chosen as the run starts).
  std::tie(name, offer) = f.answer(sources, {.device = 1});
  EXPECT_EQ(name, "pinned device");
  EXPECT_EQ(*offer.config, Config::single(1, 3));
  std::tie(name, offer) = f.answer(sources, {.device = 2});
  EXPECT_EQ(name, "pinned device");
  // A device without levels, or any device in one process's part of a larger run: given.
  std::tie(name, offer) = f.answer(sources, {.device = 0});
  EXPECT_EQ(name, "given device");
  EXPECT_EQ(*offer.config, Config::single(0, 3));
  std::tie(name, offer) = f.answer(sources, {.device = 1}, true);
  EXPECT_EQ(name, "given device");
  // Nothing given: the runtime's default.
  std::tie(name, offer) = f.answer(sources, {});
  EXPECT_EQ(name, "runtime default");
  EXPECT_EQ(*offer.config, (Config{{0.5, 0.25, 0.25}}));
  EXPECT_EQ(offer.provenance, Provenance::default_plan);
  EXPECT_EQ(f.planner_asked, 0);  // no offer asks the planner: it plans as the run starts
}

TEST(PlanSources, WithoutADefaultTheKnowledgeBasePlans) {
  Fixture f;
  const auto [name, offer] = f.answer(f.chain(), {});
  EXPECT_EQ(name, "knowledge base");
  EXPECT_FALSE(offer.config);
  EXPECT_EQ(offer.provenance, Provenance::knowledge_base);
  EXPECT_TRUE(offer.knowledge_base);
  EXPECT_EQ(f.planner_asked, 0);
}

TEST(PlanSources, GivenPlansAreCheckedBeforeAnyDeviceWork) {
  Fixture f;
  const auto sources = f.chain();
  sinew::testing::expect_error([&] { f.answer(sources, {.device = 3}); },
                               {"", "RunOptions::device", "device index 3 but the runtime has 3 device(s)"});
  EXPECT_THROW(f.answer(sources, {.config = Config{{0.5, 0.5}}}), Error);  // two shares for three devices
  EXPECT_THROW(f.answer(sources, {.plan = "npu:0=1"}), Error);
  EXPECT_EQ(f.planner_asked, 0);
}

// A prepared tree's plans as a request and a loop of runs ask for them: the same config finds the
// same decomposition and schedule memory whatever was asked in between, twice in a row too; a
// config that differs in one field (the overlap alone) gets its own; one the policy refuses is
// refused after a good one as well.
TEST(PreparedTreePlans, EachConfigFindsItsOwnPlanWhateverWasAskedBefore) {
  Fixture f;
  const Config a{{1.0, 0.0, 0.0}}, b{{0.0, 0.0, 1.0}};
  Config c = b;
  c.overlap = 3;
  const PreparedTree& p = *f.prepared;
  const PreparedTree::Planned pa = p.planned(a, f.infos), pb = p.planned(b, f.infos), pc = p.planned(c, f.infos);
  EXPECT_NE(pa.decomposition, pb.decomposition);
  EXPECT_NE(pb.decomposition, pc.decomposition);
  EXPECT_EQ(pb.decomposition->config.overlap, 1u);
  EXPECT_EQ(pc.decomposition->config.overlap, 3u);
  EXPECT_EQ(p.planned(a, f.infos).decomposition, pa.decomposition);
  EXPECT_EQ(p.planned(a, f.infos).decomposition, pa.decomposition);
  EXPECT_EQ(p.planned(c, f.infos).decomposition, pc.decomposition);
  EXPECT_EQ(p.planned(b, f.infos).decomposition, pb.decomposition);
  EXPECT_EQ(p.planned(b, f.infos).schedule_memory, pb.schedule_memory);
  EXPECT_EQ(p.decomposition(c, f.infos), pc.decomposition);
  Config refused = c;
  refused.schedule = "no-such-schedule";
  EXPECT_THROW(p.planned(refused, f.infos), Error);
  EXPECT_EQ(p.planned(c, f.infos).decomposition, pc.decomposition);
}
