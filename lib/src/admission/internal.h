// Small pieces the admission files share (not part of the API).
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "trainfit/admission.h"

namespace trainfit::admission {

// A decision that refuses or warns, with its reason and message.
inline Decision decision_of(Verdict verdict, Reason reason, std::string message) {
  Decision d;
  d.verdict = verdict;
  d.reason = reason;
  d.message = std::move(message);
  return d;
}

// What a path is when it is not a regular file: "a FIFO", "a directory", ...
inline const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "of an unknown type";
}

// Permission bits as ls -l's octal: "0777".
inline std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace trainfit::admission
