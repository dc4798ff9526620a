// The escape of a byte that cannot stand as itself in a JSON string (RFC 8259, section 7):
// a quote, a backslash or a control character, as \" \\ \b \f \n \r \t where JSON has a
// short form, else \u00xx (lower-case hex, as nlohmann writes it). One table for the
// writers that build JSON by hand (the response writer, the audit log).
#pragma once

#include <string_view>

namespace trainfit {

struct JsonEscape {
  char text[6];
  unsigned char size;
  std::string_view view() const { return {text, size}; }
};

JsonEscape json_escape(unsigned char c);

}  // namespace trainfit
