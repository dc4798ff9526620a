// Bounded reads (file.h): each failure says what the path really is.
#include "trainfit/util/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>

#include "trainfit/util/text.h"

namespace trainfit {
namespace {

Error file_error(ErrorCode code, const std::string& path, const std::string& why) {
  return located_error(code, "file", quoted_path(path), 0, why);
}

class Fd {  // closes on every return path
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A failure that may pass by itself (a full descriptor table, memory): kUnavailable, so
// that a reloader tries again instead of reporting the file as invalid.
ErrorCode read_failure(int error) {
  switch (error) {
    case EMFILE: case ENFILE: case ENOMEM: case EAGAIN: case EINTR: return ErrorCode::kUnavailable;
    default: return ErrorCode::kInvalidValue;
  }
}

}  // namespace

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown type";
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Result<std::string> read_regular_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    return file_error(error == ENOENT ? ErrorCode::kMissing : read_failure(error), path,
                      error == ENOENT ? "not found" : std::string("cannot be read: ") + std::strerror(error));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return file_error(ErrorCode::kInvalidValue, path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return file_error(ErrorCode::kInvalidValue, path, std::string("is ") + file_kind(st.st_mode) + ", not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return file_error(ErrorCode::kInvalidValue, path,
                      "is " + std::to_string(st.st_size) + " bytes; accepted: at most " + std::to_string(max_bytes));
  }
  std::string text;
  char buffer[65536];
  while (true) {  // bounded even if the file grows while read
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      return file_error(read_failure(error), path, std::string("cannot be read: ") + std::strerror(error));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      return file_error(ErrorCode::kInvalidValue, path, "is larger than " + std::to_string(max_bytes) + " bytes");
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace trainfit
