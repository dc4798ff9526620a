// UTF-8 as Unicode defines it well formed (The Unicode Standard, Table 3-7; RFC 3629
// section 4): no overlong forms, no surrogates, nothing above U+10FFFF. One reader for the
// writers that must never pass on bytes that are not UTF-8 (JSON strings, audit lines).
#pragma once

#include <cstddef>
#include <string_view>

namespace trainfit {

struct Utf8Sequence {
  size_t length;  // bytes of the character; when not valid, of its maximal ill-formed subpart (>= 1)
  bool valid;
};

// The sequence that starts at text[at] (at < text.size()); an ASCII byte is one of length 1.
Utf8Sequence utf8_sequence(std::string_view text, size_t at);

// A byte that continues a character (10xxxxxx): never the place to cut or count a character.
constexpr bool is_utf8_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// The code point of the well-formed sequence text[at, at + length) (utf8_sequence said valid).
char32_t utf8_code_point(std::string_view text, size_t at, size_t length);

// U+FFFD REPLACEMENT CHARACTER, what the writers put for a byte that is not UTF-8.
constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";

}  // namespace trainfit
