// OpenCL statuses outside the core standard are named, with what they mean and what to do, and a
// failure that a queue's wait reports names the leaves that queue ran.
#include "exec/leaves_run.hpp"
#include "platform/error.hpp"

#include <gtest/gtest.h>

using namespace sinew;
using namespace sinew::detail;

TEST(Status, VendorCodesAreNamedWithTheirMeaningAndAdvice) {
  EXPECT_STREQ(opencl_status_name(-9999), "CL_NV_ILLEGAL_ADDRESS");
  EXPECT_STREQ(opencl_status_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_STREQ(opencl_status_name(-1058), "CL_INVALID_PARTITION_COUNT_EXT");
  EXPECT_STREQ(opencl_status_name(-5), "CL_OUT_OF_RESOURCES");
  const StatusText nv = status_text(-9999);
  EXPECT_NE(std::string(nv.meaning).find("illegal address"), std::string::npos) << nv.meaning;
  EXPECT_NE(std::string(nv.advice).find("SINEW_POISON_CHECK=1"), std::string::npos) << nv.advice;
  EXPECT_NE(std::string(nv.advice).find("SINEW_DISCRETE"), std::string::npos) << nv.advice;
  EXPECT_NE(std::string(opencl_status_name(-12345)).find("unknown OpenCL status"), std::string::npos);
  EXPECT_STREQ(status_text(-12345).advice, "");
  EXPECT_STREQ(status_text(CL_INVALID_VALUE).meaning, "");
}

TEST(Status, AFailedCallCarriesTheMeaningAndTheFix) {
  try {
    throw_cl(cl::Error(-9999, "clFinish"), {.device = "gpu:0"});
  } catch (const Error& e) {
    EXPECT_EQ(e.code().value(), -9999);
    EXPECT_EQ(e.code().category(), opencl_category());
    const std::string what = e.what();
    EXPECT_NE(what.find("CL_NV_ILLEGAL_ADDRESS"), std::string::npos) << what;
    EXPECT_NE(what.find("illegal address"), std::string::npos) << what;
    EXPECT_NE(e.context().fix.find("SINEW_POISON_CHECK=1"), std::string::npos) << e.context().fix;
    EXPECT_EQ(e.api_call(), "clFinish");
  }
  // A fix the caller gave stands.
  try {
    throw_cl(cl::Error(-9999, "clFinish"), {.fix = "the caller's"});
  } catch (const Error& e) {
    EXPECT_EQ(e.context().fix, "the caller's");
  }
}

// A wait's failure, which names no node, names the leaves its queue ran; one that names a node
// already, and any other error, stays as it is.
TEST(Status, AWaitsFailureNamesTheLeavesItsQueueRan) {
  const std::string transpose = "pipeline/1:kernel 'transpose' (t.cl)", step = "pipeline/0:kernel 'step' (t.cl)";
  LeavesRun one;
  one.add(&transpose);
  one.add(&transpose);
  LeavesRun two = one;
  two.add(&step);
  auto raise = [](auto&& thrown, const LeavesRun& leaves) {
    try {
      thrown();
    } catch (...) {
      return naming_leaves(leaves);
    }
    return std::exception_ptr();
  };
  auto node_of = [](std::exception_ptr p) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      return e.node() + " | " + e.what();
    } catch (const std::exception& e) {
      return std::string("not a sinew::Error: ") + e.what();
    }
  };
  const std::string raw = node_of(raise([] { throw cl::Error(-9999, "clFinish"); }, one));
  EXPECT_EQ(raw.substr(0, raw.find(" | ")), transpose) << raw;
  EXPECT_NE(raw.find("CL_NV_ILLEGAL_ADDRESS"), std::string::npos) << raw;
  const std::string wrapped =
      node_of(raise([] { throw_cl(cl::Error(CL_OUT_OF_RESOURCES, "clWaitForEvents"), {.device = "gpu:0"}); }, two));
  EXPECT_EQ(wrapped.substr(0, wrapped.find(" | ")), "one of the leaves the queue ran: " + transpose + "; " + step)
      << wrapped;
  const std::string named = node_of(raise([] { throw_cl(cl::Error(-9999, "clEnqueueNDRangeKernel"), {.node = "mine"}); }, one));
  EXPECT_EQ(named.substr(0, named.find(" | ")), "mine");
  const std::string other = node_of(raise([] { throw_error(errc::invalid_tree, "x", {}); }, one));
  EXPECT_EQ(other.substr(0, other.find(" | ")), "");
}
