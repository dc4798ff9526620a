// What the gate decides for a job or an update, and why (decision.cpp, resize.cpp, update.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/estimate.h"
#include "trainfit/export.h"
#include "trainfit/request.h"
#include "trainfit/admission/annotation.h"
#include "trainfit/admission/gres.h"
#include "trainfit/admission/policy.h"

namespace trainfit::admission {

// A job's partition list is judged entry by entry: at most this many distinct partitions.
constexpr size_t kMaxJobPartitions = 64;

// The job's memory request per node, as Slurm keeps it (MiB): --mem, or --mem-per-cpu with the
// CPUs it asks per node. None (0): the job may use its nodes' whole memory.
struct JobMemory {
  int64_t per_node_mb = 0;    // --mem
  int64_t per_cpu_mb = 0;     // --mem-per-cpu
  int64_t cpus_per_node = 1;  // the fewest CPUs per node the job asks for (--mem-per-cpu's multiplier)
  int64_t total_mb() const { return per_node_mb > 0 ? per_node_mb : per_cpu_mb * cpus_per_node; }
  std::string written() const;  // "--mem=131072M", "--mem-per-cpu=4096M x 16 CPUs"
};

struct Job {
  Annotation annotation;
  Result<bool> annotation_read = true;  // or why the annotation could not be read
  JobGpuFields fields;
  JobMemory memory;
  std::string partition;  // as submitted: "" (the default), "gpu" or a list "elastic,gpu"
  uint32_t uid = 0;
  std::string account, qos;
  std::string constraint;  // --constraint (job_desc features): may select the nodes' GPU type
  bool step = false;      // an srun step inside an allocation: checked, never resized
  // A heterogeneous job's component (0 = the first, -1 = not a hetjob). sbatch hands the
  // --llm-* options, and the first component's --comment, to every component: the annotation
  // is the first component's, judged there; the later components pass. No component is
  // resized (the job's total is not in view).
  int64_t het_component = -1;
};

enum class Verdict { kPass, kAccept, kWarn, kReject, kResize };
TRAINFIT_API const char* to_string(Verdict verdict);

// Why a job was refused or warned: each maps to its own Slurm error code.
// kRestateRequired: an update that changes what the gate judged (GPUs, partition) without
// restating the annotation, which job_modify cannot see. kUncertainFit: a warning only, for a
// job not refused whose likely range reaches past the usable HBM.
enum class Reason {
  kNone, kInvalidAnnotation, kGpuRequest, kTooFewGpus, kAnnotationRequired, kUnknownGpu, kInternal, kRestateRequired,
  kUncertainFit
};
TRAINFIT_API const char* to_string(Reason reason);

struct Decision {
  Verdict verdict = Verdict::kPass;
  Reason reason = Reason::kNone;
  bool exempt = false;           // passed by an exemption
  bool unchecked = false;        // an update trainfit cannot see enough of to check (logged)
  std::string message;           // what the user reads; "" when silent
  std::string gpu;               // catalog GPU the job was checked against
  double per_gpu_gb = 0, capacity_gb = 0;
  double likely_low_gb = 0, likely_high_gb = 0;  // per_gpu_gb's likely range (LikelyRange)
  int64_t gpus_requested = 0;
  int64_t min_gpus = 0;          // 0: none fits, or not computed (an accepted job without --llm-check)
  const char* min_gpus_bound = "point";  // the figure min_gpus was found for: point | likely_high (resize_to)
  int64_t global_batch = 0;
  std::vector<Change> advice;    // a refusal's cheapest change that fits on the GPUs asked for ("or: ..."); empty: none
  // Offload: host RAM the step needs on the job's fullest node, and the job's memory request
  // per node (0: none, the node's whole memory); the message warns when the first is larger.
  double host_ram_per_node_gb = 0, memory_per_node_gb = 0;
  bool host_ram_short = false;
  // Whole nodes (--exclusive, OverSubscribe=EXCLUSIVE) with fewer GPUs named than the nodes
  // have: Slurm allocates them all. Judged on gpus_requested; the job holds gpus_held
  // (0: what it asks for), because of held_because ("--exclusive" or "OverSubscribe=EXCLUSIVE").
  int64_t gpus_held = 0;
  std::string held_because;
  // For kResize: what the job is given and the fields to write back.
  int64_t resized_to = 0;        // GPUs granted (what the message says)
  std::string new_tres_per_job, new_tres_per_node, new_tres_per_task;
  bool clear_tres_per_socket = false;
  int64_t new_nodes = 0, new_tasks = 0;
};

// Where a decision's numbers come from. slurmctld always computes in-process (the
// default); the SPANK plugin's client-side checks may ask a trainfit service instead
// (endpoint=, docs/slurm.md), with the same policy applied to the answer.
class Estimator {
 public:
  virtual ~Estimator() = default;
  // The prediction for `request` (gpu and num_gpus set) on GPUs with `headroom` of their
  // HBM kept free: resolved config, breakdown, and min_gpus_to_fit when with_min_gpus.
  virtual Result<Response> predict(const Request& request, double headroom, bool with_min_gpus) const = 0;
  // A refusal's "or: ...": the cheapest change that fits on the GPUs asked for, or, when
  // no GPU count fits the job as it is, the first way out that fits (one_line_advice).
  virtual std::optional<Advice> cheapest_change(const Response& response) const = 0;
};

// This process's model (resolve, estimate, min_gpus_to_fit, cheapest_fitting_change).
TRAINFIT_API const Estimator& local_estimator();

// Bounded work per listed partition: one resolve, one estimate, one min-GPU search;
// advice only when refusing. A job listing several partitions is held to each.
TRAINFIT_API Decision decide(const Policy& policy, const Job& job, const Estimator& estimator = local_estimator());

// An update (scontrol update -> job_modify), which carries only the fields it changes.
struct Update {
  Job job;             // the annotation from the update's comment, its GPU fields and partition
  std::string job_id;
  bool sets_gpus = false, sets_partition = false;
  // Features= (--constraint): where a partition's nodes differ in GPUs, a feature selects
  // which of them the job runs on, and so the GPU it is judged on.
  bool sets_features = false;
  bool by_operator = false;  // root, SlurmUser or a trainfit.conf `operators` entry
};
// Checks what the update carries (update.cpp says what Slurm 22.05 lets it see).
TRAINFIT_API Decision decide_update(const Policy& policy, const Update& update);

// The user-facing summary: "trainfit: llama3-70b at seq 8192 needs 97.3 GiB per GPU on
// 8 x H100 (79.6 GiB usable); min_gpus_to_fit=16 (or: --llm-recompute=full fits on 8)".
TRAINFIT_API std::string oom_message(const Response& response, Face face);

// Advice as the user would type it: --llm-recompute=full --gpus=24 / recompute=full gpus=24.
TRAINFIT_API std::string spell_changes(const std::vector<Change>& changes, Face face);

}  // namespace trainfit::admission
