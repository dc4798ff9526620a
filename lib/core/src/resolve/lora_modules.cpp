// LoRA target modules: the words users write (PEFT target_modules names, trainfit's short
// names, the presets' shorthands) as LoraModule bits, and back to text.
#include <string>
#include <vector>

#include "choices.h"
#include "trainfit/config.h"

namespace trainfit {
namespace {

struct ModuleName {
  const char* name;
  uint32_t bits;
};

// PEFT's names are the module names of HF models (modeling_llama.py, modeling_gpt2.py,
// modeling_phi3.py); the shorthands are trainfit's (qv: PEFT's default for Llama).
constexpr ModuleName kNames[] = {
    {"qv", kLoraQ | kLoraV},
    {"attention", kLoraQ | kLoraK | kLoraV | kLoraO},
    {"all-linear", kLoraQ | kLoraK | kLoraV | kLoraO | kLoraGate | kLoraUp | kLoraDown},
    {"q", kLoraQ},           {"q_proj", kLoraQ},       {"wq", kLoraQ},
    {"k", kLoraK},           {"k_proj", kLoraK},       {"wk", kLoraK},
    {"v", kLoraV},           {"v_proj", kLoraV},       {"wv", kLoraV},
    {"o", kLoraO},           {"o_proj", kLoraO},       {"wo", kLoraO}, {"output_proj", kLoraO},
    {"gate", kLoraGate},     {"gate_proj", kLoraGate}, {"w1", kLoraGate},
    {"up", kLoraUp},         {"up_proj", kLoraUp},     {"w3", kLoraUp},
    {"down", kLoraDown},     {"down_proj", kLoraDown}, {"w2", kLoraDown},
    {"qkv", kLoraQkv},       {"c_attn", kLoraQkv},     {"qkv_proj", kLoraQkv},
    {"embedding", kLoraEmbedding}, {"embed_tokens", kLoraEmbedding}, {"wte", kLoraEmbedding},
    {"lm_head", kLoraLmHead},      {"output", kLoraLmHead},
};

constexpr const char* kAccepted =
    "qv|attention|all-linear, or modules joined by ',' or '+': q,k,v,o,gate,up,down,qkv,embedding,lm_head "
    "(or PEFT's names: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, c_attn, qkv_proj, "
    "embed_tokens, lm_head)";

}  // namespace

Result<uint32_t> parse_lora_modules(const std::string& text, const char* field) {
  uint32_t bits = 0;
  std::string word;
  auto take = [&]() -> bool {
    std::string name = lower(word);
    word.clear();
    while (!name.empty() && (name.front() == ' ' || name.front() == '[' || name.front() == '"' || name.front() == '\''))
      name.erase(name.begin());
    while (!name.empty() && (name.back() == ' ' || name.back() == ']' || name.back() == '"' || name.back() == '\''))
      name.pop_back();
    if (name.empty()) return true;
    for (const ModuleName& m : kNames) {
      if (name == m.name) {
        bits |= m.bits;
        return true;
      }
    }
    return false;
  };
  for (char ch : text) {
    if (ch == ',' || ch == '+') {
      const std::string bad = word;
      if (!take()) return resolving::invalid(field, "'" + text + "' ('" + bad + "')", kAccepted);
    } else {
      word += ch;
    }
  }
  const std::string bad = word;
  if (!take()) return resolving::invalid(field, "'" + text + "' ('" + bad + "')", kAccepted);
  if (bits == 0) return resolving::invalid(field, "'" + text + "'", kAccepted);
  if ((bits & kLoraQkv) && (bits & (kLoraQ | kLoraK | kLoraV))) {
    return make_error(ErrorCode::kInconsistent, field,
                      std::string(field) + "='" + text + "' names a fused qkv and separate q/k/v projections; a model has one or the other");
  }
  return bits;
}

std::string lora_modules_name(uint32_t modules) {
  for (const ModuleName& m : kNames) {
    if (m.bits == modules) return m.name;  // the shorthands and single modules come first
  }
  std::string out;
  for (const char* name : {"q", "k", "v", "o", "gate", "up", "down", "qkv", "embedding", "lm_head"}) {
    for (const ModuleName& m : kNames) {
      if (std::string(m.name) == name && (modules & m.bits)) out += (out.empty() ? "" : "+") + std::string(name);
    }
  }
  return out;
}

}  // namespace trainfit
