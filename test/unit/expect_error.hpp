// A check shared by the unit suites: a call fails with a sinew::Error that names the node and the
// argument, says what is wrong and proposes a fix.
#pragma once

#include <sinew/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace sinew::testing {

struct Expect {
  std::string node, argument, message;
};

// Runs f, expecting a sinew::Error whose node, argument and message contain the given texts
// and that proposes a fix.
template <class F>
void expect_error(F&& f, const Expect& e) {
  try {
    f();
    FAIL() << "no error for: " << e.message;
  } catch (const Error& err) {
    EXPECT_NE(err.node().find(e.node), std::string::npos) << err.what();
    EXPECT_NE(err.argument().find(e.argument), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find(e.message), std::string::npos) << err.what();
    EXPECT_FALSE(err.context().fix.empty()) << err.what();
  }
}

}  // namespace sinew::testing
