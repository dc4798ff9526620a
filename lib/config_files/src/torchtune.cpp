// A torchtune recipe YAML -> Request (framework "torchtune"). Keys as torchtune v0.6.1
// reads them: recipes/lora_finetune_single_device.py and full_finetune_distributed.py
// (cfg.batch_size, cfg.gradient_accumulation_steps, cfg.dtype, cfg.compile,
// cfg.enable_activation_checkpointing, cfg.optimizer_in_bwd, cfg.fsdp_cpu_offload),
// torchtune/models/*/_model_builders.py (model components and their LoRA arguments).
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "trainfit/util/text.h"
#include "mapping.h"
#include "readers.h"

namespace trainfit::config_files {
namespace {

// torchtune builders (torchtune/models/<family>/__init__.py) -> the trainfit catalog.
const std::map<std::string, std::string>& builders() {
  static const std::map<std::string, std::string> table = {
      {"llama3_8b", "llama3-8b"},         {"llama3_1_8b", "llama3-8b"},      {"llama3_70b", "llama3-70b"},
      {"llama3_1_70b", "llama3-70b"},     {"llama3_1_405b", "llama3-405b"},  {"llama3_2_3b", "llama3.2-3b"},
      {"llama2_7b", "llama2-7b"},         {"llama2_13b", "llama2-13b"},      {"llama2_70b", "llama2-70b"},
      {"mistral_7b", "mistral-7b"},       {"qwen2_5_7b_base", "qwen2.5-7b"}, {"qwen2_5_7b_instruct", "qwen2.5-7b"},
      {"qwen2_5_72b_base", "qwen2.5-72b"}, {"qwen2_5_72b_instruct", "qwen2.5-72b"}};
  return table;
}

std::string accepted_builders() {
  std::string out;
  for (const auto& entry : builders()) out += (out.empty() ? "" : ", ") + entry.first;
  return "torchtune.models.<family>.[lora_|qlora_]<builder>, builder one of " + out;
}

// LoRA attention modules torchtune knows (torchtune/modules/peft/_utils.py LORA_ATTN_MODULES).
const std::set<std::string> kAttention = {"q_proj", "k_proj", "v_proj", "output_proj"};

class TorchtuneReader {
 public:
  explicit TorchtuneReader(Mapping& m) : m_(m) {}

  Result<bool> read(const YAML::Node& doc) {
    for (const auto& entry : doc) {
      Result<bool> ok = top_level(entry.first.as<std::string>(), entry.second);
      if (!ok) return ok;
    }
    return finish();
  }

 private:
  // A scalar's text; nullopt for null. Errors on maps and lists.
  Result<std::optional<std::string>> scalar(const std::string& key, const YAML::Node& node) {
    if (node.IsNull()) return std::optional<std::string>();
    if (!node.IsScalar()) return m_.invalid(key, YAML::Dump(node), "a single value");
    return std::optional<std::string>(node.Scalar());
  }

  Result<bool> set(const std::string& key, const YAML::Node& node, const char* field) {
    Result<std::optional<std::string>> text = scalar(key, node);
    if (!text) return text.error();
    if (!text.value()) {
      m_.left_unset(key, "null");
      return true;
    }
    return m_.set(key, field, *text.value());
  }

  Result<bool> flag(const std::string& key, const YAML::Node& node, bool* out) {
    Result<std::optional<std::string>> text = scalar(key, node);
    if (!text) return text.error();
    if (!text.value()) {
      *out = false;
      return true;
    }
    if (!parse_bool(*text.value(), out)) return m_.invalid(key, *text.value(), "True|False");
    return true;
  }

  Result<bool> top_level(const std::string& key, const YAML::Node& value) {
    if (key == "model") return model(value);
    if (key == "tokenizer") return tokenizer(value);
    if (key == "batch_size") return set(key, value, "micro_batch");
    if (key == "gradient_accumulation_steps") return set(key, value, "num_microbatches");
    if (key == "dtype") return dtype(key, value);
    if (key == "compile") return set(key, value, "compile");
    if (key == "enable_activation_checkpointing") return activation_checkpointing(key, value);
    // training/memory.py set_activation_checkpointing: ac_option k = every k-th layer
    if (key == "ac_option" || key == "activation_checkpointing_layers") return set(key, value, "recompute_every");
    if (key == "loss") return loss(value);
    if (key == "optimizer") return optimizer(value);
    if (key == "fsdp_cpu_offload") return cpu_offload(key, value);
    if (key == "fsdp_reshard_after_forward") return reshard(key, value);
    if (key == "tensor_parallel_dim") return set(key, value, "tensor_parallel");
    if (one_of(key, {"enable_activation_offloading", "optimizer_in_bwd", "custom_sharded_layers", "clip_grad_norm",
                     "data_parallel_shard_dim", "data_parallel_replicate_dim", "parallelize_plan"})) {
      return maybe_not_modelled(key, value);
    }
    if (one_of(key, {"output_dir", "checkpointer", "resume_from_checkpoint", "save_adapter_weights_only", "dataset",
                     "seed", "shuffle", "epochs", "max_steps_per_epoch", "lr_scheduler", "metric_logger",
                     "log_every_n_steps", "log_peak_memory_stats", "log_level", "device", "profiler",
                     "run_val_every_n_steps", "dataset_val", "batch_size_val", "cudnn_deterministic_mode",
                     "low_cpu_ram", "collate_fn", "dataloader", "save_last_epoch_only", "teacher_checkpointer"})) {
      m_.ignore(key);
      return true;
    }
    m_.unrecognised(key);
    return true;
  }

  // Off, empty or null: nothing to model; otherwise listed as not modelled.
  Result<bool> maybe_not_modelled(const std::string& key, const YAML::Node& value) {
    bool on = true;
    if (value.IsNull() || (value.IsScalar() && parse_bool(value.Scalar(), &on) && !on)) {
      m_.ignore(key);
    } else {
      m_.not_modelled(key, value.IsScalar() ? value.Scalar() : YAML::Dump(value));
    }
    return true;
  }

  Result<bool> model(const YAML::Node& value) {
    if (!value.IsMap()) return m_.invalid("model", YAML::Dump(value), "a mapping with _component_");
    for (const auto& entry : value) {
      const std::string key = "model." + entry.first.as<std::string>();
      Result<bool> ok = model_argument(key, entry.first.as<std::string>(), entry.second);
      if (!ok) return ok;
    }
    if (component_.empty()) return m_.error(ErrorCode::kMissing, "model._component_", "model._component_ is missing");
    return true;
  }

  // Builder arguments: lora_llama3_1_8b(lora_attn_modules, apply_lora_to_mlp=False,
  // apply_lora_to_output=False, lora_rank=8, lora_alpha=16, lora_dropout=0.0, ..., quantize_base=False).
  Result<bool> model_argument(const std::string& key, const std::string& name, const YAML::Node& value) {
    if (name == "_component_") return component(key, value);
    if (name == "lora_attn_modules") return attention_modules(key, value);
    if (name == "apply_lora_to_mlp") return lora_flag(key, value, &lora_mlp_);
    if (name == "apply_lora_to_output") return lora_flag(key, value, &lora_output_);
    if (name == "quantize_base") return lora_flag(key, value, &quantize_base_);
    if (name == "lora_rank") {
      lora_keys_.push_back(key);
      return set(key, value, "lora_rank");
    }
    if (name == "lora_alpha") {  // a scale: no memory
      m_.ignore(key);
      return true;
    }
    if (name == "lora_dropout" || name == "use_dora") {
      lora_keys_.push_back(key);
      const bool off = value.IsScalar() && (value.Scalar() == "0.0" || value.Scalar() == "0" || lower(value.Scalar()) == "false");
      if (off) m_.ignore(key);
      else m_.not_modelled(key, value.IsScalar() ? value.Scalar() : YAML::Dump(value));
      return true;
    }
    m_.unrecognised(key);
    return true;
  }

  Result<bool> component(const std::string& key, const YAML::Node& value) {
    Result<std::optional<std::string>> text = scalar(key, value);
    if (!text) return text.error();
    const std::string path = text.value().value_or("");
    const std::string builder = path.substr(path.rfind('.') + 1);
    std::string base = builder;
    std::string adapter = "none";
    if (builder.rfind("qlora_", 0) == 0) {
      base = builder.substr(6);
      adapter = "qlora";
    } else if (builder.rfind("lora_", 0) == 0) {
      base = builder.substr(5);
      adapter = "lora";
    }
    auto found = builders().find(base);
    if (path.rfind("torchtune.models.", 0) != 0 || found == builders().end()) {
      return m_.error(ErrorCode::kUnknownName, key,
                      key + "='" + path + "' is not a model trainfit knows; accepted: " + accepted_builders());
    }
    component_ = path;
    adapter_ = adapter;
    Result<bool> ok = m_.set(key, "model", found->second);
    if (!ok) return ok;
    return m_.set(key, "adapter", adapter);
  }

  Result<bool> lora_flag(const std::string& key, const YAML::Node& value, bool* out) {
    lora_keys_.push_back(key);
    return flag(key, value, out);
  }

  Result<bool> attention_modules(const std::string& key, const YAML::Node& value) {
    lora_keys_.push_back(key);
    if (!value.IsSequence()) return m_.invalid(key, YAML::Dump(value), "a list of q_proj, k_proj, v_proj, output_proj");
    attention_.emplace();
    for (const auto& item : value) {
      const std::string name = item.IsScalar() ? item.Scalar() : YAML::Dump(item);
      if (kAttention.count(name) == 0) return m_.invalid(key, name, "q_proj, k_proj, v_proj, output_proj");
      attention_->insert(name);  // a repeated name adds nothing
    }
    attention_key_ = key;
    return true;
  }

  Result<bool> tokenizer(const YAML::Node& value) {
    if (!value.IsMap()) return m_.invalid("tokenizer", YAML::Dump(value), "a mapping");
    for (const auto& entry : value) {
      const std::string key = "tokenizer." + entry.first.as<std::string>();
      // The tokenizer truncates to max_seq_len (torchtune/modules/transforms/tokenizers).
      if (entry.first.as<std::string>() == "max_seq_len") {
        Result<bool> ok = set(key, entry.second, "seq_length");
        if (!ok) return ok;
      } else {
        m_.ignore(key);
      }
    }
    return true;
  }

  // training/precision.py PRECISION_STR_TO_DTYPE: the recipe's dtype for params, grads and states.
  Result<bool> dtype(const std::string& key, const YAML::Node& value) {
    Result<std::optional<std::string>> text = scalar(key, value);
    if (!text) return text.error();
    const std::string word = text.value().value_or("");
    if (!one_of(word, {"bf16", "fp32"})) return m_.invalid(key, word, "bf16|fp32");
    return m_.set(key, "precision", word);
  }

  Result<bool> activation_checkpointing(const std::string& key, const YAML::Node& value) {
    bool on = false;
    Result<bool> ok = flag(key, value, &on);
    if (!ok) return ok;
    return m_.set(key, "recompute", on ? "full" : "none");
  }

  // modules/loss: CEWithChunkedOutputLoss chunks the output layer; torch.nn.CrossEntropyLoss does not.
  Result<bool> loss(const YAML::Node& value) {
    if (!value.IsMap()) return m_.invalid("loss", YAML::Dump(value), "a mapping with _component_");
    for (const auto& entry : value) {
      const std::string key = "loss." + entry.first.as<std::string>();
      if (entry.first.as<std::string>() != "_component_") {
        m_.not_modelled(key, entry.second.IsScalar() ? entry.second.Scalar() : YAML::Dump(entry.second));
        continue;
      }
      const std::string path = entry.second.IsScalar() ? entry.second.Scalar() : "";
      const std::string name = path.substr(path.rfind('.') + 1);
      Result<bool> ok = name == "CEWithChunkedOutputLoss" ? m_.set(key, "loss", "chunked")
                        : name == "CrossEntropyLoss"      ? m_.set(key, "loss", "standard")
                                                          : (m_.not_modelled(key, path), Result<bool>(true));
      if (!ok) return ok;
    }
    return true;
  }

  Result<bool> optimizer(const YAML::Node& value) {
    if (!value.IsMap()) return m_.invalid("optimizer", YAML::Dump(value), "a mapping with _component_");
    for (const auto& entry : value) {
      const std::string name = entry.first.as<std::string>();
      const std::string key = "optimizer." + name;
      Result<bool> ok = name == "_component_" ? optimizer_component(key, entry.second)
                        : name == "fused"     ? implementation(key, entry.second, "fused")
                        : name == "foreach"   ? implementation(key, entry.second, "foreach")
                                              : (m_.ignore(key), Result<bool>(true));  // lr, weight_decay, betas
      if (!ok) return ok;
    }
    return true;
  }

  Result<bool> optimizer_component(const std::string& key, const YAML::Node& value) {
    const std::string path = value.IsScalar() ? value.Scalar() : "";
    const std::string name = path.substr(path.rfind('.') + 1);
    if (name == "AdamW" || name == "Adam") return m_.set(key, "optimizer", "adamw");
    // bitsandbytes.optim.PagedAdamW8bit / AdamW8bit, torchao.optim.AdamW8bit: 8-bit states
    if (name == "PagedAdamW8bit" || name == "AdamW8bit" || name == "Adam8bit") return m_.set(key, "optimizer", "adamw-8bit");
    if (name == "SGD") return m_.set(key, "optimizer", "sgd");
    m_.not_modelled(key, path);
    return true;
  }

  // torch.optim.AdamW(fused=True) / (foreach=True).
  Result<bool> implementation(const std::string& key, const YAML::Node& value, const char* word) {
    bool on = false;
    Result<bool> ok = flag(key, value, &on);
    if (!ok || !on) return ok;
    return m_.set(key, "optimizer_impl", word);
  }

  // FSDP2 CPUOffloadPolicy: parameters, gradients and optimizer states in host memory.
  Result<bool> cpu_offload(const std::string& key, const YAML::Node& value) {
    bool on = false;
    Result<bool> ok = flag(key, value, &on);
    if (!ok) return ok;
    ok = m_.set(key, "offload_params", on ? "true" : "false");
    if (!ok) return ok;
    return m_.set(key, "offload_optimizer", on ? "true" : "false");
  }

  Result<bool> reshard(const std::string& key, const YAML::Node& value) {
    bool on = true;
    Result<bool> ok = flag(key, value, &on);
    if (!ok) return ok;
    return m_.set(key, "sharding", on ? "fsdp-full" : "fsdp-grad-op");
  }

  // LoRA arguments need a LoRA builder; the targets are the smallest of trainfit's
  // three sets that holds them (listed when it is not exact).
  Result<bool> finish() {
    if (adapter_ == "none" && (lora_mlp_ || lora_output_ || attention_ || quantize_base_ || !lora_keys_.empty())) {
      return m_.error(ErrorCode::kInconsistent, lora_keys_.front(),
                      lora_keys_.front() + " needs a LoRA model, but model._component_ is '" + component_ + "'");
    }
    if (adapter_ == "none") return true;
    if (quantize_base_ && adapter_ == "lora") {
      Result<bool> ok = m_.set("model.quantize_base", "adapter", "qlora");
      if (!ok) return ok;
    }
    if (lora_output_) m_.not_modelled("model.apply_lora_to_output", "True");
    if (!attention_) {
      return m_.error(ErrorCode::kMissing, "model.lora_attn_modules",
                      "model.lora_attn_modules is missing; the LoRA builder '" + component_ + "' requires it");
    }
    return lora_targets();
  }

  Result<bool> lora_targets() {
    const std::set<std::string> qv = {"q_proj", "v_proj"};
    const bool within_qv = std::includes(qv.begin(), qv.end(), attention_->begin(), attention_->end());
    const char* targets = lora_mlp_ ? "all-linear" : within_qv ? "qv" : "attention";
    const bool exact = lora_mlp_ ? *attention_ == kAttention : within_qv ? *attention_ == qv : *attention_ == kAttention;
    if (!exact) {
      std::string modules;
      for (const std::string& name : *attention_) modules += (modules.empty() ? "" : ", ") + name;
      m_.not_modelled(attention_key_, "[" + modules + "]" + (lora_mlp_ ? " with apply_lora_to_mlp" : "") +
                                          " (counted as lora_targets=" + targets + ")");
    }
    return m_.set(attention_key_, "lora_targets", targets);
  }

  Mapping& m_;
  std::string component_, adapter_ = "none", attention_key_;
  std::optional<std::set<std::string>> attention_;
  bool lora_mlp_ = false, lora_output_ = false, quantize_base_ = false;
  std::vector<std::string> lora_keys_;  // LoRA arguments given, in order
};

// yaml-cpp refuses nesting past 2000 levels (DeepRecursion), but only after scanning the
// whole text: a 64 KiB body of '[' held a service thread 25-60 ms. The deepest flow
// nesting ([ ] and { }) is found first, in one pass: in block context a bracket opens a
// flow collection only where a value starts (a line's first character, after "key: " or
// "- "), so "x[0]" in a plain scalar is not one; quoted scalars and comments are skipped.
constexpr int kMaxFlowNesting = 64;
// yaml-cpp and the reader spend ~6 us a key (a 1 MiB recipe of 70,000 keys: 1 s of a
// service thread); torchtune's own recipes have 60-130 lines.
constexpr size_t kMaxYamlLines = 2048;
// Block nesting grows with indentation, and yaml-cpp's cost with it (1,400 levels in 1 MiB:
// 57 ms before its own guard at 500 fired); a recipe indents a few levels of two spaces.
constexpr size_t kMaxYamlIndent = 64;

// The widest indentation of any line (leading spaces), and that line.
size_t widest_indent(const std::string& text, size_t* line_of_widest) {
  size_t widest = 0, line = 1, column = 0;
  bool leading = true;
  for (const char c : text) {
    if (c == '\n') {
      ++line, column = 0, leading = true;
    } else if (leading && c == ' ') {
      if (++column > widest) widest = column, *line_of_widest = line;
    } else {
      leading = false;
    }
  }
  return widest;
}

size_t skip_quoted(const std::string& text, size_t i) {  // i at the opening quote; returns the closing one
  const char quote = text[i];
  for (++i; i < text.size() && text[i] != quote; ++i) {
    if (quote == '"' && text[i] == '\\') ++i;  // "\"" escapes; in '...' a quote is doubled, read as two strings
  }
  return i;
}

int deepest_flow_nesting(const std::string& text, size_t* line_of_deepest) {
  int depth = 0, deepest = 0;
  size_t line = 1;
  bool value_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool after_space = i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n';
    const bool before_space = i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n';
    if (c == '\n') {
      ++line;
      value_start = depth == 0;
    } else if (c == '#' && after_space) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      continue;
    } else if ((c == '"' || c == '\'') && (depth > 0 || value_start)) {
      const size_t end = std::min(skip_quoted(text, i), text.size());
      line += static_cast<size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(i),
                                             text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
      i = end;  // the closing quote, or the end of an unterminated one
      value_start = false;
    } else if ((c == '[' || c == '{') && (depth > 0 || value_start)) {
      if (++depth > deepest) deepest = depth, *line_of_deepest = line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (depth == 0) {
      value_start = (c == ':' || c == '-') && before_space;
    }
  }
  return deepest;
}

}  // namespace

Result<ConfigFile> read_torchtune(const std::string& text, const std::string& source) {
  Mapping m("torchtune", source);
  if (const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); lines > kMaxYamlLines) {
    return m.error(ErrorCode::kMalformed, "config",
                   "a YAML text of " + std::to_string(lines) + " lines is not read; accepted: at most " +
                       std::to_string(kMaxYamlLines) + " (a torchtune recipe has about a hundred)");
  }
  size_t line = 0;
  if (const size_t indent = widest_indent(text, &line); indent > kMaxYamlIndent) {
    return m.error(ErrorCode::kMalformed, "config",
                   "YAML indented " + std::to_string(indent) + " columns at line " + std::to_string(line) +
                       " is not read; accepted: at most " + std::to_string(kMaxYamlIndent));
  }
  if (deepest_flow_nesting(text, &line) > kMaxFlowNesting) {
    return m.error(ErrorCode::kMalformed, "config",
                   "malformed YAML at line " + std::to_string(line) + ": nested deeper than " +
                       std::to_string(kMaxFlowNesting) + " levels");
  }
  try {
    YAML::Node doc = YAML::Load(text);
    if (!doc.IsMap()) return m.error(ErrorCode::kMalformed, "config", "a torchtune recipe is a YAML mapping");
    TorchtuneReader reader(m);
    Result<bool> ok = reader.read(doc);
    if (!ok) return ok.error();
  } catch (const YAML::DeepRecursion& e) {
    return m.error(ErrorCode::kMalformed, "config",
                   "malformed YAML at line " + std::to_string(e.mark.line + 1) + ": nested deeper than " +
                       std::to_string(e.depth()) + " levels");
  } catch (const YAML::Exception& e) {
    const std::string at = e.mark.is_null() ? std::string()
                                            : " at line " + std::to_string(e.mark.line + 1) + ", column " +
                                                  std::to_string(e.mark.column + 1);
    return m.error(ErrorCode::kMalformed, "config", "malformed YAML" + at + ": " + e.msg);
  } catch (const std::exception& e) {
    return m.error(ErrorCode::kMalformed, "config", std::string("unreadable YAML: ") + e.what());
  }
  return m.take();
}

}  // namespace trainfit::config_files
