// The names in an audit line, written once: audit.cpp writes them, `trainfit report`
// (cli/report/record.cpp) reads them back.
#pragma once

namespace trainfit::admission::audit_field {

constexpr char kTime[] = "time";
constexpr char kEvent[] = "event";
constexpr char kDecisionId[] = "decision_id";
constexpr char kJobId[] = "job_id";
constexpr char kUid[] = "uid";
constexpr char kUser[] = "user";
constexpr char kAccount[] = "account";
constexpr char kPartition[] = "partition";
constexpr char kQos[] = "qos";
constexpr char kJobName[] = "job_name";
constexpr char kGpuRequest[] = "gpu_request";
constexpr char kAnnotation[] = "annotation";
constexpr char kGpusRequested[] = "gpus_requested";
constexpr char kGpu[] = "gpu";
constexpr char kPredictedPerGpuGb[] = "predicted_per_gpu_gb";
constexpr char kCapacityGb[] = "capacity_gb";
constexpr char kLikelyLowGb[] = "likely_low_gb";    // predicted_per_gpu_gb's likely range (LikelyRange)
constexpr char kLikelyHighGb[] = "likely_high_gb";
constexpr char kAction[] = "action";
constexpr char kReason[] = "reason";
constexpr char kMinGpusToFit[] = "min_gpus_to_fit";
constexpr char kMinGpusBound[] = "min_gpus_bound";  // the figure it was found for: point | likely_high
constexpr char kResizedTo[] = "resized_to";
constexpr char kTimeLimitMin[] = "time_limit_min";
constexpr char kAdvice[] = "advice";
constexpr char kAdviceField[] = "field";  // each entry of advice: {"field": ..., "value": ...}
constexpr char kAdviceValue[] = "value";
constexpr char kHostRamPerNodeGb[] = "host_ram_per_node_gb";
constexpr char kMemPerNodeGb[] = "mem_per_node_gb";
constexpr char kMessage[] = "message";
constexpr char kGpusHeld[] = "gpus_held";  // added last: the GPUs the job holds (gpus_held())

// The events: a job submitted, or an update of one (scontrol update).
constexpr char kEventSubmit[] = "submit";
constexpr char kEventModify[] = "modify";

// The action of a record that is not a check (the checks' actions are the verdicts' words,
// to_string(Verdict)).
constexpr char kActionExempt[] = "exempt";
constexpr char kActionUnchecked[] = "unchecked";

}  // namespace trainfit::admission::audit_field
