// What a job asks of GPUs, in every spelling Slurm accepts (gres.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"

namespace trainfit::admission {

// The most GPUs a job may ask for; larger requests are a GPU-request error.
constexpr int64_t kMaxJobGpus = int64_t{1} << 20;

// One TRES/GRES list as Slurm writes it in any version: "gpu:8", "gres:gpu:8",
// "gres/gpu:8", "gres/gpu=8", typed "gres:gpu:h100:8", comma or semicolon lists. Distinct
// types add up ("gpu:h100:2,gpu:a100:2" is 4); a type named again replaces its count, as
// Slurm does ("gpu:h100:11,gpu:h100:11" is 11); an entry counting zero is ignored, as Slurm
// ignores it ("gpu:h100:5,gpu:h100:0" is 5); typed and untyped GPUs together are refused.
// Non-GPU entries are kept for rewriting.
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

}  // namespace trainfit::admission
