// Bounded reads of the files trainfit is pointed at (trainfit.conf, site catalogs, HF and
// framework configs): regular files only, with a size limit, so that a FIFO cannot block
// slurmctld or sbatch and /dev/zero cannot fill memory.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "trainfit/error.h"

namespace trainfit {

// A regular file's contents, at most max_bytes; never blocks on a FIFO, never reads a
// directory or a device. The error's field is "file", its message "PATH: why", its reason "why";
// kMissing = not found, kUnavailable = may pass by itself (EMFILE, ENOMEM, EAGAIN).
TRAINFIT_API Result<std::string> read_regular_file(const std::string& path, size_t max_bytes);

// What a path is when it is not a regular file: "a FIFO", "a directory", ...
TRAINFIT_API const char* file_kind(mode_t mode);

// Permission bits as ls -l's octal: "0777".
TRAINFIT_API std::string octal_mode(mode_t mode);

}  // namespace trainfit
