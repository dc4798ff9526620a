// What an endpoint's text becomes on the user's terminal (trainfit/remote/client.h): one
// line, bounded, cut at a character boundary, saying how long it was.
#include <gtest/gtest.h>

#include <string>

#include "trainfit/remote/client.h"

namespace trainfit::remote {
namespace {

TEST(ShownText, ShortTextIsKeptAsItIs) { EXPECT_EQ(shown_text("model: unknown name 'llama9'"), "model: unknown name 'llama9'"); }

TEST(ShownText, LineBreaksAndControlCharactersBecomeSpaces) {
  EXPECT_EQ(shown_text("bad\nsbatch: forged\r\x1b[2Jline\x7f"), "bad sbatch: forged  [2Jline ");
}

TEST(ShownText, LongTextIsCutAtTheCapWithItsSize) {
  const std::string text(200 * 1024, 'e');
  const std::string shown = shown_text(text);
  EXPECT_EQ(shown, std::string(kMaxShownTextBytes, 'e') + "... [cut: 204800 bytes]");
}

TEST(ShownText, ExactlyAtTheCapIsNotCut) {
  const std::string text(kMaxShownTextBytes, 'x');
  EXPECT_EQ(shown_text(text), text);
}

TEST(ShownText, TheCutNeverSplitsAUtf8Character) {
  // "é" is 2 bytes: placed so that the cap falls between its bytes.
  const std::string text = std::string(kMaxShownTextBytes - 1, 'a') + "\xc3\xa9" + std::string(10, 'b');
  EXPECT_EQ(shown_text(text), std::string(kMaxShownTextBytes - 1, 'a') + "... [cut: " + std::to_string(text.size()) + " bytes]");
}

TEST(AnswerError, A400sMessageIsShownBounded) {
  const std::string message(5000, 'm');
  const Answer answer{"http://x/edge/training", 400,
                      R"({"error": {"code": "invalid_value", "field": "seq", "message": ")" + message + R"("}})"};
  const Error error = answer_error(answer);
  EXPECT_EQ(error.code, ErrorCode::kInvalidValue);
  EXPECT_EQ(error.field, "seq");
  EXPECT_EQ(error.message, std::string(kMaxShownTextBytes, 'm') + "... [cut: 5000 bytes]");
}

TEST(AnswerError, ABodyThatIsNoTrainfitErrorSaysSo) {
  const Error error = answer_error(Answer{"http://x/edge/training", 400, "<html>nope</html>"});
  EXPECT_EQ(error.code, ErrorCode::kUnavailable);
  EXPECT_EQ(error.message, "HTTP 400 that is not a trainfit error");
}

}  // namespace
}  // namespace trainfit::remote
