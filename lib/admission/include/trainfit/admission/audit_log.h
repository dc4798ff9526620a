// The audit log file: whole JSON lines or nothing.
//
// The Slurm admission plugin appends one JSON line per decision to a file it keeps
// open. A reader (jq, a log shipper) must never see a half record, even when the
// disk fills up, slurmctld crashes mid-write or logrotate moves the file away.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "trainfit/error.h"
#include "trainfit/export.h"

namespace trainfit::admission {

// One open audit file. Not thread-safe: slurmctld's plugin is the only writer and
// calls it under its own mutex. No exceptions escape except std::bad_alloc from
// building an error. Errors' field is "audit_log"; kInvalidValue: the path is refused
// (what it is, who may write it); kUnavailable: opening or writing failed (may pass).
class TRAINFIT_API AuditLog {
 public:
  // rotation_check_interval: how often append() looks whether logrotate moved the
  // file (a stat per check); tests pass 0 to check on every append.
  explicit AuditLog(std::chrono::milliseconds rotation_check_interval = std::chrono::seconds(1));
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Opens (creating it 0640) PATH for appending; closes any file open before.
  // The error is one line: "cannot open PATH: REASON" or
  // "PATH is not a regular file (a FIFO)" (a directory, a character device, ...).
  // Never blocks, also not on a FIFO.
  Result<bool> open(const std::string& path);

  // Appends line + "\n" as one whole line or not at all: a record that cannot be
  // written completely (disk full, file size limit, I/O error) is cut back off the
  // file and the error says "cannot append to PATH: REASON; record dropped". The next
  // append tries again. If the file ends in a half line (a crash, another writer),
  // a "\n" goes first so the record starts on its own line. Reopens PATH when it
  // was rotated, and when an earlier open failed. line must not contain '\n'.
  Result<bool> append(const std::string& line);

  // Several records at once ("line\nline\nline", no final newline) in one write, all
  // or none, with the guarantees of append(): how the writer thread appends a batch.
  Result<bool> append_lines(const std::string& lines);

  // True when PATH no longer names the open file: removed, or replaced (renamed
  // away and created again).
  bool rotated() const;

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  void close();

 private:
  Result<bool> reopen_if_needed();
  bool rotation_check_due();
  bool ends_in_half_line(int64_t size) const;
  Result<bool> write_record(const std::string& line);
  Result<bool> cut_back(size_t written);
  Error append_problem(const std::string& reason) const;

  int fd_ = -1;
  std::string path_;
  bool tail_unknown_ = true;  // checked with pread only after open and after a failure
  int64_t check_interval_ms_;
  int64_t next_rotation_check_ms_ = 0;
};

// Appends text to out as a JSON string literal, quotes included, without a JSON
// library (it runs for every job submission):
//  - escapes \" \\ \n \r \t \b \f, and other bytes < 0x20 and 0x7f as \u00XX;
//  - replaces ill-formed UTF-8 (overlongs, surrogates, code points above
//    U+10FFFF, truncated sequences, stray continuation bytes) with U+FFFD, one per
//    maximal ill-formed subpart (Unicode's recommended practice, as in WHATWG);
//  - keeps at most max_bytes bytes of text, cut before a character that would not
//    fit whole, and then marks the cut inside the string with
//    "…[truncated N bytes]" (U+2026, N = bytes of text dropped).
// max_bytes bounds the input kept: escapes can make the literal up to six times longer.
TRAINFIT_API void append_json_string(std::string& out, const std::string& text, size_t max_bytes);

}  // namespace trainfit::admission
