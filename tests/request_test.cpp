// Bad input: one clear line naming the field, the value and what is accepted.
#include "result_matchers.h"
#include "test_util.h"
#include "trainfit/catalog.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

using testing::error_of;

// The error's kind and field, and the words of the message the user is promised (the value
// quoted, what is accepted, the other field of a contradiction, a did-you-mean).
void expect_mentions(const Error& e, ErrorCode code, const std::string& field, const std::string& fragment) {
  EXPECT_EQ(e.code, code) << e.message;
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
  EXPECT_EQ(e.field, "") << e.message;  // the text as a whole
  EXPECT_NE(e.message.find("byte 16"), std::string::npos) << e.message;
}

TEST(RequestJson, UnknownFieldListsTheKnownOnes) {
  const Error e = request_from_json(R"({"num_gpu": 8})").error();
  EXPECT_EQ(e.code, ErrorCode::kUnknownField);
  EXPECT_EQ(e.field, "num_gpu") << e.message;
  EXPECT_NE(e.message.find("did you mean 'num_gpus'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("seq_length"), std::string::npos) << e.message;
}

TEST(RequestJson, WrongTypesNameTheField) {
  expect_mentions(request_from_json(R"({"seq_length": "long"})").error(), ErrorCode::kInvalidValue, "seq_length",
                  "integer");
  expect_mentions(request_from_json(R"({"seq_length": 8.5})").error(), ErrorCode::kInvalidValue, "seq_length", "8.5");
  expect_mentions(request_from_json(R"({"sequence_parallel": "yes please"})").error(), ErrorCode::kInvalidValue,
                  "sequence_parallel", "boolean");
  expect_mentions(request_from_json(R"({"model": 7})").error(), ErrorCode::kInvalidValue, "model", "string");
  EXPECT_EQ(testing::failure_of(request_from_json("[1,2]")).code, ErrorCode::kMalformed);
  EXPECT_EQ(testing::failure_of(request_from_json("")).code, ErrorCode::kMalformed);
}

// A value over kMaxStringFieldBytes is refused before any catalog lookup, and no error
// quotes more than kMaxQuotedBytes of what was sent: a 1 MiB body makes a short line.
// A path names a file the user must find: shown whole however deep (a package build's
// tree is over 64 bytes), cut only past what any system call accepts (PATH_MAX).
TEST(GeometrySource, NamesBothSourcesAndTheWholePath) {
  Request request;
  request.model = "llama3-8b";
  const std::string deep = "/tmp/" + std::string(300, 'd') + "/config.json";
  Error e = check_one_geometry_source(request, deep, {"--model", "--hf-config"}).error();
  expect_mentions(e, ErrorCode::kInconsistent, "model", "--hf-config='" + deep + "' both give");
  expect_mentions(e, ErrorCode::kInconsistent, "model", "--model='llama3-8b'");
  const std::string huge(1 << 20, 'p');
  e = check_one_geometry_source(request, huge, {"--model", "--hf-config"}).error();
  EXPECT_NE(e.message.find("... (1048576 bytes)"), std::string::npos) << e.message.substr(0, 300);
  EXPECT_LT(e.message.size(), 400u);
  EXPECT_TRUE(testing::Succeeded(check_one_geometry_source(request, "", {"--model", "--hf-config"})));
}

TEST(RequestJson, HugeValuesMakeShortErrors) {
  const std::string huge(1 << 20, 'm');
  Error e = request_from_json(R"({"model": ")" + huge + R"("})").error();
  expect_mentions(e, ErrorCode::kInvalidValue, "model", "at most 256 bytes");
  EXPECT_NE(e.message.find("... (1048576 bytes)"), std::string::npos) << e.message.substr(0, 300);
  EXPECT_LT(e.message.size(), 400u);
  e = request_from_json(R"({"gpu": ")" + std::string(257, 'g') + R"("})").error();
  expect_mentions(e, ErrorCode::kInvalidValue, "gpu", "at most 256 bytes");
  EXPECT_TRUE(testing::Succeeded(
      request_from_json(R"({"gpu": ")" + std::string(256, 'g') + R"("})")));  // the limit itself is taken
  e = request_from_json(R"({"seq_length": ")" + huge + R"("})").error();
  EXPECT_EQ(e.code, ErrorCode::kInvalidValue) << e.message.substr(0, 300);
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

// DeepSpeed configs write bucket sizes as JSON numbers (500000000, or 5e8, which JSON parses as
// a float): a whole number is taken as such, a fraction is refused naming the field, the value
// and what is accepted.
TEST(RequestJson, BucketSizesTakeWholeNumbers) {
  for (const char* bucket : {"reduce_bucket_size", "allgather_bucket_size"}) {
    const std::string key = std::string("\"") + bucket + "\": ";
    for (const char* value : {"500000000", "5e8", "5.0e8", "\"500000000\"", "\"5e8\""}) {
      Result<Request> r = request_from_json("{" + key + value + "}");
      ASSERT_TRUE(r.ok()) << bucket << "=" << value << ": " << r.error().message;
      const std::optional<std::string>& text =
          std::string(bucket) == "reduce_bucket_size" ? r->reduce_bucket_size : r->allgather_bucket_size;
      ASSERT_TRUE(text.has_value());
      // Resolved: 5e8 elements whichever way it was written.
      Result<Resolved> resolved = resolve(*request_from_json("{\"model\": \"llama3-8b\", " + key + value + "}"));
      ASSERT_TRUE(resolved.ok()) << bucket << "=" << value << ": " << resolved.error().message;
      if (std::string(bucket) == "reduce_bucket_size") EXPECT_DOUBLE_EQ(resolved->config.reduce_bucket_elements, 5e8);
    }
    Error e = request_from_json("{" + key + "1.5}").error();
    expect_mentions(e, ErrorCode::kInvalidValue, bucket, std::string(bucket) + "=1.5 is not valid");
    expect_mentions(e, ErrorCode::kInvalidValue, bucket, "integer from 1 to 1e12");
    expect_mentions(request_from_json("{" + key + "1e20}").error(), ErrorCode::kInvalidValue, bucket, "1e+20");
    expect_mentions(request_from_json("{" + key + "true}").error(), ErrorCode::kInvalidValue, bucket, "whole number");
    expect_mentions(error_of(std::string("model=llama3-8b,") + bucket + "=2.5"), ErrorCode::kInvalidValue, bucket,
                    "integer from 1 to 1e12");
    expect_mentions(error_of(std::string("model=llama3-8b,") + bucket + "=0"), ErrorCode::kInvalidValue, bucket,
                    "integer from 1 to 1e12");
  }
  Result<Resolved> hf = resolve(*request_from_json(R"({"model": "llama3-8b", "reduce_bucket_size": "auto"})"));
  ASSERT_TRUE(hf.ok());
  EXPECT_DOUBLE_EQ(hf->config.reduce_bucket_elements, 4096.0 * 4096.0);  // hidden x hidden
  // transformers and accelerate fill "auto" only for reduce_bucket_size.
  expect_mentions(error_of("model=llama3-8b,allgather_bucket_size=auto"), ErrorCode::kInvalidValue,
                  "allgather_bucket_size", "integer from 1 to 1e12");
}

TEST(Validation, SizesOutOfRange) {
  expect_mentions(error_of("model=llama3-8b,num_gpus=0"), ErrorCode::kInvalidValue, "num_gpus", "integer from 1");
  expect_mentions(error_of("model=llama3-8b,num_gpus=-8"), ErrorCode::kInvalidValue, "num_gpus", "-8");
  expect_mentions(error_of("model=llama3-8b,seq_length=99999999999"), ErrorCode::kInvalidValue, "seq_length",
                  "99999999999");
  expect_mentions(error_of("model=llama3-8b,micro_batch=0"), ErrorCode::kInvalidValue, "micro_batch", "integer from 1");
  expect_mentions(error_of("model=llama3-8b,micro_batch=65536,seq_length=1048576"), ErrorCode::kInvalidValue,
                  "micro_batch", "2^30 tokens");
  expect_mentions(error_of("model_params_b=-1,num_layers=2,hidden_dim=64"), ErrorCode::kInvalidValue, "model_params_b",
                  "> 0");
  expect_mentions(error_of("model=llama3-8b,gpu_memory_gb=0"), ErrorCode::kInvalidValue, "gpu_memory_gb", "> 0");
  expect_mentions(error_of("model=llama3-8b,zero_stage=4"), ErrorCode::kInvalidValue, "zero_stage", "0|1|2|3");
  expect_mentions(error_of("model=llama3-8b,precision_bits=12"), ErrorCode::kInvalidValue, "precision_bits", "8|16|32");
  expect_mentions(error_of("model=llama3-8b,grad_ckpt=2"), ErrorCode::kInvalidValue, "grad_ckpt", "0|1");
}

TEST(Validation, NanAndGarbageTextAreRejected) {
  Request request;
  expect_mentions(set_field_from_text(request, "model_params_b", "nan").error(), ErrorCode::kInvalidValue,
                  "model_params_b", "nan");
  expect_mentions(set_field_from_text(request, "seq_length", "abc").error(), ErrorCode::kInvalidValue, "seq_length",
                  "abc");
  expect_mentions(set_field_from_text(request, "seq", "12k").error(), ErrorCode::kInvalidValue, "seq_length", "12k");
  expect_mentions(set_field_from_text(request, "sp", "maybe").error(), ErrorCode::kInvalidValue, "sequence_parallel",
                  "true|false");
}

TEST(Validation, GeometryDivisibility) {
  expect_mentions(error_of("num_layers=2,hidden_dim=100,num_heads=3"), ErrorCode::kInvalidValue, "num_heads",
                  "divisor of hidden_dim=100");
  expect_mentions(error_of("model=llama3-8b,num_kv_heads=5"), ErrorCode::kInvalidValue, "num_kv_heads",
                  "divisor of num_heads=32");
  expect_mentions(error_of("model=llama3-8b,tensor_parallel=3,num_gpus=3"), ErrorCode::kInvalidValue, "tensor_parallel",
                  "divisor of num_heads=32");
  expect_mentions(error_of("model=llama3-8b,tensor_parallel=4,num_gpus=6"), ErrorCode::kInconsistent, "num_gpus",
                  "multiple of");
  expect_mentions(error_of("model=llama3-8b,context_parallel=3,num_gpus=3,seq_length=4096"), ErrorCode::kInconsistent,
                  "seq_length", "context_parallel=3");
  expect_mentions(error_of("model=llama3-8b,pipeline_parallel=64,num_gpus=64"), ErrorCode::kInvalidValue,
                  "pipeline_parallel", "num_layers=32");
  expect_mentions(error_of("model=llama3-8b,expert_parallel=2,num_gpus=2"), ErrorCode::kInvalidValue, "expert_parallel",
                  "dense");
}

TEST(Validation, UnknownNamesGetDidYouMean) {
  // Another size is another model: named as such, never as "did you mean" (issue 36, point 3).
  expect_mentions(error_of("model=llama3-7b"), ErrorCode::kUnknownName, "model",
                  "the nearest catalog entry, 'llama3-8b', is a different model");
  expect_mentions(error_of("model=llama3-8b,gpu=h10"), ErrorCode::kUnknownName, "gpu", "did you mean 'h100'");
  expect_mentions(error_of("model=llama3-8b,recompute=ful"), ErrorCode::kInvalidValue, "recompute",
                  "none|selective|full");
  expect_mentions(error_of("model=llama3-8b,precision=bf17"), ErrorCode::kInvalidValue, "precision", "bf16");
}

TEST(Validation, ContradictionsAreNamed) {
  expect_mentions(error_of("model=llama3-8b,grad_ckpt=1,recompute=none"), ErrorCode::kInconsistent, "recompute",
                  "grad_ckpt");
  expect_mentions(error_of("model=llama3-8b,num_gpus=8,zero_stage=1,sharding=fsdp-full"), ErrorCode::kInconsistent,
                  "zero_stage", "fsdp-full");
  expect_mentions(error_of("model=llama3-8b,offload_params=true"), ErrorCode::kInconsistent, "offload_params",
                  "zero_stage=3");
  expect_mentions(error_of("model=llama3-8b,precision=fp32,precision_bits=16"), ErrorCode::kInconsistent, "precision",
                  "precision_bits");
}

TEST(Validation, MissingGeometry) {
  const Error e = error_of("num_gpus=8");
  EXPECT_EQ(e.code, ErrorCode::kMissing) << e.message;
  EXPECT_EQ(e.field, "num_layers") << e.message;
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
  const Error bare = testing::failure_of(apply_key_values(r, "seq"));
  EXPECT_EQ(bare.code, ErrorCode::kMalformed) << bare.message;
  EXPECT_EQ(bare.field, "seq") << bare.message;
  const Error unknown = testing::failure_of(apply_key_values(r, "colour=red"));
  EXPECT_EQ(unknown.code, ErrorCode::kUnknownField) << unknown.message;
  EXPECT_EQ(unknown.field, "colour") << unknown.message;
}

TEST(Explicit, FieldsOverrideAPreset) {
  const Config c = testing::config_of("model=llama3-8b,num_layers=16,gpu=h100,gpu_memory_gb=40");
  EXPECT_EQ(c.geo.layers, 16);
  EXPECT_EQ(c.geo.hidden, 4096);
  EXPECT_DOUBLE_EQ(c.capacity_bytes, 40.0 * kGiB);
}

}  // namespace
}  // namespace trainfit
