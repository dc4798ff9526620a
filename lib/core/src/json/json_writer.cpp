// JsonWriter: nlohmann's output format, written directly.
#include "json_writer.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

// For nlohmann's Grisu2 double printer only. Not std::to_chars: its digits are the true
// shortest, which differ from nlohmann's in ~0.05% of values with 11+ significant digits
// (6864355.4142 vs 6864355.4142000005), so the response's bytes would change.
#include <nlohmann/json.hpp>

#include "trainfit/util/json_escape.h"
#include "trainfit/util/utf8.h"

namespace trainfit {

std::string replace_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Sequence sequence = utf8_sequence(text, i);
    if (sequence.valid) {
      out.append(text.substr(i, sequence.length));
      i += sequence.length;
    } else {
      out += kUtf8Replacement;  // for each byte that is not UTF-8
      ++i;
    }
  }
  return out;
}
namespace {

// Length of the well-formed UTF-8 sequence at text[at]; 0 when it is not one.
size_t utf8_length(std::string_view text, size_t at) {
  const Utf8Sequence sequence = utf8_sequence(text, at);
  return sequence.valid ? sequence.length : 0;
}

// Bytes that stand as themselves in a JSON string (UTF-8 sequences are checked apart).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

// Index of the first byte at or after `from` that does not stand as itself: 8 bytes at a
// time while none does (any byte < 0x20, >= 0x80, '"' or '\\' flags its word), then bytewise.
size_t plain_end(std::string_view text, size_t from) {
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  constexpr uint64_t kQuotes = kOnes * '"', kBackslashes = kOnes * '\\';
  for (; from + 8 <= text.size(); from += 8) {
    uint64_t x;
    std::memcpy(&x, text.data() + from, 8);
    const uint64_t quote = x ^ kQuotes, backslash = x ^ kBackslashes;
    if ((x | (x - kOnes * 0x20) | ((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash)) & kHighs) break;
  }
  while (from < text.size() && kPlain[static_cast<unsigned char>(text[from])]) ++from;
  return from;
}

// "00" to "99": two digits a lookup, not two divisions.
constexpr std::array<char, 200> kDigitPairs = [] {
  std::array<char, 200> pairs{};
  for (int i = 0; i < 100; ++i) {
    pairs[static_cast<size_t>(2 * i)] = static_cast<char>('0' + i / 10);
    pairs[static_cast<size_t>(2 * i + 1)] = static_cast<char>('0' + i % 10);
  }
  return pairs;
}();

// A positive value on the 1e-4 grid below 20000 (the rounded GiB figures, the profiles'
// points): its 4-decimal fixed form with trailing zeros dropped. nlohmann's Grisu2 prints
// exactly that for every one of these 2e8 values (checked exhaustively), at a fraction of
// Grisu2's cost.
// m / 1e4 for 0 < m < 2e8, at out (room for 16 bytes); returns the end.
char* write_fixed4(char* out, int64_t m) {
  const auto whole = static_cast<uint32_t>(m / 10000);
  const auto fraction = static_cast<uint32_t>(m % 10000);
  if (whole < 10) {
    *out++ = static_cast<char>('0' + whole);
  } else if (whole < 100) {
    std::memcpy(out, &kDigitPairs[2 * whole], 2);
    out += 2;
  } else {
    out = std::to_chars(out, out + 8, whole).ptr;
  }
  *out = '.';
  std::memcpy(out + 1, &kDigitPairs[2 * (fraction / 100)], 2);
  std::memcpy(out + 3, &kDigitPairs[2 * (fraction % 100)], 2);
  // Trailing zeros dropped, one digit kept ("2.0").
  const int length = fraction % 1000 == 0 ? 1 : fraction % 100 == 0 ? 2 : fraction % 10 == 0 ? 3 : 4;
  return out + 1 + length;
}

// The same for a double: nullptr when value is not on the grid.
char* write_grid4(char* out, double value) {
  const double scaled = value * 1e4;
  if (!(scaled > 0 && scaled < 2e8)) return nullptr;
  const auto m = static_cast<int64_t>(scaled + 0.5);
  if (static_cast<double>(m) / 1e4 != value) return nullptr;
  return write_fixed4(out, m);
}

}  // namespace

JsonWriter::JsonWriter(int indent) : indent_(indent) {
  out_.resize(indent < 0 ? 16384 : 24576);  // a full response: ~12 KB compact, ~19 KB pretty
  empty_.reserve(8);
}

void JsonWriter::grow(size_t bytes) { out_.resize(std::max(2 * out_.size(), bytes)); }

std::string JsonWriter::take() {
  out_.resize(used_);
  used_ = 0;
  return std::move(out_);
}

JsonWriter& JsonWriter::begin_object() { open('{'); return *this; }
JsonWriter& JsonWriter::end_object() { close('}'); return *this; }
JsonWriter& JsonWriter::begin_array() { open('['); return *this; }
JsonWriter& JsonWriter::end_array() { close(']'); return *this; }

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  assert(plain_end(name, 0) == name.size() && "a key is one of ours: nothing to escape");
  {
    char* at = room(name.size() + 4);
    *at++ = '"';
    std::memcpy(at, name.data(), name.size());
    at += name.size();
    *at++ = '"';
    *at++ = ':';
    if (indent_ >= 0) *at++ = ' ';
    used_ = static_cast<size_t>(at - out_.data());
  }
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  separate();
  put_quoted(text);
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t value) {
  separate();
  char* at = room(24);
  used_ = static_cast<size_t>(std::to_chars(at, at + 24, value).ptr - out_.data());
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  if (!std::isfinite(value)) return null();
  separate();
  char* at = room(64);
  if (std::signbit(value)) {
    *at++ = '-';
    value = -value;
  }
  char* end = write_grid4(at, value);
  if (end == nullptr) end = nlohmann::detail::to_chars(at, at + 63, value);
  used_ = static_cast<size_t>(end - out_.data());
  return *this;
}

JsonWriter& JsonWriter::decimal4(double scaled) {
  const double magnitude = std::fabs(scaled);
  if (!(magnitude > 0 && magnitude < 2e8)) return number(scaled / 1e4);  // 0, -0, NaN, huge
  separate();
  char* at = room(24);
  if (scaled < 0) *at++ = '-';
  used_ = static_cast<size_t>(write_fixed4(at, static_cast<int64_t>(magnitude)) - out_.data());
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  separate();
  put(value ? std::string_view("true") : std::string_view("false"));
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  put(std::string_view("null"));
  return *this;
}

void JsonWriter::open(char bracket) {
  separate();
  put(bracket);
  empty_.push_back(1);
}

void JsonWriter::close(char bracket) {
  const bool was_empty = empty_.back() != 0;
  empty_.pop_back();
  if (!was_empty && indent_ >= 0) newline();
  put(bracket);
}

void JsonWriter::put_quoted(std::string_view text) {
  put('"');
  size_t run = 0;  // start of the bytes not yet written
  for (size_t i = plain_end(text, 0); i < text.size(); i = plain_end(text, i)) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8_length(text, i);
      if (length > 0) {
        i += length;
        continue;
      }
      // Not UTF-8 (a path or a name from a foreign locale): U+FFFD, never an exception.
      put(text.substr(run, i - run));
      put(kUtf8Replacement);
      run = ++i;
      continue;
    }
    put(text.substr(run, i - run));
    put(json_escape(c).view());
    run = ++i;
  }
  put(text.substr(run));
  put('"');
}

}  // namespace trainfit
