// Nothing crashes or prints nonsense: every field with odd values, alone and on top of
// a real model, gives either a clear error or finite figures.
#include <cmath>

#include "test_util.h"
#include "trainfit/admission.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

const char* const kOddValues[] = {"0", "-1", "1", "3", "7", "4096", "1048576", "9223372036854775807", "1e308",
                                  "nan", "inf", "true", "false", "x", "", "llama3-8b", "h100", "full", "fused"};

void expect_sane(const Result<Response>& r, const std::string& what) {
  if (!r.ok()) {
    EXPECT_FALSE(r.error().message.empty()) << what;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << what;
    EXPECT_NE(r.error().code, ErrorCode::kInternal) << what << ": " << r.error().message;  // the request's fault
    return;
  }
  const Breakdown& b = r->breakdown;
  EXPECT_TRUE(std::isfinite(b.per_gpu_total) && b.per_gpu_total > 0) << what;
  EXPECT_TRUE(std::isfinite(b.stage.activations.total())) << what;
  EXPECT_GE(b.stage.states.total(), 0.0) << what;
  for (const GpuPoint& p : r->mem_vs_gpus) EXPECT_TRUE(std::isfinite(p.per_gpu_gb)) << what;
}

TEST(Robustness, EveryFieldWithOddValues) {
  int checked = 0;
  for (const FieldSpec& field : request_fields()) {
    for (const char* value : kOddValues) {
      for (const char* base : {"", "model=llama3-8b,num_gpus=8,zero_stage=3"}) {
        Request request;
        ASSERT_TRUE(apply_key_values(request, base).ok());
        if (!set_field_from_text(request, field.name, value).ok()) continue;
        const std::string what = std::string(base) + " + " + field.name + "=" + value;
        expect_sane(respond(request), what);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(Robustness, MalformedJsonNeverThrows) {
  for (const char* text : {"", "{", "}", "[]", "null", "{\"model\":", "{\"num_gpus\": 1e999}", "{\"a\":1,\"a\":2}",
                           "{\"seq_length\": -0}", "\xff\xfe", "{\"model\": \"\\ud800\"}", "{\"micro_batch\": [1]}"}) {
    const Result<Request> r = request_from_json(text);
    if (!r.ok()) {
      EXPECT_FALSE(r.error().message.empty()) << text;
      EXPECT_NE(r.error().code, ErrorCode::kInternal) << text;  // bad input is the client's error
    }
  }
}

// A value nested 500k deep (1 MB: the service's default body limit) once overflowed the
// stack while its error message was written; 1e999 once came back as an internal error.
TEST(Robustness, DeepAndHugeJsonAreTheClientsError) {
  const std::string deep = "{\"model\":" + std::string(500000, '[') + std::string(500000, ']') + "}";
  EXPECT_EQ(json_nesting_depth(deep), 500001u);
  const Result<Request> r = request_from_json(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(r.error().field, "") << r.error().message;  // the text as a whole
  EXPECT_NE(r.error().message.find("nested deeper than 64"), std::string::npos) << r.error().message;  // the limit
  const std::string at_limit = "{\"model\":" + std::string(63, '[') + std::string(63, ']') + "}";
  EXPECT_EQ(json_nesting_depth(at_limit), 64u);
  const Error wrong_type = request_from_json(at_limit).error();
  EXPECT_EQ(wrong_type.code, ErrorCode::kInvalidValue) << wrong_type.message;  // parsed: the field's type is wrong
  EXPECT_EQ(wrong_type.field, "model") << wrong_type.message;
  EXPECT_EQ(json_nesting_depth("{\"model\":\"[[[[\\\"{{\"}"), 1u);  // brackets inside strings do not count
  const Result<Request> huge = request_from_json("{\"num_gpus\": 1e999}");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::kMalformed) << huge.error().message;
  EXPECT_EQ(huge.error().field, "") << huge.error().message;
}

TEST(Robustness, AdmissionWithOddAnnotations) {
  const admission::Policy policy = admission::parse_policy("action = resize").value();
  for (const char* comment : {"trainfit:", "trainfit: model=llama3-405b seq=1048576", "trainfit: model=gpt2 tp=12",
                              "trainfit: num_layers=1 hidden_dim=1", "TRAINFIT: model=llama3-8b zero=3",
                              "trainfit: spec=seq_length=1,micro_batch=1"}) {
    for (const char* gres : {"", "gres:gpu:1", "gres:gpu:h100:1048576", "gres/gpu=0", "gpu:l40s:3"}) {
      admission::Job job;
      if (!admission::annotation_from_comment(comment, &job.annotation).ok()) continue;
      job.fields.per_job = gres;
      const admission::Decision d = admission::decide(policy, job);
      EXPECT_TRUE(std::isfinite(d.per_gpu_gb)) << comment << " " << gres;
      if (d.verdict == admission::Verdict::kReject || d.verdict == admission::Verdict::kResize) {
        EXPECT_FALSE(d.message.empty()) << comment << " " << gres;
      }
    }
  }
}

}  // namespace
}  // namespace trainfit
