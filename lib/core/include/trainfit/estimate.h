// The estimator: per-GPU HBM of one training step, min_gpus_to_fit, sweeps, advice.
// All byte figures are bytes; GiB conversion happens only at the edges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainfit/config.h"
#include "trainfit/export.h"

namespace trainfit {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct ParamCounts {
  double total = 0;       // whole model
  double embedding = 0;   // input embedding (+ learned positions)
  double lm_head = 0;     // 0 when tied
  double per_layer = 0;   // one transformer layer (dense part + router)
  double per_layer_experts = 0;  // routed experts of one layer
  double final_norm = 0;
};

// Model states on one GPU, by kind (bytes).
struct ModelStates {
  double weights = 0;
  double grads = 0;
  double master = 0;     // fp32 master copy held by the optimizer
  double optimizer = 0;  // optimizer moments
  double total() const { return weights + grads + master + optimizer; }
};

// Saved-for-backward activations on one GPU (bytes).
struct Activations {
  double per_layer = 0;        // one layer, one micro-batch, as stored under the recompute mode
  double inflight_layers = 0;  // layer-micro-batches held on this stage (PP factor included)
  double layers = 0;           // per_layer * inflight_layers
  double embedding = 0;        // token ids and embedding output saved on the first stage
  double logits_loss = 0;      // saved logits / log-softmax on the last stage
  double weight_cache = 0;     // autocast / FP8 low-precision weight copies saved for backward
  double total() const { return layers + embedding + logits_loss + weight_cache; }
};

// Short-lived buffers, each live in one phase only (bytes).
struct Transients {
  double fsdp_units_fwd = 0;    // unsharded ZeRO-3/FSDP units in forward (current + prefetch)
  double fsdp_units_bwd = 0;    // ... in backward, with their unsharded grads
  double recompute = 0;         // one layer rematerialized in backward
  double layer_backward = 0;    // gradient buffers of the layer being back-propagated
  double loss_forward = 0;      // logits alive together with the loss' output
  double loss_backward = 0;     // gradient of the logits
  double held_logits = 0;       // logits the model returns, referenced until the step ends (HF)
  double comm_buckets = 0;      // gradient reduce buckets (backward)
  double optimizer_step = 0;    // optimizer temporaries + param all-gather bucket
  double context_parallel = 0;  // ring-attention KV exchange buffers
  double held_layer_inputs = 0;  // layer inputs and their gradients kept to the end of backward (FSDP1 hook)
  double autocast_cache = 0;     // checkpointed layers' 16-bit weight casts, cached through the forward
};

struct Overheads {
  double cuda_context = 0;
  double nccl = 0;
  double workspaces = 0;  // cuBLAS (and Transformer Engine) workspaces, from the caching allocator
  double allocator = 0;
  double total() const { return cuda_context + nccl + workspaces + allocator; }
};

// One pipeline stage's memory (the first and last stages differ).
struct StageMemory {
  double params = 0;          // parameters this GPU holds before ZeRO/FSDP sharding
  ModelStates states;
  Activations activations;
  Transients transients;
  double forward_peak = 0;    // tensor bytes, peak of the forward phase
  double backward_peak = 0;
  double optimizer_peak = 0;
  double tensor_peak = 0;     // max of the three phases
  const char* peak_phase = "backward";
};

// What users compare with, from their own logs (bytes). The fit decision uses
// nvidia_smi, the whole process: what the GPU must hold.
struct Measures {
  double max_memory_allocated = 0;  // torch.cuda.max_memory_allocated: the tensor peak
  double max_memory_reserved = 0;   // torch.cuda.max_memory_reserved: + the caching allocator's reserve
  double nvidia_smi = 0;            // + CUDA context and NCCL buffers (per_gpu_total)
};
// How far a per-GPU figure is likely off, by the job's class: measured / predicted on the
// published suite (conf/likely_range.json, derived by tests/published/ranges.py, leave-one-source-
// out). The range is [figure x low, figure x high].
struct LikelyRange {
  double low = 1.0;
  double high = 1.0;
  const char* adapter = "any";  // "full", "adapter" (LoRA, QLoRA, ...) or "any" (pooled)
  const char* sharded = "any";  // "sharded", "unsharded" or "any"
  int cases = 0;                // published cases behind it
  int sources = 0;              // and the sources they come from
};

// The class a job falls in and its range: the most specific class the file has.
TRAINFIT_API const LikelyRange& likely_range_for(const Config& config, int64_t shard_group);

struct Breakdown {
  ParamCounts params;
  double params_on_gpu = 0;          // parameters held (before sharding) by the critical rank
  double bytes_per_param = 0;        // model-state bytes per parameter, unsharded
  double model_states_unsharded = 0; // whole model on one device
  StageMemory stage;                 // the critical pipeline stage
  const char* critical_stage = "only";
  int64_t shard_group = 1;           // ZeRO/FSDP sharding degree of dense params
  Overheads overheads;
  double host_offload_per_gpu = 0;   // host RAM needed per GPU for offload
  double per_gpu_total = 0;          // predicted peak incl. overheads
  double likely_low = 0;             // per_gpu_total's likely range (LikelyRange)
  double likely_high = 0;
  const LikelyRange* range = nullptr;  // the class it came from (a static table: never freed)
  Measures measures;
  double capacity = 0;
  double judged = 0;  // the figure compared with capacity: per_gpu_total or likely_high (Config::fit_bound)
  bool fits = false;
};

TRAINFIT_API ParamCounts count_parameters(const Geometry& geometry);

// The core: pure arithmetic on a valid Config, no allocation.
TRAINFIT_API Breakdown estimate(const Config& config);

struct MinGpus {
  int64_t gpus = 0;      // 0 = none
  std::string reason;    // why none, when gpus == 0
  bool unsharded = false;  // none because nothing is sharded: more GPUs cannot help
};

// Smallest GPU count at which the step fits, respecting tp*pp*cp, ep and gpus_per_node;
// searching up to at_most GPUs (0 = the largest supported job, 2^20).
TRAINFIT_API MinGpus min_gpus_to_fit(const Config& config, int64_t at_most = 0);
// The same for the request `config` was resolved from (with `now`, its estimate): where the
// framework's defaults change beyond one GPU (Config::defaults_vary_with_gpus), the counts
// above one are searched on the request resolved at two.
TRAINFIT_API MinGpus min_gpus_for(const Request& request, const Config& config, const Breakdown& now);
// The same answer, cheaper when the estimate at config.num_gpus is known to fit.
TRAINFIT_API MinGpus min_gpus_to_fit(const Config& config, const Breakdown& at_num_gpus);
// "24 (3 nodes of 8)", "6", "none": a min_gpus_to_fit with the nodes it takes (node_rule.cpp).
TRAINFIT_API std::string min_gpus_text(const Config& config, int64_t gpus);
// How the count is made: "any GPU count up to one 8-GPU node, whole nodes beyond (gpus_per_node=8, the default)".
TRAINFIT_API std::string min_gpus_rule(const Config& config);
// The smallest GPU count at least `gpus` that the same rule allows (a multiple of the model-parallel
// size within a node, whole nodes beyond): the counts sweeps and charts show.
TRAINFIT_API int64_t valid_gpu_count_from(const Config& config, int64_t gpus);

// Each point is its own estimate: its likely range is per_gpu_gb's under that point's class
// (a count of 1 is unsharded where the request's count is sharded: LikelyRange).
struct GpuPoint {
  int64_t num_gpus;
  double per_gpu_gb, model_state_gb, activation_gb;
  bool fits;
  double likely_low_gb = 0, likely_high_gb = 0;
};
struct SeqPoint {
  int64_t seq_length;
  double per_gpu_gb, activation_gb;
  bool fits;
  double likely_low_gb = 0, likely_high_gb = 0;
};

constexpr int kProfilePoints = 48;

TRAINFIT_API std::vector<GpuPoint> sweep_gpus(const Config& config, int points = kProfilePoints);
TRAINFIT_API std::vector<SeqPoint> sweep_seq(const Config& config, int points = kProfilePoints);

// One field set to one value: advice says what to change as data; each face (CLI
// flags, --llm-* options, JSON) spells it its own way.
struct Change {
  std::string field;  // request field (JSON name), e.g. "recompute"
  std::string value;  // as text, e.g. "full"
};

struct Advice {
  std::vector<Change> changes;  // what to set; the first is the main change, implied ones
                                // follow (sequence_parallel with TP), num_gpus last when GPUs are added
  int64_t num_gpus = 0;         // GPU count the prediction is for (more than asked when combined)
  double per_gpu_gb = 0;        // predicted peak with the changes
  bool fits = false;
  const std::string& field() const { return changes.front().field; }
  const std::string& value() const { return changes.front().value; }
};

// The first (cheapest) single change that fits on the same GPUs, if any: what a
// one-line refusal offers, without advise()'s min-GPU searches.
TRAINFIT_API std::optional<Advice> cheapest_fitting_change(const Config& config);

// "recompute=full num_gpus=24": the face-neutral spelling (request field names).
TRAINFIT_API std::string key_values(const std::vector<Change>& changes);

// The cheapest changes that make a step fit (those that fit first), each with its prediction.
TRAINFIT_API std::vector<Advice> advise(const Config& config);
// The same, reusing an estimate and min-GPU search already made for this config.
TRAINFIT_API std::vector<Advice> advise(const Config& config, const Breakdown& now, const MinGpus& more);

// What a one-line verdict or refusal offers after "min_gpus_to_fit=..." from full advice:
// the first single change that fits on the `gpus` asked for; when no GPU count fits the
// job as it is (min_gpus 0, "none"), the first advice that fits at all (more GPUs, or
// several changes at once), so that a hopeless job still hears a way out.
TRAINFIT_API std::optional<Advice> one_line_advice(const std::vector<Advice>& advice, int64_t gpus, int64_t min_gpus);

// one_line_advice(advise(c), c.num_gpus, 0) for a job that fits at no GPU count and has no
// single change that fits on its GPUs, with only the searches up to the first way out.
TRAINFIT_API std::optional<Advice> way_out_of_none(const Config& config);

// The way out for a job that fits at no GPU count, from the request it was resolved from:
// way_out_of_none on the request as it resolves beyond one GPU where the framework's
// defaults vary with the count (Config::defaults_vary_with_gpus).
TRAINFIT_API std::optional<Advice> way_out_for(const Request& request, const Config& config);

// Advice's "num_gpus=N" entries re-estimated on the request resolved at N, where the
// framework's defaults vary with the count (advise() estimates them on `config`).
TRAINFIT_API void refresh_gpu_count_advice(const Request& request, const Config& config, std::vector<Advice>& advice);

// "(or: CHANGES fits on N)": the changes besides the GPU count, which "fits on N" says.
TRAINFIT_API std::vector<Change> changes_besides_gpus(const std::vector<Change>& changes);

struct Response {
  Resolved resolved;
  Breakdown breakdown;
  MinGpus min_gpus;
  std::vector<GpuPoint> mem_vs_gpus;
  std::vector<SeqPoint> mem_vs_seq;
  std::vector<Advice> advice;
  int64_t global_batch = 0;
};

struct ResponseOptions {
  bool profiles = true;
  bool advice = true;
};

// Everything the API returns, from a Request.
TRAINFIT_API Result<Response> respond(const Request& request, ResponseOptions options = {});
TRAINFIT_API Response respond(const Resolved& resolved, ResponseOptions options = {});

// One line a user reads at a glance; advice in it is spelled by `spell` (each face
// passes its own: CLI flags, --llm-* options; the default is key=value).
using ChangeSpeller = std::string (*)(const std::vector<Change>& changes);
TRAINFIT_API std::string verdict(const Response& response, ChangeSpeller spell = key_values);

// "llama3-70b at seq 8192 needs 97.3 GiB per GPU on 8 x H100 (79.6 GiB usable)": the
// part of every verdict and Slurm message that states the prediction.
TRAINFIT_API std::string needs_line(const Config& config, const Breakdown& breakdown);

// The GPU as users write it: "H100" for catalog GPUs, a custom capacity as given.
TRAINFIT_API std::string gpu_label(const Config& config);

}  // namespace trainfit
