#include "trainfit/util/json_escape.h"

namespace trainfit {

JsonEscape json_escape(unsigned char c) {
  switch (c) {
    case '"': return {{'\\', '"'}, 2};
    case '\\': return {{'\\', '\\'}, 2};
    case '\b': return {{'\\', 'b'}, 2};
    case '\f': return {{'\\', 'f'}, 2};
    case '\n': return {{'\\', 'n'}, 2};
    case '\r': return {{'\\', 'r'}, 2};
    case '\t': return {{'\\', 't'}, 2};
    default: break;
  }
  constexpr char kHex[] = "0123456789abcdef";
  return {{'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]}, 6};
}

}  // namespace trainfit
