// A DeepSpeed JSON config -> Request (framework "deepspeed"). Keys as DeepSpeed v0.16.4-v0.19.5
// define them: deepspeed/runtime/config.py (batch, precision, optimizer),
// deepspeed/runtime/zero/config.py and offload_config.py (zero_optimization),
// deepspeed/runtime/activation_checkpointing/config.py. "auto" is the HF Trainer's
// placeholder (transformers/integrations/deepspeed.py): left unset and listed.
#include <nlohmann/json.hpp>

#include "trainfit/util/text.h"
#include "mapping.h"
#include "readers.h"
#include "trainfit/json.h"

namespace trainfit::config_files {
namespace {

using nlohmann::ordered_json;

// A scalar as text ("2", "true", "cpu"); objects and arrays as JSON.
std::string text_of(const ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// A JSON number as the integer it names ("5e8" and 500000000.0 are 500000000).
std::string number_text(const ordered_json& value) {
  if (value.is_number_integer()) return value.dump();
  const double v = value.get<double>();
  return v >= 1 && v <= 1e12 && v == static_cast<double>(static_cast<int64_t>(v)) ? std::to_string(static_cast<int64_t>(v)) : value.dump();
}

// The "auto"s trainfit resolves itself as transformers and accelerate fill them (reduce_bucket_size:
// hidden x hidden; stage3_prefetch_bucket_size: 0.9 x hidden^2; stage3_param_persistence_threshold:
// 10 x hidden); the others are left unset and listed.
bool resolved_auto(const std::string& key) {
  return key == "zero_optimization.reduce_bucket_size" || key == "zero_optimization.stage3_prefetch_bucket_size" ||
         key == "zero_optimization.stage3_param_persistence_threshold";
}

bool is_auto(const ordered_json& value) { return value.is_string() && value.get<std::string>() == "auto"; }

// Keys that first appear in a release: a config that uses one runs that release or a newer one.
// zero_optimization is a pydantic model with extra="forbid" (zero/config.py) and bf16 from
// v0.17.1 (precision_config.py), so older releases refuse these keys; the top-level ones older
// releases ignore. Read at each tag's runtime/config.py, zero/config.py, precision_config.py.
struct KeyRelease {
  const char* section;  // "" = top level
  const char* key;
  const char* release;
};
constexpr KeyRelease kKeyReleases[] = {
    {"zero_optimization", "zeropp_loco_param", "0.16.2"},
    {"zero_optimization", "log_trace_cache_warnings", "0.16.4"},
    {"tensor_parallel", "autotp_size", "0.16.4"},
    {"compile", "deepcompile", "0.16.6"},
    {"", "sequence_parallel_size", "0.17.0"},
    {"bf16", "check_grad_overflow", "0.17.1"},
    {"", "torch_autocast", "0.17.2"},
    {"zero_optimization", "zenflow", "0.17.5"},
    {"zero_optimization", "enable_sanity_checks", "0.17.6"},
    {"zero_optimization", "leaf_module", "0.18.0"},
    {"", "datastates_ckpt", "0.18.1"},
    {"bf16", "bf16_master_weights_and_grads", "0.18.3"},
    {"bf16", "bf16_optimizer_states", "0.18.3"},
    {"zero_optimization", "stage3_allgather_sequential", "0.18.5"},
    {"zero_optimization", "save_muon_momentum_buffer_in_memory", "0.18.9"},
    {"data_types", "param_dtype", "0.19.2"},
    {"", "expert_parallel", "0.19.2"},
    {"", "log_level", "0.19.3"},
    {"", "managed_gradient_accumulation", "0.19.4"},
};

// The newest first release among the keys the config uses, or nullptr.
const KeyRelease* newest_key_release(const ordered_json& doc) {
  const KeyRelease* newest = nullptr;
  for (const KeyRelease& k : kKeyReleases) {
    const bool top = k.section[0] == '\0';
    const bool used = top ? doc.contains(k.key)
                          : doc.contains(k.section) && doc[k.section].is_object() && doc[k.section].contains(k.key);
    if (used) newest = &k;  // the table is in release order
  }
  return newest;
}

class DeepSpeedReader {
 public:
  explicit DeepSpeedReader(Mapping& m) : m_(m) {}

  Result<bool> read(const ordered_json& doc) {
    for (const auto& [key, value] : doc.items()) {
      Result<bool> ok = is_auto(value) ? (m_.left_unset(key, "auto"), Result<bool>(true)) : top_level(key, value);
      if (!ok) return ok;
    }
    if (const KeyRelease* k = newest_key_release(doc)) {
      const std::string key = k->section[0] == '\0' ? k->key : std::string(k->section) + "." + k->key;
      m_.file().release_at_least = k->release;
      m_.inferred(key + " first appears in DeepSpeed v" + k->release + ": the release is v" + k->release +
                  " or newer (the conventions modelled are the newest release's unless framework_version says)");
    }
    if (!bf16_key_.empty() && !fp16_key_.empty()) {
      return m_.error(ErrorCode::kInconsistent, fp16_key_,
                      bf16_key_ + "=true and " + fp16_key_ + "=true contradict each other; enable one");
    }
    return check_batch();
  }

 private:
  Result<bool> top_level(const std::string& key, const ordered_json& value) {
    // config.py get_train_batch_size / get_train_micro_batch_size_per_gpu / get_gradient_accumulation_steps
    if (key == "train_batch_size") return global_batch(key, value);
    if (key == "train_micro_batch_size_per_gpu") return m_.set(key, "micro_batch", text_of(value));
    if (key == "gradient_accumulation_steps") {
      accumulation_key_ = key;
      return m_.set(key, "num_microbatches", text_of(value));
    }
    // config.py get_bfloat16_config ("bf16", alias "bfloat16") and get_fp16_enabled
    if (key == "bf16" || key == "bfloat16") return precision(key, value, "bf16", &bf16_key_);
    if (key == "fp16") return precision(key, value, "fp16", &fp16_key_);
    if (key == "zero_optimization") return section(key, value, &DeepSpeedReader::zero);
    if (key == "optimizer") return section(key, value, &DeepSpeedReader::optimizer);
    if (key == "activation_checkpointing") return activation_checkpointing(key, value);
    if (key == "data_types") return section(key, value, &DeepSpeedReader::data_types);
    if (key == "tensor_parallel") return section(key, value, &DeepSpeedReader::tensor_parallel);
    if (one_of(key, {"scheduler", "gradient_clipping", "steps_per_print", "wall_clock_breakdown", "prescale_gradients",
                     "gradient_predivide_factor", "tensorboard", "wandb", "csv_monitor", "comet", "flops_profiler",
                     "comms_logger", "dump_state", "checkpoint", "zero_allow_untested_optimizer",
                     "zero_force_ds_cpu_optimizer", "memory_breakdown", "aio", "autotuning", "elasticity", "seed",
                     "disable_allgather", "graph_harvesting", "use_data_before_expert_parallelism",
                     "datastates_ckpt", "log_level"})) {
      m_.ignore(key);
      return true;
    }
    if (one_of(key, {"amp", "communication_data_type", "sparse_attention", "pipeline", "compression_training",
                     "data_efficiency", "curriculum_learning", "sequence_parallel_size", "sparse_gradients",
                     "torch_autocast", "hybrid_engine", "compile", "expert_parallel",
                     "managed_gradient_accumulation"})) {
      if (!disabled(value)) m_.not_modelled(key, text_of(value));
      else m_.ignore(key);
      return true;
    }
    m_.unrecognised(key);
    return true;
  }

  // A section whose "enabled" is false changes nothing.
  static bool disabled(const ordered_json& value) {
    return value.is_object() && value.contains("enabled") && value["enabled"].is_boolean() &&
           !value["enabled"].get<bool>();
  }

  using SectionFn = Result<bool> (DeepSpeedReader::*)(const std::string& key, const ordered_json& value);

  Result<bool> section(const std::string& name, const ordered_json& value, SectionFn fn) {
    if (!value.is_object()) return m_.invalid(name, text_of(value), "a JSON object");
    for (const auto& [key, inner] : value.items()) {
      const std::string full = name + "." + key;
      if (is_auto(inner) && !resolved_auto(full)) {
        m_.left_unset(full, "auto");
        continue;
      }
      Result<bool> ok = (this->*fn)(full, inner);
      if (!ok) return ok;
    }
    return true;
  }

  Result<bool> global_batch(const std::string& key, const ordered_json& value) {
    int64_t sequences = 0;
    if (!value.is_number_integer() || (sequences = value.get<int64_t>()) < 1) {
      return m_.invalid(key, text_of(value), "integer >= 1 or \"auto\"");
    }
    m_.file().global_batch = GlobalBatch{sequences, key, "", 0};
    return true;
  }

  Result<bool> precision(const std::string& name, const ordered_json& value, const char* word, std::string* enabled_key) {
    if (!value.is_object()) return m_.invalid(name, text_of(value), "a JSON object such as {\"enabled\": true}");
    for (const auto& [key, inner] : value.items()) {
      const std::string full = name + "." + key;
      if (one_of(key, {"bf16_master_weights_and_grads", "bf16_optimizer_states"})) {
        if (inner.is_boolean() && inner.get<bool>()) m_.not_modelled(full, "true");  // bf16 masters/states
        else m_.ignore(full);
        continue;
      }
      if (key != "enabled") {
        m_.ignore(full);  // loss scaling, immediate_grad_update: no memory of their own
        continue;
      }
      if (is_auto(inner)) {
        m_.left_unset(full, "auto");
      } else if (!inner.is_boolean()) {
        return m_.invalid(full, text_of(inner), "true|false|\"auto\"");
      } else if (inner.get<bool>()) {
        *enabled_key = full;
        Result<bool> ok = m_.set(full, "precision", word);  // DeepSpeed's word, for the deepspeed preset
        if (!ok) return ok;
      }
    }
    return true;
  }

  // zero/config.py DeepSpeedZeroConfig; offload_config.py (device: none|cpu|nvme).
  Result<bool> zero(const std::string& key, const ordered_json& value) {
    const std::string leaf = key.substr(key.find('.') + 1);
    if (leaf == "stage") return m_.set(key, "zero_stage", text_of(value));
    if (leaf == "offload_optimizer") return offload(key, value, "offload_optimizer");
    if (leaf == "offload_param") return offload(key, value, "offload_params");
    // The gradient bucket (a number, or "auto": hidden x hidden as HF Trainer fills it).
    if (leaf == "reduce_bucket_size") return m_.set(key, "reduce_bucket_size", value.is_number() ? number_text(value) : text_of(value));
    // Read and checked; it allocates nothing (resolve/layout.cpp check_allgather_bucket).
    if (leaf == "allgather_bucket_size") {
      return m_.set(key, "allgather_bucket_size", value.is_number() ? number_text(value) : text_of(value));
    }
    if (one_of(leaf, {"stage3_prefetch_bucket_size", "stage3_max_live_parameters", "stage3_max_reuse_distance",
                      "stage3_param_persistence_threshold"})) {
      return m_.set(key, leaf.c_str(), value.is_number() ? number_text(value) : text_of(value));
    }
    if (one_of(leaf, {"sub_group_size", "overlap_comm", "contiguous_gradients", "zero_hpz_partition_size",
                      "zero_quantized_weights", "zero_quantized_gradients", "round_robin_gradients",
                      "mics_shard_size", "cpu_offload", "cpu_offload_params", "model_persistence_threshold",
                      "zeropp_loco_param", "zenflow", "leaf_module", "save_muon_momentum_buffer_in_memory"})) {
      m_.not_modelled(key, text_of(value));
      return true;
    }
    if (one_of(leaf, {"allgather_partitions", "reduce_scatter", "stage3_gather_16bit_weights_on_model_save",
                      "stage3_gather_fp16_weights_on_model_save", "gather_16bit_weights_on_model_save",
                      "ignore_unused_parameters", "elastic_checkpoint", "load_from_fp32_weights",
                      "legacy_stage1", "use_multi_rank_bucket_allreduce", "log_trace_cache_warnings",
                      "enable_sanity_checks", "stage3_allgather_sequential"})) {
      m_.ignore(key);
      return true;
    }
    m_.unrecognised(key);
    return true;
  }

  Result<bool> offload(const std::string& name, const ordered_json& value, const char* field) {
    if (!value.is_object()) return m_.invalid(name, text_of(value), "a JSON object such as {\"device\": \"cpu\"}");
    for (const auto& [key, inner] : value.items()) {
      const std::string full = name + "." + key;
      if (key != "device") {
        m_.ignore(full);  // pin_memory, buffer_count, nvme_path, ratio: host memory, not HBM
        continue;
      }
      const std::string device = lower(text_of(inner));
      if (!one_of(device, {"none", "cpu", "nvme"})) return m_.invalid(full, text_of(inner), "none|cpu|nvme");
      Result<bool> ok = m_.set(full, field, device == "none" ? "false" : "true");
      if (!ok) return ok;
    }
    return true;
  }

  // config.py get_optimizer_name (lower-cased); ops/adam: "Adam" runs as AdamW (adam_w_mode=True).
  Result<bool> optimizer(const std::string& key, const ordered_json& value) {
    const std::string leaf = key.substr(key.find('.') + 1);
    if (leaf == "type") {
      const std::string type = lower(text_of(value));
      if (one_of(type, {"adam", "adamw", "fusedadam", "cpuadam"})) return m_.set(key, "optimizer", "adamw");
      if (type == "lion") return m_.set(key, "optimizer", "lion");
      m_.not_modelled(key, text_of(value));
      return true;
    }
    if (leaf == "params" && value.is_object()) {
      for (const auto& [param, inner] : value.items()) {
        const std::string full = key + "." + param;
        if (param == "torch_adam" && inner.is_boolean() && inner.get<bool>()) {
          Result<bool> ok = m_.set(full, "optimizer_impl", "foreach");  // torch.optim.AdamW's CUDA default
          if (!ok) return ok;
        } else {
          m_.ignore(full);  // lr, betas, eps, weight_decay
        }
      }
      return true;
    }
    m_.unrecognised(key);
    return true;
  }

  // activation_checkpointing/config.py: the section configures deepspeed.checkpointing,
  // which wraps each layer the model checkpoints.
  Result<bool> activation_checkpointing(const std::string& name, const ordered_json& value) {
    if (!value.is_object()) return m_.invalid(name, text_of(value), "a JSON object");
    if (disabled(value)) {
      m_.ignore(name);
      return true;
    }
    Result<bool> ok = m_.set(name, "recompute", "full");
    if (!ok) return ok;
    for (const auto& [key, inner] : value.items()) {
      const std::string full = name + "." + key;
      const bool on = inner.is_boolean() && inner.get<bool>();
      if (one_of(key, {"partition_activations", "cpu_checkpointing"}) && on) m_.not_modelled(full, "true");
      else m_.ignore(full);
    }
    return true;
  }

  // config.py get_data_types: grad_accum_dtype fp32 keeps fp32 gradient buffers.
  Result<bool> data_types(const std::string& key, const ordered_json& value) {
    if (key == "data_types.param_dtype" || key == "data_types.buffer_dtype") {
      m_.not_modelled(key, text_of(value));
      return true;
    }
    if (key != "data_types.grad_accum_dtype") {
      m_.unrecognised(key);
      return true;
    }
    const std::string dtype = lower(text_of(value));
    if (!one_of(dtype, {"fp32", "fp16", "bf16"})) return m_.invalid(key, text_of(value), "fp32|fp16|bf16");
    return m_.set(key, "fp32_grads", dtype == "fp32" ? "true" : "false");
  }

  // AutoTP: "tensor_parallel": {"autotp_size": N} (runtime/tensor_parallel/config.py).
  Result<bool> tensor_parallel(const std::string& key, const ordered_json& value) {
    if (key == "tensor_parallel.autotp_size") return m_.set(key, "tensor_parallel", text_of(value));
    m_.ignore(key);
    return true;
  }

  // DeepSpeed asserts train_batch_size == micro * accumulation * data-parallel size
  // (config.py _batch_assertion); without the GPU count, the product must at least divide.
  Result<bool> check_batch() {
    ConfigFile& f = m_.file();
    if (!f.global_batch) return true;
    f.global_batch->accumulation_key = accumulation_key_;
    const Request& r = f.request;
    if (!r.micro_batch || !r.num_microbatches || *r.micro_batch < 1 || *r.num_microbatches < 1) return true;
    const int64_t per_rank = *r.micro_batch * *r.num_microbatches;
    if (f.global_batch->sequences % per_rank != 0) {
      return m_.error(ErrorCode::kInconsistent, "train_batch_size",
                      "train_batch_size=" + std::to_string(f.global_batch->sequences) +
                          " is not train_micro_batch_size_per_gpu=" + std::to_string(*r.micro_batch) +
                          " x gradient_accumulation_steps=" + std::to_string(*r.num_microbatches) +
                          " x the data-parallel size for any whole number of ranks");
    }
    return true;
  }

  Mapping& m_;
  std::string accumulation_key_, bf16_key_, fp16_key_;
};

}  // namespace

Result<ConfigFile> read_deepspeed(const std::string& text, const std::string& source) {
  Mapping m("deepspeed", source);
  if (const size_t members = json_member_count(text); members > kMaxJsonMembers) {
    return m.error(ErrorCode::kMalformed, "config",
                   "a JSON text of " + std::to_string(members) + " members is not read; accepted: at most " +
                       std::to_string(kMaxJsonMembers) + " (a DeepSpeed config has about a hundred)");
  }
  ordered_json doc;
  try {
    doc = ordered_json::parse(text);
  } catch (const ordered_json::parse_error& e) {
    return m.error(ErrorCode::kMalformed, "config", "malformed JSON at byte " + std::to_string(e.byte));
  } catch (const ordered_json::out_of_range&) {  // a number beyond a double's range: 1e999
    return m.error(ErrorCode::kMalformed, "config", "malformed JSON: a number is out of range");
  }
  if (!doc.is_object()) return m.error(ErrorCode::kMalformed, "config", "a DeepSpeed config is a JSON object");
  if (doc.contains("model_type") || doc.contains("architectures")) {
    return m.error(ErrorCode::kInvalidValue, "config",
                   "this is a Hugging Face config.json (it has model_type/architectures), not a DeepSpeed "
                   "config; give it with --hf-config");
  }
  DeepSpeedReader reader(m);
  try {
    Result<bool> ok = reader.read(doc);
    if (!ok) return ok.error();
  } catch (const std::exception& e) {
    return m.error(ErrorCode::kInvalidValue, "config", std::string("unexpected value: ") + e.what());
  }
  return m.take();
}

}  // namespace trainfit::config_files
