// Admission: what the Slurm plugins need, as plain C++ they can test and link
// statically. No I/O here except audit.cpp's one append; no exceptions escape.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/estimate.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit::admission {

// ---- GPU requests (gres.cpp) ----

// One TRES/GRES list as Slurm writes it in any version: "gpu:8", "gres:gpu:8",
// "gres/gpu:8", "gres/gpu=8", typed "gres:gpu:h100:8", comma or semicolon lists
// ("gres:gpu:2,gres:gpu:1" adds up). Non-GPU entries are kept for rewriting.
struct TresList {
  int64_t gpus = 0;
  std::string gpu_type;              // "" if untyped; the first type seen
  std::vector<std::string> others;   // entries that are not GPUs, verbatim
};
TRAINFIT_API Result<TresList> parse_tres(const std::string& text);

// The job's GPU fields (job_desc_msg_t), with Slurm's NO_VAL markers already removed (0).
struct JobGpuFields {
  std::string per_job, per_node, per_task, per_socket;
  int64_t nodes = 0, tasks = 0, sockets_per_node = 0;
};
struct GpuTotal {
  int64_t gpus = 0;
  std::string type;
  const char* source = "";  // which field carried the request
};
TRAINFIT_API Result<GpuTotal> total_gpus(const JobGpuFields& fields);

// The GPU fields an srun command line asks for (srun's argv up to the program):
// --gpus/-G, --gpus-per-node, --gres, --gpus-per-task with -n/--ntasks, -N/--nodes.
// Fields it does not set keep the values in *fields (from the allocation's environment,
// as GRES strings: SLURM_GPUS=h100:8 is "gpu:h100:8").
TRAINFIT_API void apply_srun_args(const std::vector<std::string>& argv, JobGpuFields* fields);

// The GPU string to write back when resizing ("gres:gpu:h100:16"), keeping other entries.
TRAINFIT_API std::string rewrite_tres(const TresList& original, const std::string& type, int64_t gpus);

// ---- Annotations (annotation.cpp) ----

// SPANK option names (without "--llm-") and the request field each sets; "spec" and
// "hf-config" are special. Shared by the SPANK plugin, the comment parser and job_submit.
struct OptionSpec {
  const char* option;   // "seq"
  const char* field;    // "seq_length"; "" for spec / hf-config / check
  const char* arginfo;  // "N"
  const char* usage;
};
TRAINFIT_API const std::vector<OptionSpec>& llm_options();

// Applies one option value ("seq", "8192") to a request; errors name the option.
TRAINFIT_API Result<bool> apply_option(Request& request, const std::string& option, const std::string& value);

// From job_desc->spank_job_env: "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192" and the
// geometry the SPANK plugin read from an HF config ("TRAINFIT_GEOMETRY=k=v,...").
// Sets *found when any trainfit option is present.
TRAINFIT_API Result<bool> annotation_from_spank_env(const std::vector<std::string>& env, Request* request,
                                                    bool* found);

// From a job comment "trainfit: model=llama3-70b seq=8192 zero=3" (keys: the options
// above or any request field). *found is false when the comment is not trainfit's.
TRAINFIT_API Result<bool> annotation_from_comment(const std::string& comment, Request* request, bool* found);

// "model=llama3-70b seq=8192" for the audit log and messages.
TRAINFIT_API std::string describe(const Request& request);

// ---- Policy (policy.cpp) ----

enum class Action { kReject, kResize, kWarn };
TRAINFIT_API const char* to_string(Action action);

struct PartitionPolicy {
  Action action = Action::kReject;
  int64_t resize_max_gpus = 64;
  double headroom = 0.0;           // fraction of HBM kept free
  std::string default_gpu = "h100";
  int64_t gpus_per_node = 8;
  bool require_annotation = false;
};

struct Policy {
  PartitionPolicy defaults;
  std::map<std::string, PartitionPolicy> partitions;  // overrides, by partition name
  std::string audit_log = "/var/log/slurm/trainfit-audit.jsonl";
  bool fail_open = true;  // on_error = open | closed
  const PartitionPolicy& for_partition(const std::string& partition) const;
};

// key = value lines; "# comments"; per-partition overrides as
// "partition.NAME.KEY = VALUE". Errors: "trainfit.conf line N: ...".
TRAINFIT_API Result<Policy> parse_policy(const std::string& text);

// ---- Decision (decision.cpp) ----

struct Job {
  Request annotation;
  bool annotated = false;
  GpuTotal gpus;
  JobGpuFields fields;
  std::string partition;
};

enum class Verdict { kPass, kAccept, kWarn, kReject, kResize };
TRAINFIT_API const char* to_string(Verdict verdict);

struct Decision {
  Verdict verdict = Verdict::kPass;
  std::string message;           // what the user reads; "" when silent
  std::string gpu;               // GPU type used
  double per_gpu_gb = 0, capacity_gb = 0;
  int64_t min_gpus = 0;
  int64_t resized_to = 0;
  int64_t global_batch = 0;
  // For kResize: the fields to write back.
  std::string new_tres_per_job, new_tres_per_node;
  int64_t new_nodes = 0;
};

// Bounded work: one resolve, one estimate, one min-GPU search, advice only on OOM.
TRAINFIT_API Decision decide(const Policy& policy, const Job& job);

// The user-facing summary: "trainfit: llama3-70b at seq 8192 needs 97.3 GiB per GPU on
// 8 x H100 (79.6 GiB usable); min_gpus_to_fit=16 (or: --llm-recompute=full fits on 8)".
TRAINFIT_API std::string oom_message(const Response& response);

// ---- Audit (audit.cpp) ----

struct AuditRecord {
  int64_t time = 0;  // seconds since the epoch
  uint32_t uid = 0;
  std::string user, account, partition, job_name, annotation;
  int64_t gpus_requested = 0;
  Decision decision;
  std::string event = "submit";  // submit | modify
};
TRAINFIT_API std::string audit_json(const AuditRecord& record);

// Appends one line with a single O_APPEND write (atomic for concurrent writers).
// Returns "" or the reason it failed.
TRAINFIT_API std::string append_line(const std::string& path, const std::string& line);

}  // namespace trainfit::admission
