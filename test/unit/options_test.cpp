// The one reader of the environment (RuntimeOptions::from_variables / from_environment): every
// SINEW_* variable with a good and a bad value, the precedence (code, environment, default), the
// checks of settings made in code, and the README's table against the reader's own.
#include <sinew/cluster.hpp>
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

using namespace sinew;

namespace {

RuntimeOptions read(const std::string& name, const std::string& value) {
  return RuntimeOptions::from_variables({{name, value}});
}

// The error a bad value gives, which must name the variable, the value and what is accepted.
std::string refusal(const std::string& name, const std::string& value) {
  try {
    read(name, value);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << name;
    return e.what();
  }
  ADD_FAILURE() << name << "='" << value << "' was accepted";
  return {};
}

}  // namespace

TEST(Options, EveryVariableReadsAGoodValue) {
  EXPECT_EQ(*read("SINEW_DEVICES", "gpu:0,cpu").devices, "gpu:0,cpu");
  EXPECT_EQ(*read("SINEW_DISCRETE", "cpu:1").discrete, "cpu:1");
  EXPECT_EQ(*read("SINEW_CONFIG", "cpu=0.6,overlap=2").config, "cpu=0.6,overlap=2");
  EXPECT_EQ(*read("SINEW_KB", ":memory:").kb_path, ":memory:");
  EXPECT_EQ(*read("SINEW_TRAIN", "1").force_training, true);
  EXPECT_EQ(*read("SINEW_UNSEEN", "train").unseen, UnseenPolicy::train);
  EXPECT_EQ(*read("SINEW_INTERPOLATOR", "inverse_distance").interpolation, Interpolation::inverse_distance);
  EXPECT_EQ(*read("SINEW_STRATEGY", "cpu_assisted").training.strategy, Strategy::cpu_assisted);
  EXPECT_EQ(*read("SINEW_STRATEGY", "model").training.strategy, Strategy::model);
  EXPECT_EQ(*read("SINEW_PRECISION", "0.1").training.precision, 0.1);
  EXPECT_EQ(*read("SINEW_QUALITY", "5").training.quality, 5u);
  EXPECT_EQ(*read("SINEW_EXHAUSTIVE", "yes").training.exhaustive, true);
  EXPECT_EQ(*read("SINEW_DERIVE_EXECUTIONS", "0").training.derive_executions, 0u);
  EXPECT_EQ(*read("SINEW_TRAINING_TIME", "0").training.time_budget_s, 0.0);
  EXPECT_EQ(*read("SINEW_TRAINING_TIME", "2.5").training.time_budget_s, 2.5);
  EXPECT_EQ(*TrainingSettings{}.with_defaults().time_budget_s, 2.0);
  EXPECT_EQ(*read("SINEW_BALANCE", "0").balancer.enabled, false);
  EXPECT_EQ(*read("SINEW_BALANCE_WITHIN", "0.9").balancer.balanced_within, 0.9);
  EXPECT_EQ(*read("SINEW_BALANCE_WEIGHT", "1").balancer.weight, 1.0);
  EXPECT_EQ(*read("SINEW_CHUNK_MB", "0.5").chunk_mb, 0.5);
  EXPECT_EQ(*read("SINEW_TRANSFER", "direct").transfer, TransferMode::direct);
  EXPECT_EQ(*read("SINEW_COPY_THREADS", "4").copy_threads, 4u);
  EXPECT_EQ(*read("SINEW_WAIT", "poll").wait, WaitMode::poll);
  EXPECT_EQ(*read("SINEW_MAP_ZERO_COPY", "on").map_zero_copy, true);
  EXPECT_EQ(*read("SINEW_SHARED_CONTEXT", "0").shared_context, false);
  EXPECT_EQ(*RuntimeOptions{}.with_defaults().shared_context, false);  // docs/decisions/174
  EXPECT_EQ(*read("SINEW_PROFILE", "true").profile, true);
  EXPECT_EQ(*read("SINEW_TRACE", "/tmp/t.json").trace, "/tmp/t.json");
  EXPECT_EQ(*read("SINEW_QUIET", "off").quiet, false);
}

TEST(Options, EveryVariableRefusesABadValueNamingItAndWhatItAccepts) {
  const std::map<std::string, std::vector<std::string>> bad = {
      {"SINEW_TRAIN", {"2", "maybe"}},
      {"SINEW_UNSEEN", {"guess", "Derive"}},
      {"SINEW_INTERPOLATOR", {"idw", "nearest-neighbour"}},
      {"SINEW_STRATEGY", {"even", "50/50"}},
      {"SINEW_PRECISION", {"abc", "0", "-0.1", "1.5", "nan", "0.1x", " 0.1"}},
      {"SINEW_QUALITY", {"-1", "0", "1001", "abc", "4294967297", "3.5", "+3"}},
      {"SINEW_EXHAUSTIVE", {"2"}},
      {"SINEW_DERIVE_EXECUTIONS", {"-1", "1e3", "100001"}},
      {"SINEW_TRAINING_TIME", {"-1", "abc", "86401", "2s", "nan"}},
      {"SINEW_BALANCE", {"no way"}},
      {"SINEW_BALANCE_WITHIN", {"abc", "0", "1.1"}},
      {"SINEW_BALANCE_WEIGHT", {"0", "2", "inf"}},
      {"SINEW_CHUNK_MB", {"0", "-1", "abc", "1e30", "65537"}},
      {"SINEW_TRANSFER", {"fast"}},
      {"SINEW_COPY_THREADS", {"-1", "17", "2.5", "many"}},
      {"SINEW_WAIT", {"spin", "auto"}},
      {"SINEW_MAP_ZERO_COPY", {"2"}},
      {"SINEW_SHARED_CONTEXT", {"both"}},
      {"SINEW_PROFILE", {"yes please"}},
      {"SINEW_QUIET", {"-1"}},
  };
  for (const auto& [name, values] : bad)
    for (const auto& value : values) {
      const std::string what = refusal(name, value);
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find("'" + value + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("is not "), std::string::npos) << what;  // ... what it accepts
    }
}

TEST(Options, EmptyVariablesAreUnset) {
  const auto o = RuntimeOptions::from_variables({{"SINEW_DEVICES", ""}, {"SINEW_QUALITY", ""}});
  EXPECT_FALSE(o.devices);
  EXPECT_FALSE(o.training.quality);
}

// One precedence: what the program set wins, the environment fills the rest, then defaults.
TEST(Options, CodeWinsTheEnvironmentFillsTheRestThenDefaults) {
  RuntimeOptions code;
  code.devices = "cpu";
  code.training.quality = 7;
  code.balancer.weight = 0.25;
  const auto env = RuntimeOptions::from_variables(
      {{"SINEW_DEVICES", "gpu"}, {"SINEW_QUALITY", "2"}, {"SINEW_PRECISION", "0.2"}, {"SINEW_BALANCE_WEIGHT", "0.75"}});
  const auto o = code.or_else(env).with_defaults();
  EXPECT_EQ(*o.devices, "cpu");
  EXPECT_EQ(*o.training.quality, 7u);
  EXPECT_EQ(*o.balancer.weight, 0.25);
  EXPECT_EQ(*o.training.precision, 0.2);                 // from the environment
  EXPECT_EQ(*o.training.strategy, Strategy::even_split);  // the default
  EXPECT_EQ(*o.balancer.balanced_within, 0.88);
  EXPECT_EQ(*o.unseen, UnseenPolicy::derive);
  EXPECT_TRUE(o.log);
}

TEST(Options, SettingsMadeInCodeAreCheckedLikeVariables) {
  auto refused = [](RuntimeOptions o, const std::string& setting) {
    try {
      o.with_defaults();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(setting), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << setting << " accepted";
  };
  RuntimeOptions o;
  o.training.quality = 0;
  refused(o, "TrainingSettings::quality");
  o = {};
  o.training.precision = 2;
  refused(o, "TrainingSettings::precision");
  o = {};
  o.balancer.weight = 0;
  refused(o, "BalancerSettings::weight");
  o = {};
  o.chunk_mb = 1e30;
  refused(o, "RuntimeOptions::chunk_mb");
  o = {};
  o.balancer.window = 0;
  refused(o, "BalancerSettings::window");
}

// A Cluster's variable is read by the same reader, with the same checks.
TEST(Options, TheClustersVariableIsReadByTheSameReader) {
  EXPECT_EQ(*ClusterOptions::from_variables({{"SINEW_MPI_TIMEOUT", "2.5"}}).timeout_s, 2.5);
  EXPECT_EQ(*ClusterOptions::from_variables({{"SINEW_MPI_TIMEOUT", "0"}}).timeout_s, 0.0);
  EXPECT_FALSE(ClusterOptions::from_variables({{"SINEW_MPI_TIMEOUT", ""}}).timeout_s);
  EXPECT_FALSE(ClusterOptions::from_variables({{"SINEW_QUIET", "1"}}).timeout_s);
  for (const std::string value : {"-1", "abc", "1e10"}) {
    try {
      ClusterOptions::from_variables({{"SINEW_MPI_TIMEOUT", value}});
      ADD_FAILURE() << "SINEW_MPI_TIMEOUT='" << value << "' was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("SINEW_MPI_TIMEOUT"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + value + "'"), std::string::npos) << what;
    }
  }
}

// The guide's table of variables (docs/guide/options.md) is the reader's own (environment_variables()).
TEST(Options, TheGuidesTableIsTheReadersTable) {
  std::ifstream in(SINEW_SOURCE_DIR "/docs/guide/options.md");
  ASSERT_TRUE(in) << "docs/guide/options.md not found";
  std::stringstream s;
  s << in.rdbuf();
  const std::string readme = s.str();
  const std::string table = environment_table_markdown();
  EXPECT_NE(readme.find(table), std::string::npos)
      << "docs/guide/options.md's table of SINEW_* variables differs from what the library reads; replace it with `sinew "
         "options --markdown`:\n"
      << table;
  for (const auto& v : environment_variables()) EXPECT_EQ(v.name.rfind("SINEW_", 0), 0u) << v.name;
}

// A cap of 0 bytes is a size, and no cap a device can run under: the message says so.
TEST(Options, AMemoryCapOfZeroSaysACapMustBeAboveZero) {
  for (const std::string value : {"cpu:1=0MB", "gpu=0", "cpu:0=64MB,cpu:1=0KB"}) {
    const std::string what = refusal("SINEW_MEMORY_CAP", value);
    EXPECT_NE(what.find("SINEW_MEMORY_CAP"), std::string::npos) << what;
    EXPECT_NE(what.find("above 0"), std::string::npos) << what;
    EXPECT_EQ(what.find("is not a size"), std::string::npos) << what;
  }
}

// A trace that cannot be written is refused when the options are checked (when a Runtime is
// made), naming the variable, instead of a warning after the first run.
TEST(Options, ATraceFileThatCannotBeWrittenIsRefused) {
  for (const std::string path : {"/nonexistent-sinew-dir/trace.json", "/"}) {
    RuntimeOptions o = RuntimeOptions::from_variables({{"SINEW_TRACE", path}});
    try {
      o.with_defaults();
      ADD_FAILURE() << "SINEW_TRACE=" << path << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
      EXPECT_NE(std::string(e.what()).find("SINEW_TRACE"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + path + "'"), std::string::npos) << e.what();
    }
  }
  RuntimeOptions writable;
  writable.trace = ::testing::TempDir() + "sinew-trace.json";
  EXPECT_NO_THROW(writable.with_defaults());
}
