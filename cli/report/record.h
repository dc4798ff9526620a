// `trainfit report`: one audit line (lib/admission/src/audit.cpp) as typed data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/estimate.h"

namespace trainfit::cli::report {

// The audit's "action" words: the four verdicts, and the two records that are not checks.
enum class Action { kAccept, kWarn, kReject, kResize, kExempt, kUnchecked };
constexpr int kActions = 6;
const char* to_string(Action action);
// The verdicts a check ends in (the "checked" records); exempt and unchecked are not.
inline bool is_check(Action a) { return a != Action::kExempt && a != Action::kUnchecked; }

struct Record {
  int64_t time = 0;  // seconds since the epoch
  std::string event, user, account, partition, qos, gpu, reason, annotation;
  Action action = Action::kAccept;
  int64_t gpus_requested = 0;
  std::string decision_id;  // also on the job's AdminComment when Slurm created the job
  std::optional<int64_t> min_gpus, resized_to, time_limit_min;
  std::optional<int64_t> gpus_held;  // whole nodes (--exclusive) hold more than they ask for; none in older lines
  // Offload: host RAM the step needs per node, and the job's memory request per node (GiB);
  // none without offload, without a request, or in lines from older plugins.
  std::optional<double> host_ram_per_node_gb, mem_per_node_gb;
  // The usable HBM and the prediction's likely range (GiB); none in lines from older plugins.
  std::optional<double> predicted_gb, capacity_gb, likely_low_gb, likely_high_gb;
  std::vector<Change> advice;  // the refusal's cheapest change; empty: none (or an older audit line)
  // From the annotation, parsed with the plugin's own comment parser.
  std::string model;   // "llama3-70b"; "(none)", "(custom)" without a model, "(unreadable)"
  std::string config;  // the other fields, canonical ("seq_length=8192 zero_stage=3")
};

// The reason audit.cpp writes for a job that does not fit on the GPUs it asks for.
const char* oom_reason();
inline bool is_oom(const Record& r) { return r.reason == oom_reason(); }

// Parses one line, or says what is wrong with it ("no field 'action'"), the field named.
Result<Record> parse_record(const std::string& line);

// "2026-12-03T08:00:00Z" (audit times); with date_ok also "2026-12-03", "2026-12-03T08:00"
// and without the Z (always UTC). False when the text is none of these.
bool parse_utc(const std::string& text, bool date_ok, int64_t* seconds);
constexpr const char* kUtcAccepted = "YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z] (UTC)";

}  // namespace trainfit::cli::report
