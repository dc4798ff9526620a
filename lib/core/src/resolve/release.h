// Release numbers ("4.45", "v0.2.1", "0.43.2"), as the fields that name a framework's or a
// library's release write them, and their order.
#pragma once

#include <string>

namespace trainfit::resolving {

// (major, minor, patch) from "4.45", "v0.2.1" or "5"; false when the text is not one.
bool parse_release(const std::string& text, int release[3]);
// Whether `release` comes before major.minor.patch.
bool before(const int release[3], int major, int minor, int patch = 0);

}  // namespace trainfit::resolving
