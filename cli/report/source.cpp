#include "source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "trainfit/util/file.h"

namespace trainfit::cli::report {
namespace {

// One way to pull bytes: plain read(2) or zlib. read() returns -1 on error, 0 at the end.
class Bytes {
 public:
  virtual ~Bytes() = default;
  virtual long read(char* buffer, size_t size) = 0;
  virtual std::string error() const = 0;
};

class PlainBytes : public Bytes {
 public:
  explicit PlainBytes(int fd) : fd_(fd) {}
  ~PlainBytes() override { close(fd_); }
  long read(char* buffer, size_t size) override {
    ssize_t got;
    do got = ::read(fd_, buffer, size);
    while (got < 0 && errno == EINTR);
    if (got < 0) errno_ = errno;
    return static_cast<long>(got);
  }
  std::string error() const override { return std::strerror(errno_); }

 private:
  int fd_;
  int errno_ = 0;
};

class GzipBytes : public Bytes {
 public:
  explicit GzipBytes(gzFile file) : file_(file) { gzbuffer(file_, 128 * 1024); }
  ~GzipBytes() override { gzclose(file_); }  // closes the descriptor too
  // A cut stream: zlib 1.2.13 (Debian 12) reports Z_BUF_ERROR with its last data and keeps
  // it; 1.3.2 (Debian unstable) reports it with the last data and clears it at the next
  // call. So the error is taken when it first shows, and the next read returns -1.
  long read(char* buffer, size_t size) override {
    if (!error_.empty()) return -1;
    const int got = gzread(file_, buffer, static_cast<unsigned>(size));
    int code = Z_OK;
    const char* text = gzerror(file_, &code);
    if (code != Z_OK) error_ = text != nullptr && text[0] != '\0' ? text : "zlib error " + std::to_string(code);
    return got <= 0 && !error_.empty() ? -1 : got;
  }
  std::string error() const override { return "damaged gzip data (" + error_ + ")"; }

 private:
  gzFile file_;
  std::string error_;
};

bool gzip_magic(int fd) {
  unsigned char magic[2] = {0, 0};
  return pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// Opens a regular file only: a FIFO or a device would block or never end.
Result<std::unique_ptr<Bytes>> open_bytes(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {  // the reasons in the words of read_regular_file (trainfit/util/file.h)
    return make_error(errno == ENOENT ? ErrorCode::kMissing : ErrorCode::kUnavailable, path,
                      errno == ENOENT ? std::string("not found") : std::string("cannot be read: ") + std::strerror(errno));
  }
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return make_error(ErrorCode::kInvalidValue, path, std::string("is ") + file_kind(st.st_mode) + ", not a regular file");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (!gzip_magic(fd)) return std::unique_ptr<Bytes>(std::make_unique<PlainBytes>(fd));
  gzFile gz = gzdopen(fd, "rb");
  if (gz == nullptr) {
    close(fd);
    return make_error(ErrorCode::kUnavailable, path, "cannot start zlib");  // out of memory
  }
  return std::unique_ptr<Bytes>(std::make_unique<GzipBytes>(gz));
}

// Splits chunks into lines, holding at most `max_line` bytes of the current one.
class Splitter {
 public:
  Splitter(size_t max_line, const LineSink& sink) : max_(max_line), sink_(sink) {}
  void feed(const char* data, size_t size) {
    while (size > 0) {
      const char* newline = static_cast<const char*>(std::memchr(data, '\n', size));
      const size_t part = newline != nullptr ? static_cast<size_t>(newline - data) : size;
      keep(data, part);
      if (newline == nullptr) return;
      end_line();
      data += part + 1;
      size -= part + 1;
    }
  }
  void finish() {  // a last line without '\n' (a file being written) is still a line
    if (!line_.empty() || skipping_) end_line();
  }

 private:
  void keep(const char* data, size_t size) {
    if (skipping_) return;
    if (line_.size() + size > max_) {
      skipping_ = true;
      std::string().swap(line_);
      return;
    }
    line_.append(data, size);
  }
  void end_line() {
    ++number_;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (skipping_) sink_.oversize(number_);
    else sink_.line(number_, line_);
    line_.clear();
    skipping_ = false;
  }

  size_t max_;
  const LineSink& sink_;
  std::string line_;
  bool skipping_ = false;
  int64_t number_ = 0;
};

}  // namespace

Result<ReadEnd> for_each_line(const std::string& path, size_t max_line, const LineSink& sink) {
  Result<std::unique_ptr<Bytes>> opened = open_bytes(path);
  if (!opened) return opened.error();
  const std::unique_ptr<Bytes> bytes = std::move(opened).value();
  Splitter splitter(max_line, sink);
  std::unique_ptr<char[]> buffer(new char[64 * 1024]);
  long got;
  while ((got = bytes->read(buffer.get(), 64 * 1024)) > 0) splitter.feed(buffer.get(), static_cast<size_t>(got));
  splitter.finish();
  return ReadEnd{got < 0 ? bytes->error() : std::string()};
}

}  // namespace trainfit::cli::report
