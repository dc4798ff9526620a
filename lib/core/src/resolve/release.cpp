#include "release.h"

namespace trainfit::resolving {

bool parse_release(const std::string& text, int release[3]) {
  size_t i = !text.empty() && (text[0] == 'v' || text[0] == 'V') ? 1 : 0;
  int part = 0;
  release[0] = release[1] = release[2] = 0;
  bool digits = false;
  for (; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch >= '0' && ch <= '9') {
      if (release[part] > 100000) return false;
      release[part] = release[part] * 10 + (ch - '0');
      digits = true;
    } else if (ch == '.' && digits && part < 2) {
      ++part;
      digits = false;
    } else {
      return false;
    }
  }
  return digits;
}

bool before(const int release[3], int major, int minor, int patch) {
  if (release[0] != major) return release[0] < major;
  if (release[1] != minor) return release[1] < minor;
  return release[2] < patch;
}

}  // namespace trainfit::resolving
