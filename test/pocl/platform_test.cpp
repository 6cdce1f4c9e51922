// Discovery, device properties, fission sub-devices and build failures on PoCL.
#include "platform/device.hpp"

#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;

TEST(Platform, DiscoversOnePoclCpuWithItsProperties) {
  Runtime rt;
  ASSERT_GE(rt.devices().size(), 1u);
  const auto& d = rt.devices()[0];
  EXPECT_EQ(d.kind, DeviceKind::cpu);
  EXPECT_EQ(d.id(), "cpu:0");
  EXPECT_NE(d.platform.find("Portable Computing Language"), std::string::npos);
  EXPECT_FALSE(d.name.empty());
  EXPECT_FALSE(d.driver_version.empty());
  EXPECT_GE(d.compute_units, 1u);
  EXPECT_GT(d.global_memory, 0u);
  EXPECT_GT(d.local_memory, 0u);
  EXPECT_GE(d.max_work_group_size, 1u);
  EXPECT_GE(d.preferred_work_group_multiple, 1u);
  EXPECT_TRUE(d.host_unified_memory);
  EXPECT_TRUE(d.host_pointer_aliased);  // PoCL's CPU buffers over host memory are that memory
  ASSERT_FALSE(d.fission_configs.empty());
  EXPECT_EQ(d.fission_configs[0].name, "none");
  EXPECT_TRUE(d.overlap_levels.empty());
}

TEST(Platform, SelectionThroughOptionsAndEnvironment) {
  Runtime cpu_only(RuntimeOptions{.devices = "cpu:0"});
  EXPECT_EQ(cpu_only.devices().size(), 1u);
  try {
    Runtime none(RuntimeOptions{.devices = "cpu:7"});
    FAIL() << "an eighth CPU device was selected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::no_device));
    EXPECT_NE(std::string(e.what()).find("cpu:0"), std::string::npos) << e.what();
  }
  setenv("SINEW_DEVICES", "accelerator", 1);
  EXPECT_THROW(Runtime{}, Error);
  setenv("SINEW_DEVICES", "cpu", 1);
  EXPECT_NO_THROW(Runtime{});
  unsetenv("SINEW_DEVICES");
}

// Every fission configuration builds sub-devices that run a kernel correctly.
TEST(Platform, EveryFissionConfigurationRunsAKernel) {
  Runtime rt;
  const char* src = "__kernel void inc(__global int* v, uint off) { v[get_global_id(0)] += (int)(off + get_global_id(0)); }";
  for (const auto& f : rt.devices()[0].fission_configs) {
    std::vector<cl_int> data(999, 1);
    auto V = sinew::vector<cl_int>().name("v");
    Config cfg;
    cfg.shares = std::vector<double>(rt.devices().size(), 0.0);
    cfg.shares[0] = 1;
    cfg.fission = f.name;
    auto rep = rt.run(kernel_source(src, "inc").args(inout(V), offset(V)), {{V, data}}, {.config = cfg}).get();
    EXPECT_EQ(rep.partitions.size(), f.sub_devices()) << f.name;
    for (std::size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], 1 + static_cast<int>(i)) << f.name << " " << i;
  }
}

TEST(Platform, BuildFailureCarriesTheCompilerLog) {
  Runtime rt(RuntimeOptions{.disk_cache = false});
  const char* broken = "__kernel void bad(__global int* v) {\n  v[0] = undeclared_identifier;\n}\n";
  auto V = sinew::vector<cl_int>().name("v");
  std::vector<cl_int> data(4, 0);
  try {
    rt.run(kernel_source(broken, "bad", "broken.cl").args(inout(V)), {{V, data}}).get();
    FAIL() << "the broken kernel built";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::build_failure));
    EXPECT_NE(e.build_log().find("undeclared_identifier"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("broken.cl"), std::string::npos) << e.what();
    EXPECT_NE(e.node().find("kernel 'bad'"), std::string::npos) << e.what();
    EXPECT_FALSE(e.device().empty());
  }
  EXPECT_EQ(data, std::vector<cl_int>(4, 0));  // nothing ran
}
