#include "toml_ascii.h"

#include <cstdio>

#include "trainfit/util/utf8.h"

namespace trainfit::config_files {
namespace {

std::string escape_of(char32_t code) {
  char out[16];
  if (code <= 0xFFFF) std::snprintf(out, sizeof out, "\\u%04X", static_cast<unsigned>(code));
  else std::snprintf(out, sizeof out, "\\U%08X", static_cast<unsigned>(code));
  return out;
}

enum class Region { kBare, kComment, kBasic, kMultiBasic, kLiteral, kMultiLiteral };

class Rewriter {
 public:
  explicit Rewriter(const std::string& text) : in_(text) {}

  Result<std::string> run() {
    out_.reserve(in_.size());
    while (i_ < in_.size()) {
      Result<bool> ok = step();
      if (!ok) return ok.error();
    }
    return std::move(out_);
  }

 private:
  bool at(const char* delimiter) const { return in_.compare(i_, std::char_traits<char>::length(delimiter), delimiter) == 0; }

  Error malformed(const std::string& why) const {
    return make_error(ErrorCode::kMalformed, "config",
                      "malformed TOML at line " + std::to_string(line_) + ", column " + std::to_string(column_) + ": " + why);
  }

  // Copies one ASCII byte, keeping count of lines and columns.
  void copy() {
    const char c = in_[i_++];
    out_ += c;
    if (c == '\n') ++line_, column_ = 1;
    else ++column_;
  }

  // A non-ASCII character at i_: its code point, or an error for ill-formed UTF-8.
  Result<char32_t> take_character() {
    const Utf8Sequence sequence = utf8_sequence(in_, i_);
    if (!sequence.valid) return malformed("invalid UTF-8 (a TOML file is UTF-8)");
    const char32_t code = utf8_code_point(in_, i_, sequence.length);
    i_ += sequence.length;
    ++column_;
    return code;
  }

  Result<bool> step() {
    const unsigned char c = static_cast<unsigned char>(in_[i_]);
    switch (region_) {
      case Region::kBare: return bare(c);
      case Region::kComment: return comment(c);
      case Region::kBasic:
      case Region::kMultiBasic: return basic(c);
      case Region::kLiteral:
      case Region::kMultiLiteral: return literal();
    }
    return true;
  }

  Result<bool> bare(unsigned char c) {
    if (c >= 0x80) return malformed("a non-ASCII character outside a string or comment (TOML allows ASCII there)");
    if (c == '#') region_ = Region::kComment;
    if (c == '"') region_ = at("\"\"\"") ? Region::kMultiBasic : Region::kBasic;
    if (c == '\'') region_ = at("'''") ? Region::kMultiLiteral : Region::kLiteral;
    const size_t delimiter = region_ == Region::kMultiBasic || region_ == Region::kMultiLiteral ? 3 : 1;
    for (size_t k = 0; k < delimiter; ++k) copy();
    return true;
  }

  Result<bool> comment(unsigned char c) {
    if (c < 0x80) {
      if (c == '\n') region_ = Region::kBare;
      copy();
      return true;
    }
    Result<char32_t> code = take_character();
    if (!code) return code.error();
    out_ += '?';
    return true;
  }

  // A closing delimiter of a multi-line string takes up to two more quotes as content.
  void close_multi(char quote) {
    size_t run = 0;
    while (i_ + run < in_.size() && in_[i_ + run] == quote && run < 5) ++run;
    for (size_t k = 0; k < run; ++k) copy();
    region_ = Region::kBare;
  }

  Result<bool> basic(unsigned char c) {
    const bool multi = region_ == Region::kMultiBasic;
    if (c >= 0x80) {
      Result<char32_t> code = take_character();
      if (!code) return code.error();
      out_ += escape_of(code.value());
      return true;
    }
    if (c == '\\') {
      copy();
      if (i_ < in_.size() && static_cast<unsigned char>(in_[i_]) >= 0x80) {
        return malformed("'\\' before a non-ASCII character is not a TOML escape");
      }
      if (i_ < in_.size()) copy();
      return true;
    }
    if (multi && at("\"\"\"")) {
      close_multi('"');
      return true;
    }
    if (!multi && (c == '"' || c == '\n')) region_ = Region::kBare;  // a newline: toml++ reports it
    copy();
    return true;
  }

  // A literal string is copied as it is when it is ASCII, else rewritten as the basic string
  // with the same value ('\' and '"' escaped, the newline after ''' kept: TOML trims it in both).
  Result<bool> literal() {
    const bool multi = region_ == Region::kMultiLiteral;
    size_t end = i_;
    bool ascii = true;
    while (end < in_.size() && !(multi ? in_.compare(end, 3, "'''") == 0 : in_[end] == '\'' || in_[end] == '\n')) {
      ascii &= static_cast<unsigned char>(in_[end]) < 0x80;
      ++end;
    }
    if (ascii) {
      while (i_ < end) copy();
      if (multi && i_ < in_.size()) close_multi('\'');
      else region_ = Region::kBare;
      return true;
    }
    // The opening quote(s) were copied already: turn them into double quotes.
    out_.replace(out_.size() - (multi ? 3 : 1), multi ? 3 : 1, multi ? "\"\"\"" : "\"");
    while (i_ < end) {
      const unsigned char c = static_cast<unsigned char>(in_[i_]);
      if (c >= 0x80) {
        Result<char32_t> code = take_character();
        if (!code) return code.error();
        out_ += escape_of(code.value());
      } else {
        if (c == '\\' || c == '"') out_ += '\\';
        copy();
      }
    }
    // Closing: up to two extra quotes are content, then the delimiter itself.
    size_t run = 0;
    while (i_ + run < in_.size() && in_[i_ + run] == '\'' && run < 5) ++run;
    if (!multi) run = std::min<size_t>(run, 1);
    const size_t extra = multi && run > 3 ? run - 3 : 0;
    for (size_t k = 0; k < extra; ++k) out_ += '\'';
    i_ += run, column_ += run;
    if (run > 0) out_ += multi ? "\"\"\"" : "\"";
    region_ = Region::kBare;
    return true;
  }

  const std::string& in_;
  std::string out_;
  size_t i_ = 0, line_ = 1, column_ = 1;
  Region region_ = Region::kBare;
};

}  // namespace

Result<std::string> toml_as_ascii(const std::string& text) { return Rewriter(text).run(); }

}  // namespace trainfit::config_files
