#include "trainfit/util/passwd.h"

#include <pwd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace trainfit {
namespace {

// Calls lookup(entry, buffer, size, &found) with a buffer that doubles on ERANGE (POSIX:
// "Insufficient storage was supplied ... to contain the data"), bounded by kMaxPasswdBuffer.
template <typename Lookup, typename Take>
auto with_growing_buffer(const std::string& who, size_t first_buffer, Lookup lookup, Take take)
    -> Result<decltype(take(std::declval<const passwd&>()))> {
  size_t size = first_buffer == 0 ? 1 : first_buffer;
  while (true) {
    std::vector<char> buffer(size);
    struct passwd entry {}, *found = nullptr;
    const int error = lookup(&entry, buffer.data(), buffer.size(), &found);
    if (error == 0 && found != nullptr) return take(*found);
    if (error == 0 || error == ENOENT || error == ESRCH || error == EBADF || error == EPERM) {
      return make_error(ErrorCode::kMissing, "user", "user " + who + " is not known to this host");
    }
    if (error != ERANGE || size >= kMaxPasswdBuffer) {
      return make_error(ErrorCode::kUnavailable, "user", "looking up user " + who + " failed: " +
                                                             (error == ERANGE ? "its entry is larger than " +
                                                                                    std::to_string(kMaxPasswdBuffer) + " bytes"
                                                                              : std::string(std::strerror(error))));
    }
    size = size * 2 > kMaxPasswdBuffer ? kMaxPasswdBuffer : size * 2;
  }
}

}  // namespace

Result<uint32_t> uid_of_user(const std::string& name, size_t first_buffer) {
  return with_growing_buffer(
      "'" + name + "'", first_buffer,
      [&name](passwd* entry, char* buffer, size_t size, passwd** found) {
        return ::getpwnam_r(name.c_str(), entry, buffer, size, found);
      },
      [](const passwd& found) { return static_cast<uint32_t>(found.pw_uid); });
}

Result<std::string> name_of_uid(uint32_t uid, size_t first_buffer) {
  return with_growing_buffer(
      "with uid " + std::to_string(uid), first_buffer,
      [uid](passwd* entry, char* buffer, size_t size, passwd** found) {
        return ::getpwuid_r(static_cast<uid_t>(uid), entry, buffer, size, found);
      },
      [](const passwd& found) { return std::string(found.pw_name); });
}

}  // namespace trainfit
