// Admission: what the Slurm plugins need, as plain C++ they can test and link
// statically (the trainfit_admission library). File I/O lives in conf_file.cpp
// (trainfit.conf, --llm-hf-config) and audit_log.cpp; no exceptions escape.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/catalog.h"
#include "trainfit/error.h"
#include "trainfit/estimate.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit::admission {

// ---- GPU requests (gres.cpp) ----

// The most GPUs a job may ask for; larger requests are a GPU-request error.
constexpr int64_t kMaxJobGpus = int64_t{1} << 20;

// One TRES/GRES list as Slurm writes it in any version: "gpu:8", "gres:gpu:8",
// "gres/gpu:8", "gres/gpu=8", typed "gres:gpu:h100:8", comma or semicolon lists
// ("gres:gpu:2,gres:gpu:1" adds up). Non-GPU entries are kept for rewriting.
struct TresList {
  int64_t gpus = 0;
  std::vector<std::string> gpu_types;  // distinct types as written (case kept), in order
  bool untyped = false;                // some GPU entry has no type
  bool gpu_shares = false;             // shard or mps entries: a share of a GPU
  std::vector<std::string> others;     // entries that are not GPUs, verbatim
  std::string gpu_prefix;              // how the first GPU entry names GPUs: "gres/gpu", "gres:gpu", "gpu"
};
TRAINFIT_API Result<TresList> parse_tres(const std::string& text);

// The job's GPU fields (job_desc_msg_t), with Slurm's NO_VAL markers already removed (0).
struct JobGpuFields {
  std::string per_job, per_node, per_task, per_socket;
  int64_t nodes = 0, max_nodes = 0, tasks = 0, tasks_per_node = 0, sockets_per_node = 0;
  bool whole_nodes = false;  // --exclusive: Slurm gives the job every GPU of its nodes
};
struct GpuTotal {
  int64_t gpus = 0;
  std::vector<std::string> types;  // as written; more than one = mixed types
  bool untyped = false;
  bool gpu_shares = false;         // asks for shares of GPUs (shard, mps)
  const char* source = "";         // which field carried the request: "tres_per_job", ...
  std::string written;             // the request as the user wrote it: "--gpus=h100:8"
};
// Totals computed without overflow; more than kMaxJobGpus is an error naming the request.
TRAINFIT_API Result<GpuTotal> total_gpus(const JobGpuFields& fields);

// The GPU options of an srun step, from srun's own options (argv between "srun" and
// the program, which the SPANK item S_JOB_ARGV delimits): --gpus/-G, --gpus-per-node,
// --gres, --gpus-per-task, --gpus-per-socket, in every spelling ("--gpus 16", "-G2",
// "--gpus=h100:4"), skipping the values of every option that takes one (srun's own
// and other plugins' such as pyxis' --container-image IMG). Returns true when the
// step asks for GPUs itself; fields it does not set are left as they are.
TRAINFIT_API bool apply_srun_options(const std::vector<std::string>& options, JobGpuFields* fields);

// The GPU string to write back when resizing ("gres/gpu:h100:16"), keeping other entries.
// gpu_prefix is the spelling slurmctld handed the plugin (it rewrites every client's
// string to its own: "gres:gpu" up to 23.02, "gres/gpu" from 23.11, which refuses the
// other); "" writes "gres:gpu".
TRAINFIT_API std::string rewrite_tres(const TresList& original, const std::string& gpu_prefix, const std::string& type,
                                      int64_t gpus);

// ---- Annotations (annotation.cpp) ----

// SPANK option names (without "--llm-") and the request field each sets; "spec",
// "hf-config" and "check" are special. Shared by the SPANK plugin, the comment parser
// and job_submit.
struct OptionSpec {
  const char* option;   // "seq"
  const char* field;    // "seq_length"; "" for spec / hf-config / check
  const char* arginfo;  // "N"
  const char* usage;
};
TRAINFIT_API const std::vector<OptionSpec>& llm_options();

// How the user wrote the annotation: messages and advice speak the same syntax.
enum class Face { kOptions, kComment };  // --llm-seq=8192 | trainfit: seq=8192

struct Annotation {
  Request request;
  bool found = false;  // the job carries a trainfit annotation
  bool check = false;  // --llm-check (or check=true in a comment): report the verdict on accept
  Face face = Face::kOptions;
};

// From job_desc->spank_job_env: "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192" and the
// geometry the SPANK plugin read from an HF config ("TRAINFIT_GEOMETRY=k=v,...").
// The same function checks the options in sbatch (SPANK) and in slurmctld.
TRAINFIT_API Result<bool> annotation_from_spank_env(const std::vector<std::string>& env, Annotation* out);

// A submission's annotation: its --llm-* options, else its comment. Both, saying different
// things, is an error naming both; --llm-check alone asks for the comment's verdict.
TRAINFIT_API Result<bool> annotation_of_job(const std::vector<std::string>& env, const std::string* comment,
                                            Annotation* out);

// From a job comment "trainfit: model=llama3-70b seq=8192 zero=3" (keys: the options
// above or any request field). out->found is false when the comment is not trainfit's.
TRAINFIT_API Result<bool> annotation_from_comment(const std::string& comment, Annotation* out);

// The environment entry sbatch's SPANK plugin sends for one option ("seq" ->
// "_SLURM_SPANK_OPTION_trainfit_llm_seq"), as Slurm mangles it.
TRAINFIT_API std::string spank_env_name(const std::string& option);

// "model=llama3-70b seq=8192" for the audit log and messages.
TRAINFIT_API std::string describe(const Request& request);

// A request field as the user would write it in this face: "--llm-zero" / "zero".
TRAINFIT_API std::string spell_key(const std::string& field, Face face);

// ---- Policy (policy.cpp) ----

enum class Action { kReject, kResize, kWarn };
TRAINFIT_API const char* to_string(Action action);

struct PartitionPolicy {
  Action action = Action::kReject;
  int64_t resize_max_gpus = 64;
  double headroom = 0.0;           // fraction of HBM kept free
  std::string default_gpu = "h100";
  int64_t gpus_per_node = 8;       // the node layout: min_gpus_to_fit and resizes use it
  bool require_annotation = false; // for jobs that request GPUs
  std::set<std::string> exempt_users, exempt_accounts, exempt_qos;
  std::set<uint32_t> exempt_uids;  // exempt_users resolved at load (resolve_exempt_users)
};

// ---- slurm.conf's partitions (slurm_conf.cpp) ----

struct SlurmPartition {
  std::string name;          // as Slurm matches it: case-sensitive
  bool whole_nodes = false;  // OverSubscribe=EXCLUSIVE: every job holds its nodes whole
  // The most nodes one job can have there: its Nodes= counted, or MaxNodes= when lower;
  // 0 when not known (a NodeSet, an expression this reader does not count).
  int64_t max_nodes = 0;
};
// PartitionName= lines of a slurm.conf text (DEFAULT's settings carried to later lines).
TRAINFIT_API std::vector<SlurmPartition> slurm_partitions(const std::string& text);
// $SLURM_CONF, else /etc/slurm/slurm.conf.
TRAINFIT_API std::string slurm_conf_path();

struct Policy {
  PartitionPolicy defaults;
  std::map<std::string, PartitionPolicy> partitions;  // overrides, by partition name
  std::map<std::string, std::string> gpu_aliases;     // site GRES type -> catalog name (lower case)
  // The partition slurmctld's default is (job_submit sees no partition for it), so that
  // partition.NAME keys apply to its jobs too; "" = the top-level keys.
  std::string default_partition;
  std::string audit_log = "/var/log/slurm/trainfit-audit.jsonl";
  bool fail_open = true;  // on_error = open | closed
  // Who may change a job's GPUs, tasks, nodes or partition without restating its annotation
  // (besides root and SlurmUser): `operators = alice,1234`, resolved at load.
  std::set<std::string> operators;
  std::set<uint32_t> operator_uids;
  // unchecked_updates = refuse (default): such an update by anyone else is refused unless it
  // restates the annotation; allow: passed and audited as unchecked (the behaviour before 0.x).
  bool allow_unchecked_updates = false;
  // From slurm.conf (slurm_partitions), not trainfit.conf: partitions whose jobs all hold
  // their nodes whole (OverSubscribe=EXCLUSIVE).
  std::set<std::string> whole_node_partitions;
  // From slurm.conf too: the most nodes a job can have in a partition (SlurmPartition::
  // max_nodes), so that a resize never asks for more nodes than the partition has.
  std::map<std::string, int64_t> partition_max_nodes;
  const PartitionPolicy& for_partition(const std::string& partition) const;
};

// key = value lines; "# comments"; per-partition overrides as
// "partition.NAME.KEY = VALUE"; "gpu_alias.NAME = CATALOG_NAME". Values of enumerated
// keys are case-insensitive. Errors: "trainfit.conf line N: ...".
TRAINFIT_API Result<Policy> parse_policy(const std::string& text);
// Every key trainfit.conf knows, from the parser's own tables, as written there (per-partition
// keys, then the site's, then "gpu_alias.NAME" and "partition.NAME.KEY").
TRAINFIT_API std::vector<std::string> policy_keys();

// Whether the text has any key = value line (not only blanks and comments): an empty
// trainfit.conf at reload is a file cut short, not a new policy.
TRAINFIT_API bool has_settings(const std::string& text);

// One line per partition.NAME override (and default_partition) that names no partition of
// slurm.conf, with the name Slurm has when only the case differs.
TRAINFIT_API std::vector<std::string> unknown_partitions(const Policy& policy, const std::vector<SlurmPartition>& slurm);

// on_error as the file states it, read as a key even when the rest of the file is
// invalid (true = open, the default).
TRAINFIT_API bool fail_open_of(const std::string& text);

// Fills exempt_uids from exempt_users (numeric uids or names, through lookup).
// Returns the names that did not resolve.
using UidLookup = std::optional<uint32_t> (*)(const std::string& name);
TRAINFIT_API std::vector<std::string> resolve_exempt_users(Policy& policy, UidLookup lookup);

// The catalog GPU a job's GRES type names: site aliases first, then the catalog's
// names, aliases and NVML/ROCm device names. Errors name the gpu_alias key to add.
TRAINFIT_API Result<const GpuSpec*> catalog_gpu(const Policy& policy, const std::string& gres_type);

// ---- Files (conf_file.cpp) ----

// A regular file's contents, at most max_bytes; never blocks on a FIFO, never reads a
// directory or a device. Errors say which case it is; ErrorCode::kMissing = not found.
TRAINFIT_API Result<std::string> read_regular_file(const std::string& path, size_t max_bytes);
constexpr size_t kMaxConfBytes = 1 << 20;      // trainfit.conf
constexpr size_t kMaxHfConfigBytes = 4 << 20;  // --llm-hf-config

// ---- Decision (decision.cpp, resize.cpp) ----

// A job's partition list is judged entry by entry: at most this many distinct partitions.
constexpr size_t kMaxJobPartitions = 64;

struct Job {
  Annotation annotation;
  std::optional<Error> annotation_error;  // the annotation could not be read
  JobGpuFields fields;
  std::string partition;  // as submitted: "" (the default), "gpu" or a list "elastic,gpu"
  uint32_t uid = 0;
  std::string account, qos;
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
enum class Reason { kNone, kInvalidAnnotation, kGpuRequest, kTooFewGpus, kAnnotationRequired, kUnknownGpu, kInternal };
TRAINFIT_API const char* to_string(Reason reason);

struct Decision {
  Verdict verdict = Verdict::kPass;
  Reason reason = Reason::kNone;
  bool exempt = false;           // passed by an exemption
  bool unchecked = false;        // an update trainfit cannot see enough of to check (logged)
  std::string message;           // what the user reads; "" when silent
  std::string gpu;               // catalog GPU the job was checked against
  double per_gpu_gb = 0, capacity_gb = 0;
  int64_t gpus_requested = 0;
  int64_t min_gpus = 0;          // 0: none fits, or not computed (an accepted job without --llm-check)
  int64_t global_batch = 0;
  std::vector<Change> advice;    // a refusal's cheapest change that fits on the GPUs asked for ("or: ..."); empty: none
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
  // The cheapest change that fits on the GPUs asked for (a refusal's "or: ...").
  virtual std::optional<Advice> cheapest_change(const Response& response) const = 0;
};

// The cheapest change that fits on the GPUs asked for, from full advice (a response's).
TRAINFIT_API std::optional<Advice> cheapest_in(const std::vector<Advice>& advice, int64_t gpus);

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
  bool by_operator = false;  // root, SlurmUser or a trainfit.conf `operators` entry
};
// Checks what the update carries (update.cpp says what Slurm 22.05 lets it see).
TRAINFIT_API Decision decide_update(const Policy& policy, const Update& update);

// The user-facing summary: "trainfit: llama3-70b at seq 8192 needs 97.3 GiB per GPU on
// 8 x H100 (79.6 GiB usable); min_gpus_to_fit=16 (or: --llm-recompute=full fits on 8)".
TRAINFIT_API std::string oom_message(const Response& response, Face face);

// Advice as the user would type it: --llm-recompute=full --gpus=24 / recompute=full gpus=24.
TRAINFIT_API std::string spell_changes(const std::vector<Change>& changes, Face face);

// ---- Audit (audit.cpp) ----

struct AuditRecord {
  int64_t time = 0;  // seconds since the epoch
  std::string event = "submit";  // submit | modify
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

// "79.65": fixed decimals without printf (audit lines and stamps are on the hot path).
TRAINFIT_API void append_fixed(std::string& out, double value, int decimals);

// ---- Logging ----

// Control characters (terminal escapes included) as \xNN, so user text cannot forge
// or garble lines in slurmctld's log or a terminal.
TRAINFIT_API std::string printable(const std::string& text);

}  // namespace trainfit::admission
