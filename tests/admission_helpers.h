// Helpers shared by the gate's tests (decision_test, update_test, policy_test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "trainfit/admission.h"
#include "trainfit/estimate.h"

namespace trainfit::admission {

inline Job job_of(const std::string& annotation, const std::string& tres_per_job, const std::string& partition = "") {
  Job job;
  EXPECT_TRUE(annotation_from_comment("trainfit: " + annotation, &job.annotation).ok());
  job.annotation.face = Face::kOptions;  // as if given with --llm-* options
  job.fields.per_job = tres_per_job;
  job.partition = partition;
  return job;
}

// min_gpus_to_fit as the CLI computes it for the same request, for the likely range's high end
// as the gate finds it by default (resize_to = high) unless the spec names its fit_bound.
inline int64_t cli_min_gpus(const std::string& spec) {
  Request request;
  EXPECT_TRUE(apply_key_values(request, spec, ' ').ok());
  if (!request.fit_bound) request.fit_bound = "likely_high";
  Result<Response> r = respond(request, {false, false});
  EXPECT_TRUE(r.ok()) << spec;
  return r.ok() ? r->min_gpus.gpus : -1;
}

// The GPUs Slurm gives a job: TresPerJob, else TresPerNode x NumNodes, else TresPerTask x NumTasks.
inline int64_t granted_by_slurm(const Job& job, const Decision& d) {
  const int64_t nodes = d.new_nodes > 0 ? d.new_nodes : std::max<int64_t>(1, job.fields.nodes);
  const int64_t tasks = d.new_tasks > 0 ? d.new_tasks : std::max<int64_t>(1, job.fields.tasks);
  auto count = [](const std::string& text) { return parse_tres(text).ok() ? parse_tres(text)->gpus : 0; };
  const std::string per_job = d.new_tres_per_job.empty() ? job.fields.per_job : d.new_tres_per_job;
  const std::string per_node = d.new_tres_per_node.empty() ? job.fields.per_node : d.new_tres_per_node;
  if (count(per_job) > 0) return count(per_job);
  if (count(per_node) > 0) return count(per_node) * nodes;
  return count(job.fields.per_task) * tasks;
}

inline const char* kBig = "model=llama3-70b seq=8192 zero=3 recompute=full";

// A passwd database of one user, alice (uid 1001).
inline std::optional<uint32_t> fake_passwd(const std::string& name) {
  if (name == "alice") return 1001u;
  return std::nullopt;
}

}  // namespace trainfit::admission
