// The policy as every part of trainfit applies it, assembled in one place (assemble.cpp):
// trainfit.conf parsed, its users resolved, slurm.conf's facts added. job_submit (at load),
// `trainfit check-config` and the SPANK plugin's srun step check all call assemble_policy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/admission/policy.h"
#include "trainfit/admission/slurm_conf.h"

namespace trainfit::admission {

struct AssembledPolicy {
  Policy policy;
  std::vector<std::string> unknown_users;  // exempt_users and operators no lookup knows (ignored)
  // trainfit.conf and slurm.conf disagree: an override or default_partition naming no
  // partition, a default_partition other than slurm.conf's Default=YES, a default_gpu none
  // of a partition's nodes has, a node GPU type the catalog does not know.
  std::vector<Error> problems;
  // Not wrong, but unsafe: exempt_accounts without AccountingStorageEnforce checking accounts.
  std::vector<Error> warnings;
  // Why slurm.conf's facts are missing ("" when it was read).
  std::string slurm_conf_note;
};

// trainfit.conf's text (errors as parse_policy's) with slurm.conf's text, or why it was not
// read (then only trainfit.conf's figures apply). Reads no file itself.
TRAINFIT_API Result<AssembledPolicy> assemble_policy(const std::string& conf_text,
                                                     const Result<std::string>& slurm_conf_text, UidLookup lookup);

// The uid of a user name from the passwd database (getpwnam_r), nullopt when unknown.
TRAINFIT_API std::optional<uint32_t> passwd_uid(const std::string& name);

}  // namespace trainfit::admission
