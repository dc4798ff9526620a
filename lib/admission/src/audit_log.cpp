// The audit log file: whole JSON lines or nothing (see audit_log.h).
#include "trainfit/admission/audit_log.h"

#include "internal.h"
#include "trainfit/util/clock.h"
#include "trainfit/util/json_escape.h"
#include "trainfit/util/utf8.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace trainfit::admission {

namespace {

// Refusals of the path (what it is, who may write it) are kInvalidValue: they stay until an
// administrator changes something. Failures to open or write are kUnavailable: they may pass.
Error refused(const std::string& message) { return make_error(ErrorCode::kInvalidValue, "audit_log", message); }
Error failed(const std::string& message) { return make_error(ErrorCode::kUnavailable, "audit_log", message); }

Error not_regular(const std::string& path, mode_t mode) {
  return refused(path + " is not a regular file (" + file_kind(mode) + ")");
}

Error symbolic_link(const std::string& path) {
  return refused(path + " is a symbolic link; refused (the log is opened with O_NOFOLLOW)");
}

// As sshd's StrictModes: a log another user can write to, or replace through its directory,
// is not trusted (the file or its folder writable by others, or the file owned by someone
// other than root or this process).
Result<bool> folder_private(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) == 0 && (dir.st_mode & S_IWOTH) != 0) {
    return refused("the folder " + folder + " is writable by others (mode " + octal_mode(dir.st_mode) +
                   "): a user could replace " + path + "; refused");
  }
  return true;
}

Result<bool> file_private(const std::string& path, const struct stat& file) {
  if ((file.st_mode & S_IWOTH) != 0) {
    return refused(path + " is writable by others (mode " + octal_mode(file.st_mode) + "); refused");
  }
  if (file.st_uid != 0 && file.st_uid != ::geteuid()) {
    return refused(path + " is owned by uid " + std::to_string(file.st_uid) + ", not root or this process; refused");
  }
  return true;
}

// Read-write so that pread can look at the last byte; write-only if the file is
// writable but not readable (then a half line is assumed, see ends_in_half_line).
// O_NOFOLLOW: a symlink planted at the log's name is refused (ELOOP), never followed.
int open_for_append(const std::string& path) {
  const int flags = O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW;
  const int fd = ::open(path.c_str(), O_RDWR | flags, 0640);
  if (fd >= 0 || errno != EACCES) return fd;
  return ::open(path.c_str(), O_WRONLY | flags, 0640);
}

// Drops the first n bytes of the pending parts after a partial writev.
void skip_written(iovec*& parts, int& count, size_t n) {
  while (count > 0 && n >= parts->iov_len) {
    n -= parts->iov_len;
    ++parts;
    --count;
  }
  if (count > 0) {
    parts->iov_base = static_cast<char*>(parts->iov_base) + n;
    parts->iov_len -= n;
  }
}

// Every byte written, or why not (the error's message is the reason alone). Loops only
// while writes make progress, so a full disk ends it instead of spinning.
// *done counts the bytes written, so that a failure knows where the record began.
Result<bool> write_all(int fd, iovec* parts, int count, size_t* done) {
  *done = 0;
  while (count > 0) {
    const ssize_t written = ::writev(fd, parts, count);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return failed(std::strerror(errno));
    if (written == 0) return failed("short write");
    *done += static_cast<size_t>(written);
    skip_written(parts, count, static_cast<size_t>(written));
  }
  return true;
}

// The same error with more said after its message ("; record dropped").
Error followed_by(Error error, const char* more) {
  error.message += more;
  return error;
}

}  // namespace

AuditLog::AuditLog(std::chrono::milliseconds rotation_check_interval)
    : check_interval_ms_(static_cast<int64_t>(rotation_check_interval.count())) {}

AuditLog::~AuditLog() { close(); }

void AuditLog::close() {
  if (fd_ >= 0) ::close(fd_);  // never retried: on Linux the fd is gone even on EINTR
  fd_ = -1;
}

Result<bool> AuditLog::open(const std::string& path) {
  close();
  path_ = path;
  // Look before opening: opening a device can have side effects (a tape rewinds), and a
  // symlink or a folder others can write is not opened at all.
  struct stat before {};
  const bool exists = ::lstat(path.c_str(), &before) == 0;
  if (exists && S_ISLNK(before.st_mode)) return symbolic_link(path);
  if (exists && !S_ISREG(before.st_mode)) return not_regular(path, before.st_mode);
  if (Result<bool> folder = folder_private(path); !folder) return folder;
  const int fd = open_for_append(path);
  if (fd < 0 && errno == ELOOP) return symbolic_link(path);
  if (fd < 0) return failed("cannot open " + path + ": " + std::strerror(errno));
  // And check again what was opened: the path may have changed in between.
  struct stat opened {};
  Result<bool> checked = true;
  if (::fstat(fd, &opened) != 0) checked = failed("cannot open " + path + ": " + std::strerror(errno));
  else if (!S_ISREG(opened.st_mode)) checked = not_regular(path, opened.st_mode);
  else checked = file_private(path, opened);
  if (!checked) {
    ::close(fd);
    return checked;
  }
  fd_ = fd;
  tail_unknown_ = true;
  next_rotation_check_ms_ = monotonic_ms() + check_interval_ms_;
  return true;
}

bool AuditLog::rotated() const {
  if (fd_ < 0) return false;
  struct stat named {};
  if (::stat(path_.c_str(), &named) != 0) return errno == ENOENT;  // EACCES etc.: cannot tell
  struct stat opened {};
  if (::fstat(fd_, &opened) != 0) return false;
  return named.st_dev != opened.st_dev || named.st_ino != opened.st_ino;
}

Result<bool> AuditLog::append(const std::string& line) {
  if (line.find('\n') != std::string::npos) return append_problem("the record contains a newline");
  Result<bool> opened = reopen_if_needed();
  if (!opened) return followed_by(opened.error(), "; record dropped");
  return write_record(line);
}

Result<bool> AuditLog::append_lines(const std::string& lines) {
  Result<bool> opened = reopen_if_needed();
  if (!opened) return followed_by(opened.error(), "; records dropped");
  return write_record(lines);
}

Result<bool> AuditLog::reopen_if_needed() {
  if (path_.empty()) return make_error(ErrorCode::kMissing, "audit_log", "the audit log is not open");
  const std::string path = path_;  // open() assigns path_
  if (!is_open()) return open(path);  // an earlier open or reopen failed: try again
  if (rotation_check_due() && rotated()) return open(path);
  return true;
}

bool AuditLog::rotation_check_due() {
  const int64_t now = monotonic_ms();
  if (now < next_rotation_check_ms_) return false;
  next_rotation_check_ms_ = now + check_interval_ms_;
  return true;
}

// A file that does not end in '\n' holds a half line the next record must not join.
bool AuditLog::ends_in_half_line(int64_t size) const {
  if (size <= 0) return false;
  char last = 0;
  const ssize_t got = ::pread(fd_, &last, 1, static_cast<off_t>(size - 1));
  return got != 1 || last != '\n';  // unreadable: an empty line is better than a joined one
}

Result<bool> AuditLog::write_record(const std::string& line) {
  // The last byte is looked at only after an open or a failure: no syscall but the
  // write itself on the common path.
  bool newline_first = false;
  if (tail_unknown_) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return append_problem(std::strerror(errno));
    newline_first = ends_in_half_line(static_cast<int64_t>(st.st_size));
  }

  // One writev, no copy of the line; iovec wants non-const pointers but only reads.
  char newline = '\n';
  iovec parts[3];
  int count = 0;
  if (newline_first) parts[count++] = {&newline, 1};
  parts[count++] = {const_cast<char*>(line.data()), line.size()};
  parts[count++] = {&newline, 1};

  size_t written = 0;
  Result<bool> all = write_all(fd_, parts, count, &written);
  if (all) {
    tail_unknown_ = false;
    return true;
  }
  tail_unknown_ = true;  // whatever happens below, look at the last byte next time
  Error error = append_problem(all.error().message);
  if (Result<bool> cut = cut_back(written); !cut) error.message += "; cannot cut it back: " + cut.error().message;
  return error;
}

// Removes the written part of a failed record: O_APPEND put it at the end, so the
// record began `written` bytes before the end. Never extends the file.
Result<bool> AuditLog::cut_back(size_t written) {
  if (written == 0) return true;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return failed(std::strerror(errno));
  if (static_cast<uint64_t>(st.st_size) < written) return true;
  const int64_t size = static_cast<int64_t>(st.st_size) - static_cast<int64_t>(written);
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return failed(std::strerror(errno));
  return true;
}

Error AuditLog::append_problem(const std::string& reason) const {
  return failed("cannot append to " + path_ + ": " + reason + "; record dropped");
}

// ---- JSON strings ----

namespace {


// Printable ASCII that goes into a JSON string as it is.
bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

}  // namespace

void append_json_string(std::string& out, const std::string& text, size_t max_bytes) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const size_t size = text.size();
  const size_t limit = size < max_bytes ? size : max_bytes;
  out.reserve(out.size() + limit + 2);
  out += '"';
  size_t at = 0;
  while (at < limit) {
    // Runs of plain ASCII, the common case, are copied in one go.
    size_t run = at;
    while (run < limit && plain(bytes[run])) ++run;
    out.append(text, at, run - at);
    at = run;
    if (at == limit) break;
    if (bytes[at] < 0x80) {
      out += json_escape(bytes[at++]).view();
      continue;
    }
    const Utf8Sequence step = utf8_sequence(text, at);
    if (at + step.length > limit) break;  // would not fit whole: cut before it
    if (step.valid) out.append(text, at, step.length);
    else out += kUtf8Replacement;
    at += step.length;
  }
  if (at < size) {
    out += "\xE2\x80\xA6[truncated ";  // U+2026
    out += std::to_string(size - at);
    out += " bytes]";
  }
  out += '"';
}

}  // namespace trainfit::admission
