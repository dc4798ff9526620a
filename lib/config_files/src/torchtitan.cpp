// A torchtitan job TOML -> Request (framework "torchtitan"). Keys as torchtitan v0.2.1
// defines them in torchtitan/config/job_config.py (Model, Training, Parallelism,
// ActivationCheckpoint, Compile, Optimizer); older releases' [float8] and
// training.batch_size / training.compile are read too.
#include <map>
#include <sstream>

// toml++ (Debian's libtomlplusplus-dev, 3.3 on Debian 12, 3.4 on 13), header-only in this one
// file so that the sanitizers and fuzzers see inside it; it is handed ASCII only
// (toml_ascii.h). No exceptions: parse() returns the error.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "trainfit/util/text.h"
#include "mapping.h"
#include "readers.h"
#include "toml_ascii.h"

namespace trainfit::config_files {
namespace {

using Value = toml::node;

std::string text_of(const Value& value) {
  if (const auto* text = value.as_string()) return text->get();
  if (const auto* flag = value.as_boolean()) return flag->get() ? "true" : "false";
  std::ostringstream out;
  value.visit([&out](const auto& node) { out << node; });
  return out.str();
}

// What the reader collects before it can decide (several keys make one field).
struct Seen {
  std::string name, flavor;
  std::optional<std::string> dtype, mixed_param, ac_mode, ac_option, reshard;
  std::optional<int64_t> shard, replicate, pp, local_batch, pp_microbatch;
  bool dp_keys = false, float8 = false, compile = false, compile_model = true, compile_loss = true;
  std::optional<bool> compile_given;
  bool compile_in_training = false;  // [training] compile: the layout before the [compile] section
};

class TorchtitanReader {
 public:
  explicit TorchtitanReader(Mapping& m) : m_(m) {}

  Result<bool> read(const toml::table& doc) {
    for (const auto& [key, value] : doc) {
      const std::string section(key.str());
      Result<bool> ok = value.is_table() ? read_section(section, value) : (m_.unrecognised(section), Result<bool>(true));
      if (!ok) return ok;
    }
    return finish();
  }

 private:
  using KeyFn = Result<bool> (TorchtitanReader::*)(const std::string& key, const std::string& leaf, const Value& value);

  Result<bool> read_section(const std::string& section, const Value& table) {
    KeyFn fn = section == "model"                   ? &TorchtitanReader::model
               : section == "training"              ? &TorchtitanReader::training
               : section == "parallelism"           ? &TorchtitanReader::parallelism
               : section == "activation_checkpoint" ? &TorchtitanReader::activation_checkpoint
               : section == "compile"               ? &TorchtitanReader::compile
               : section == "optimizer"             ? &TorchtitanReader::optimizer
               : section == "float8"                ? &TorchtitanReader::float8
                                                    : nullptr;
    if (fn == nullptr) {
      if (one_of(section, {"job", "profiling", "metrics", "lr_scheduler", "checkpoint", "comm", "validation", "debug",
                           "experimental", "fault_tolerance", "memory_estimation", "quantize"})) {
        m_.ignore("[" + section + "]");
      } else {
        m_.unrecognised("[" + section + "]");
      }
      return true;
    }
    for (const auto& [key, value] : *table.as_table()) {
      const std::string leaf(key.str());
      Result<bool> ok = (this->*fn)(section + "." + leaf, leaf, value);
      if (!ok) return ok;
    }
    return true;
  }

  Result<bool> string_of(const std::string& key, const Value& value, std::optional<std::string>* out) {
    if (!value.is_string()) return m_.invalid(key, text_of(value), "a string");
    *out = value.as_string()->get();
    return true;
  }

  Result<bool> int_of(const std::string& key, const Value& value, std::optional<int64_t>* out) {
    if (!value.is_integer()) return m_.invalid(key, text_of(value), "an integer");
    *out = value.as_integer()->get();
    return true;
  }

  Result<bool> bool_of(const std::string& key, const Value& value, bool* out) {
    if (!value.is_boolean()) return m_.invalid(key, text_of(value), "true|false");
    *out = value.as_boolean()->get();
    return true;
  }

  // Model: name, flavor, converters ("float8" / "quantize.linear.float8" swap in Float8Linear).
  Result<bool> model(const std::string& key, const std::string& leaf, const Value& value) {
    std::optional<std::string> text;
    if (leaf == "name" || leaf == "flavor") {
      Result<bool> ok = string_of(key, value, &text);
      if (!ok) return ok;
      (leaf == "name" ? seen_.name : seen_.flavor) = *text;
      return true;
    }
    if (leaf == "converters") return converters(key, value);
    m_.ignore(key);  // hf_assets_path, tokenizer_path, print_after_conversion
    return true;
  }

  Result<bool> converters(const std::string& key, const Value& value) {
    std::vector<std::string> names;
    if (value.is_string()) {
      names = split(value.as_string()->get(), ',');  // older releases: a comma-separated string
    } else if (value.is_array()) {
      for (const Value& item : *value.as_array()) names.push_back(text_of(item));
    } else {
      return m_.invalid(key, text_of(value), "a list of converter names");
    }
    for (const std::string& raw : names) {
      const std::string name = trim(raw);
      if (name == "float8" || name == "quantize.linear.float8") seen_.float8 = true;
      else if (!name.empty()) m_.not_modelled(key, name);
    }
    return true;
  }

  // Training: local_batch_size (older: batch_size), global_batch_size, seq_len, dtype,
  // mixed_precision_param, enable_cpu_offload.
  Result<bool> training(const std::string& key, const std::string& leaf, const Value& value) {
    if (leaf == "local_batch_size" || leaf == "batch_size") {
      Result<bool> ok = int_of(key, value, &seen_.local_batch);
      if (!ok) return ok;
      return m_.set(key, "micro_batch", text_of(value));
    }
    if (leaf == "global_batch_size") return global_batch(key, value);
    if (leaf == "seq_len") return m_.set(key, "seq_length", text_of(value));
    if (leaf == "dtype") return string_of(key, value, &seen_.dtype);
    if (leaf == "mixed_precision_param") return string_of(key, value, &seen_.mixed_param);
    if (leaf == "enable_cpu_offload") {  // FSDP CPUOffloadPolicy: params, grads, optimizer states
      Result<bool> ok = m_.set(key, "offload_params", text_of(value));
      if (!ok) return ok;
      return m_.set(key, "offload_optimizer", text_of(value));
    }
    if (leaf == "compile") {  // older releases: a bool in [training], the blocks only
      bool on = false;
      Result<bool> ok = bool_of(key, value, &on);
      if (ok) seen_.compile_given = on;
      seen_.compile_in_training = true;
      return ok;
    }
    if (leaf == "mixed_precision_reduce") {
      m_.not_modelled(key, text_of(value));
      return true;
    }
    if (leaf.rfind("data_parallel_", 0) == 0 || leaf == "tensor_parallel_degree") {
      return parallelism(key, leaf, value);  // older releases kept these in [training]
    }
    m_.ignore(key);  // dataset, steps, max_norm, gc_freq, seed, ...
    return true;
  }

  // global_batch_size = local_batch_size x data-parallel degree x accumulation steps
  // (train.py: gradient_accumulation_steps); -1 = no accumulation.
  Result<bool> global_batch(const std::string& key, const Value& value) {
    std::optional<int64_t> sequences;
    Result<bool> ok = int_of(key, value, &sequences);
    if (!ok) return ok;
    if (*sequences == -1) return true;
    if (*sequences < 1) return m_.invalid(key, text_of(value), "-1 or an integer >= 1");
    m_.file().global_batch = GlobalBatch{*sequences, key, "", 0};
    return true;
  }

  Result<bool> parallelism(const std::string& key, const std::string& leaf, const Value& value) {
    if (leaf == "tensor_parallel_degree") return m_.set(key, "tensor_parallel", text_of(value));
    if (leaf == "context_parallel_degree") return m_.set(key, "context_parallel", text_of(value));
    if (leaf == "expert_parallel_degree") return m_.set(key, "expert_parallel", text_of(value));
    if (leaf == "pipeline_parallel_degree") {
      Result<bool> ok = int_of(key, value, &seen_.pp);
      if (!ok) return ok;
      return m_.set(key, "pipeline_parallel", text_of(value));
    }
    if (leaf == "pipeline_parallel_microbatch_size") return int_of(key, value, &seen_.pp_microbatch);
    if (leaf == "data_parallel_shard_degree" || leaf == "data_parallel_replicate_degree") {
      seen_.dp_keys = true;
      return int_of(key, value, leaf == "data_parallel_shard_degree" ? &seen_.shard : &seen_.replicate);
    }
    if (leaf == "fsdp_reshard_after_forward") {
      seen_.dp_keys = true;
      return string_of(key, value, &seen_.reshard);
    }
    if (leaf == "pipeline_parallel_schedule") {
      if (text_of(value) != "1F1B") m_.not_modelled(key, text_of(value));
      return true;
    }
    if (one_of(leaf, {"disable_loss_parallel", "enable_async_tensor_parallel", "expert_tensor_parallel_degree",
                      "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers",
                      "pipeline_parallel_layers_per_stage", "module_fqns_per_model_part",
                      "enable_compiled_autograd"})) {
      m_.not_modelled(key, text_of(value));
      return true;
    }
    m_.ignore(key);  // rotate method, comm backends, schedule csv
    return true;
  }

  // ActivationCheckpoint: mode none|full|selective|memory_budget; selective_ac_option
  // "op" or a layer interval N (distributed/activation_checkpoint.py).
  Result<bool> activation_checkpoint(const std::string& key, const std::string& leaf, const Value& value) {
    if (leaf == "mode") return string_of(key, value, &seen_.ac_mode);
    if (leaf == "selective_ac_option") return string_of(key, value, &seen_.ac_option);
    if (one_of(leaf, {"per_op_sac_force_recompute_mm_shapes_by_fqns", "memory_budget", "early_stop"})) {
      m_.not_modelled(key, text_of(value));
      return true;
    }
    m_.ignore(key);  // preserve_rng_state, determinism_check, debug, visualize_memory_budget_pareto
    return true;
  }

  // Compile: enable, components ("model", "loss"); parallelize.py apply_compile.
  Result<bool> compile(const std::string& key, const std::string& leaf, const Value& value) {
    if (leaf == "enable") {
      bool on = false;
      Result<bool> ok = bool_of(key, value, &on);
      if (ok) seen_.compile_given = on;
      return ok;
    }
    if (leaf == "components" && value.is_array()) {  // default ["model", "loss"] (job_config.py Compile)
      seen_.compile_model = seen_.compile_loss = false;
      for (const Value& item : *value.as_array()) {
        seen_.compile_model |= text_of(item) == "model";
        seen_.compile_loss |= text_of(item) == "loss";
      }
      return true;
    }
    m_.ignore(key);  // backend
    return true;
  }

  // Optimizer: name (AdamW, Adam), implementation for-loop|foreach|fused (components/optimizer.py).
  Result<bool> optimizer(const std::string& key, const std::string& leaf, const Value& value) {
    if (leaf == "name") {
      const std::string name = text_of(value);
      if (name == "AdamW" || name == "Adam") return m_.set(key, "optimizer", "adamw");
      m_.not_modelled(key, name);
      return true;
    }
    if (leaf == "implementation") {
      const std::string impl = text_of(value);
      if (!one_of(impl, {"for-loop", "foreach", "fused"})) return m_.invalid(key, impl, "for-loop|foreach|fused");
      return m_.set(key, "optimizer_impl", impl == "for-loop" ? "loop" : impl);
    }
    if (leaf == "early_step_in_backward") {
      bool on = false;
      Result<bool> ok = bool_of(key, value, &on);
      if (ok && on) m_.not_modelled(key, "true");
      return ok;
    }
    m_.ignore(key);  // lr, eps, weight_decay, betas
    return true;
  }

  // Older releases: [float8] enable_float8_linear = true.
  Result<bool> float8(const std::string& key, const std::string& leaf, const Value& value) {
    if (leaf == "enable_float8_linear") {
      bool on = false;
      Result<bool> ok = bool_of(key, value, &on);
      if (ok) seen_.float8 |= on;
      return ok;
    }
    m_.ignore(key);
    return true;
  }

  Result<bool> finish() {
    for (Result<bool> (TorchtitanReader::*step)() :
         {&TorchtitanReader::finish_model, &TorchtitanReader::finish_precision, &TorchtitanReader::finish_sharding,
          &TorchtitanReader::finish_recompute, &TorchtitanReader::finish_pipeline}) {
      Result<bool> ok = (this->*step)();
      if (!ok) return ok;
    }
    if (!seen_.compile_given) return true;
    const bool on = *seen_.compile_given;
    const char* key = seen_.compile_in_training ? "training.compile" : "compile.enable";
    Result<bool> ok = m_.set(key, "compile", on && seen_.compile_model ? "true" : "false");
    if (!ok) return ok;
    if (seen_.compile_in_training) {
      // v0.1.x (config_manager.py Training.compile; components/loss.py build_cross_entropy_loss
      // compiles the loss with it since PR #1033, 2025-04-02); the [compile] section came in
      // v0.2.0 (PR #1608).
      m_.inferred("training.compile is torchtitan v0.1.x's layout (framework_version=0.1.0): the blocks and the loss "
                  "compiled; a checkout before 2025-04-02 (PR #1033) compiled the blocks only: say compile_loss=false");
      Result<bool> version = m_.set(key, "framework_version", "0.1.0");
      if (!version) return version;
      return m_.set(key, "compile_loss", on ? "true" : "false");
    }
    return m_.set("compile.components", "compile_loss", on && seen_.compile_loss ? "true" : "false");
  }

  // models/llama3/__init__.py llama3_args: flavors "8B", "70B", "405B" (and "debugmodel").
  Result<bool> finish_model() {
    if (seen_.name.empty() && seen_.flavor.empty()) return true;
    const std::string name = seen_.name.empty() ? "llama3" : seen_.name;  // Model.name default
    if (name != "llama3") return m_.error(ErrorCode::kUnknownName, "model.name", "model.name='" + name + "' is not a model trainfit knows; accepted: llama3");
    static const std::map<std::string, std::string> flavors = {{"8B", "llama3-8b"}, {"70B", "llama3-70b"}, {"405B", "llama3-405b"}};
    auto found = flavors.find(seen_.flavor);
    if (found == flavors.end()) {
      return m_.error(ErrorCode::kUnknownName, "model.flavor",
                      "model.flavor='" + seen_.flavor + "' is not a llama3 flavor trainfit knows; accepted: 8B, 70B, 405B");
    }
    return m_.set("model.flavor", "model", found->second);
  }

  // Training.dtype bfloat16: everything bf16; float32 (default) with mixed_precision_param
  // bfloat16 (default): fp32 sharded master, bf16 compute; float8 converters: fp8 linears.
  Result<bool> finish_precision() {
    if (seen_.dtype && !one_of(*seen_.dtype, {"bfloat16", "float32"})) return m_.invalid("training.dtype", *seen_.dtype, "bfloat16|float32");
    if (seen_.mixed_param && !one_of(*seen_.mixed_param, {"bfloat16", "float32"})) {
      return m_.invalid("training.mixed_precision_param", *seen_.mixed_param, "bfloat16|float32");
    }
    if (seen_.float8) return m_.set("model.converters", "precision", "fp8");
    if (!seen_.dtype && !seen_.mixed_param) return true;
    if (seen_.dtype.value_or("float32") == "bfloat16") return m_.set("training.dtype", "precision", "bf16");
    const bool mixed = seen_.mixed_param.value_or("bfloat16") == "bfloat16";
    return m_.set("training.mixed_precision_param", "precision", mixed ? "bf16-mixed" : "fp32");
  }

  // Parallelism: data_parallel_shard_degree (-1 = the GPUs left) x replicate degree:
  // shard only = FSDP, replicate only = DDP, both = HSDP (parallelize.py apply_fsdp / apply_ddp).
  Result<bool> finish_sharding() {
    if (!seen_.dp_keys) return true;
    const int64_t shard = seen_.shard.value_or(-1), replicate = seen_.replicate.value_or(1);
    if (shard == 0 || shard < -1) return m_.invalid("parallelism.data_parallel_shard_degree", std::to_string(shard), "-1 or an integer >= 1");
    if (replicate < 1) return m_.invalid("parallelism.data_parallel_replicate_degree", std::to_string(replicate), "integer >= 1");
    const std::string key = "parallelism.data_parallel_shard_degree";
    if (shard == 1) return replicate > 1 ? m_.set("parallelism.data_parallel_replicate_degree", "zero_stage", "0") : Result<bool>(true);
    if (replicate > 1) {
      if (shard > 1) m_.not_modelled(key, std::to_string(shard) + " (fsdp-hybrid shards within a node)");
      return m_.set(key, "sharding", "fsdp-hybrid");
    }
    // fsdp_reshard_after_forward: "default" reshards unless pipeline parallel, "never" keeps params.
    const std::string reshard = seen_.reshard.value_or("default");
    if (!one_of(reshard, {"default", "always", "never"})) return m_.invalid("parallelism.fsdp_reshard_after_forward", reshard, "default|always|never");
    const bool keep = reshard == "never" || (reshard == "default" && seen_.pp.value_or(1) > 1);
    return m_.set(key, "sharding", keep ? "fsdp-grad-op" : "fsdp-full");
  }

  Result<bool> finish_recompute() {
    if (!seen_.ac_mode && !seen_.ac_option) return true;
    const std::string mode = seen_.ac_mode.value_or("selective"), option = seen_.ac_option.value_or("2");
    const std::string key = "activation_checkpoint.mode";
    if (mode == "none" || mode == "full") return m_.set(key, "recompute", mode);
    if (mode == "memory_budget") {
      m_.not_modelled(key, mode);
      return true;
    }
    if (mode != "selective") return m_.invalid(key, mode, "none|full|selective|memory_budget");
    if (option == "op") return m_.set("activation_checkpoint.selective_ac_option", "recompute", "op");
    int64_t every = 0;
    if (!parse_int(option, &every) || every < 1) {
      return m_.invalid("activation_checkpoint.selective_ac_option", option, "\"op\" or an integer >= 1");
    }
    Result<bool> ok = m_.set("activation_checkpoint.selective_ac_option", "recompute", "full");
    if (!ok) return ok;
    return m_.set("activation_checkpoint.selective_ac_option", "recompute_every", option);
  }

  // With PP the local batch is split into microbatches of pipeline_parallel_microbatch_size.
  Result<bool> finish_pipeline() {
    if (seen_.pp.value_or(1) <= 1) return true;
    const int64_t micro = seen_.pp_microbatch.value_or(1), local = seen_.local_batch.value_or(8);
    if (micro < 1 || local % micro != 0) {
      return m_.error(ErrorCode::kInconsistent, "parallelism.pipeline_parallel_microbatch_size",
                      "training.local_batch_size=" + std::to_string(local) +
                          " is not a multiple of parallelism.pipeline_parallel_microbatch_size=" + std::to_string(micro));
    }
    Result<bool> ok = m_.set("parallelism.pipeline_parallel_microbatch_size", "micro_batch", std::to_string(micro));
    if (!ok) return ok;
    if (m_.file().global_batch) m_.file().global_batch->local_batch = local;
    return m_.set("training.local_batch_size", "num_microbatches", std::to_string(local / micro));
  }

  Mapping& m_;
  Seen seen_;
};

// toml++ parses arrays and inline tables recursively (up to 256 levels): a file of a million '[' would
// overflow the stack. The deepest nesting outside strings and comments, and its line.
constexpr int kMaxNesting = 64;

int deepest_nesting(const std::string& text, size_t* line_of_deepest) {
  int depth = 0, deepest = 0;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool triple = text.compare(i, 3, std::string(3, c)) == 0;
      const std::string close = triple ? std::string(3, c) : std::string(1, c);
      for (i += close.size(); i < text.size() && text.compare(i, close.size(), close) != 0; ++i) {
        if (text[i] == '\n') ++line;
        if (c == '"' && text[i] == '\\') ++i;  // an escape in a basic string
      }
      i += close.size() - 1;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        *line_of_deepest = line;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<ConfigFile> read_torchtitan(const std::string& text, const std::string& source) {
  Mapping m("torchtitan", source);
  size_t line = 0;
  if (deepest_nesting(text, &line) > kMaxNesting) {
    return m.error(ErrorCode::kMalformed, "config",
                   "malformed TOML at line " + std::to_string(line) + ": nested deeper than " +
                       std::to_string(kMaxNesting) + " levels");
  }
  // toml++ must see ASCII only (toml_ascii.h says why).
  Result<std::string> ascii = toml_as_ascii(text);
  if (!ascii) return m.error(ErrorCode::kMalformed, "config", ascii.error().message);
  toml::parse_result doc = toml::parse(std::string_view(ascii.value()), std::string_view(source));
  if (!doc) {
    const toml::parse_error& e = doc.error();
    return m.error(ErrorCode::kMalformed, "config",
                   "malformed TOML at line " + std::to_string(e.source().begin.line) + ", column " +
                       std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
  TorchtitanReader reader(m);
  Result<bool> ok = reader.read(doc.table());
  if (!ok) return ok.error();
  return m.take();
}

}  // namespace trainfit::config_files
