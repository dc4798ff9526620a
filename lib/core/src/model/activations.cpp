// Activations saved for backward, per layer and per pipeline stage.
// Base: Korthikanti et al. 2022 (arXiv 2205.05198) section 4, Table 2:
// sbh(34 + 5as/h) per GPT layer, split into a replicated part (10) and a
// TP-split part (24/t). Generalized here tensor by tensor to GQA, SwiGLU,
// RMSNorm, no-dropout models, flash attention and context parallelism
// (each term's comment says how), and to what PyTorch eager
// modules really save (ops = eager; measured in tests/fidelity, docs/fidelity.md).
#include <algorithm>
#include <cmath>

#include "model.h"

namespace trainfit::model {
namespace {

// One norm's saved tensors per token, excluding its output (the next GEMM's input).
double norm_bytes_per_token(const Config& c) {
  const double h = static_cast<double>(c.geo.hidden), R = residual_bytes(c);
  if (c.geo.norm == Norm::kLayerNorm) return R * h + 8.0;  // input + fp32 mean, rstd (native layer_norm)
  // Fused RMSNorm (TE, Apex) and torch.compile's fused kernel: input + fp32 rstd
  // (Inductor recomputes the elementwise chain in backward: min-cut partitioner).
  if (c.ops == Ops::kFused || c.compile) return R * h + 4.0;
  // HF LlamaRMSNorm in eager PyTorch: the fp32 upcast of the input, its square
  // (kept by pow/mean), the normalized tensor in the residual dtype, and rstd.
  return (4.0 + 4.0 + R) * h + 4.0;
}

// One norm's saved tensors per token when its weight is frozen (LoRA): an eager RMSNorm
// then keeps no normalized tensor, which only the weight's gradient needs (measured).
double frozen_norm_bytes_per_token(const Config& c) {
  const bool eager_rmsnorm = c.geo.norm == Norm::kRmsNorm && c.ops == Ops::kEager && !c.compile;
  return norm_bytes_per_token(c) - (eager_rmsnorm ? residual_bytes(c) * static_cast<double>(c.geo.hidden) : 0.0);
}

// Under autocast with an fp32 residual each projection casts its input itself (autocast
// caches only leaf weights); torch.compile casts once (common-subexpression elimination).
bool per_consumer_cast(const Config& c) {
  return c.ops == Ops::kEager && !c.compile && residual_bytes(c) > gemm_input_bytes(c);
}

// Saved copies of each token an MoE block dispatches to an expert: one, or under autocast in
// transformers' loop two, since the expert's gate and up each cast it themselves.
double dispatched_copies(const Config& c) {
  return c.moe_expert_loop && per_consumer_cast(c) && c.geo.mlp == Mlp::kSwiGlu ? 2.0 : 1.0;
}

// A per-token figure averaged over the layers, MoE and dense (DeepSeek first_k_dense_replace).
double mean_over_layers(const Config& c, double moe, double dense) {
  const double layers = static_cast<double>(c.geo.layers), moe_layers = static_cast<double>(c.geo.moe_layers());
  return (moe_layers * moe + (layers - moe_layers) * dense) / layers;
}

// Saved activations of one MLP / MoE block per token, excluding its input.
double mlp_bytes_per_token(const Config& c) {
  const Geometry& g = c.geo;
  const double A = act_bytes(c), Ain = gemm_input_bytes(c);
  const double t = static_cast<double>(c.tp);
  // GeLU: fc1 output (GeLU input) + GeLU output (fc2 input): Korthikanti's 8sbh + 8sbh at F = 4h.
  // SwiGLU unfused (HF LlamaMLP): gate out, SiLU out, up out, product (down input): 8sbF at 2 bytes.
  auto dense = [&](double ffn) {
    // torch.compile leaves these: recomputing the activation and the product instead
    // (min-cut) would predict 9 GiB too little against torchtune's published Llama-3.2-3B
    // compile figures (tests/published), so the partitioner evidently keeps them.
    return g.mlp == Mlp::kGelu ? (A + Ain) * ffn / t : (3.0 * A + Ain) * ffn / t;
  };
  if (g.experts == 0) return dense(static_cast<double>(g.ffn));
  // MoE (llm-analysis MoE activations; Megatron-LM#1784): fp32 router probabilities,
  // k dispatched copies of each token (expert input), the expert MLP for k tokens,
  // and k expert outputs kept for the weighted combine; a shared expert is a dense MLP every
  // token runs through (Qwen2MoeSparseMoeBlock, DeepseekV3MoE).
  const double h = static_cast<double>(g.hidden), k = static_cast<double>(g.top_k);
  double moe = 4.0 * static_cast<double>(g.experts) + k * dispatched_copies(c) * Ain * h +
               k * dense(static_cast<double>(g.moe_ffn)) + k * A * h +
               (g.shared_ffn > 0 ? dense(static_cast<double>(g.shared_ffn)) : 0.0);
  if (c.moe_expert_loop) {
    // transformers' loop (modeling_mixtral.py MixtralSparseMoeBlock): index_add_ saves each
    // weighted expert output, in the residual stream's dtype (its backward expands the
    // gradient as the source: derivatives.yaml index_add), with the routed token indices.
    moe += k * residual_bytes(c) * h + 16.0 * k;
  }
  return mean_over_layers(c, moe, dense(static_cast<double>(g.ffn)));
}

// What a frozen MLP does not save per token: the linears' inputs, which only their weights'
// gradients need (measured, tests/fidelity): down's input; in an MoE block also each dispatched
// copy of the token (the experts' gate and up read it). Averaged over the layers, like
// mlp_bytes_per_token.
double frozen_mlp_inputs_per_token(const Config& c) {
  const Geometry& g = c.geo;
  const double Ain = gemm_input_bytes(c), t = static_cast<double>(c.tp);
  if (g.experts == 0) return Ain * static_cast<double>(g.ffn) / t;
  const double k = static_cast<double>(g.top_k), h = static_cast<double>(g.hidden);
  const double moe = k * Ain * (static_cast<double>(g.moe_ffn) + dispatched_copies(c) * h);
  return mean_over_layers(c, moe, Ain * static_cast<double>(g.ffn) / t);
}

// How many low-precision copies of the two norm outputs the GEMMs save. Under autocast
// with an fp32 residual each projection casts its input itself (autocast caches only
// leaf weights): q, k, v and gate, up separately in HF Llama; one fused QKV and one fc1
// in GPT-2 and Megatron.
double gemm_input_copies(const Config& c) {
  if (!per_consumer_cast(c)) return 2.0;
  const bool separate_projections = c.geo.norm == Norm::kRmsNorm;
  const double attention = separate_projections ? 3.0 : 1.0;
  // An MoE block's router is the one consumer of the norm output (the experts read gathered copies).
  const double mlp = separate_projections && c.geo.mlp == Mlp::kSwiGlu && c.geo.experts == 0 ? 2.0 : 1.0;
  return attention + mlp;
}

}  // namespace

// torchtitan's op-level selective checkpointing (v0.2.1 distributed/activation_checkpoint.py
// _apply_op_sac, llama3 _op_sac_save_list): a checkpointed block keeps its input, the
// outputs of every other aten.mm in call order (wq, wk, wv, wo, w1, w3, w2: wq, wv, w1 and
// w2 are kept), and the attention kernel's output with its log-sum-exp; all else is recomputed.
double op_level_bytes(const Config& c) {
  const Geometry& g = c.geo;
  const double T = tokens(c), h = static_cast<double>(g.hidden);
  const double t = static_cast<double>(c.tp), r = sp_divisor(c);
  const double A = act_bytes(c), R = residual_bytes(c);
  const double d = static_cast<double>(g.head_size()), q = static_cast<double>(g.heads) * d;
  const double kv = std::ceil(static_cast<double>(g.kv_heads) / t) * d;
  const double ffn = g.experts > 0 ? static_cast<double>(g.top_k * g.moe_ffn) : static_cast<double>(g.ffn);
  const double mm_outputs = q / t + kv + ffn / t + h;  // wq, wv, w1, w2
  const double attention = q / t + 4.0 / A * static_cast<double>(g.heads) / t;  // output + fp32 lse
  return R * T * h / r + A * T * (mm_outputs + attention);
}

double core_attention_bytes(const Config& c) {
  if (c.attention == Attention::kFlash) return 0.0;
  const Geometry& g = c.geo;
  const double A = act_bytes(c);
  // Score-shaped elements on this GPU: (a/t) heads x b x (s/cp) queries x s keys.
  const double scores = static_cast<double>(g.heads) / static_cast<double>(c.tp) * tokens(c) *
                        static_cast<double>(c.seq_length);
  if (g.dropout) return (A + 1.0 + A) * scores;  // softmax out, dropout mask, dropout out: 5as^2b
  if (c.ops == Ops::kFused) return A * scores;   // fused scale-mask-softmax output (Megatron)
  // HF eager attention: softmax(dtype=float32) saves its fp32 output, and the
  // probabilities cast back to the compute dtype are saved by the P@V matmul.
  return (4.0 + (A < 4.0 ? A : 0.0)) * scores;
}

// What attention saves between its input projections and its output projection: Q (after
// RoPE), K and V, and the core (eager scores and probabilities, or flash's log-sum-exp).
double attention_interior_bytes(const Config& c, Recompute mode) {
  const Geometry& g = c.geo;
  const double T = tokens(c), t = static_cast<double>(c.tp), A = act_bytes(c);
  const double d = static_cast<double>(g.head_size()), dv = static_cast<double>(g.value_head_size());
  const double q = static_cast<double>(g.heads) * d;
  const double kv_heads_here = std::ceil(static_cast<double>(g.kv_heads) / t);
  // HF eager attention materializes K and V repeated to every query head (repeat_kv).
  const bool repeated = c.ops == Ops::kEager && c.attention == Attention::kEager;
  const double k = repeated ? q / t : kv_heads_here * d;
  const double v = repeated ? static_cast<double>(g.heads) * dv / t : kv_heads_here * dv;
  double bytes = (A * q / t + A * k + A * v) * T;
  // Latent attention (modeling_deepseek_v3.py DeepseekV3Attention.forward) also keeps each
  // latent's norm input and output (q_a_layernorm, kv_a_layernorm: q_b_proj's and kv_b_proj's
  // inputs) and the rotary key part; they are whole on every TP rank.
  if (g.kv_lora_rank > 0) {
    bytes += A * (2.0 * static_cast<double>(g.q_lora_rank) + 2.0 * static_cast<double>(g.kv_lora_rank) +
                  static_cast<double>(g.rope_head_dim)) * T;
  }
  // Flash attention keeps only the fp32 log-sum-exp per head (FlashAttention-2, arXiv 2307.08691).
  if (c.attention == Attention::kFlash) bytes += 4.0 * static_cast<double>(g.heads) / t * T;
  if (mode == Recompute::kNone) bytes += core_attention_bytes(c);  // selective drops exactly this
  return bytes;
}

double layer_bytes(const Config& c, Recompute mode) {
  const Geometry& g = c.geo;
  const double T = tokens(c);
  const double h = static_cast<double>(g.hidden);
  const double t = static_cast<double>(c.tp), r = sp_divisor(c);
  const double Ain = gemm_input_bytes(c), R = residual_bytes(c);
  if (mode == Recompute::kFull) {
    // Only the layer input (Korthikanti: 2sbh, /t with SP). A non-reentrant checkpoint builds the
    // forward's graph and swaps only its saved tensors (torch/utils/checkpoint.py
    // _checkpoint_without_reentrant_generator, saved_tensors_hooks): what bitsandbytes < 0.43.2
    // keeps as a ctx attribute, each 4-bit linear's input, stays to the backward.
    return R * T * h / r + (c.use_reentrant ? 0.0 : nf4_saved_inputs_bytes(c));
  }
  if (mode == Recompute::kOp) return op_level_bytes(c);

  const double mask = g.dropout ? 1.0 : 0.0;  // 1-byte dropout masks
  // A frozen base (LoRA) saves no linear's input: backward needs only dX = dY·W. Its
  // norms keep no normalized tensor (saved for the weight's gradient only); the adapters
  // save what they read (adapter_activation_bytes). Measured: tests/fidelity.
  const bool frozen = c.adapter != Adapter::kNone;
  const double norm = frozen ? frozen_norm_bytes_per_token(c) : norm_bytes_per_token(c);
  const double gemm_inputs = frozen ? 0.0 : gemm_input_copies(c) * Ain * h;
  // Replicated region (split by t only with sequence parallelism):
  // two norms, QKV input and MLP input (norm outputs), two dropout masks.
  double bytes = (2.0 * norm + gemm_inputs + 2.0 * mask * h) * T / r;
  bytes += attention_interior_bytes(c, mode);
  // The output projection's input: heads x the value head size.
  if (!frozen) bytes += Ain * static_cast<double>(g.heads * g.value_head_size()) / t * T;
  bytes += mlp_bytes_per_token(c) * T;
  if (frozen) bytes -= frozen_mlp_inputs_per_token(c) * T;  // the linears' inputs, for their weights only
  return bytes + adapter_activation_bytes(c) + nf4_saved_inputs_bytes(c);
}

double mlp_saved_bytes(const Config& c) { return mlp_bytes_per_token(c) * tokens(c); }

double attention_mask_bytes(const Config& c) {
  // Eager attention adds a materialized causal mask (HF: s x s in the compute dtype).
  if (c.attention != Attention::kEager || c.ops != Ops::kEager) return 0.0;
  return act_bytes(c) * static_cast<double>(c.seq_length / c.cp) * static_cast<double>(c.seq_length);
}

namespace {

// Micro-batches (in stage-sized units) whose activations a stage holds at the peak.
// 1F1B: stage k holds min(m, p - k): the first stage p, the last one (Korthikanti
// section 4.2.3). Interleaved with v chunks of L/(p v) layers: warm-up of
// (v-1) g + 2(p-k-1) chunk-micro-batches (g = p, Megatron's default
// microbatch_group_size_per_vp_stage), so warm-up + 1 chunks of 1/v stage are held,
// capped by the m v there are (schedules.py get_pp_rank_microbatches). At k = 0 this
// is Korthikanti's p (1 + (p-1)/(p v)); the last stage holds ((v-1) p + 1) / v.
double microbatches_in_flight(const Config& c, const StageParams& p) {
  if (c.pp <= 1) return 1.0;
  const double stages = static_cast<double>(c.pp), m = static_cast<double>(c.num_microbatches);
  const double k = p.first ? 0.0 : stages - 1.0;
  if (c.vpp > 1) {
    const double v = static_cast<double>(c.vpp);
    return std::min(m * v, (v - 1.0) * stages + 2.0 * (stages - k - 1.0) + 1.0) / v;
  }
  return std::min(m, stages - k);
}

// Layers whose activations are checkpointed: one in N (torchtitan _apply_layer_sac: block k
// iff k % N == 0; torchtune ac_option); the others keep everything.
double checkpointed_layers(const Config& c, double layers) {
  return c.recompute == Recompute::kNone ? 0.0 : std::floor(layers / static_cast<double>(c.recompute_every));
}

// The first stage of a frozen base (LoRA) with no recompute: nothing upstream of the first
// adapter needs a gradient (measured): the first layer's input norm saves nothing; with q
// and v adapted its attention keeps no q (k has no gradient there); with only o or the MLP
// adapted, its attention saves nothing, and with only the MLP neither does the second norm.
// Returns those bytes per micro-batch; *uncast gets the first layer's weights whose autocast
// copy is not saved either.
double frozen_first_layer_unsaved(const Config& c, double* uncast) {
  const Geometry& g = c.geo;
  const double tokens_here = tokens(c), hidden = static_cast<double>(g.hidden);
  const double tp = static_cast<double>(c.tp), sp = sp_divisor(c), act = act_bytes(c);
  const uint32_t targets = c.lora_modules;
  const bool attention_input = targets & (kLoraQ | kLoraK | kLoraV | kLoraQkv);
  const double first_norm = frozen_norm_bytes_per_token(c);
  const double q = static_cast<double>(g.heads * g.head_size()) / tp;
  double unsaved = first_norm * tokens_here / sp;
  if (attention_input) {
    if ((targets & kLoraQ) && !(targets & (kLoraK | kLoraQkv))) unsaved += act * q * tokens_here;
  } else {
    unsaved += attention_interior_bytes(c, c.recompute);
    if (!(targets & kLoraO)) unsaved += first_norm * tokens_here / sp;
  }
  // A frozen linear whose input needs no gradient saves nothing, its autocast weight copy
  // neither: in the first layer q, k and v always, o before any attention target, gate
  // and up before any target at all (measured: tests/fidelity, LoRA on the MLP only).
  const double kv = std::ceil(static_cast<double>(g.kv_heads) / tp) * static_cast<double>(g.head_size());
  const double ffn = static_cast<double>(g.experts > 0 ? 0 : g.ffn) / tp;
  *uncast = hidden * (q + 2.0 * kv);
  if (!attention_input) *uncast += q * hidden;
  if (!attention_input && !(targets & kLoraO)) *uncast += (g.mlp == Mlp::kSwiGlu ? 2.0 : 1.0) * hidden * ffn;
  return unsaved;
}

// The last stage: the final norm, the LM head's input and what the loss saves.
double logits_loss_bytes(const Config& c) {
  const Geometry& g = c.geo;
  const double tokens_here = tokens(c), hidden = static_cast<double>(g.hidden);
  const double sp = sp_divisor(c), act = act_bytes(c), gemm_input = gemm_input_bytes(c);
  const double vocab = static_cast<double>(g.vocab) / static_cast<double>(c.tp);  // vocab-parallel logits
  const bool frozen = c.adapter != Adapter::kNone;
  const bool trained_head = ((c.lora_modules | c.modules_to_save) & kLoraLmHead) != 0;
  // Final norm + LM-head input (Korthikanti: 4sbh/t with SP). A frozen head saves no
  // input and its norm no normalized tensor (measured).
  // torchtitan's TP (DTensor ColwiseParallel on `output`, input_layouts=Shard(1)) all-gathers
  // the norm output before the matmul, which saves the gathered 16-bit input; Float8 skips the
  // head (parallelisms/parallelize_llama.py apply_tp; float8.py module_filter_fn).
  const bool gathered_head_input = dtensor_tp(c) && c.sp;
  const double head_input = gathered_head_input ? act * hidden * tokens_here : gemm_input * hidden * tokens_here / sp;
  double bytes = !frozen     ? norm_bytes_per_token(c) * tokens_here / sp + head_input
                 : trained_head ? frozen_norm_bytes_per_token(c) * tokens_here / sp + head_input  // the head's input
                                : frozen_norm_bytes_per_token(c) * tokens_here / sp;
  // HF shifts labels: the loss sees s-1 positions per sequence.
  const double loss_tokens = shifts_logits(c) ? tokens_here - static_cast<double>(c.micro_batch) : tokens_here;
  const double softmax_bytes = (c.logits_fp32 || act == 4.0) ? 4.0 : act;
  switch (c.loss) {
    case Loss::kStandard:  // log_softmax saves its output: Korthikanti's fp32 logits 4sbV/t
      // Compiled, the upcast, log-softmax and NLL fuse into one kernel that keeps its
      // input logits and one fp32 log-sum-exp per token (Inductor's fused CE).
      bytes += c.compile_loss ? act * tokens_here * vocab + 4.0 * tokens_here : softmax_bytes * loss_tokens * vocab;
      break;
    case Loss::kChunked:  // per-chunk upcast + recompute: only the low-precision logits stay
      bytes += act * tokens_here * vocab;
      break;
    case Loss::kFused:  // fused linear-CE (Liger FLCE): the gradient of the hidden states
      bytes += act * tokens_here * hidden / sp;
      break;
  }
  return bytes;
}

// Low-precision weight copies saved by the matmuls for backward: torch.autocast
// casts fp32 weights once per forward; Transformer Engine keeps FP8 weight copies.
// Checkpointed layers run forward without saving them; under ZeRO-3/FSDP the units
// arrive already cast (counted as transients instead).
double weight_cache_bytes(const Config& c, const StageParams& p, double layers, double checkpointed, double uncast) {
  if (weights_sharded(c) || c.adapter == Adapter::kQlora) return 0.0;  // NF4 matmuls keep only the packed weight
  // Checkpointed layers run forward without saving their cast weights.
  const double checkpointed_share = c.recompute == Recompute::kFull || c.recompute == Recompute::kOp
                                        ? (layers > 0 ? checkpointed / layers : 1.0) : 0.0;
  const double copied = p.linear - p.layer_linear * checkpointed_share - uncast;
  if (c.precision == Precision::kBf16Amp) return 2.0 * copied;
  if (c.precision == Precision::kFp8) return 1.0 * copied;
  return 0.0;
}

}  // namespace

Activations stage_activations(const Config& c, const StageParams& p) {
  Activations a;
  const Geometry& g = c.geo;
  const double tokens_here = tokens(c), hidden = static_cast<double>(g.hidden), sp = sp_divisor(c);
  const double layers = static_cast<double>(p.layers);
  const double checkpointed = checkpointed_layers(c, layers);
  // Each term only when some layer is of that kind (layer_bytes is the model's costliest call).
  const double kept_whole = layers - checkpointed;
  a.per_layer = layers > 0 ? ((checkpointed > 0 ? checkpointed * layer_bytes(c, c.recompute) : 0.0) +
                              (kept_whole > 0 ? kept_whole * layer_bytes(c, Recompute::kNone) : 0.0)) / layers
                           : layer_bytes(c, c.recompute);
  a.inflight_layers = layers * microbatches_in_flight(c, p);
  a.layers = a.per_layer * a.inflight_layers;
  // The first stage holds up to min(m, p) micro-batches' embedding-side tensors.
  const double micro_batches =
      c.pp > 1 && p.first ? std::min(static_cast<double>(c.num_microbatches), static_cast<double>(c.pp)) : 1.0;
  const bool frozen = c.adapter != Adapter::kNone;
  const uint32_t trained_embedding = (c.lora_modules | c.modules_to_save) & kLoraEmbedding;
  // Token ids (int64, Megatron: 8sbp) and the embedding dropout mask (sbhp/t).
  if (p.first && !frozen) a.embedding = (8.0 * tokens_here + (g.dropout ? tokens_here * hidden / sp : 0.0)) * micro_batches;
  if (p.first && frozen && trained_embedding) a.embedding = 8.0 * tokens_here * micro_batches;  // the token ids
  double uncast_first_layer = 0;  // first-layer weights whose autocast copy is not saved
  if (p.first && frozen && !trained_embedding && c.recompute == Recompute::kNone) {
    const double unsaved = frozen_first_layer_unsaved(c, &uncast_first_layer);
    a.layers -= std::min(a.layers, unsaved * micro_batches);
  }
  if (c.ops == Ops::kEager) {
    // RoPE's cos and sin tables, saved by q*cos and rotate_half(q)*sin, shared by all layers.
    if (g.learned_positions == 0) {
      a.embedding += 2.0 * act_bytes(c) * static_cast<double>(c.seq_length / c.cp) * static_cast<double>(g.head_size()) * micro_batches;
    }
    // Checkpointed layers save their inputs, the causal mask among them.
    if (c.recompute == Recompute::kFull || c.recompute == Recompute::kOp) a.embedding += attention_mask_bytes(c) * micro_batches;
  }
  if (p.last) a.logits_loss = logits_loss_bytes(c);
  a.weight_cache = weight_cache_bytes(c, p, layers, checkpointed, uncast_first_layer);
  return a;
}

// torch.autocast caches the 16-bit cast of every fp32 leaf parameter that requires grad until the
// outermost autocast region exits (aten/src/ATen/autocast_mode.cpp cached_cast, can_try_cache; the
// region covers forward and loss in HF Trainer and Lightning, backward runs outside it): the casts
// of the checkpointed layers, which their matmuls do not save, stay through the forward.
double autocast_cache_bytes(const Config& c, const StageParams& p) {
  if (!c.autocast_cache || c.precision != Precision::kBf16Amp || weights_sharded(c) || c.adapter != Adapter::kNone) return 0.0;
  const double layers = static_cast<double>(p.layers);
  if (layers <= 0 || (c.recompute != Recompute::kFull && c.recompute != Recompute::kOp)) return 0.0;
  return 2.0 * p.layer_linear * checkpointed_layers(c, layers) / layers;
}

}  // namespace trainfit::model
