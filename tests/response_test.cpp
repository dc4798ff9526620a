// The response contract: the seed's fields, trainfit's additions, verdicts and advice.
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "trainfit/catalog.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

using nlohmann::json;

Response response_of(const std::string& spec) {
  Request request;
  EXPECT_TRUE(apply_key_values(request, spec).ok());
  Result<Response> r = respond(request);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.value();
}

TEST(ResponseJson, HasExactlyTheSeedFieldsFirst) {
  const json j = json::parse(response_to_json(response_of("model=llama3-8b,num_gpus=8,zero_stage=3"), {"node1", 0.5}));
  const std::vector<std::string> seed = {
      "model_states_unsharded_gb", "model_states_per_gpu_gb", "activations_per_gpu_gb", "per_gpu_total_gb",
      "gpu_capacity_gb", "utilization_percent", "fits", "bytes_per_param", "weights_per_gpu_gb", "grads_per_gpu_gb",
      "optimizer_per_gpu_gb", "min_gpus_to_fit", "aggregate_cluster_gb", "global_batch", "zero_stage",
      "checkpointing", "verdict", "profile", "serving_node", "compute_ms"};
  for (const std::string& field : seed) EXPECT_TRUE(j.contains(field)) << field;
  for (const char* field : {"mem_vs_gpus", "mem_vs_seq", "model_state_gb", "activation_gb", "capacity_gb",
                            "per_gpu_gb", "num_gpus", "seq_length", "fits"}) {
    EXPECT_TRUE(j["profile"].contains(field)) << field;
  }
  EXPECT_EQ(j["profile"]["mem_vs_gpus"].size(), 48u);
  EXPECT_EQ(j["profile"]["mem_vs_seq"].size(), 48u);
  for (const char* field : {"breakdown", "assumptions", "advice", "units"}) EXPECT_TRUE(j.contains(field)) << field;
  EXPECT_EQ(j["serving_node"], "node1");
  EXPECT_NE(j["units"].get<std::string>().find("2^30"), std::string::npos);
  EXPECT_EQ(j["global_batch"], 8);
  EXPECT_EQ(j["zero_stage"], 3);
}

// response_to_json writes directly (JsonWriter), promising nlohmann's exact bytes (number
// format, escapes, layout): nlohmann, parsing and dumping it again, is the oracle.
TEST(ResponseJson, BytesAreNlohmannsForVariedResponses) {
  const char* specs[] = {
      "model=llama3-8b",
      "model=llama3-70b,num_gpus=64,seq_length=8192,tensor_parallel=8,sequence_parallel=true,sharding=fsdp-full",
      "model=llama3-405b,num_gpus=16,seq_length=131072,recompute=full,zero_stage=3",  // out of memory, advice
      "model=mixtral-8x7b,num_gpus=32,expert_parallel=8,zero_stage=1,micro_batch=2",
      "model=llama3-70b,num_gpus=64,pipeline_parallel=4,virtual_pipeline=2,tensor_parallel=4,num_microbatches=16",
      "model_params_b=8,num_gpus=8,gpu_memory_gb=80,micro_batch=4,seq_length=4096,num_layers=32,hidden_dim=4096,"
      "precision_bits=16,zero_stage=3,grad_ckpt=1",
      "model=llama3-8b,framework=torchtitan,recompute=op,compile=true",
      "model=llama3-8b,adapter=qlora,lora_rank=64,num_gpus=1,gpu=a100-40gb",
      "model_params_b=0.125,num_layers=12,hidden_dim=768,num_gpus=3,gpu_memory_gb=7.3,seq_length=300",
  };
  for (const char* spec : specs) {
    Request request;
    ASSERT_TRUE(apply_key_values(request, spec).ok()) << spec;
    Result<Response> r = respond(request);
    ASSERT_TRUE(r.ok()) << spec << ": " << r.error().message;
    for (const int indent : {-1, 2}) {
      const std::string written = response_to_json(r.value(), {"node \"q\" \u00e9", 12.34567}, indent);
      EXPECT_EQ(written, nlohmann::ordered_json::parse(written).dump(indent)) << spec << " indent " << indent;
    }
  }
}

TEST(ResponseJson, FiguresAreConsistent) {
  const Response r = response_of("model=llama3-8b,num_gpus=8,zero_stage=3,seq_length=8192");
  const json j = json::parse(response_to_json(r, {}));
  EXPECT_NEAR(j["model_states_per_gpu_gb"].get<double>(),
              j["weights_per_gpu_gb"].get<double>() + j["grads_per_gpu_gb"].get<double>() +
                  j["optimizer_per_gpu_gb"].get<double>(),
              1e-3);
  EXPECT_NEAR(j["model_states_unsharded_gb"].get<double>(), 8030261248.0 * 16 / kGiB, 1e-3);
  EXPECT_NEAR(j["aggregate_cluster_gb"].get<double>(), 8 * j["gpu_capacity_gb"].get<double>(), 1e-2);
  EXPECT_NEAR(j["utilization_percent"].get<double>(),
              100 * j["per_gpu_total_gb"].get<double>() / j["gpu_capacity_gb"].get<double>(), 0.1);
  EXPECT_EQ(j["fits"].get<bool>(), j["per_gpu_total_gb"].get<double>() <= j["gpu_capacity_gb"].get<double>());
}

TEST(ResponseJson, NullMinGpusCarriesAReason) {
  const json j = json::parse(response_to_json(response_of("model=llama3-70b,zero_stage=0"), {}));
  EXPECT_TRUE(j["min_gpus_to_fit"].is_null());
  EXPECT_FALSE(j["min_gpus_reason"].get<std::string>().empty());
  EXPECT_FALSE(j["advice"].empty());
}

TEST(Advice, FittingAdviceReallyFits) {
  const Response r = response_of("model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3,num_microbatches=1");
  ASSERT_FALSE(r.breakdown.fits);
  ASSERT_FALSE(r.advice.empty());
  for (const Advice& a : r.advice) {
    Request request;
    ASSERT_TRUE(apply_key_values(request, "model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3").ok());
    // Apply the changes exactly as stated: the prediction must be what they give.
    const std::string what = key_values(a.changes);
    for (const Change& change : a.changes) ASSERT_TRUE(set_field_from_text(request, change.field, change.value).ok()) << what;
    ASSERT_TRUE(set_field_from_text(request, "num_gpus", std::to_string(a.num_gpus)).ok()) << what;
    Result<Response> changed = respond(request, {false, false});
    ASSERT_TRUE(changed.ok()) << what << ": " << changed.error().message;
    EXPECT_EQ(changed->breakdown.fits, a.fits) << what;
    EXPECT_NEAR(changed->breakdown.per_gpu_total / kGiB, a.per_gpu_gb, 1e-6) << what;
  }
}

TEST(Advice, CombinesAChangeWithMoreGpusWhenNeitherFitsAlone) {
  // No recompute at seq 8192: activations alone exceed HBM, so more GPUs alone cannot help.
  const Response r = response_of("model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3,gpus_per_node=8");
  EXPECT_EQ(r.min_gpus.gpus, 0);
  bool combined = false;
  for (const Advice& a : r.advice) {
    if (a.field() == "recompute" && a.value() == "full") {
      combined = true;
      EXPECT_TRUE(a.fits);
      EXPECT_GT(a.num_gpus, 8);
      EXPECT_EQ(a.num_gpus % 8, 0);
      ASSERT_EQ(a.changes.size(), 2u) << key_values(a.changes);
      EXPECT_EQ(a.changes.back().field, "num_gpus");
      EXPECT_EQ(a.changes.back().value, std::to_string(a.num_gpus));
    }
  }
  EXPECT_TRUE(combined);
}

TEST(Verdict, OneLineEitherWay) {
  const Response ok = response_of("model=llama3-8b,num_gpus=8,gpu=h100,zero_stage=3,recompute=full");
  EXPECT_EQ(verdict(ok).rfind("FITS: llama3-8b at seq 4096 needs ", 0), 0u) << verdict(ok);
  const Response oom = response_of("model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3");
  const std::string line = verdict(oom);
  EXPECT_EQ(line.rfind("OOM: llama3-70b at seq 8192 needs ", 0), 0u) << line;
  EXPECT_NE(line.find("on 8 x H100 (79.6 GiB usable); min_gpus_to_fit="), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

// A custom geometry is named by its label (an HF config's name), else by what it is; never
// "model at seq ...".
TEST(Verdict, NamesACustomGeometry) {
  const std::string geometry = "num_layers=32,hidden_dim=4096,num_heads=32,num_kv_heads=8,ffn_hidden=14336,vocab_size=128256,"
                               "num_gpus=8,gpu=h100,zero_stage=3,recompute=full";
  const Response labelled = response_of(geometry + ",model_label=Meta-Llama-3-8B");
  EXPECT_EQ(verdict(labelled).rfind("FITS: Meta-Llama-3-8B at seq 4096 needs ", 0), 0u) << verdict(labelled);
  EXPECT_EQ(json::parse(response_to_json(labelled, {}))["config"]["model_label"], "Meta-Llama-3-8B");
  EXPECT_EQ(json::parse(response_to_json(labelled, {}))["config"]["model"], "");  // the contract's field: no catalog entry
  const Response bare = response_of(geometry);
  EXPECT_EQ(verdict(bare).rfind("FITS: custom model (32 layers, hidden 4096) at seq 4096 needs ", 0), 0u) << verdict(bare);
}

TEST(Request, BadModelLabelIsOneLine) {
  const Error e = testing::error_of("num_layers=2,hidden_dim=64,num_heads=4,model_label=" + std::string(101, 'x'));
  EXPECT_EQ(e.field, "model_label");
  EXPECT_NE(e.message.find("accepted: text of 1 to 100 printable characters"), std::string::npos) << e.message;
}

// Hub ids (ORG/NAME) name the catalog entry whose config.json they are, in any case; an
// unknown one gets a did-you-mean over the names and the Hub ids.
TEST(Catalog, HubIdsFindTheirEntry) {
  for (const char* id : {"meta-llama/Meta-Llama-3-8B", "meta-llama/llama-3.1-8b", "Qwen/Qwen2.5-7B",
                         "mistralai/Mixtral-8x7B-v0.1", "openai-community/gpt2"}) {
    Result<const ModelPreset*> found = find_model(id);
    ASSERT_TRUE(found.ok()) << id << ": " << found.error().message;
  }
  EXPECT_EQ((*find_model("META-LLAMA/META-LLAMA-3-70B"))->name, "llama3-70b");
  EXPECT_EQ((*find_model("Qwen/Qwen2.5-7B"))->name, "qwen2.5-7b");
  Result<const ModelPreset*> unknown = find_model("meta-llama/Meta-Llama-3-8B-Instrukt");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kUnknownName);
  EXPECT_EQ(unknown.error().field, "model");
  EXPECT_NE(unknown.error().message.find("(did you mean 'meta-llama/Meta-Llama-3-8B-Instruct'?)"), std::string::npos)
      << unknown.error().message;
}

// An instruct or chat model is its base model's geometry under another name (their config.json
// files differ in no field of the geometry): Qwen2.5-72B-Instruct is Qwen2.5-72B. A name the
// catalog lacks is never answered with another model as if misspelled: Mistral-7B-Instruct-v0.3
// (vocabulary 32768) is not Mixtral, nor Mistral 7B v0.1.
TEST(HubIds, InstructAndChatVariantsAreTheirBaseModel) {
  const std::pair<const char*, const char*> variants[] = {{"Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"},
                                                          {"meta-llama/Llama-2-7b-chat-hf", "llama2-7b"},
                                                          {"mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b"},
                                                          {"google/gemma-2-9b-it", "gemma2-9b"}};
  for (const auto& [id, name] : variants) {
    Result<const ModelPreset*> found = find_model(id);
    ASSERT_TRUE(found.ok()) << id << ": " << found.error().message;
    EXPECT_EQ((*found)->name, name) << id;
  }
  Result<const ModelPreset*> v03 = find_model("mistralai/Mistral-7B-Instruct-v0.3");
  ASSERT_FALSE(v03.ok());
  EXPECT_EQ(v03.error().message.find("did you mean"), std::string::npos) << v03.error().message;
  EXPECT_NE(v03.error().message.find("is a different model"), std::string::npos) << v03.error().message;
  // "it" or "chat" as the model's own first word is its name, not a variant.
  EXPECT_FALSE(find_model("org/chat-7b").ok());
  Result<const GpuSpec*> a10g = find_gpu("a10g");
  ASSERT_FALSE(a10g.ok());
  EXPECT_NE(a10g.error().message.find("'a100', is a different GPU: add yours to a site catalog, or give gpu_memory_gb"), std::string::npos)
      << a10g.error().message;
}

// Plain DeepSpeed has no tensor or context parallelism (deepspeed/runtime/pipe: pipeline only;
// TP/SP come from Megatron-DeepSpeed): its advice offers neither. Megatron offers both.
TEST(Advice, OffersOnlyWhatTheFrameworkHas) {
  const std::string oom = "model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3,precision=bf16";
  const Response deepspeed = response_of(oom + ",framework=deepspeed");
  ASSERT_FALSE(deepspeed.breakdown.fits);
  ASSERT_FALSE(deepspeed.advice.empty());
  for (const Advice& a : deepspeed.advice) {
    for (const Change& change : a.changes) {
      EXPECT_NE(change.field, "tensor_parallel") << key_values(a.changes);
      EXPECT_NE(change.field, "context_parallel") << key_values(a.changes);
    }
  }
  bool tp = false;
  for (const Advice& a : response_of(oom + ",framework=megatron").advice) tp = tp || a.field() == "tensor_parallel";
  EXPECT_TRUE(tp);
  EXPECT_FALSE(parallelism_of(Framework::kDeepSpeed).tensor);
  EXPECT_TRUE(parallelism_of(Framework::kDeepSpeed).pipeline);
}

// DeepSpeed's "bf16" is bf16 mixed precision (bf16 weights, fp32 master: its bf16 section),
// shown so; trainfit's regime name stays in config.precision (the API contract).
TEST(Precision, ShownAsTheFrameworkMeansIt) {
  const Response r = response_of("model=llama3-8b,num_gpus=8,gpu=h100,zero_stage=3,framework=deepspeed,precision=bf16");
  EXPECT_EQ(precision_text(r.resolved.config), "bf16 mixed (bf16 weights, fp32 master)");
  const json config = json::parse(response_to_json(r, {}))["config"];
  EXPECT_EQ(config["precision"], "fp16-amp");
  EXPECT_EQ(config["precision_label"], "bf16 mixed (bf16 weights, fp32 master)");
  EXPECT_EQ(precision_text(response_of("model=llama3-8b,num_gpus=8,gpu=h100,zero_stage=3,precision=bf16-amp").resolved.config),
            "bf16-amp");
}

TEST(ErrorJson, NamesCodeFieldAndMessage) {
  const json j = json::parse(error_to_json(make_error(ErrorCode::kInvalidValue, "seq_length", "bad")));
  EXPECT_EQ(j["error"]["code"], "invalid_value");
  EXPECT_EQ(j["error"]["field"], "seq_length");
}

// A message quoting bytes the user sent that are not UTF-8 (a parser's "last read: '\xff'")
// is still valid JSON: each stray byte becomes U+FFFD, well-formed characters stay.
TEST(ErrorJson, InvalidUtf8InAMessageBecomesReplacementCharacters) {
  const std::string message = "last read: '\xff' and '\xc3' and \xe2\x82\xac and \xed\xa0\x80";
  std::string out;
  ASSERT_NO_THROW(out = error_to_json(make_error(ErrorCode::kMalformed, "x\xfe", message)));
  const json j = json::parse(out);
  EXPECT_EQ(j["error"]["message"], "last read: '\xef\xbf\xbd' and '\xef\xbf\xbd' and \xe2\x82\xac and "
                                   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(j["error"]["field"], "x\xef\xbf\xbd");
}

}  // namespace
}  // namespace trainfit
