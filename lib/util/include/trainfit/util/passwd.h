// Passwd lookups (getpwnam_r, getpwuid_r) that grow their buffer when the entry does not fit
// (ERANGE: a long gecos, many NSS fields) instead of reading that as "unknown user".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "trainfit/error.h"
#include "trainfit/export.h"

namespace trainfit {

constexpr size_t kPasswdFirstBuffer = 4096;
constexpr size_t kMaxPasswdBuffer = size_t{1} << 20;  // the buffer doubles up to this, then gives up

// The user's uid. kMissing: no such user; kUnavailable: the lookup failed (NSS down, EMFILE,
// an entry larger than kMaxPasswdBuffer) and may succeed later.
TRAINFIT_API Result<uint32_t> uid_of_user(const std::string& name, size_t first_buffer = kPasswdFirstBuffer);
// The uid's user name, with the same errors.
TRAINFIT_API Result<std::string> name_of_uid(uint32_t uid, size_t first_buffer = kPasswdFirstBuffer);

}  // namespace trainfit
