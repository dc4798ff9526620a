// Updates (scontrol update, job_modify). Slurm (22.05 to 26.05, measured) hands job_modify the update's
// fields only: the job itself (job_ptr) is not in the public headers, so trainfit
// cannot see the job's annotation, GPUs or partition. It checks what an update
// carries and refuses what would open a hole — a change of GPUs, tasks, nodes or partition
// (or of Features where they select the nodes' GPUs) by a user, a new annotation without its GPU request and partition — unless the update restates
// the annotation with the GPUs and the partition; operators' (root, SlurmUser, `operators`) and exempt users'
// changes, and everyone's under `unchecked_updates = allow`, pass and are audited as unchecked.
#include "trainfit/util/text.h"
#include "internal.h"
#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

// Whether some partition's GPU nodes differ (GPU types or counts, slurm.conf): there a job's
// --constraint selects which of them it runs on, so its judged GPU (decision.cpp untyped_gpu,
// gpus_per_held_node), and a Features= update moves it like a partition change would.
bool features_select_gpus(const Policy& policy) {
  for (const auto& [name, kinds] : policy.partition_nodes) {
    const std::vector<NodeGpus>* first = nullptr;
    for (const NodeKind& kind : kinds) {
      if (kind.gpus.empty()) continue;
      if (first != nullptr && !(kind.gpus == *first)) return true;
      first = &kind.gpus;
    }
  }
  return false;
}

std::string restate(const std::string& job_id) {
  return "restate it in the same update: scontrol update job=" + job_id +
         " Comment=\"trainfit: model=NAME seq=N ...\" TresPerJob=gres:gpu:TYPE:COUNT Partition=NAME";
}

}  // namespace

Decision decide_update(const Policy& policy, const Update& u) {
  const Job& job = u.job;
  const std::string id = u.job_id.empty() ? "N" : u.job_id;
  if (job.annotation.found || !job.annotation_read) {
    // The partition too: its rules (GPU type, layout, headroom, action) judge the job, and an
    // update that does not name it shows job_modify no partition (22.05 to 26.05, measured).
    if ((!u.sets_gpus || !u.sets_partition) && job.annotation_read) {
      const char* missing = !u.sets_gpus && !u.sets_partition ? "GPUs and partition" : !u.sets_gpus ? "GPUs" : "partition";
      return decision_of(Verdict::kReject, Reason::kRestateRequired,
                         "trainfit: job " + id + ": a new annotation is checked against the job's " + missing +
                             ", which Slurm does not show job_modify; " + restate(id));
    }
    Job checked = job;
    checked.step = true;  // an update is checked, never resized behind the user's back
    return decide(policy, checked);
  }
  const bool moves_nodes = u.sets_features && features_select_gpus(policy);
  if (!u.sets_gpus && !u.sets_partition && !moves_nodes) return Decision{};
  const char* changed = u.sets_gpus ? "GPUs, tasks or nodes" : u.sets_partition ? "partition" : "Features (--constraint)";
  const bool exempted = policy.defaults.exempt_uids.count(job.uid) > 0;
  if (!u.by_operator && !exempted && !policy.allow_unchecked_updates) {
    return decision_of(Verdict::kReject, Reason::kRestateRequired,
                       "trainfit: job " + id + ": changing a job's " + changed +
                           " is checked against its LLM training annotation, which Slurm does not show job_modify; " +
                           restate(id) + " (an operator's update is not checked)");
  }
  if (u.sets_partition) {
    for (const std::string& p : split(job.partition, ',')) {
      const PartitionPolicy& rules = policy.for_partition(trim(p));
      const bool exempt_here = rules.exempt_uids.count(job.uid) > 0;
      if (rules.require_annotation && !exempt_here) {
        return decision_of(Verdict::kReject, Reason::kRestateRequired,
                    "trainfit: job " + id + ": partition " + trim(p) +
                        " requires an LLM training annotation, and Slurm does not show job_modify the job's "
                        "own; " + restate(id));
      }
    }
  }
  Decision d;
  d.unchecked = true;
  d.message = "trainfit: job " + id + ": " + (u.sets_gpus ? "GPU" : u.sets_partition ? "partition" : "Features") +
              " update not checked (" +
              (u.by_operator ? "by an operator" : exempted ? "an exempt user" : "unchecked_updates = allow") +
              "): Slurm's job_modify does not show the job's annotation (job_ptr is private); an update that "
              "restates it (Comment=\"trainfit: ...\" with the GPU request and Partition=) is checked";
  return d;
}

}  // namespace trainfit::admission
