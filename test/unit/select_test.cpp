// Device selection by SINEW_DEVICES / RuntimeOptions::devices.
#include <sinew/sinew.hpp>

#include <gtest/gtest.h>

using namespace sinew;

namespace {
std::vector<DeviceInfo> machine() {
  std::vector<DeviceInfo> d(3);
  d[0].index = 0; d[0].kind = DeviceKind::cpu; d[0].kind_index = 0; d[0].name = "Xeon";
  d[1].index = 1; d[1].kind = DeviceKind::gpu; d[1].kind_index = 0; d[1].name = "H100";
  d[2].index = 2; d[2].kind = DeviceKind::gpu; d[2].kind_index = 1; d[2].name = "H200";
  return d;
}
}  // namespace

TEST(Select, KindsIndicesAndOrder) {
  auto d = machine();
  EXPECT_EQ(select_devices(d, "all"), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(select_devices(d, "gpu"), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(select_devices(d, "gpu:1,cpu"), (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(select_devices(d, " CPU:0 , gpu:0 "), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(select_devices(d, "2,0,2"), (std::vector<std::size_t>{2, 0}));
}

TEST(Select, NothingMatchingSaysWhatExists) {
  auto d = machine();
  for (const char* spec : {"accelerator", "gpu:5", "fpga", "7", ""}) {
    try {
      select_devices(d, spec);
      FAIL() << spec;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::no_device));
      std::string what = e.what();
      EXPECT_NE(what.find("H100"), std::string::npos) << what;
      EXPECT_NE(what.find("pocl"), std::string::npos) << what;
    }
  }
}
