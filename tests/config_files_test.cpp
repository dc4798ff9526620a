// Framework config files -> Request. Every expected value is what the fixture file
// itself says (tests/fixtures/frameworks/, each in its framework's real format and
// modelled on its release's recipes), or the framework's documented default.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "result_matchers.h"
#include "trainfit/admission.h"
#include "trainfit/config_file.h"
#include "trainfit/estimate.h"
#include "trainfit/config.h"
#include "trainfit/util/file.h"

namespace trainfit {
namespace {

std::string fixture_path(const std::string& name) { return std::string(TRAINFIT_FIXTURES) + "/frameworks/" + name; }

ConfigFile read_fixture(const std::string& name) {
  std::ifstream in(fixture_path(name));
  std::stringstream text;
  text << in.rdbuf();
  Result<ConfigFile> file = read_config_file_text(text.str(), fixture_path(name));
  EXPECT_TRUE(file.ok()) << file.error().message;
  return file.ok() ? file.value() : ConfigFile();
}

Error read_error(const std::string& text, const std::string& name) {
  Result<ConfigFile> file = read_config_file_text(text, name);
  EXPECT_FALSE(file.ok()) << name << " was accepted";
  return file.ok() ? Error() : file.error();
}

// The error's kind and the key at fault, in the file's own spelling ("config": the text as a whole).
void expect_error(const Error& e, ErrorCode code, const std::string& field) {
  EXPECT_EQ(e.code, code) << e.message;
  EXPECT_EQ(e.field, field) << e.message;
}

bool lists(const std::vector<std::string>& list, const std::string& prefix) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) { return item.rfind(prefix, 0) == 0; });
}

// ---- torchtune (v0.6.1 recipes) ----

TEST(ConfigTorchtune, Lora8BSingleDeviceRecipe) {
  const ConfigFile f = read_fixture("torchtune_llama3_1_8B_lora_single_device.yaml");
  const Request& r = f.request;
  EXPECT_EQ(f.kind, "torchtune");
  EXPECT_EQ(r.framework, "torchtune");
  EXPECT_EQ(r.model, "llama3-8b");        // torchtune.models.llama3_1.lora_llama3_1_8b
  EXPECT_EQ(r.adapter, "lora");
  EXPECT_EQ(r.lora_rank, 8);              // lora_rank: 8
  EXPECT_EQ(r.lora_targets, "all-linear");  // q, v, output_proj + apply_lora_to_mlp: True
  EXPECT_TRUE(lists(f.not_modelled, "model.lora_attn_modules="));  // no k_proj: not exactly all-linear
  EXPECT_EQ(r.precision, "bf16");         // dtype: bf16, the recipe's word
  EXPECT_EQ(r.micro_batch, 2);            // batch_size: 2
  EXPECT_EQ(r.num_microbatches, 8);       // gradient_accumulation_steps: 8
  EXPECT_EQ(r.recompute, "full");         // enable_activation_checkpointing: True
  EXPECT_EQ(r.loss, "chunked");           // CEWithChunkedOutputLoss
  EXPECT_EQ(r.optimizer, "adamw");        // torch.optim.AdamW
  EXPECT_EQ(r.optimizer_impl, "fused");   // fused: True
  EXPECT_EQ(r.compile, false);            // compile: False
  EXPECT_FALSE(r.seq_length);             // tokenizer.max_seq_len: null
  EXPECT_TRUE(lists(f.left_unset, "tokenizer.max_seq_len=null"));
  for (const char* key : {"optimizer.lr", "seed", "output_dir", "log_every_n_steps", "model.lora_alpha"}) {
    EXPECT_TRUE(lists(f.ignored, key)) << key;
  }
  EXPECT_TRUE(f.unrecognised.empty()) << f.unrecognised.front();
}

TEST(ConfigTorchtune, Full8BDistributedRecipe) {
  const ConfigFile f = read_fixture("torchtune_llama3_1_8B_full.yaml");
  EXPECT_EQ(f.request.model, "llama3-8b");
  EXPECT_EQ(f.request.adapter, "none");
  EXPECT_FALSE(f.request.lora_targets);
  EXPECT_EQ(f.request.micro_batch, 2);
  EXPECT_EQ(f.request.num_microbatches, 1);
  EXPECT_TRUE(lists(f.not_modelled, "custom_sharded_layers="));
  EXPECT_TRUE(lists(f.ignored, "optimizer_in_bwd"));  // False: nothing to model
}

TEST(ConfigTorchtune, Qlora3BRecipe) {
  const ConfigFile f = read_fixture("torchtune_llama3_2_3B_qlora_single_device.yaml");
  EXPECT_EQ(f.request.model, "llama3.2-3b");
  EXPECT_EQ(f.request.adapter, "qlora");
  EXPECT_EQ(f.request.lora_rank, 64);
  EXPECT_EQ(f.request.micro_batch, 4);
  EXPECT_EQ(f.request.num_microbatches, 8);
}

std::string lora_recipe(const std::string& component, const std::string& modules, const std::string& extra = "") {
  return "model:\n  _component_: " + component + "\n  lora_attn_modules: " + modules + "\n" + extra;
}

TEST(ConfigTorchtune, LoraTargetsFromTheModules) {
  const auto targets = [](const std::string& modules, const std::string& extra) {
    Result<ConfigFile> f = read_config_file_text(lora_recipe("torchtune.models.llama3.lora_llama3_8b", modules, extra), "r.yaml");
    EXPECT_TRUE(f.ok()) << f.error().message;
    return f.ok() ? std::make_pair(f->request.lora_targets.value_or(""), f->not_modelled.empty()) : std::make_pair(std::string(), false);
  };
  EXPECT_EQ(targets("['q_proj', 'v_proj']", ""), std::make_pair(std::string("qv"), true));
  EXPECT_EQ(targets("[q_proj, k_proj, v_proj, output_proj]", ""), std::make_pair(std::string("attention"), true));
  EXPECT_EQ(targets("[q_proj, k_proj, v_proj, output_proj]", "  apply_lora_to_mlp: True\n"),
            std::make_pair(std::string("all-linear"), true));
  EXPECT_EQ(targets("[q_proj]", ""), std::make_pair(std::string("qv"), false));  // a subset: listed
}

TEST(ConfigTorchtune, OtherRecipeKeys) {
  Result<ConfigFile> f = read_config_file_text(
      "model:\n  _component_: torchtune.models.llama2.llama2_7b\n"
      "optimizer:\n  _component_: bitsandbytes.optim.PagedAdamW8bit\n  lr: 2e-5\n"
      "loss:\n  _component_: torch.nn.CrossEntropyLoss\n"
      "enable_activation_checkpointing: True\nac_option: 2\ncompile: True\n"
      "tokenizer:\n  _component_: torchtune.models.llama2.llama2_tokenizer\n  max_seq_len: 4096\n"
      "fsdp_cpu_offload: True\noptimizer_in_bwd: True\nmystery_key: 1\n",
      "full.yml");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->request.model, "llama2-7b");
  EXPECT_EQ(f->request.optimizer, "adamw-8bit");
  EXPECT_EQ(f->request.loss, "standard");
  EXPECT_EQ(f->request.recompute, "full");
  EXPECT_EQ(f->request.recompute_every, 2);
  EXPECT_EQ(f->request.compile, true);
  EXPECT_EQ(f->request.seq_length, 4096);
  EXPECT_EQ(f->request.offload_params, true);
  EXPECT_EQ(f->request.offload_optimizer, true);
  EXPECT_TRUE(lists(f->not_modelled, "optimizer_in_bwd=True"));
  EXPECT_EQ(f->unrecognised, std::vector<std::string>{"mystery_key"});
}

TEST(ConfigTorchtune, BadRecipes) {
  Error e = read_error("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n  apply_lora_to_mlp: True\n", "r.yaml");
  expect_error(e, ErrorCode::kInconsistent, "model.apply_lora_to_mlp");
  EXPECT_NE(e.message.find("model._component_"), std::string::npos) << e.message;  // what it contradicts

  e = read_error("model:\n  _component_: torchtune.models.gemma.gemma_2b\n", "r.yaml");
  expect_error(e, ErrorCode::kUnknownName, "model._component_");
  EXPECT_NE(e.message.find("gemma_2b' is not a model trainfit knows; accepted:"), std::string::npos) << e.message;

  e = read_error("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\ndtype: fp16\n", "r.yaml");
  expect_error(e, ErrorCode::kInvalidValue, "dtype");
  EXPECT_NE(e.message.find("dtype='fp16' is not valid; accepted: bf16|fp32"), std::string::npos) << e.message;

  e = read_error(lora_recipe("torchtune.models.llama3.lora_llama3_8b", "[q_proj, w1]"), "r.yaml");
  expect_error(e, ErrorCode::kInvalidValue, "model.lora_attn_modules");
  EXPECT_NE(e.message.find("model.lora_attn_modules='w1'"), std::string::npos) << e.message;  // the one module at fault

  e = read_error("batch_size: [1, 2]\n", "r.yaml");  // a list where a number belongs
  expect_error(e, ErrorCode::kInvalidValue, "batch_size");

  e = read_error("batch_size: two\n", "r.yaml");
  expect_error(e, ErrorCode::kInvalidValue, "batch_size");
  EXPECT_NE(e.message.find("batch_size='two' is not valid; accepted: integer >= 1"), std::string::npos) << e.message;

  e = read_error("model:\n  _component_: [unclosed\n", "r.yaml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("malformed YAML at line"), std::string::npos) << e.message;  // the line is only in the words

  e = read_error("- just\n- a list\n", "r.yaml");
  expect_error(e, ErrorCode::kMalformed, "config");
}

// Texts whose parsing costs grow past a recipe's or a config's size are refused unread:
// DeepSpeed JSON over 1,024 members (nlohmann's ordered_json inserts in linear time: 50,000
// keys took 16 s), YAML over 2,048 lines (70,000 keys took 1 s).
TEST(ConfigFiles, OversizedTextsAreRefusedUnread) {
  std::string ds = "{";
  for (int i = 0; i < 1025; ++i) ds += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\": 1";
  ds += "}";
  Error e = read_error(ds, "ds.json");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("1025 members is not read; accepted: at most 1024"), std::string::npos) << e.message;
  ds = "{\"train_micro_batch_size_per_gpu\": 2, \"note\": \"" + std::string(5000, ':') + "\"}";  // ':' in a string
  Result<ConfigFile> file = read_config_file_text(ds, "ds.json");
  EXPECT_TRUE(file.ok()) << file.error().message;

  std::string yaml;
  for (int i = 0; i < 2049; ++i) yaml += "k" + std::to_string(i) + ": 1\n";
  e = read_error(yaml, "r.yaml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("2049 lines is not read; accepted: at most 2048"), std::string::npos) << e.message;

  yaml = "a:\n";  // block nesting: one more space a level
  for (int i = 1; i <= 65; ++i) yaml += std::string(static_cast<size_t>(i), ' ') + "k" + std::to_string(i) + ":\n";
  e = read_error(yaml, "r.yaml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("YAML indented 65 columns at line 66 is not read; accepted: at most 64"), std::string::npos)
      << e.message;
  yaml.resize(yaml.rfind(std::string(65, ' ')));  // 64 columns are read
  file = read_config_file_text(yaml, "r.yaml");
  EXPECT_TRUE(file.ok() || file.error().message.find("indented") == std::string::npos) << file.error().message;
}

// Flow nesting past 64 levels is refused before yaml-cpp scans the text (a 64 KiB body of
// '[' held a service thread for 25-60 ms), naming the line; brackets that open nothing
// (in plain scalars, quotes and comments) do not count.
TEST(ConfigTorchtune, DeepFlowNestingIsRefusedBeforeParsing) {
  const std::string deep = "model:\n  _component_: torchtune.models.llama3.llama3_8b\nbatch_size:\n  " +
                           std::string(65, '[') + "1" + std::string(65, ']') + "\n";
  Error e = read_error(deep, "r.yaml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("malformed YAML at line 4: nested deeper than 64 levels"), std::string::npos) << e.message;
  e = read_error("a: " + std::string(60000, '['), "r.yaml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("malformed YAML at line 1: nested deeper than 64 levels"), std::string::npos) << e.message;
  e = read_error("a: {b: " + std::string(64, '{') + "\n", "r.yaml");  // { counts as [ does
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("nested deeper than"), std::string::npos) << e.message;

  // 64 levels are yaml-cpp's to read (here: a list where a number belongs, not a depth error).
  e = read_error("batch_size: " + std::string(64, '[') + "1" + std::string(64, ']') + "\n", "r.yaml");
  expect_error(e, ErrorCode::kInvalidValue, "batch_size");
  // Brackets in plain scalars, quoted scalars and comments open no collection.
  std::string recipe = "model:\n  _component_: torchtune.models.llama3.llama3_8b\n";
  for (int i = 0; i < 70; ++i) {
    recipe += "k" + std::to_string(i) + ": x[" + std::to_string(i) + "  # [[[{ " + std::to_string(i) + "\n";
    recipe += "q" + std::to_string(i) + ": \"[[{\\\"[\"\n";
    recipe += "s" + std::to_string(i) + ": '[[{''['\n";
  }
  Result<ConfigFile> file = read_config_file_text(recipe, "r.yaml");
  EXPECT_TRUE(file.ok() || file.error().message.find("nested deeper") == std::string::npos) << file.error().message;
}

// ---- torchtitan (v0.2.1 train_configs) ----

TEST(ConfigTorchtitan, Llama3_8B) {
  const ConfigFile f = read_fixture("torchtitan_llama3_8b.toml");
  const Request& r = f.request;
  EXPECT_EQ(r.framework, "torchtitan");
  EXPECT_EQ(r.model, "llama3-8b");      // name "llama3", flavor "8B"
  EXPECT_EQ(r.micro_batch, 1);          // local_batch_size = 1
  EXPECT_EQ(r.seq_length, 8192);        // seq_len = 8192
  EXPECT_EQ(r.recompute, "op");         // selective, selective_ac_option "op"
  EXPECT_EQ(r.sharding, "fsdp-full");   // data_parallel_shard_degree = -1, replicate 1
  EXPECT_EQ(r.tensor_parallel, 1);
  EXPECT_EQ(r.pipeline_parallel, 1);
  EXPECT_EQ(r.context_parallel, 1);
  EXPECT_EQ(r.optimizer, "adamw");      // name "AdamW"
  EXPECT_EQ(r.compile, false);          // [compile] enable=false
  EXPECT_FALSE(r.precision);            // neither dtype nor mixed_precision_param given
  EXPECT_FALSE(f.global_batch);
  EXPECT_TRUE(lists(f.ignored, "[job]"));
  EXPECT_TRUE(lists(f.ignored, "optimizer.lr"));
  EXPECT_TRUE(f.unrecognised.empty());
}

TEST(ConfigTorchtitan, Llama3_70BAnd405B) {
  const ConfigFile f70 = read_fixture("torchtitan_llama3_70b.toml");
  EXPECT_EQ(f70.request.model, "llama3-70b");
  EXPECT_EQ(f70.request.tensor_parallel, 8);
  EXPECT_EQ(f70.request.micro_batch, 8);
  EXPECT_EQ(f70.request.recompute, "full");
  EXPECT_FALSE(f70.request.precision);  // [quantize.linear.float8] settings without the converter: no fp8

  const ConfigFile f405 = read_fixture("torchtitan_llama3_405b.toml");
  EXPECT_EQ(f405.request.model, "llama3-405b");
  EXPECT_EQ(f405.request.precision, "fp8");  // converters = ["float8"]
  EXPECT_EQ(f405.request.compile, true);
  EXPECT_TRUE(lists(f405.not_modelled, "parallelism.enable_async_tensor_parallel=true"));
}

TEST(ConfigTorchtitan, PipelineHybridShardingAndGlobalBatch) {
  const ConfigFile f = read_fixture("torchtitan_llama3_70b_pp_hsdp.toml");
  const Request& r = f.request;
  EXPECT_EQ(r.sharding, "fsdp-hybrid");      // replicate 2 x shard 4
  EXPECT_EQ(r.pipeline_parallel, 2);
  EXPECT_EQ(r.micro_batch, 2);               // pipeline_parallel_microbatch_size = 2
  EXPECT_EQ(r.num_microbatches, 4);          // local_batch_size 8 / 2
  EXPECT_EQ(r.recompute, "full");            // selective_ac_option "2": every 2nd layer
  EXPECT_EQ(r.recompute_every, 2);
  EXPECT_EQ(r.optimizer_impl, "foreach");
  EXPECT_EQ(r.precision, "bf16-mixed");      // dtype float32 + mixed_precision_param bfloat16
  EXPECT_EQ(r.compile, true);
  ASSERT_TRUE(f.global_batch);
  EXPECT_EQ(f.global_batch->sequences, 256);
  // 128 GPUs / (TP 8 x PP 2) = DP 8: 256 / (8 x 8) = 4 local batches of 4 microbatches.
  Request at128 = r;
  at128.num_gpus = 128;
  Result<std::vector<std::string>> notes = apply_global_batch(f, at128);
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_EQ(at128.num_microbatches, 16);
  // 96 GPUs: DP 6 cannot split 256 into whole local batches of 8.
  Request at96 = r;
  at96.num_gpus = 96;
  EXPECT_EQ(apply_global_batch(f, at96).error().code, ErrorCode::kInconsistent);
}

// What `compile` covers depends on the release: [compile] components (v0.2.0+, job_config.py
// Compile, default ["model", "loss"]) or [training] compile (v0.1.x: components/loss.py
// compiles the loss with the blocks).
TEST(ConfigTorchtitan, WhatCompileCoversFollowsTheLayout) {
  const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
  Result<ConfigFile> old_layout = read_config_file_text(model + "[training]\ncompile = true\n", "job.toml");
  ASSERT_TRUE(old_layout.ok()) << old_layout.error().message;
  EXPECT_EQ(old_layout->request.compile, true);
  EXPECT_EQ(old_layout->request.compile_loss, true);
  EXPECT_EQ(old_layout->request.framework_version, "0.1.0");
  ASSERT_EQ(old_layout->inferred.size(), 1u);
  EXPECT_NE(old_layout->inferred[0].find("v0.1.x"), std::string::npos);

  Result<ConfigFile> defaults = read_config_file_text(model + "[compile]\nenable = true\n", "job.toml");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ(defaults->request.compile_loss, true);
  EXPECT_TRUE(defaults->inferred.empty());

  Result<ConfigFile> model_only =
      read_config_file_text(model + "[compile]\nenable = true\ncomponents = [\"model\"]\n", "job.toml");
  ASSERT_TRUE(model_only.ok()) << model_only.error().message;
  EXPECT_EQ(model_only->request.compile, true);
  EXPECT_EQ(model_only->request.compile_loss, false);
}

TEST(ConfigTorchtitan, ShardingFromTheDataParallelDegrees) {
  const auto sharding = [](const std::string& parallelism) {
    Result<ConfigFile> f = read_config_file_text("[parallelism]\n" + parallelism, "job.toml");
    EXPECT_TRUE(f.ok()) << f.error().message;
    return f.ok() ? f->request.sharding.value_or("") + "/" + (f->request.zero_stage ? std::to_string(*f->request.zero_stage) : "") : "";
  };
  EXPECT_EQ(sharding("data_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 1\n"), "/0");  // DDP
  EXPECT_EQ(sharding("data_parallel_shard_degree = 8\n"), "fsdp-full/");
  EXPECT_EQ(sharding("fsdp_reshard_after_forward = \"never\"\n"), "fsdp-grad-op/");
}

TEST(ConfigTorchtitan, BadJobConfigs) {
  Error e = read_error("[model]\nname = \"llama3\"\nflavor = \"13B\"\n", "job.toml");
  expect_error(e, ErrorCode::kUnknownName, "model.flavor");
  EXPECT_NE(e.message.find("model.flavor='13B'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("8B, 70B, 405B"), std::string::npos) << e.message;

  e = read_error("[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"sometimes\"\n", "job.toml");
  expect_error(e, ErrorCode::kInvalidValue, "activation_checkpoint.selective_ac_option");
  EXPECT_NE(e.message.find("selective_ac_option='sometimes'"), std::string::npos) << e.message;

  e = read_error("[optimizer]\nimplementation = \"turbo\"\n", "job.toml");
  expect_error(e, ErrorCode::kInvalidValue, "optimizer.implementation");
  EXPECT_NE(e.message.find("for-loop|foreach|fused"), std::string::npos) << e.message;

  e = read_error("[training]\nlocal_batch_size = \"8\"\n", "job.toml");  // a string, not an integer
  expect_error(e, ErrorCode::kInvalidValue, "training.local_batch_size");

  e = read_error("[training]\ndtype = \"float16\"\n", "job.toml");
  expect_error(e, ErrorCode::kInvalidValue, "training.dtype");
  EXPECT_NE(e.message.find("bfloat16|float32"), std::string::npos) << e.message;

  e = read_error("[training\nseq_len = 8192\n", "job.toml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("malformed TOML at line 1"), std::string::npos) << e.message;

  e = read_error("a = " + std::string(100000, '['), "deep.toml");  // would overflow toml++'s recursion
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("nested deeper than"), std::string::npos) << e.message;
}

// Non-ASCII text where TOML allows it keeps its value (toml++ is handed an ASCII rewrite:
// lib/config_files/src/toml_ascii.h). The value comes back in the refusal of model.name.
TEST(ConfigTorchtitan, NonAsciiStringsKeepTheirValue) {
  const std::vector<std::pair<std::string, std::string>> names = {
      {"\"llämä–3\"", "llämä–3"},                  // basic string (U+00E4, U+2013)
      {"'llämä\\\"x'", "llämä\\\"x"},              // literal string with '\' and '"'
      {"\"\"\"ll\\\n   ämä\"\"\"", "llämä"},        // multi-line basic, line-ending backslash
      {"'''\nllämä 🦙'''", "llämä 🦙"},            // multi-line literal, its first newline trimmed
      {"\"\\u00e9t\\u00E9\"", "été"},              // escapes stay escapes
  };
  for (const auto& [toml_value, value] : names) {
    const std::string text = "# réglages — comment\n[model]\nname = " + toml_value + "  # ok\n\"clé ω\" = 1\n";
    Error e = read_error(text, "job.toml");
    expect_error(e, ErrorCode::kUnknownName, "model.name");
    EXPECT_NE(e.message.find("model.name='" + value + "'"), std::string::npos) << toml_value << " -> " << e.message;
  }
  // Outside strings and comments TOML allows ASCII only: named by line and column.
  Error e = read_error("[model]\nflavor = \"8B\"\nnamé = \"llama3\"\n", "job.toml");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("malformed TOML at line 3, column 4: a non-ASCII character outside a string"), std::string::npos)
      << e.message;
  e = read_error("[model]\nname = \"ll\\é\"\n", "job.toml");  // '\' + non-ASCII is no escape
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("line 2, column 12: '\\' before a non-ASCII character"), std::string::npos) << e.message;
}

// TOML requires UTF-8 (toml.io v1.0.0, "Spec"). Debian 12's toml11 3.7.1 read past its buffer on
// the first input (found by tests/fuzz, kept in regressions/config_files/): each is refused
// as malformed TOML naming its line, whichever release of the parser a Debian release ships.
TEST(ConfigTorchtitan, InvalidUtf8IsMalformedWherever) {
  const std::vector<std::pair<std::string, int>> inputs = {
      {"'~7580\311\365\223\2104i~\232'\302\337\316\365\244p =  0\n", 1},  // literal-string key
      {"[training]\nseq_len = 8192\n[model]\nname = \"llama\377\"\n", 4},  // basic string value
      {"[model]\nflavor = '8B\300\200'\n", 2},                              // overlong encoding
      {"[model]\n# comment \355\240\200\nflavor = \"8B\"\n", 2},            // a surrogate, in a comment
      {"[job]\n\ndescription = '''\nsee \370\210\200\200\200'''\n", 4},         // 5-byte form, multi-line
  };
  for (const auto& [text, line] : inputs) {
    Result<ConfigFile> f = read_config_file_text(text, "job.toml");
    ASSERT_FALSE(f.ok()) << text;
    expect_error(f.error(), ErrorCode::kMalformed, "config");
    EXPECT_EQ(f.error().message.rfind("job.toml: malformed TOML at line " + std::to_string(line) + ",", 0), 0u)
        << f.error().message;
  }
}

// ---- DeepSpeed (v0.16.4 config keys) ----

TEST(ConfigDeepSpeed, Zero3OffloadConfig) {
  const ConfigFile f = read_fixture("deepspeed_zero3_offload.json");
  const Request& r = f.request;
  EXPECT_EQ(r.framework, "deepspeed");
  EXPECT_EQ(r.micro_batch, 4);              // train_micro_batch_size_per_gpu
  EXPECT_EQ(r.num_microbatches, 8);         // gradient_accumulation_steps
  EXPECT_EQ(r.precision, "bf16");           // bf16.enabled, DeepSpeed's word
  EXPECT_EQ(r.zero_stage, 3);
  EXPECT_EQ(r.offload_optimizer, true);     // offload_optimizer.device "cpu"
  EXPECT_EQ(r.offload_params, true);        // offload_param.device "cpu"
  EXPECT_EQ(r.optimizer, "adamw");          // type "AdamW"
  EXPECT_EQ(r.recompute, "full");           // activation_checkpointing present
  // The stage-3 gathering knobs, written as JSON numbers (5e7, 1e5, 1e9): read as elements.
  EXPECT_EQ(r.stage3_prefetch_bucket_size, "50000000");
  EXPECT_EQ(r.stage3_param_persistence_threshold, "100000");
  EXPECT_EQ(r.stage3_max_live_parameters, "1000000000");
  EXPECT_EQ(r.stage3_max_reuse_distance, "1000000000");
  EXPECT_FALSE(lists(f.not_modelled, "zero_optimization.stage3_max_live_parameters="));
  EXPECT_TRUE(lists(f.ignored, "scheduler"));
  EXPECT_TRUE(lists(f.ignored, "optimizer.params.lr"));
  ASSERT_TRUE(f.global_batch);
  EXPECT_EQ(f.global_batch->sequences, 256);
}

TEST(ConfigDeepSpeed, TrainBatchSizeAgainstTheGpuCount) {
  const ConfigFile f = read_fixture("deepspeed_zero3_offload.json");
  Request at8 = f.request;  // 4 x 8 x 8 = 256: consistent
  at8.num_gpus = 8;
  ASSERT_TRUE(apply_global_batch(f, at8).ok());
  EXPECT_EQ(at8.num_microbatches, 8);
  Request at16 = f.request;  // 4 x 8 x 16 = 512 != 256
  at16.num_gpus = 16;
  Result<std::vector<std::string>> bad = apply_global_batch(f, at16);
  ASSERT_FALSE(bad.ok());
  expect_error(bad.error(), ErrorCode::kInconsistent, "train_batch_size");
  EXPECT_NE(bad.error().message.find("train_batch_size=256"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("gradient_accumulation_steps=8"), std::string::npos) << bad.error().message;
  Request unknown = f.request;  // no GPU count: noted, nothing changed
  Result<std::vector<std::string>> noted = apply_global_batch(f, unknown);
  ASSERT_TRUE(noted.ok());
  EXPECT_NE(noted->front().find("needs the GPU count"), std::string::npos);
  Request flagged = f.request;  // a flag's num_microbatches wins over the file's batch
  flagged.num_gpus = 16;
  flagged.num_microbatches = 2;
  EXPECT_TRUE(apply_global_batch(f, flagged).ok());
  EXPECT_EQ(flagged.num_microbatches, 2);
}

TEST(ConfigDeepSpeed, OnlyTrainBatchSizeDerivesTheMicroBatch) {
  Result<ConfigFile> f = read_config_file_text(R"({"train_batch_size": 64, "zero_optimization": {"stage": 2}})", "ds.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  Request r = f->request;
  r.num_gpus = 16;
  ASSERT_TRUE(apply_global_batch(*f, r).ok());
  EXPECT_EQ(r.micro_batch, 4);  // 64 / 16 ranks, accumulation 1 (DeepSpeed's rule)
  EXPECT_EQ(r.num_microbatches, 1);
}

TEST(ConfigDeepSpeed, HfTrainerAutoValuesAreLeftUnset) {
  const ConfigFile f = read_fixture("deepspeed_zero3_hf_auto.json");
  EXPECT_EQ(f.request.zero_stage, 3);
  EXPECT_EQ(f.request.offload_optimizer, false);  // device "none"
  EXPECT_EQ(f.request.offload_params, false);
  EXPECT_FALSE(f.request.precision);
  EXPECT_FALSE(f.request.micro_batch);
  EXPECT_FALSE(f.global_batch);
  for (const char* key : {"train_batch_size=auto", "train_micro_batch_size_per_gpu=auto", "gradient_accumulation_steps=auto",
                          "bf16.enabled=auto", "fp16.enabled=auto"}) {
    EXPECT_TRUE(lists(f.left_unset, key)) << key;
  }
  // The gradient bucket's "auto" is resolved: HF Trainer fills it with hidden x hidden.
  EXPECT_EQ(f.request.reduce_bucket_size, "auto");
  EXPECT_FALSE(lists(f.left_unset, "zero_optimization.reduce_bucket_size=auto"));
}

TEST(ConfigDeepSpeed, TheGradientBucketIsRead) {
  Result<ConfigFile> f = read_config_file_text(R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": 2e8}})", "ds.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->request.reduce_bucket_size, "200000000");
  Request r = f->request;
  r.model = "llama3-8b";
  r.num_gpus = 8;
  // ZeRO-3 keeps a bucket of that many bf16 elements; "auto" is 4096 x 4096 for Llama-3-8B.
  EXPECT_DOUBLE_EQ(estimate(resolve(r).value().config).stage.transients.comm_buckets, 2e8 * 2);
  r.reduce_bucket_size = "auto";
  EXPECT_DOUBLE_EQ(estimate(resolve(r).value().config).stage.transients.comm_buckets, 4096.0 * 4096 * 2);
  r.reduce_bucket_size = "lots";
  Result<Resolved> bad = resolve(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "reduce_bucket_size");
  EXPECT_NE(bad.error().message.find("accepted: integer from 1 to 1e12, or auto"), std::string::npos) << bad.error().message;
}

TEST(ConfigDeepSpeed, TheAllGatherBucketIsReadAndChangesNothing) {
  // ZeRO-1/2 gathers the updated partitions in place (runtime/utils.py all_gather_dp_groups at
  // v0.16.4): the size is read and checked, and the figure is what it is without it.
  Result<ConfigFile> f = read_config_file_text(
      R"({"zero_optimization": {"stage": 2, "allgather_bucket_size": 2e8, "reduce_bucket_size": 5e8}})", "ds.json");
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->request.allgather_bucket_size, "200000000");
  EXPECT_FALSE(lists(f->not_modelled, "zero_optimization.allgather_bucket_size"));
  Request r = f->request;
  r.model = "llama3-8b";
  r.num_gpus = 8;
  const double with = estimate(resolve(r).value().config).per_gpu_total;
  r.allgather_bucket_size.reset();
  EXPECT_DOUBLE_EQ(estimate(resolve(r).value().config).per_gpu_total, with);
}

TEST(ConfigDeepSpeed, BadConfigs) {
  Error e = read_error(R"({"bf16": {"enabled": true}, "fp16": {"enabled": true}})", "ds.json");
  expect_error(e, ErrorCode::kInconsistent, "fp16.enabled");
  EXPECT_NE(e.message.find("bf16.enabled=true and fp16.enabled=true"), std::string::npos) << e.message;

  e = read_error(R"({"train_batch_size": 65, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4})", "ds.json");
  expect_error(e, ErrorCode::kInconsistent, "train_batch_size");
  EXPECT_NE(e.message.find("train_batch_size=65"), std::string::npos) << e.message;

  e = read_error(R"({"zero_optimization": {"stage": "three"}})", "ds.json");
  expect_error(e, ErrorCode::kInvalidValue, "zero_optimization.stage");
  EXPECT_NE(e.message.find("zero_optimization.stage='three' is not valid; accepted: 0|1|2|3"), std::string::npos) << e.message;

  e = read_error(R"({"zero_optimization": {"offload_optimizer": {"device": "gpu"}}})", "ds.json");
  expect_error(e, ErrorCode::kInvalidValue, "zero_optimization.offload_optimizer.device");
  EXPECT_NE(e.message.find("device='gpu' is not valid; accepted: none|cpu|nvme"), std::string::npos) << e.message;

  e = read_error(R"({"zero_optimization": 3})", "ds.json");
  expect_error(e, ErrorCode::kInvalidValue, "zero_optimization");

  e = read_error(R"({"train_batch_size": 8,})", "ds.json");
  expect_error(e, ErrorCode::kMalformed, "config");
  EXPECT_NE(e.message.find("malformed JSON at byte"), std::string::npos) << e.message;

  e = read_error(R"({"model_type": "llama", "hidden_size": 4096})", "config.json");
  expect_error(e, ErrorCode::kInvalidValue, "config");
  EXPECT_NE(e.message.find("--hf-config"), std::string::npos) << e.message;  // where such a file belongs

  e = read_error("[1, 2]", "ds.json");
  expect_error(e, ErrorCode::kMalformed, "config");
}

// ---- Megatron-LM arguments (core_v0.15.0) ----

TEST(ConfigMegatron, Llama3_8BArguments) {
  const ConfigFile f = read_fixture("megatron_llama3_8b.args");
  const Request& r = f.request;
  EXPECT_EQ(f.kind, "megatron");
  EXPECT_EQ(r.framework, "megatron");
  EXPECT_EQ(r.num_layers, 32);
  EXPECT_EQ(r.hidden_dim, 4096);
  EXPECT_EQ(r.num_heads, 32);
  EXPECT_EQ(r.num_kv_heads, 8);          // --group-query-attention --num-query-groups 8
  EXPECT_EQ(r.ffn_hidden, 14336);
  EXPECT_EQ(r.head_dim, 128);            // --kv-channels
  EXPECT_EQ(r.seq_length, 8192);
  EXPECT_EQ(r.micro_batch, 1);
  EXPECT_EQ(r.tensor_parallel, 2);
  EXPECT_EQ(r.pipeline_parallel, 1);
  EXPECT_EQ(r.context_parallel, 2);
  EXPECT_EQ(r.sequence_parallel, true);
  EXPECT_EQ(r.zero_stage, 1);            // --use-distributed-optimizer
  EXPECT_EQ(r.precision, "bf16");        // --bf16, Megatron's word
  EXPECT_EQ(r.recompute, "selective");
  EXPECT_EQ(r.mlp, "swiglu");
  EXPECT_EQ(r.norm, "rmsnorm");
  EXPECT_EQ(r.tied_embeddings, false);   // --untie-embeddings-and-output-weights
  EXPECT_EQ(r.bias, "none");             // --disable-bias-linear
  EXPECT_EQ(r.dropout, false);           // both dropouts 0.0
  EXPECT_EQ(r.learned_positions, 0);     // rope
  EXPECT_EQ(r.vocab_size, 128256);       // already a multiple of 128 x TP 2
  ASSERT_TRUE(f.global_batch);
  EXPECT_EQ(f.global_batch->sequences, 128);
  EXPECT_TRUE(lists(f.not_modelled, "--overlap-grad-reduce"));
  EXPECT_TRUE(lists(f.ignored, "--lr"));
  EXPECT_TRUE(lists(f.ignored, "--seed"));
  EXPECT_TRUE(f.unrecognised.empty()) << f.unrecognised.front();
  // 8 GPUs / (TP 2 x CP 2) = DP 2: 128 / (1 x 2) = 64 microbatches.
  Request at8 = r;
  at8.num_gpus = 8;
  ASSERT_TRUE(apply_global_batch(f, at8).ok());
  EXPECT_EQ(at8.num_microbatches, 64);
}

Request megatron(const std::string& args) {
  Result<ConfigFile> f = read_config_file_text(args, "args.txt");
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? f->request : Request();
}

TEST(ConfigMegatron, DefaultsOfAGptModel) {
  const Request r = megatron("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048");
  EXPECT_EQ(r.mlp, "gelu");
  EXPECT_EQ(r.ffn_hidden, 8192);          // 4h
  EXPECT_EQ(r.norm, "layernorm");
  EXPECT_EQ(r.tied_embeddings, true);
  EXPECT_EQ(r.bias, "all");
  EXPECT_EQ(r.dropout, true);             // 0.1 by default
  EXPECT_EQ(r.learned_positions, 2048);   // learned_absolute, max positions = seq length
  EXPECT_EQ(r.num_kv_heads, 16);
  EXPECT_FALSE(r.precision);              // fp32 is the preset's to say
  // --swiglu without --ffn-hidden-size: int(4h x 2/3 / 64) x 64.
  EXPECT_EQ(megatron("--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --swiglu").ffn_hidden, 10880);
  // The vocabulary padded to a multiple of 128 x TP.
  EXPECT_EQ(megatron("--vocab-size 50257 --tensor-model-parallel-size 4").vocab_size, 50688);
}

TEST(ConfigMegatron, SyntaxAndRecompute) {
  const Request r = megatron(
      "# comment line\n--num-layers=32 --hidden-size 4096 \\\n  --num-attention-heads 32  # trailing\n"
      "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2 \\\n"
      "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 --fp8-format hybrid --bf16\n");
  EXPECT_EQ(r.num_layers, 32);
  EXPECT_EQ(r.num_heads, 32);
  EXPECT_EQ(r.virtual_pipeline, 4);       // 32 / 4 stages / 2 layers per chunk
  EXPECT_EQ(r.recompute, "full");
  EXPECT_EQ(r.precision, "fp8");
  Result<ConfigFile> block = read_config_file_text(
      "--num-layers 32 --pipeline-model-parallel-size 4 --recompute-granularity full --recompute-method block "
      "--recompute-num-layers 2",
      "args");
  ASSERT_TRUE(block.ok()) << block.error().message;
  EXPECT_FALSE(block->request.recompute);  // 2 of 8 layers per stage: not modelled, said so
  EXPECT_TRUE(lists(block->not_modelled, "--recompute-method=block"));
}

TEST(ConfigMegatron, BadArguments) {
  Error e = read_error("--bf16 --fp16", "args");
  expect_error(e, ErrorCode::kInconsistent, "--fp16");
  EXPECT_NE(e.message.find("--bf16 and --fp16"), std::string::npos) << e.message;
  e = read_error("--num-layers 32 stray", "args");
  expect_error(e, ErrorCode::kMalformed, "stray");
  e = read_error("--num-layers --hidden-size 4096", "args");
  expect_error(e, ErrorCode::kMissing, "--num-layers");
  e = read_error("--bf16 yes", "args");
  expect_error(e, ErrorCode::kInvalidValue, "--bf16");
  e = read_error("--num-layers many", "args");
  expect_error(e, ErrorCode::kInvalidValue, "--num-layers");
  EXPECT_NE(e.message.find("--num-layers='many' is not valid; accepted: integer >= 1"), std::string::npos) << e.message;
  e = read_error("--num-layers 30 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2", "args");
  expect_error(e, ErrorCode::kInconsistent, "--num-layers-per-virtual-pipeline-stage");
  e = read_error("--normalization BatchNorm --num-layers 2 --hidden-size 64", "args");
  expect_error(e, ErrorCode::kInvalidValue, "--normalization");
  EXPECT_NE(e.message.find("LayerNorm|RMSNorm"), std::string::npos) << e.message;
  e = read_error("--data-path 'unclosed", "args");
  expect_error(e, ErrorCode::kMalformed, "config");
}

// ---- kind detection and file reading ----

TEST(ConfigFileKind, FromTheNameThenTheParsedText) {
  EXPECT_EQ(read_config_file_text("batch_size: 2\n", "recipe.YML")->kind, "torchtune");
  EXPECT_EQ(read_config_file_text("--micro-batch-size 2", "pretrain_args")->kind, "megatron");
  Error e = read_error("batch_size = 2\n", "notes.txt");  // neither a known extension nor --flags
  expect_error(e, ErrorCode::kInvalidValue, "config");
  EXPECT_NE(e.message.find("accepted: a DeepSpeed .json"), std::string::npos) << e.message;
  e = read_error("", "empty");
  expect_error(e, ErrorCode::kInvalidValue, "config");
}

TEST(ConfigFileKind, NotesNameEachList) {
  const ConfigFile f = read_fixture("deepspeed_zero3_hf_auto.json");
  const std::vector<std::string> notes = config_file_notes(f);
  ASSERT_FALSE(notes.empty());
  EXPECT_TRUE(lists(notes, "not modelled (affects memory): zero_optimization.overlap_comm=true"));
  EXPECT_TRUE(lists(notes, "left unset: fp16.enabled=auto"));
  EXPECT_TRUE(lists(notes, "ignored (no effect on memory): fp16.loss_scale"));
}

TEST(ConfigFileReading, OnlyBoundedRegularFiles) {
  char dir[] = "/tmp/trainfit_cfg_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string base = dir;
  Result<std::string> d = read_regular_file(base, kMaxConfigFileBytes);
  ASSERT_FALSE(d.ok());
  expect_error(d.error(), ErrorCode::kInvalidValue, "file");
  EXPECT_EQ(d.error().reason, "is a directory, not a regular file") << d.error().message;
  const std::string fifo = base + "/ds.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> f = read_regular_file(fifo, kMaxConfigFileBytes);  // returns, never blocks
  ASSERT_FALSE(f.ok());
  expect_error(f.error(), ErrorCode::kInvalidValue, "file");
  EXPECT_EQ(f.error().reason, "is a FIFO, not a regular file") << f.error().message;
  const std::string huge = base + "/huge.yaml";
  {
    std::ofstream out(huge);
    out << std::string(kMaxConfigFileBytes + 1, '#');
  }
  Result<std::string> h = read_regular_file(huge, kMaxConfigFileBytes);
  ASSERT_FALSE(h.ok());
  expect_error(h.error(), ErrorCode::kInvalidValue, "file");
  EXPECT_EQ(h.error().message, huge + ": " + h.error().reason);
  EXPECT_NE(h.error().reason.find("accepted: at most " + std::to_string(kMaxConfigFileBytes)), std::string::npos)
      << h.error().message;
  std::remove(fifo.c_str());
  std::remove(huge.c_str());
  rmdir(dir);
}

// ---- carried to slurmctld: TRAINFIT_CONFIG, under the annotation's rules ----

TEST(ConfigFileAnnotation, OptionsOverrideTheFileAndTheFileOverridesTheGeometry) {
  admission::Annotation a;
  const std::vector<std::string> env = {
      "TRAINFIT_CONFIG=framework=deepspeed,zero_stage=3,num_layers=40",  // before the geometry on purpose
      "TRAINFIT_GEOMETRY=num_layers=32,hidden_dim=4096",
      admission::spank_env_name("zero") + "=2",
      admission::spank_env_name("config") + "=/home/user/ds.json",
  };
  ASSERT_TRUE(admission::annotation_from_spank_env(env, &a).ok());
  EXPECT_TRUE(a.found);
  EXPECT_EQ(a.request.framework, "deepspeed");
  EXPECT_EQ(a.request.zero_stage, 2);    // --llm-zero=2 over the file's stage 3
  EXPECT_EQ(a.request.num_layers, 40);   // the config file over the HF geometry
  EXPECT_EQ(a.request.hidden_dim, 4096);
}

TEST(ConfigFileAnnotation, ACommentCannotCarryAFile) {
  admission::Annotation a;
  Result<bool> read = admission::annotation_from_comment("trainfit: config=/home/user/ds.json", &a);
  ASSERT_FALSE(read.ok());
  expect_error(read.error(), ErrorCode::kInvalidValue, "config");
  EXPECT_NE(read.error().message.find("--llm-config"), std::string::npos) << read.error().message;  // what to give instead
}

// A key that first appears in a DeepSpeed release bounds the release from below (keys read at
// each tag's zero/config.py and precision_config.py): zeropp_loco_param v0.16.2,
// bf16_optimizer_states v0.18.3; the newest such key decides.
TEST(ConfigDeepSpeed, NewKeysBoundTheReleaseFromBelow) {
  Result<ConfigFile> plain = read_config_file_text(R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}})", "ds.json");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->release_at_least, "");
  EXPECT_TRUE(plain->inferred.empty());
  Result<ConfigFile> newer = read_config_file_text(
      R"({"bf16": {"enabled": true, "bf16_master_weights_and_grads": true, "bf16_optimizer_states": true},
          "zero_optimization": {"stage": 2, "zeropp_loco_param": {}}})",
      "ds.json");
  ASSERT_TRUE(newer.ok()) << newer.error().message;
  EXPECT_EQ(newer->release_at_least, "0.18.3");
  EXPECT_EQ(newer->inferred.size(), 1u);
  EXPECT_EQ(newer->not_modelled.size(), 3u);  // bf16 masters, bf16 states, LoCo
  EXPECT_TRUE(newer->unrecognised.empty());
}

}  // namespace
}  // namespace trainfit
