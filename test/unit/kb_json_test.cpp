// test/unit/kb_json_test.cpp — the knowledge base's JSON: exact number round trips, escapes,
// strictness and error positions.
#include "kb/json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

namespace json = sinew::detail::kb::json;

TEST(KbJson, NumbersRoundTripExactly) {
  for (double v : {0.0, 1.0, -1.0, 0.1, 1.0 / 3, 2.0 / 3, 1e300, 5e-324, 123456789012345.0, 0.6, 1024.0,
                   std::numeric_limits<double>::max()}) {
    auto text = json::number(v);
    EXPECT_EQ(json::parse(text).number(), v) << text;
  }
  EXPECT_EQ(json::number(1024), "1024");
  EXPECT_EQ(json::number(0.6), "0.6");
  EXPECT_EQ(json::number(-0.0), "0");
  EXPECT_EQ(json::number(std::nan("")), "null");
}

TEST(KbJson, StringsEscapeAndUnescape) {
  std::string s = "quote \" backslash \\ newline \n tab \t bell \x07 utf8 \u00e9 \U0001F600";
  auto text = json::quote(s);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(text).string(), s);
  EXPECT_EQ(json::parse(R"("\u00e9\ud83d\ude00\/")").string(), "\u00e9\U0001F600/");
}

TEST(KbJson, ParsesDocumentsInOrder) {
  auto v = json::parse(R"( {"b": [1, 2.5, -3e2], "a": {"x": null, "y": true}, "c": "z"} )");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.object().size(), 3u);
  EXPECT_EQ(v.object()[0].first, "b");  // document order kept
  EXPECT_EQ(v.find("b")->array()[2].number(), -300);
  EXPECT_TRUE(v.find("a")->find("x")->is_null());
  EXPECT_TRUE(v.find("a")->find("y")->boolean());
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(json::dump(v), R"({"b": [1, 2.5, -300], "a": {"x": null, "y": true}, "c": "z"})");
  EXPECT_EQ(json::dump(v, 1), "{\n  \"b\": [1, 2.5, -300],\n  \"a\": {\"x\": null, \"y\": true},\n  \"c\": \"z\"\n}");
}

TEST(KbJson, RejectsMalformedTextWithAPosition) {
  auto error = [](const char* text) {
    try {
      json::parse(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{\"a\": 1,\n  }"), "line 2, column 3: expected a member name in quotes");
  EXPECT_NE(error("[1, 2"), "no error");
  EXPECT_NE(error("01"), "no error");
  EXPECT_NE(error("1."), "no error");
  EXPECT_NE(error("\"tab\there\""), "no error");
  EXPECT_NE(error("\"\\ud800\""), "no error");
  EXPECT_NE(error("{} x"), "no error");
  EXPECT_NE(error("NaN"), "no error");
  EXPECT_NE(error("1e999"), "no error");
  EXPECT_NE(error(""), "no error");
}

}  // namespace
