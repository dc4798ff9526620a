// The audit record of a decision and its JSON line (audit.cpp, printable.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainfit/export.h"
#include "trainfit/request.h"
#include "trainfit/admission/audit_fields.h"
#include "trainfit/admission/decision.h"

namespace trainfit::admission {

struct AuditRecord {
  AuditRecord() = default;
  // The job's annotation and decision moved in once (a Request is ~1.8 KB: the job path
  // builds its record in place rather than assigning into a default one).
  AuditRecord(Request&& annotation_, Decision&& decision_)
      : annotation(std::move(annotation_)), decision(std::move(decision_)) {}
  int64_t time = 0;  // seconds since the epoch
  std::string event = audit_field::kEventSubmit;  // or kEventModify
  std::string decision_id;       // also stamped on the job's AdminComment
  std::string job_id;            // modify only (a submission has no id yet)
  uint32_t uid = 0;
  std::string user, account, partition, qos, job_name, gpu_request;
  int64_t time_limit_minutes = 0;  // the job's --time as submitted; 0: not given (a partition default applies later)
  Request annotation;  // formatted by the writer thread, not in job_submit
  Decision decision;
};
// One JSON line; user strings capped at kMaxAuditField bytes with a visible marker.
constexpr size_t kMaxAuditField = 1024;
// At most `most` bytes of text (cut at a UTF-8 character) and "…[truncated N bytes]",
// N counted from total (the text's full length when only a prefix is passed).
TRAINFIT_API std::string truncated(const std::string& text, size_t most, size_t total = 0);
TRAINFIT_API std::string audit_json(const AuditRecord& record);
// The GPUs the job holds (the audit's gpus_held): its whole nodes' (--exclusive), else what it
// was resized to, else what it asks for; a refused job's, had it run.
TRAINFIT_API int64_t gpus_held(const Decision& decision);

// The AdminComment stamp's last part, "decision <id>" (plugin/job_submit/job_desc.cpp
// stamp_admin_comment).
constexpr const char* kStampDecision = "decision ";
// The decision id stamped in a job's AdminComment, read from a line that holds one (sacct -P
// or squeue output with other columns too): the last ';'-separated part that reads
// "decision <hex>-<n>"; "" when the line has none.
TRAINFIT_API std::string stamped_decision_id(std::string_view line);

// "79.65": printf's "%.Nf" without printf (audit lines and stamps are on the hot path); a value
// that is not finite is written as 0.
TRAINFIT_API void append_fixed(std::string& out, double value, int decimals);

// Logging.

// Control characters (terminal escapes included) as \xNN, so user text cannot forge
// or garble lines in slurmctld's log or a terminal.
TRAINFIT_API std::string printable(const std::string& text);

}  // namespace trainfit::admission
