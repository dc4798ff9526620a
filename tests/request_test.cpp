// Bad input: one clear line naming the field, the value and what is accepted.
#include "test_util.h"
#include "trainfit/catalog.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

using testing::error_of;

void expect_mentions(const Error& e, const std::string& field, const std::string& fragment) {
  EXPECT_EQ(e.field, field) << e.message;
  EXPECT_NE(e.message.find(fragment), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << "one line: " << e.message;
}

TEST(RequestJson, ParsesSeedRequest) {
  Result<Request> r = request_from_json(
      R"({"model_params_b":8,"num_gpus":8,"gpu_memory_gb":80,"micro_batch":4,"seq_length":4096,
          "num_layers":32,"hidden_dim":4096,"precision_bits":16,"zero_stage":3,"grad_ckpt":1})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r->num_gpus, 8);
  EXPECT_EQ(*r->grad_ckpt, 1);
  Result<Resolved> resolved = resolve(r.value());
  ASSERT_TRUE(resolved.ok()) << resolved.error().message;
  EXPECT_EQ(resolved->config.recompute, Recompute::kFull);
  EXPECT_EQ(resolved->config.precision, Precision::kFp16Amp);
  EXPECT_FALSE(resolved->assumptions.empty());  // heads, vocab, ffn were assumed
}

TEST(RequestJson, MalformedJsonGivesThePosition) {
  const Error e = request_from_json(R"({"num_gpus": 8,, })").error();
  EXPECT_EQ(e.code, ErrorCode::kMalformed);
  EXPECT_NE(e.message.find("byte 16"), std::string::npos) << e.message;
}

TEST(RequestJson, UnknownFieldListsTheKnownOnes) {
  const Error e = request_from_json(R"({"num_gpu": 8})").error();
  EXPECT_EQ(e.code, ErrorCode::kUnknownField);
  EXPECT_NE(e.message.find("did you mean 'num_gpus'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("seq_length"), std::string::npos) << e.message;
}

TEST(RequestJson, WrongTypesNameTheField) {
  expect_mentions(request_from_json(R"({"seq_length": "long"})").error(), "seq_length", "integer");
  expect_mentions(request_from_json(R"({"seq_length": 8.5})").error(), "seq_length", "8.5");
  expect_mentions(request_from_json(R"({"sequence_parallel": "yes please"})").error(), "sequence_parallel", "boolean");
  expect_mentions(request_from_json(R"({"model": 7})").error(), "model", "string");
  EXPECT_FALSE(request_from_json("[1,2]").ok());
  EXPECT_FALSE(request_from_json("").ok());
}

// A value over kMaxStringFieldBytes is refused before any catalog lookup, and no error
// quotes more than kMaxQuotedBytes of what was sent: a 1 MiB body makes a short line.
TEST(RequestJson, HugeValuesMakeShortErrors) {
  const std::string huge(1 << 20, 'm');
  Error e = request_from_json(R"({"model": ")" + huge + R"("})").error();
  expect_mentions(e, "model", "at most 256 bytes");
  EXPECT_NE(e.message.find("... (1048576 bytes)"), std::string::npos) << e.message.substr(0, 300);
  EXPECT_LT(e.message.size(), 400u);
  e = request_from_json(R"({"gpu": ")" + std::string(257, 'g') + R"("})").error();
  expect_mentions(e, "gpu", "at most 256 bytes");
  e = request_from_json(R"({"gpu": ")" + std::string(256, 'g') + R"("})").error();  // the limit itself is taken
  EXPECT_EQ(e.message.find("at most 256 bytes"), std::string::npos) << e.message;
  e = request_from_json(R"({"seq_length": ")" + huge + R"("})").error();
  EXPECT_EQ(e.field, "seq_length");
  EXPECT_LT(e.message.size(), 400u);
  e = request_from_json(R"({")" + huge + R"(": 1})").error();  // an unknown key
  EXPECT_EQ(e.code, ErrorCode::kUnknownField);
  EXPECT_LT(e.field.size(), 100u);
  EXPECT_EQ(e.message.find(huge.substr(0, 100)), std::string::npos);
}

TEST(RequestJson, IntegralFloatsAndNullsAreAccepted) {
  Result<Request> r = request_from_json(R"({"num_gpus": 8.0, "seq_length": null, "sequence_parallel": 1})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r->num_gpus, 8);
  EXPECT_FALSE(r->seq_length.has_value());
  EXPECT_TRUE(*r->sequence_parallel);
}

TEST(Validation, SizesOutOfRange) {
  expect_mentions(error_of("model=llama3-8b,num_gpus=0"), "num_gpus", "integer from 1");
  expect_mentions(error_of("model=llama3-8b,num_gpus=-8"), "num_gpus", "-8");
  expect_mentions(error_of("model=llama3-8b,seq_length=99999999999"), "seq_length", "99999999999");
  expect_mentions(error_of("model=llama3-8b,micro_batch=0"), "micro_batch", "integer from 1");
  expect_mentions(error_of("model=llama3-8b,micro_batch=65536,seq_length=1048576"), "micro_batch", "2^30 tokens");
  expect_mentions(error_of("model_params_b=-1,num_layers=2,hidden_dim=64"), "model_params_b", "> 0");
  expect_mentions(error_of("model=llama3-8b,gpu_memory_gb=0"), "gpu_memory_gb", "> 0");
  expect_mentions(error_of("model=llama3-8b,zero_stage=4"), "zero_stage", "0|1|2|3");
  expect_mentions(error_of("model=llama3-8b,precision_bits=12"), "precision_bits", "8|16|32");
  expect_mentions(error_of("model=llama3-8b,grad_ckpt=2"), "grad_ckpt", "0|1");
}

TEST(Validation, NanAndGarbageTextAreRejected) {
  Request request;
  expect_mentions(set_field_from_text(request, "model_params_b", "nan").error(), "model_params_b", "nan");
  expect_mentions(set_field_from_text(request, "seq_length", "abc").error(), "seq_length", "abc");
  expect_mentions(set_field_from_text(request, "seq", "12k").error(), "seq_length", "12k");
  expect_mentions(set_field_from_text(request, "sp", "maybe").error(), "sequence_parallel", "true|false");
}

TEST(Validation, GeometryDivisibility) {
  expect_mentions(error_of("num_layers=2,hidden_dim=100,num_heads=3"), "num_heads", "divisor of hidden_dim=100");
  expect_mentions(error_of("model=llama3-8b,num_kv_heads=5"), "num_kv_heads", "divisor of num_heads=32");
  expect_mentions(error_of("model=llama3-8b,tensor_parallel=3,num_gpus=3"), "tensor_parallel", "divisor of num_heads=32");
  expect_mentions(error_of("model=llama3-8b,tensor_parallel=4,num_gpus=6"), "num_gpus", "multiple of");
  expect_mentions(error_of("model=llama3-8b,context_parallel=3,num_gpus=3,seq_length=4096"), "seq_length",
                  "context_parallel=3");
  expect_mentions(error_of("model=llama3-8b,pipeline_parallel=64,num_gpus=64"), "pipeline_parallel", "num_layers=32");
  expect_mentions(error_of("model=llama3-8b,expert_parallel=2,num_gpus=2"), "expert_parallel", "dense");
}

TEST(Validation, UnknownNamesGetDidYouMean) {
  expect_mentions(error_of("model=llama3-7b"), "model", "did you mean");
  expect_mentions(error_of("model=llama3-8b,gpu=h10"), "gpu", "did you mean 'h100'");
  expect_mentions(error_of("model=llama3-8b,recompute=ful"), "recompute", "none|selective|full");
  expect_mentions(error_of("model=llama3-8b,precision=bf17"), "precision", "bf16");
}

TEST(Validation, ContradictionsAreNamed) {
  expect_mentions(error_of("model=llama3-8b,grad_ckpt=1,recompute=none"), "recompute", "grad_ckpt");
  expect_mentions(error_of("model=llama3-8b,num_gpus=8,zero_stage=1,sharding=fsdp-full"), "zero_stage", "fsdp-full");
  expect_mentions(error_of("model=llama3-8b,offload_params=true"), "offload_params", "zero_stage=3");
  expect_mentions(error_of("model=llama3-8b,precision=fp32,precision_bits=16"), "precision", "precision_bits");
}

TEST(Validation, MissingGeometry) {
  const Error e = error_of("num_gpus=8");
  EXPECT_EQ(e.code, ErrorCode::kMissing);
  EXPECT_NE(e.message.find("num_layers"), std::string::npos);
}

TEST(Lookup, GpuNamesAreCaseInsensitiveGresTypes) {
  for (const char* name : {"h100", "H100", "a100", "A100-40GB", "h200", "b200", "gh200", "mi300x", "l40s", "h100-pcie"}) {
    EXPECT_TRUE(find_gpu(name).ok()) << name;
  }
  EXPECT_NEAR((*find_gpu("h100"))->capacity_bytes / kGiB, 79.6, 0.05);
  EXPECT_EQ((*find_model("Llama3.1-8B"))->name, "llama3-8b");
}

TEST(KeyValues, AppliesFlagsAndNames) {
  Request r;
  ASSERT_TRUE(apply_key_values(r, "model=llama3-70b, seq=8192 ,zero=3").ok());
  EXPECT_EQ(*r.model, "llama3-70b");
  EXPECT_EQ(*r.seq_length, 8192);
  EXPECT_EQ(*r.zero_stage, 3);
  EXPECT_EQ(apply_key_values(r, "seq").error().code, ErrorCode::kMalformed);
  EXPECT_EQ(apply_key_values(r, "colour=red").error().code, ErrorCode::kUnknownField);
}

TEST(Explicit, FieldsOverrideAPreset) {
  const Config c = testing::config_of("model=llama3-8b,num_layers=16,gpu=h100,gpu_memory_gb=40");
  EXPECT_EQ(c.geo.layers, 16);
  EXPECT_EQ(c.geo.hidden, 4096);
  EXPECT_DOUBLE_EQ(c.capacity_bytes, 40.0 * kGiB);
}

}  // namespace
}  // namespace trainfit
