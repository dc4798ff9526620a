// lib/util's JSON escapes and UTF-8 code points, the one implementation the response writer,
// the audit log and the TOML reader share. Expected values from RFC 8259 section 7 (the short
// escapes, \u00XX for the other controls) and the Unicode code charts.
#include <gtest/gtest.h>

#include <string>

#include "trainfit/util/json_escape.h"
#include "trainfit/util/utf8.h"

namespace trainfit {
namespace {

TEST(JsonEscape, ShortFormsWhereJsonHasThem) {
  EXPECT_EQ(json_escape('"').view(), "\\\"");
  EXPECT_EQ(json_escape('\\').view(), "\\\\");
  EXPECT_EQ(json_escape('\b').view(), "\\b");
  EXPECT_EQ(json_escape('\f').view(), "\\f");
  EXPECT_EQ(json_escape('\n').view(), "\\n");
  EXPECT_EQ(json_escape('\r').view(), "\\r");
  EXPECT_EQ(json_escape('\t').view(), "\\t");
}

TEST(JsonEscape, OtherControlsAsLowerCaseHex) {
  EXPECT_EQ(json_escape(0x00).view(), "\\u0000");
  EXPECT_EQ(json_escape(0x01).view(), "\\u0001");
  EXPECT_EQ(json_escape(0x1b).view(), "\\u001b");  // ESC: no terminal escape survives
  EXPECT_EQ(json_escape(0x1f).view(), "\\u001f");
  EXPECT_EQ(json_escape(0x7f).view(), "\\u007f");
}

TEST(Utf8CodePoint, EachLength) {
  const std::string text = "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // A, é, €, 😀
  EXPECT_EQ(utf8_code_point(text, 0, 1), U'A');
  EXPECT_EQ(utf8_code_point(text, 1, 2), U'\u00E9');
  EXPECT_EQ(utf8_code_point(text, 3, 3), U'\u20AC');
  EXPECT_EQ(utf8_code_point(text, 6, 4), U'\U0001F600');
  EXPECT_EQ(utf8_code_point("\xF4\x8F\xBF\xBF", 0, 4), U'\U0010FFFF');  // the last code point
}

TEST(Utf8Continuation, OnlyTenXxxxxxBytes) {
  int continuations = 0;
  for (int b = 0; b < 256; ++b) continuations += is_utf8_continuation(static_cast<unsigned char>(b));
  EXPECT_EQ(continuations, 64);  // 0x80..0xBF
  EXPECT_TRUE(is_utf8_continuation(0x80));
  EXPECT_TRUE(is_utf8_continuation(0xBF));
  EXPECT_FALSE(is_utf8_continuation(0x7F));
  EXPECT_FALSE(is_utf8_continuation(0xC0));
}

TEST(Utf8CodePoint, ReplacementCharacterIsUFFFD) {
  EXPECT_EQ(utf8_code_point(kUtf8Replacement, 0, kUtf8Replacement.size()), U'\uFFFD');
}

}  // namespace
}  // namespace trainfit
