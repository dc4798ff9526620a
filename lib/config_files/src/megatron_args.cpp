// Megatron-LM command-line arguments -> Request (framework "megatron"). Flags as
// Megatron-LM core_v0.15.0 defines them in megatron/training/arguments.py
// (_add_network_size_args, _add_training_args, _add_mixed_precision_args,
// _add_distributed_args, _add_moe_args) and derives defaults in validate_args.
#include <map>
#include <optional>

#include "trainfit/util/text.h"
#include "mapping.h"
#include "readers.h"

namespace trainfit::config_files {
namespace {

struct Arg {
  std::string flag;                  // "--num-layers"
  std::optional<std::string> value;  // none for switches
};

// Words of the text: # comments to the end of the line, backslash-newline joins
// lines, '...' and "..." quote. False when a quote is left open.
bool words_of(const std::string& text, std::vector<std::string>* words) {
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      else word += c;
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      i += text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n' ? 2 : 1;
      continue;
    }
    if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words->push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') quote = c;
    else word += c;
  }
  if (in_word) words->push_back(word);
  return quote == 0;
}

bool is_flag(const std::string& word) { return word.size() > 2 && word.compare(0, 2, "--") == 0; }

// Switches (store_true) among the flags read here: they never take a value.
bool is_switch(const std::string& name) {
  return one_of(name, {"bf16", "fp16", "sequence-parallel", "use-distributed-optimizer", "swiglu",
                       "untie-embeddings-and-output-weights", "disable-bias-linear", "add-qkv-bias",
                       "group-query-attention", "use-flash-attn", "cross-entropy-loss-fusion",
                       "accumulate-allreduce-grads-in-fp32", "grad-reduce-in-bf16", "recompute-activations",
                       "qk-layernorm", "use-rotary-position-embeddings", "overlap-grad-reduce", "overlap-param-gather",
                       "distribute-saved-activations", "tp-comm-overlap", "moe-grouped-gemm",
                       "use-precision-aware-optimizer", "no-gradient-accumulation-fusion", "use-mcore-models"});
}

class MegatronReader {
 public:
  explicit MegatronReader(Mapping& m) : m_(m) {}

  Result<bool> read(const std::vector<Arg>& args) {
    for (const Arg& arg : args) {
      const std::string name = arg.flag.substr(2);
      if (is_switch(name) && arg.value) {
        return m_.invalid(arg.flag, *arg.value, "no value (" + arg.flag + " is a switch)");
      }
      if (!is_switch(name) && !arg.value && known(name)) {
        return m_.error(ErrorCode::kMissing, arg.flag, arg.flag + " needs a value");
      }
      given_[name] = arg.value.value_or("");  // as argparse: the last occurrence wins
    }
    for (const Arg& arg : args) {
      Result<bool> ok = map(arg.flag.substr(2));
      if (!ok) return ok;
    }
    return finish();
  }

 private:
  // Flags whose value is one request field, unchanged.
  static const std::map<std::string, const char*>& direct() {
    static const std::map<std::string, const char*> table = {
        {"num-layers", "num_layers"}, {"hidden-size", "hidden_dim"}, {"num-attention-heads", "num_heads"},
        {"ffn-hidden-size", "ffn_hidden"}, {"kv-channels", "head_dim"}, {"seq-length", "seq_length"},
        {"micro-batch-size", "micro_batch"}, {"tensor-model-parallel-size", "tensor_parallel"},
        {"pipeline-model-parallel-size", "pipeline_parallel"}, {"context-parallel-size", "context_parallel"},
        {"expert-model-parallel-size", "expert_parallel"}, {"num-experts", "num_experts"},
        {"moe-router-topk", "experts_per_token"}, {"moe-ffn-hidden-size", "moe_ffn_hidden"},
        {"virtual-pipeline-model-parallel-size", "virtual_pipeline"}};
    return table;
  }

  // Read in finish() (several flags make one field).
  static bool deferred(const std::string& name) {
    return one_of(name, {"bf16", "fp16", "fp8-format", "group-query-attention", "num-query-groups", "swiglu",
                         "normalization", "untie-embeddings-and-output-weights", "vocab-size",
                         "make-vocab-size-divisible-by", "position-embedding-type", "max-position-embeddings",
                         "use-rotary-position-embeddings", "disable-bias-linear", "add-qkv-bias", "attention-dropout",
                         "hidden-dropout", "recompute-granularity", "recompute-method", "recompute-num-layers",
                         "recompute-activations", "num-layers-per-virtual-pipeline-stage", "global-batch-size",
                         "accumulate-allreduce-grads-in-fp32", "grad-reduce-in-bf16"});
  }

  static bool ignored(const std::string& name) {
    for (const char* prefix : {"lr", "log-", "tensorboard", "wandb-", "eval-", "save", "load", "exit-", "no-load-",
                               "adam-", "data-", "tokenizer-", "vocab-file", "merge-file", "train-", "min-lr",
                               "init-method", "seed", "split", "weight-decay", "clip-grad", "distributed-",
                               "use-checkpoint", "ckpt-", "timing-", "rotary-base", "rotary-percent", "mock-data",
                               "moe-aux-loss-coeff", "moe-z-loss-coeff", "use-mcore-models", "manual-gc",
                               "apply-layernorm-1p", "no-rope-fusion", "calculate-per-token-loss"}) {
      if (name.compare(0, std::char_traits<char>::length(prefix), prefix) == 0) return true;
    }
    return false;
  }

  static bool not_modelled(const std::string& name) {
    return one_of(name, {"overlap-grad-reduce", "overlap-param-gather", "distribute-saved-activations", "tp-comm-overlap",
                         "moe-grouped-gemm", "moe-token-dispatcher-type", "moe-router-load-balancing-type",
                         "transformer-impl", "attention-backend", "recompute-modules", "use-precision-aware-optimizer",
                         "ddp-bucket-size", "no-gradient-accumulation-fusion", "num-distributed-optimizer-instances",
                         "expert-tensor-parallel-size", "decoder-first-pipeline-num-layers",
                         "decoder-last-pipeline-num-layers", "account-for-embedding-in-pipeline-split",
                         "account-for-loss-in-pipeline-split", "moe-layer-freq", "moe-shared-expert-intermediate-size",
                         "attention-softmax-in-fp32", "fp8-recipe", "fp8-param-gather", "moe-expert-capacity-factor",
                         "microbatch-group-size-per-virtual-pipeline-stage", "no-masked-softmax-fusion",
                         "no-bias-gelu-fusion", "no-bias-swiglu-fusion", "no-bias-dropout-fusion", "cpu-offloading",
                         "cpu-offloading-num-layers"});
  }

  bool known(const std::string& name) const { return direct().count(name) != 0 || deferred(name) || name == "optimizer"; }

  bool has(const std::string& name) const { return given_.count(name) != 0; }
  const std::string& value(const std::string& name) const { return given_.at(name); }

  Result<int64_t> int_value(const std::string& name, int64_t fallback) {
    if (!has(name)) return fallback;
    int64_t out = 0;
    if (!parse_int(value(name), &out) || out < 0) return m_.invalid("--" + name, value(name), "integer >= 0");
    return out;
  }

  Result<double> number_value(const std::string& name, double fallback) {
    if (!has(name)) return fallback;
    double out = 0;
    if (!parse_number(value(name), &out)) return m_.invalid("--" + name, value(name), "a number");
    return out;
  }

  Result<bool> map(const std::string& name) {
    if (mapped_.count(name) != 0) return true;  // a repeated flag: mapped once, with its last value
    mapped_[name] = true;
    const std::string flag = "--" + name;
    auto field = direct().find(name);
    if (field != direct().end()) return m_.set(flag, field->second, value(name));
    if (deferred(name)) return true;
    if (name == "sequence-parallel") return m_.set(flag, "sequence_parallel", "true");
    // The distributed optimizer shards the fp32 main params and Adam states over DP (ZeRO-1).
    if (name == "use-distributed-optimizer") return m_.set(flag, "zero_stage", "1");
    if (name == "use-flash-attn") return m_.set(flag, "attention", "flash");
    if (name == "cross-entropy-loss-fusion") return m_.set(flag, "loss", "fused");
    if (name == "qk-layernorm") return m_.set(flag, "qk_norm", "true");
    if (name == "optimizer") return optimizer(flag);
    if (not_modelled(name)) m_.not_modelled(flag, has(name) && !value(name).empty() ? value(name) : "true");
    else if (ignored(name)) m_.ignore(flag);
    else m_.unrecognised(flag);
    return true;
  }

  // --optimizer adam|sgd: Megatron's adam is decoupled weight decay (AdamW) by default.
  Result<bool> optimizer(const std::string& flag) {
    const std::string name = lower(value("optimizer"));
    if (name == "adam") return m_.set(flag, "optimizer", "adamw");
    if (name == "sgd") return m_.set(flag, "optimizer", "sgd");
    m_.not_modelled(flag, value("optimizer"));
    return true;
  }

  Result<bool> finish() {
    for (Result<bool> (MegatronReader::*step)() :
         {&MegatronReader::finish_precision, &MegatronReader::finish_grads, &MegatronReader::finish_geometry,
          &MegatronReader::finish_recompute, &MegatronReader::finish_virtual_pipeline,
          &MegatronReader::finish_global_batch}) {
      Result<bool> ok = (this->*step)();
      if (!ok) return ok;
    }
    return true;
  }

  // _add_mixed_precision_args: --bf16 / --fp16 (exclusive in validate_args); --fp8-format e4m3|hybrid.
  Result<bool> finish_precision() {
    if (has("bf16") && has("fp16")) {
      return m_.error(ErrorCode::kInconsistent, "--fp16", "--bf16 and --fp16 contradict each other; give one");
    }
    if (has("fp8-format")) {
      if (!one_of(value("fp8-format"), {"e4m3", "hybrid"})) return m_.invalid("--fp8-format", value("fp8-format"), "e4m3|hybrid");
      return m_.set("--fp8-format", "precision", "fp8");
    }
    if (has("bf16")) return m_.set("--bf16", "precision", "bf16");
    if (has("fp16")) return m_.set("--fp16", "precision", "fp16");
    return true;
  }

  // --accumulate-allreduce-grads-in-fp32 (implied by --bf16) and --grad-reduce-in-bf16.
  Result<bool> finish_grads() {
    if (has("accumulate-allreduce-grads-in-fp32") && has("grad-reduce-in-bf16")) {
      return m_.error(ErrorCode::kInconsistent, "--grad-reduce-in-bf16",
                      "--accumulate-allreduce-grads-in-fp32 and --grad-reduce-in-bf16 contradict each other; give one");
    }
    if (has("accumulate-allreduce-grads-in-fp32")) return m_.set("--accumulate-allreduce-grads-in-fp32", "fp32_grads", "true");
    if (has("grad-reduce-in-bf16")) return m_.set("--grad-reduce-in-bf16", "fp32_grads", "false");
    return true;
  }

  // Geometry with Megatron's defaults when the file defines a model (--num-layers and --hidden-size).
  Result<bool> finish_geometry() {
    Result<bool> ok = finish_attention();
    if (ok) ok = finish_vocab();
    if (!ok || !has("num-layers") || !has("hidden-size")) return ok;
    Result<int64_t> hidden = int_value("hidden-size", 0);
    if (!hidden) return hidden.error();
    const bool swiglu = has("swiglu");
    ok = m_.set("--swiglu", "mlp", swiglu ? "swiglu" : "gelu");
    // validate_args: ffn_hidden_size = 4h, or int(4h * 2/3 / 64) * 64 with --swiglu.
    if (ok && !has("ffn-hidden-size")) {
      const int64_t ffn = swiglu ? (4 * hidden.value() * 2 / 3) / 64 * 64 : 4 * hidden.value();
      ok = m_.set("--hidden-size", "ffn_hidden", std::to_string(ffn));
    }
    if (ok) ok = finish_norm();
    if (ok) ok = m_.set("--untie-embeddings-and-output-weights", "tied_embeddings", has("untie-embeddings-and-output-weights") ? "false" : "true");
    // --disable-bias-linear (add_bias_linear defaults to True); --add-qkv-bias keeps q/k/v biases.
    if (ok) ok = m_.set("--disable-bias-linear", "bias", !has("disable-bias-linear") ? "all" : has("add-qkv-bias") ? "qkv" : "none");
    if (ok) ok = finish_dropout();
    if (ok) ok = finish_positions();
    return ok;
  }

  // --group-query-attention with --num-query-groups; without it Megatron uses one group per head.
  Result<bool> finish_attention() {
    if (has("num-query-groups") && !has("group-query-attention")) {
      m_.ignore("--num-query-groups (no --group-query-attention)");
      return true;
    }
    if (has("group-query-attention")) {
      if (!has("num-query-groups")) return m_.error(ErrorCode::kMissing, "--num-query-groups", "--group-query-attention needs --num-query-groups");
      return m_.set("--num-query-groups", "num_kv_heads", value("num-query-groups"));
    }
    if (has("num-attention-heads") && has("num-layers")) return m_.set("--num-attention-heads", "num_kv_heads", value("num-attention-heads"));
    return true;
  }

  // --vocab-size padded as _vocab_size_with_padding (megatron/training/tokenizer/tokenizer.py):
  // up to a multiple of --make-vocab-size-divisible-by (128) x tensor-parallel size.
  Result<bool> finish_vocab() {
    if (!has("vocab-size")) {
      if (has("num-layers")) m_.left_unset("--vocab-size", "absent (the tokenizer's vocabulary: give --vocab)");
      return true;
    }
    Result<int64_t> vocab = int_value("vocab-size", 0), divisible = int_value("make-vocab-size-divisible-by", 128),
                    tp = int_value("tensor-model-parallel-size", 1);
    if (!vocab) return vocab.error();
    if (!divisible) return divisible.error();
    if (!tp) return tp.error();
    const int64_t multiple = std::max<int64_t>(1, divisible.value() * std::max<int64_t>(1, tp.value()));
    const int64_t padded = (vocab.value() + multiple - 1) / multiple * multiple;
    return m_.set("--vocab-size", "vocab_size", std::to_string(padded));
  }

  Result<bool> finish_norm() {
    const std::string norm = has("normalization") ? value("normalization") : "LayerNorm";  // the default
    if (norm == "RMSNorm") return m_.set("--normalization", "norm", "rmsnorm");
    if (norm == "LayerNorm") return m_.set("--normalization", "norm", "layernorm");
    return m_.invalid("--normalization", norm, "LayerNorm|RMSNorm");
  }

  // --attention-dropout and --hidden-dropout default to 0.1: masks are saved unless both are 0.
  Result<bool> finish_dropout() {
    Result<double> attention = number_value("attention-dropout", 0.1), hidden = number_value("hidden-dropout", 0.1);
    if (!attention) return attention.error();
    if (!hidden) return hidden.error();
    return m_.set("--hidden-dropout", "dropout", attention.value() > 0 || hidden.value() > 0 ? "true" : "false");
  }

  // --position-embedding-type learned_absolute (default) | rope | none; the learned table
  // has --max-position-embeddings rows (validate_args: defaults to --seq-length).
  Result<bool> finish_positions() {
    std::string type = has("position-embedding-type") ? value("position-embedding-type") : "learned_absolute";
    if (has("use-rotary-position-embeddings")) type = "rope";
    if (type == "rope" || type == "none" || type == "yarn" || type == "mrope") {
      return m_.set("--position-embedding-type", "learned_positions", "0");
    }
    if (type != "learned_absolute") return m_.invalid("--position-embedding-type", type, "learned_absolute|rope|none");
    const std::string rows = has("max-position-embeddings") ? value("max-position-embeddings")
                             : has("seq-length")              ? value("seq-length")
                                                              : "";
    if (rows.empty()) return true;
    return m_.set("--max-position-embeddings", "learned_positions", rows);
  }

  // --recompute-granularity selective|full; full with --recompute-method uniform|block and
  // --recompute-num-layers N (transformer_block.py _checkpointed_forward).
  Result<bool> finish_recompute() {
    if (has("recompute-activations") && !has("recompute-granularity")) return m_.set("--recompute-activations", "recompute", "selective");
    if (!has("recompute-granularity")) {
      if (has("recompute-method")) m_.ignore("--recompute-method (no --recompute-granularity full)");
      return true;
    }
    const std::string granularity = value("recompute-granularity");
    if (granularity == "selective") return m_.set("--recompute-granularity", "recompute", "selective");
    if (granularity != "full") return m_.invalid("--recompute-granularity", granularity, "selective|full");
    const std::string method = has("recompute-method") ? value("recompute-method") : "uniform";
    if (!one_of(method, {"uniform", "block"})) return m_.invalid("--recompute-method", method, "uniform|block");
    Result<int64_t> n = int_value("recompute-num-layers", 1), layers = int_value("num-layers", 0),
                    pp = int_value("pipeline-model-parallel-size", 1);
    if (!n) return n.error();
    if (!layers) return layers.error();
    if (!pp) return pp.error();
    const int64_t per_stage = layers.value() / std::max<int64_t>(1, pp.value());
    if (method == "block" && n.value() < per_stage) {  // only the first N layers of each stage
      m_.not_modelled("--recompute-method", "block with --recompute-num-layers=" + std::to_string(n.value()) +
                                                " of " + std::to_string(per_stage) + " layers per stage");
      return true;
    }
    if (method == "uniform" && n.value() > 1) {  // groups of N layers keep only the group input
      m_.not_modelled("--recompute-num-layers", std::to_string(n.value()) + " (uniform groups; counted as one layer per group)");
    }
    return m_.set("--recompute-granularity", "recompute", "full");
  }

  // --num-layers-per-virtual-pipeline-stage N: chunks per stage = layers / pp / N.
  Result<bool> finish_virtual_pipeline() {
    if (!has("num-layers-per-virtual-pipeline-stage")) return true;
    const std::string key = "--num-layers-per-virtual-pipeline-stage";
    Result<int64_t> per_chunk = int_value("num-layers-per-virtual-pipeline-stage", 0), layers = int_value("num-layers", 0),
                    pp = int_value("pipeline-model-parallel-size", 1);
    if (!per_chunk) return per_chunk.error();
    if (!layers) return layers.error();
    if (!pp) return pp.error();
    const int64_t stage = layers.value() / std::max<int64_t>(1, pp.value());
    if (per_chunk.value() < 1 || layers.value() < 1 || layers.value() % std::max<int64_t>(1, pp.value()) != 0 ||
        stage % per_chunk.value() != 0) {
      return m_.error(ErrorCode::kInconsistent, key,
                      key + "=" + value("num-layers-per-virtual-pipeline-stage") + " does not divide --num-layers=" +
                          (has("num-layers") ? value("num-layers") : "(missing)") + " / --pipeline-model-parallel-size=" +
                          std::to_string(pp.value()) + " into whole chunks");
    }
    const std::string chunks = std::to_string(stage / per_chunk.value());
    if (has("virtual-pipeline-model-parallel-size") && value("virtual-pipeline-model-parallel-size") != chunks) {
      return m_.error(ErrorCode::kInconsistent, key,
                      key + "=" + value("num-layers-per-virtual-pipeline-stage") + " gives " + chunks +
                          " chunks per stage but --virtual-pipeline-model-parallel-size=" +
                          value("virtual-pipeline-model-parallel-size"));
    }
    return m_.set(key, "virtual_pipeline", chunks);
  }

  Result<bool> finish_global_batch() {
    if (!has("global-batch-size")) return true;
    Result<int64_t> sequences = int_value("global-batch-size", 0);
    if (!sequences) return sequences.error();
    if (sequences.value() < 1) return m_.invalid("--global-batch-size", value("global-batch-size"), "integer >= 1");
    m_.file().global_batch = GlobalBatch{sequences.value(), "--global-batch-size", "", 0};
    return true;
  }

  Mapping& m_;
  std::map<std::string, std::string> given_;  // flag name -> its last value ("" for switches)
  std::map<std::string, bool> mapped_;
};

// Pairs the words: --flag, --flag value or --flag=value. Errors name the stray word.
Result<std::vector<Arg>> args_of(const std::vector<std::string>& words, Mapping& m) {
  std::vector<Arg> args;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (!is_flag(word)) {
      return m.error(ErrorCode::kMalformed, word,
                     "'" + word + "' is not a --flag; accepted: Megatron-LM arguments, --flag [value] pairs");
    }
    const size_t eq = word.find('=');
    if (eq != std::string::npos) {
      args.push_back(Arg{word.substr(0, eq), word.substr(eq + 1)});
    } else if (i + 1 < words.size() && !is_flag(words[i + 1])) {
      args.push_back(Arg{word, words[++i]});
    } else {
      args.push_back(Arg{word, std::nullopt});
    }
  }
  return args;
}

}  // namespace

bool looks_like_flags(const std::string& text) {
  std::vector<std::string> words;
  words_of(text, &words);  // an unclosed quote is read_megatron_args' error to report
  return !words.empty() && is_flag(words.front());
}

Result<ConfigFile> read_megatron_args(const std::string& text, const std::string& source) {
  Mapping m("megatron", source);
  std::vector<std::string> words;
  if (!words_of(text, &words)) return m.error(ErrorCode::kMalformed, "config", "malformed arguments: a quote is not closed");
  if (words.empty()) return m.error(ErrorCode::kMalformed, "config", "no arguments");
  Result<std::vector<Arg>> args = args_of(words, m);
  if (!args) return args.error();
  MegatronReader reader(m);
  Result<bool> ok = reader.read(args.value());
  if (!ok) return ok.error();
  return m.take();
}

}  // namespace trainfit::config_files
