// Between Slurm's job_desc_msg_t and admission's plain types: what a submission or an
// update carries, and the fields a resize or a verdict writes back.
#pragma once

#include <cstdint>
#include <string>

extern "C" {
#include <slurm/slurm.h>
}

#include "trainfit/admission.h"

namespace trainfit::plugin {

// Fills *job, a default-constructed Job (the caller keeps it on the heap: job_submit_trainfit.cpp).
void job_from_submission(const job_desc_msg_t* d, uint32_t submit_uid, admission::Job* job);
admission::Update update_from(const job_desc_msg_t* d, uint32_t submit_uid);

std::string job_id_of(const job_desc_msg_t* d);               // "" for a submission
std::string gpu_request_as_written(const job_desc_msg_t* d);  // "tres_per_job=gres:gpu:h100:8 ..."

// Rewrites the GPU fields, nodes and tasks so the job gets decision.resized_to GPUs.
void apply_resize(job_desc_msg_t* d, const admission::Decision& decision);

// Stamps the verdict on the job's AdminComment (which users cannot set), so that
// scontrol show job and sacct show it: "trainfit accept: ...; decision 674e...-17".
void stamp_admin_comment(job_desc_msg_t* d, const admission::Decision& decision, const std::string& decision_id);

}  // namespace trainfit::plugin
