// Properties of the estimate: each mechanism moves memory the way its source says.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "test_util.h"

namespace trainfit {
namespace {

using testing::estimate_of;
using testing::gib;

const std::string k8b = "model=llama3-8b,seq_length=4096,";

TEST(Peak, IsTheMaximumOverPhasesPlusOverheads) {
  for (const char* extra : {"", "recompute=full", "num_gpus=8,zero_stage=3", "num_gpus=8,zero_stage=1",
                            "loss=fused,attention=eager"}) {
    const Breakdown b = estimate_of(k8b + extra);
    const StageMemory& s = b.stage;
    EXPECT_DOUBLE_EQ(s.tensor_peak, std::max({s.forward_peak, s.backward_peak, s.optimizer_peak})) << extra;
    EXPECT_DOUBLE_EQ(b.per_gpu_total, s.tensor_peak + b.overheads.total()) << extra;
    // Everything saved is live at once; gradients allocated in backward (set_to_none) need not be.
    EXPECT_GE(s.tensor_peak, s.states.total() - s.states.grads + s.activations.total()) << extra;
    EXPECT_GE(s.tensor_peak, s.states.total()) << extra;
    // Not a plain sum of every term: transients of different phases never add up.
    const Transients& x = s.transients;
    const double everything = s.states.total() + s.activations.total() + x.fsdp_units_fwd + x.fsdp_units_bwd +
                              x.recompute + x.layer_backward + x.loss_forward + x.loss_backward + x.comm_buckets +
                              x.optimizer_step + b.overheads.total();
    EXPECT_LT(b.per_gpu_total, everything) << extra;
  }
}

TEST(Peak, GradientsPersistWithAccumulationOrBuffers) {
  // PyTorch's zero_grad(set_to_none=True): gradients appear in backward, so forward
  // does not hold them; gradient accumulation keeps them through the next forward.
  const Breakdown once = estimate_of(k8b + "precision=bf16");
  const Breakdown accumulate = estimate_of(k8b + "precision=bf16,num_microbatches=4");
  EXPECT_NEAR(accumulate.stage.forward_peak - once.stage.forward_peak, once.stage.states.grads, 1.0);
}

TEST(Peak, OverheadsOffCountsTensorsOnly) {
  const Breakdown b = estimate_of(k8b + "runtime_overhead=false,num_gpus=8,zero_stage=3");
  EXPECT_EQ(b.overheads.total(), 0.0);
  EXPECT_DOUBLE_EQ(b.per_gpu_total, b.stage.tensor_peak);
  const Breakdown with = estimate_of(k8b + "num_gpus=8,zero_stage=3");
  EXPECT_GT(with.overheads.nccl, 0.0);
  EXPECT_GT(with.overheads.cuda_context, 0.0);
}

TEST(Activations, RecomputeOrdering) {
  const std::string eager = k8b + "ops=fused,attention=eager,recompute=";
  const double none = estimate_of(eager + "none").stage.activations.layers;
  const double selective = estimate_of(eager + "selective").stage.activations.layers;
  const double full = estimate_of(eager + "full").stage.activations.layers;
  EXPECT_GT(none, selective);
  EXPECT_GT(selective, full);
  // Flash attention stores what selective recompute stores, plus the log-sum-exp.
  const Breakdown flash = estimate_of(k8b + "ops=fused,attention=flash");
  EXPECT_NEAR(flash.stage.activations.layers, selective, 0.01 * selective);
}

TEST(Activations, EagerAttentionGrowsWithSequenceSquared) {
  const double at4k = estimate_of("model=llama3-8b,attention=eager,seq_length=4096").stage.activations.per_layer;
  const double at8k = estimate_of("model=llama3-8b,attention=eager,seq_length=8192").stage.activations.per_layer;
  const double flash4k = estimate_of("model=llama3-8b,attention=flash,seq_length=4096").stage.activations.per_layer;
  const double flash8k = estimate_of("model=llama3-8b,attention=flash,seq_length=8192").stage.activations.per_layer;
  EXPECT_GT(at8k / at4k, 3.0);
  EXPECT_NEAR(flash8k / flash4k, 2.0, 1e-9);
}

TEST(Activations, SequenceAndContextParallelSplit) {
  const std::string tp = k8b + "num_gpus=8,tensor_parallel=8";
  EXPECT_LT(estimate_of(tp + ",sequence_parallel=true").stage.activations.layers,
            estimate_of(tp).stage.activations.layers);
  const double one = estimate_of(k8b + "num_gpus=2").stage.activations.per_layer;
  const double cp2 = estimate_of(k8b + "num_gpus=2,context_parallel=2").stage.activations.per_layer;
  EXPECT_NEAR(cp2, one / 2, 1e-6 * one);
  EXPECT_GT(estimate_of(k8b + "num_gpus=2,context_parallel=2").stage.transients.context_parallel, 0.0);
}

TEST(Activations, LogitsFp32AtLlama3Vocab) {
  // 4 s V bytes for the fp32 log-softmax at s = 8192, V = 128256 (notes row 28: 4055 MiB).
  const Breakdown b = estimate_of("model=llama3-8b,seq_length=8192,logits_fp32=true,precision=bf16,ops=fused");
  const double logits = 4.0 * 8192 * 128256;
  const double hidden_inputs = (2 * 4096 + 4 + 2 * 4096) * 8192.0;
  EXPECT_NEAR(b.stage.activations.logits_loss, logits + hidden_inputs, 1.0);
  EXPECT_NEAR(logits / (1 << 20), 4008.0, 1.0);
  const Breakdown chunked = estimate_of("model=llama3-8b,seq_length=8192,logits_fp32=true,precision=bf16,ops=fused,loss=chunked");
  const Breakdown fused = estimate_of("model=llama3-8b,seq_length=8192,logits_fp32=true,precision=bf16,ops=fused,loss=fused");
  EXPECT_LT(chunked.per_gpu_total, b.per_gpu_total);
  EXPECT_LT(fused.per_gpu_total, chunked.per_gpu_total);
}

TEST(Activations, PipelineInFlightFactor) {
  const std::string pp = "model=llama3-70b,num_gpus=4,pipeline_parallel=4,";
  const Breakdown full = estimate_of(pp + "num_microbatches=8");
  const Breakdown two = estimate_of(pp + "num_microbatches=2");
  const Breakdown interleaved = estimate_of(pp + "num_microbatches=8,virtual_pipeline=2");
  EXPECT_DOUBLE_EQ(full.stage.activations.inflight_layers, 20.0 * 4);  // L/p layers x p micro-batches
  EXPECT_DOUBLE_EQ(two.stage.activations.inflight_layers, 20.0 * 2);
  EXPECT_DOUBLE_EQ(interleaved.stage.activations.inflight_layers, 80.0 * (1 + 3.0 / 8.0));
}

TEST(Activations, AutocastKeepsBf16WeightCopies) {
  const Breakdown amp = estimate_of(k8b + "precision=bf16-amp");
  const double linear = 8030261248.0 - 525336576.0 - 32 * 2 * 4096 - 4096;  // all but embedding and norms
  EXPECT_NEAR(amp.stage.activations.weight_cache, 2.0 * linear, 1.0);
  EXPECT_EQ(estimate_of(k8b + "precision=bf16").stage.activations.weight_cache, 0.0);
  EXPECT_EQ(estimate_of(k8b + "precision=bf16-amp,num_gpus=8,zero_stage=3").stage.activations.weight_cache, 0.0);
}

TEST(ModelStates, ZeroStagesShrinkMonotonically) {
  double previous = 1e30;
  for (int stage = 0; stage <= 3; ++stage) {
    const double states = estimate_of(k8b + "num_gpus=16,zero_stage=" + std::to_string(stage)).stage.states.total();
    EXPECT_LT(states, previous) << stage;
    previous = states;
  }
}

TEST(ModelStates, ShardingDividesByDataParallelNotGpuCount) {
  // 16 GPUs with TP 4: ZeRO-3 shards over 4 data-parallel ranks, on a quarter of the model each.
  const Breakdown b = estimate_of("model=llama3-8b,num_gpus=16,tensor_parallel=4,zero_stage=3,precision=fp16-amp");
  EXPECT_EQ(b.shard_group, 4);
  EXPECT_NEAR(b.stage.states.total(), 16.0 * b.params_on_gpu / 4.0, 1.0);
  EXPECT_NEAR(b.params_on_gpu, 8030261248.0 / 4.0, 8030261248.0 * 0.01);
}

TEST(ModelStates, FsdpStrategies) {
  const std::string base = "model=llama3-70b,num_gpus=64,gpus_per_node=8,sharding=";
  const Breakdown full = estimate_of(base + "fsdp-full");
  const Breakdown hybrid = estimate_of(base + "fsdp-hybrid");
  const Breakdown grad_op = estimate_of(base + "fsdp-grad-op");
  EXPECT_EQ(full.shard_group, 64);
  EXPECT_EQ(hybrid.shard_group, 8);
  EXPECT_GT(hybrid.stage.states.total(), full.stage.states.total());
  // SHARD_GRAD_OP keeps the unsharded bf16 parameters through forward and backward.
  EXPECT_NEAR(grad_op.stage.transients.fsdp_units_fwd, 2.0 * 70553706496.0, 1e3);
  EXPECT_GT(full.stage.transients.fsdp_units_bwd, full.stage.transients.fsdp_units_fwd);
}

TEST(ModelStates, OffloadMovesStatesToHost) {
  const std::string base = k8b + "num_gpus=8,zero_stage=3,";
  const Breakdown gpu = estimate_of(base);
  const Breakdown opt = estimate_of(base + "offload_optimizer=true");
  const Breakdown all = estimate_of(base + "offload_optimizer=true,offload_params=true");
  EXPECT_EQ(opt.stage.states.optimizer, 0.0);
  EXPECT_GT(opt.host_offload_per_gpu, 0.0);
  EXPECT_LT(opt.per_gpu_total, gpu.per_gpu_total);
  EXPECT_EQ(all.stage.states.weights, 0.0);
  EXPECT_GT(all.host_offload_per_gpu, opt.host_offload_per_gpu);
}

TEST(ModelStates, ExpertParallelShardsExperts) {
  const std::string base = "model=mixtral-8x7b,num_gpus=8,zero_stage=1,";
  const Breakdown ep1 = estimate_of(base + "expert_parallel=1");
  const Breakdown ep8 = estimate_of(base + "expert_parallel=8");
  EXPECT_LT(ep8.params_on_gpu, ep1.params_on_gpu / 3);
  EXPECT_GT(ep8.stage.activations.per_layer, estimate_of("model=mistral-7b").stage.activations.per_layer);
}

TEST(Sweeps, FortyEightIncreasingPoints) {
  const Config c = testing::config_of("model=llama3-70b,num_gpus=8,tensor_parallel=2,zero_stage=3,seq_length=8192");
  const std::vector<GpuPoint> gpus = sweep_gpus(c);
  const std::vector<SeqPoint> seqs = sweep_seq(c);
  ASSERT_EQ(gpus.size(), 48u);
  ASSERT_EQ(seqs.size(), 48u);
  for (size_t i = 1; i < gpus.size(); ++i) {
    EXPECT_GT(gpus[i].num_gpus, gpus[i - 1].num_gpus);
    EXPECT_EQ(gpus[i].num_gpus % 2, 0);
    EXPECT_LE(gpus[i].model_state_gb, gpus[i - 1].model_state_gb + 1e-12);
    EXPECT_GT(seqs[i].seq_length, seqs[i - 1].seq_length);
    EXPECT_GE(seqs[i].activation_gb, seqs[i - 1].activation_gb);
  }
  // Log scale: the ratio between neighbours is roughly constant at the top.
  auto ratio = [&](size_t i) {
    return static_cast<double>(gpus[i].num_gpus) / static_cast<double>(gpus[i - 1].num_gpus);
  };
  EXPECT_NEAR(ratio(47), ratio(40), 0.05);
}

// The GPU sweep shows only counts min_gpus_to_fit could answer (issue 36, point 6): within a node
// multiples of the model-parallel size, whole nodes beyond; its first fitting count is the answer.
// The sequence sweep holds the job's own length.
TEST(Sweeps, CountsTheRuleAllowsAndTheJobsOwnLength) {
  for (const char* spec : {"model=llama3-70b,num_gpus=8,seq_length=8192,zero_stage=3,recompute=full",
                           "model=llama3-70b,num_gpus=12,tensor_parallel=4,seq_length=7000,zero_stage=3,recompute=full,"
                           "gpus_per_node=12"}) {
    SCOPED_TRACE(spec);
    const Config c = testing::config_of(spec);
    const int64_t unit = c.tp * c.pp * c.cp, node = c.gpus_per_node;
    int64_t first_fit = 0;
    for (const GpuPoint& p : sweep_gpus(c)) {
      const bool valid = p.num_gpus <= node ? p.num_gpus % unit == 0 : p.num_gpus % node == 0 && p.num_gpus % unit == 0;
      EXPECT_TRUE(valid) << p.num_gpus;
      if (p.fits && first_fit == 0) first_fit = p.num_gpus;
    }
    const MinGpus min = min_gpus_to_fit(c);
    ASSERT_GT(min.gpus, 0) << min.reason;
    EXPECT_EQ(first_fit, min.gpus);
    bool own = false;
    for (const SeqPoint& p : sweep_seq(c)) own = own || p.seq_length == c.seq_length;
    EXPECT_TRUE(own) << c.seq_length;
  }
}

// The sweeps share what does not change along their axis (model.h SharedParts); each
// point must still equal a standalone estimate of the config at that point.
TEST(Sweeps, EveryPointEqualsItsOwnEstimate) {
  const char* specs[] = {
      "model=llama3-70b,num_gpus=8,tensor_parallel=2,zero_stage=3,seq_length=8192",
      "model=llama3-70b,num_gpus=64,tensor_parallel=4,pipeline_parallel=4,virtual_pipeline=2,num_microbatches=8,"
      "sequence_parallel=true,seq_length=4096,recompute=selective",
      "model=llama3-8b,num_gpus=16,pipeline_parallel=2,num_microbatches=4,zero_stage=1,report_stage=first",
      "model=mixtral-8x7b,num_gpus=64,tensor_parallel=2,expert_parallel=8,zero_stage=1,seq_length=4096",
      "model=llama3-8b,num_gpus=4,adapter=qlora,lora_rank=16,lora_dropout=0.05,seq_length=2048",
      "model=llama3-8b,num_gpus=8,context_parallel=2,sharding=fsdp-hybrid,gpus_per_node=4,recompute=full",
      "model=llama3-8b,num_gpus=8,framework=torchtitan,recompute=selective,recompute_every=2,offload_optimizer=true",
      "model_params_b=8,num_gpus=8,gpu_memory_gb=80,micro_batch=4,seq_length=4096,num_layers=32,hidden_dim=4096,"
      "precision_bits=16,zero_stage=3,grad_ckpt=1",
  };
  for (const char* spec : specs) {
    SCOPED_TRACE(spec);
    const Config c = testing::config_of(spec);
    for (const GpuPoint& point : sweep_gpus(c)) {
      Config x = c;
      x.num_gpus = point.num_gpus;
      const Breakdown b = estimate(x);
      EXPECT_EQ(point.per_gpu_gb, b.per_gpu_total / kGiB) << point.num_gpus;
      EXPECT_EQ(point.model_state_gb, b.stage.states.total() / kGiB) << point.num_gpus;
      EXPECT_EQ(point.activation_gb, b.stage.activations.total() / kGiB) << point.num_gpus;
      EXPECT_EQ(point.fits, b.fits) << point.num_gpus;
      EXPECT_EQ(point.likely_low_gb, b.likely_low / kGiB) << point.num_gpus;  // the point's own class
      EXPECT_EQ(point.likely_high_gb, b.likely_high / kGiB) << point.num_gpus;
    }
    for (const SeqPoint& point : sweep_seq(c)) {
      Config x = c;
      x.seq_length = point.seq_length;
      const Breakdown b = estimate(x);
      EXPECT_EQ(point.per_gpu_gb, b.per_gpu_total / kGiB) << point.seq_length;
      EXPECT_EQ(point.activation_gb, b.stage.activations.total() / kGiB) << point.seq_length;
      EXPECT_EQ(point.fits, b.fits) << point.seq_length;
      EXPECT_EQ(point.likely_low_gb, b.likely_low / kGiB) << point.seq_length;
      EXPECT_EQ(point.likely_high_gb, b.likely_high / kGiB) << point.seq_length;
    }
  }
}

// A sharded request's class is unsharded at one GPU (nothing to shard over): the profile's
// first point takes the unsharded factors, its others the request's. The factors are the
// shipped file's (conf/likely_range.json), read here, not through likely_range_for.
TEST(Sweeps, EachPointTakesTheRangeOfItsOwnClass) {
  const nlohmann::json file = nlohmann::json::parse(std::ifstream(TRAINFIT_CONF_DIR "/likely_range.json"));
  auto factors = [&](bool sharded) {
    for (const nlohmann::json& k : file.at("classes")) {
      if (k.at("adapter") == "full" && k.at("sharded") == sharded) return std::make_pair(k.at("low").get<double>(), k.at("high").get<double>());
    }
    ADD_FAILURE() << "no full-fine-tuning class, sharded=" << sharded;
    return std::make_pair(1.0, 1.0);
  };
  const Config c = testing::config_of("model=llama3-8b,num_gpus=8,zero_stage=3");
  const std::vector<GpuPoint> gpus = sweep_gpus(c);
  ASSERT_EQ(gpus.front().num_gpus, 1);
  for (const GpuPoint& p : gpus) {
    const auto [low, high] = factors(p.num_gpus > 1);
    EXPECT_NEAR(p.likely_low_gb, p.per_gpu_gb * low, 1e-9 * p.per_gpu_gb) << p.num_gpus;
    EXPECT_NEAR(p.likely_high_gb, p.per_gpu_gb * high, 1e-9 * p.per_gpu_gb) << p.num_gpus;
  }
  EXPECT_NE(factors(false), factors(true));  // else the first point proves nothing
}

// Advice is something a user can type: each field once (a combination that raised TP twice
// said "--tp=8 --sp --tp=64 --sp"), and TP within a node (Narayanan et al., SC'21, 3.3), and
// what it says fits does fit when applied to the request (the estimate of the changed job).
TEST(Advice, EachFieldOnceTensorParallelWithinANodeAndWhatFitsFits) {
  int checked = 0;
  for (const char* model : {"llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b"}) {
    for (const char* gpu : {"h100", "a100-40gb"}) {
      for (const int64_t per_node : {4, 8, 64}) {
        for (const int64_t seq : {8192, 65536}) {
          Request request;
          const std::string spec = std::string("model=") + model + ",gpu=" + gpu + ",num_gpus=8,gpus_per_node=" +
                                   std::to_string(per_node) + ",seq_length=" + std::to_string(seq) +
                                   (per_node == 4 ? ",framework=deepspeed,recompute=full,recompute_every=2" : "") +
                                   (per_node == 64 ? ",pipeline_parallel=2,num_microbatches=2,micro_batch=4" : "");
          ASSERT_TRUE(apply_key_values(request, spec).ok()) << spec;
          const Result<Resolved> resolved = resolve(request);
          ASSERT_TRUE(resolved.ok()) << spec;
          for (const Advice& a : advise(resolved->config)) {
            std::set<std::string> fields;
            Request changed = request;
            for (const Change& change : a.changes) {
              EXPECT_TRUE(fields.insert(change.field).second) << spec << ": " << key_values(a.changes);
              if (change.field == "tensor_parallel") EXPECT_LE(std::stoll(change.value), per_node) << spec;
              ASSERT_TRUE(apply_key_values(changed, change.field + "=" + change.value).ok()) << change.field;
            }
            if (!a.fits) continue;
            const Result<Resolved> after = resolve(changed);
            ASSERT_TRUE(after.ok()) << spec << " with " << key_values(a.changes);
            EXPECT_TRUE(estimate(after->config).fits) << spec << " with " << key_values(a.changes);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 25);
}

// A one-GPU request to a framework that shards only on several GPUs (torchtune, torchtitan,
// litgpt: FSDP): min_gpus_to_fit is the first count at which the same request, resolved at
// that count as its user would submit it, fits (a scan of every count up to two nodes).
// The defaults vary with the GPU count only where the request leaves their fields unsaid.
TEST(MinGpus, DefaultsVaryOnlyInFieldsTheRequestLeavesUnsaid) {
  auto varies = [](const std::string& spec) {
    Request request;
    EXPECT_TRUE(apply_key_values(request, "model=llama3-8b,gpu=h100," + spec).ok()) << spec;
    const Result<Resolved> r = resolve(request);
    EXPECT_TRUE(r.ok()) << spec;
    return r.ok() && r->config.defaults_vary_with_gpus;
  };
  EXPECT_TRUE(varies("framework=torchtune"));  // FSDP only on several GPUs
  EXPECT_FALSE(varies("framework=torchtune,sharding=zero"));
  EXPECT_FALSE(varies("framework=torchtune,num_gpus=8"));
  EXPECT_TRUE(varies("framework=litgpt,sharding=fsdp-full"));  // recompute=full still differs
  EXPECT_FALSE(varies("framework=litgpt,sharding=fsdp-full,recompute=none"));
  EXPECT_FALSE(varies("framework=hf"));
}

// Also what the response says beside it: advice's "--gpus=N" line is estimated at N as the
// framework runs there, and the verdict's way out, typed back, fits.
TEST(MinGpus, OneGpuRequestsAreSearchedWithTheFrameworksMultiGpuDefaults) {
  int compared = 0, varied = 0, found = 0, ways = 0;
  const std::string tiny = "num_layers=2,hidden_dim=512,num_heads=8,ffn_hidden=2048,vocab_size=32000";
  for (const char* framework : {"torchtune", "torchtitan", "litgpt", "hf", "megatron"}) {
    for (const std::string& model : {std::string("model=llama3-8b"), std::string("model=llama3-70b"), std::string("model=qwen2.5-7b"), tiny}) {
      for (const char* extra : {"", ",adapter=lora,lora_rank=16", ",sharding=zero", ",gpu_memory_gb=4"}) {
        for (const int64_t seq : {2048, 8192, 32768}) {
          Request request;
          const std::string spec = model + ",gpu=h100,num_gpus=1,framework=" + framework +
                                   ",seq_length=" + std::to_string(seq) + extra;
          if (!apply_key_values(request, spec).ok()) continue;
          const Result<Response> r = respond(request, {false, true});
          if (!r.ok() || r->breakdown.fits) continue;
          for (const Advice& a : r->advice) {
            if (a.field() != "num_gpus") continue;
            Request at = request;
            at.num_gpus = a.num_gpus;
            const Result<Response> there = respond(at, {false, false});
            ASSERT_TRUE(there.ok()) << spec;
            EXPECT_EQ(a.fits, there->breakdown.fits) << spec << " at " << a.num_gpus;
          }
          const std::optional<Advice> way = one_line_advice(r->advice, 1, r->min_gpus.gpus);
          if (way && r->min_gpus.gpus == 0) {
            Request typed = request;
            for (const Change& change : way->changes) ASSERT_TRUE(apply_key_values(typed, change.field + "=" + change.value).ok());
            typed.num_gpus = way->num_gpus;
            const Result<Response> back = respond(typed, {false, false});
            ASSERT_TRUE(back.ok()) << spec << " with " << key_values(way->changes);
            EXPECT_TRUE(back->breakdown.fits) << spec << " with " << key_values(way->changes);
            ways += r->resolved.config.defaults_vary_with_gpus;
          }
          int64_t scanned = 0;  // the first count up to 16 (whole 8-GPU nodes beyond one) that fits
          for (int64_t n = 2; n <= 16 && scanned == 0; n += n < 8 ? 1 : 8) {
            Request at = request;
            at.num_gpus = n;
            const Result<Response> there = respond(at, {false, false});
            if (there.ok() && there->breakdown.fits) scanned = n;
          }
          const int64_t said = r->min_gpus.gpus;
          if (scanned > 0) EXPECT_EQ(said, scanned) << spec;
          else EXPECT_TRUE(said == 0 || said > 16) << spec << ": " << said;
          ++compared;
          varied += r->resolved.config.defaults_vary_with_gpus;
          found += scanned > 0;
        }
      }
    }
  }
  EXPECT_GT(compared, 100);
  EXPECT_GT(varied, 30);
  EXPECT_GT(found, 20);
  EXPECT_GT(ways, 5);
}

// A job that fits at no GPU count hears a way out (way_out_of_none, which stops at the first
// that fits): it must be what the full advice, every entry built, offers first.
TEST(Advice, TheWayOutOfNoneIsTheFullAdvicesFirstFit) {
  int compared = 0, with_a_way = 0, combined = 0;
  for (const char* model : {"llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x7b", "qwen2.5-72b"}) {
    for (const char* gpu : {"h100", "a100-40gb", "l40s"}) {
      for (const char* layout : {"zero_stage=0", "zero_stage=1", "zero_stage=0,micro_batch=8", "pipeline_parallel=2,num_microbatches=8",
                                 "framework=torchtitan,zero_stage=3", "gpus_per_node=4"}) {
        for (const int64_t seq : {8192, 32768, 131072}) {
          const std::string spec = std::string("model=") + model + ",gpu=" + gpu + ",num_gpus=8,seq_length=" +
                                   std::to_string(seq) + "," + layout;
          Request request;
          if (!apply_key_values(request, spec).ok()) continue;
          const Result<Resolved> resolved = resolve(request);
          if (!resolved.ok()) continue;
          const Config& c = resolved->config;
          if (min_gpus_to_fit(c).gpus != 0 || cheapest_fitting_change(c)) continue;  // not "none"
          const std::optional<Advice> full = one_line_advice(advise(c), c.num_gpus, 0);
          const std::optional<Advice> lazy = way_out_of_none(c);
          ASSERT_EQ(lazy.has_value(), full.has_value()) << spec;
          if (full) {
            EXPECT_EQ(key_values(lazy->changes), key_values(full->changes)) << spec;
            EXPECT_EQ(lazy->num_gpus, full->num_gpus) << spec;
            combined += full->changes.size() > 2;
          }
          ++compared;
          with_a_way += full.has_value();
        }
      }
    }
  }
  EXPECT_GT(compared, 50);
  EXPECT_GT(with_a_way, 25);
  EXPECT_GT(combined, 5);  // some ways out take several changes
}

// A refusal's one-line advice (cheapest_fitting_change) skips the full estimate of changes
// whose model states alone overflow the GPU; it must still name what the full advice
// (advise(), every candidate estimated) names first among single changes that fit on the
// job's GPUs (advise() may also combine changes; the refusal's line offers single ones).
TEST(Advice, CheapestFittingChangeIsTheFullAdvicesFirstFit) {
  int compared = 0, with_a_fit = 0;
  for (const char* model : {"llama3-8b", "llama3-70b", "mixtral-8x7b", "qwen3-30b-a3b", "gemma2-27b"}) {
    for (const char* gpu : {"h100", "a100-40gb", "l40s"}) {
      for (const int64_t gpus : {1, 8, 32}) {
        for (const char* layout : {"zero_stage=0", "zero_stage=1", "zero_stage=3", "zero_stage=2,micro_batch=4",
                                   "sharding=fsdp-full,recompute=selective", "pipeline_parallel=2,num_microbatches=8",
                                   "adapter=lora,lora_rank=16", "adapter=qlora,lora_rank=64",
                                   "framework=torchtitan,zero_stage=3", "zero_stage=3,offload_optimizer=true"}) {
          for (const int64_t seq : {2048, 16384}) {
            const std::string spec = std::string("model=") + model + ",gpu=" + gpu + ",num_gpus=" +
                                     std::to_string(gpus) + ",seq_length=" + std::to_string(seq) + "," + layout;
            Request request;
            if (!apply_key_values(request, spec).ok()) continue;
            const Result<Resolved> resolved = resolve(request);
            if (!resolved.ok()) continue;  // e.g. pipeline_parallel=2 on one GPU
            const Config& c = resolved->config;
            if (estimate(c).fits) continue;
            std::optional<Advice> first;  // the first single change (combinations also name num_gpus)
            for (const Advice& a : advise(c)) {
              const bool adds_gpus = std::any_of(a.changes.begin(), a.changes.end(),
                                                 [](const Change& change) { return change.field == "num_gpus"; });
              if (a.fits && a.num_gpus == c.num_gpus && !adds_gpus) {
                first = a;
                break;
              }
            }
            const std::optional<Advice> cheapest = cheapest_fitting_change(c);
            ASSERT_EQ(cheapest.has_value(), first.has_value()) << spec;
            if (first) EXPECT_EQ(key_values(cheapest->changes), key_values(first->changes)) << spec;
            ++compared;
            with_a_fit += first.has_value();
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 300);
  EXPECT_GT(with_a_fit, 50);             // some refusals have a one-change fix ...
  EXPECT_LT(with_a_fit, compared - 50);  // ... and some have none
}

}  // namespace
}  // namespace trainfit
