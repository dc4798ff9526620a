// Log lines built from user input: control characters escaped, so that a job comment
// cannot forge a line in slurmctld's log or send escape sequences to a terminal.
#include "trainfit/admission.h"

namespace trainfit::admission {

std::string printable(const std::string& text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    // C0 controls, DEL, and C1 controls as UTF-8 (0xc2 0x80..0x9f, e.g. CSI).
    const bool c1 = c == 0xc2 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80;
    if (c < 0x20 || c == 0x7f || c1) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      if (c1) {
        const unsigned char d = static_cast<unsigned char>(text[++i]);
        out += "\\x";
        out += kHex[d >> 4];
        out += kHex[d & 15];
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace trainfit::admission
