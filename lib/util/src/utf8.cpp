#include "trainfit/util/utf8.h"

namespace trainfit {
namespace {

// What a lead byte promises: how many continuation bytes follow, and the bounds of the
// first of them, which rule out overlongs (E0, F0), surrogates (ED) and code points above
// U+10FFFF (F4).
struct LeadByte {
  size_t continuations;  // 0 with valid = false: not a lead byte (80..C1, F5..FF)
  unsigned char low, high;
};

LeadByte lead_byte(unsigned char lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return {1, 0x80, 0xBF};
  if (lead == 0xE0) return {2, 0xA0, 0xBF};
  if (lead == 0xED) return {2, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {2, 0x80, 0xBF};
  if (lead == 0xF0) return {3, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {3, 0x80, 0xBF};
  if (lead == 0xF4) return {3, 0x80, 0x8F};
  return {0, 0, 0};
}

}  // namespace

Utf8Sequence utf8_sequence(std::string_view text, size_t at) {
  const auto first = static_cast<unsigned char>(text[at]);
  if (first < 0x80) return {1, true};
  const LeadByte lead = lead_byte(first);
  if (lead.continuations == 0) return {1, false};
  for (size_t i = 1; i <= lead.continuations; ++i) {
    const unsigned char low = i == 1 ? lead.low : 0x80, high = i == 1 ? lead.high : 0xBF;
    if (at + i >= text.size()) return {i, false};
    const auto next = static_cast<unsigned char>(text[at + i]);
    if (next < low || next > high) return {i, false};
  }
  return {lead.continuations + 1, true};
}

char32_t utf8_code_point(std::string_view text, size_t at, size_t length) {
  static constexpr unsigned char kLeadBits[] = {0x7F, 0x1F, 0x0F, 0x07};  // by length - 1
  char32_t code = static_cast<unsigned char>(text[at]) & kLeadBits[length - 1];
  for (size_t i = 1; i < length; ++i) code = (code << 6) | (static_cast<unsigned char>(text[at + i]) & 0x3Fu);
  return code;
}

}  // namespace trainfit
