// Annotations: --llm-* options (the SPANK environment), comments, HF configs, and what
// each refuses, in the syntax the user wrote.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <vector>
#include <nlohmann/json.hpp>

#include "result_matchers.h"
#include "test_util.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/util/file.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

using testing::failure_of;

// ---- Annotations ----

TEST(Annotation, FromSpankEnvironment) {
  Annotation a;
  ASSERT_TRUE(annotation_from_spank_env({"PATH=/bin", "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-70b",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_micro_batch=2",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=sequence_parallel=true,cp=2",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_check=",
                                         "_SLURM_SPANK_OPTION_other_plugin_x=1"},
                                        &a)
                  .ok());
  EXPECT_TRUE(a.found);
  EXPECT_TRUE(a.check);
  EXPECT_EQ(*a.request.model, "llama3-70b");
  EXPECT_EQ(*a.request.seq_length, 8192);
  EXPECT_EQ(*a.request.micro_batch, 2);
  EXPECT_TRUE(*a.request.sequence_parallel);
  EXPECT_EQ(*a.request.context_parallel, 2);
  EXPECT_EQ(spank_env_name("micro-batch"), "_SLURM_SPANK_OPTION_trainfit_llm_micro_batch");
}

TEST(Annotation, GeometryFromHfConfigThenOptions) {
  Annotation a;
  ASSERT_TRUE(annotation_from_spank_env({"TRAINFIT_GEOMETRY=num_layers=32,hidden_dim=4096,num_heads=32",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=num_layers=16"},
                                        &a)
                  .ok());
  EXPECT_EQ(*a.request.num_layers, 16);
  EXPECT_EQ(*a.request.hidden_dim, 4096);
}

// sbatch --llm-model=X --llm-hf-config=F: two whole geometries, one would silently win; the
// same check in sbatch and job_submit (both read the annotation here), in sbatch's words.
TEST(Annotation, ModelAndHfConfigAreRefusedNamingBoth) {
  Annotation a;
  Result<bool> r = annotation_from_spank_env({"TRAINFIT_GEOMETRY=num_layers=28,hidden_dim=3584,num_heads=28",
                                              "_SLURM_SPANK_OPTION_trainfit_llm_hf_config=qwen.json",
                                              "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-8b"},
                                             &a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInconsistent) << r.error().message;
  EXPECT_EQ(r.error().field, "model") << r.error().message;
  EXPECT_NE(r.error().message.find("--llm-model='llama3-8b'"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("--llm-hf-config='qwen.json'"), std::string::npos) << r.error().message;
  Annotation fields;  // single geometry fields over a model are overrides, not a second geometry
  EXPECT_TRUE(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-8b",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=num_layers=16"},
                                        &fields)
                  .ok());
}

TEST(Annotation, NoTrainfitOptionsMeansNotFound) {
  Annotation a;
  ASSERT_TRUE(annotation_from_spank_env({"PATH=/bin", "_SLURM_SPANK_OPTION_pyxis_image=x"}, &a).ok());
  EXPECT_FALSE(a.found);
}

TEST(Annotation, OneFieldTwoValuesIsAnErrorNamingBothInEitherOrder) {
  for (const auto& env : {std::vector<std::string>{"_SLURM_SPANK_OPTION_trainfit_llm_zero=3",
                                                   "_SLURM_SPANK_OPTION_trainfit_llm_spec=zero_stage=0"},
                          std::vector<std::string>{"_SLURM_SPANK_OPTION_trainfit_llm_spec=zero_stage=0",
                                                   "_SLURM_SPANK_OPTION_trainfit_llm_zero=3"}}) {
    Annotation a;
    Result<bool> r = annotation_from_spank_env(env, &a);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInconsistent) << r.error().message;
    EXPECT_EQ(r.error().field, "zero_stage") << r.error().message;
    EXPECT_NE(r.error().message.find("--llm-zero=3"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("--llm-spec=zero_stage=0"), std::string::npos) << r.error().message;
  }
  Annotation same;  // the same value twice is no contradiction
  EXPECT_TRUE(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_zero=3",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_spec=zero_stage=3"},
                                        &same)
                  .ok());
  Annotation comment;
  Result<bool> r = annotation_from_comment("trainfit: zero=3 zero_stage=0", &comment);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInconsistent) << r.error().message;
  EXPECT_EQ(r.error().field, "zero_stage") << r.error().message;
  EXPECT_NE(r.error().message.find("zero=3 and zero_stage=0 disagree"), std::string::npos) << r.error().message;
}

TEST(Annotation, FromComment) {
  Annotation a;
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-70b seq=8192 zero=3  llm-recompute=full tp=2 check", &a).ok());
  EXPECT_TRUE(a.found);
  EXPECT_TRUE(a.check);
  EXPECT_EQ(a.face, Face::kComment);
  EXPECT_EQ(*a.request.zero_stage, 3);
  EXPECT_EQ(*a.request.recompute, "full");
  EXPECT_EQ(*a.request.tensor_parallel, 2);
  Annotation other;
  ASSERT_TRUE(annotation_from_comment("nightly eval run", &other).ok());
  EXPECT_FALSE(other.found);
}

// The framework works in every face, and the gate decides in that framework's words:
// torchtitan's "selective" is op-level checkpointing, Megatron's is core attention.
TEST(Annotation, FrameworkInEveryFace) {
  Annotation option;
  ASSERT_TRUE(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_framework=torchtitan",
                                         "_SLURM_SPANK_OPTION_trainfit_llm_recompute=selective"},
                                        &option)
                  .ok());
  EXPECT_EQ(*option.request.framework, "torchtitan");
  Annotation comment;
  ASSERT_TRUE(annotation_from_comment("trainfit: model=llama3-8b framework=megatron recompute=selective", &comment).ok());
  EXPECT_EQ(*comment.request.framework, "megatron");
  option.request.model = "llama3-8b";
  Result<Resolved> titan = resolve(option.request);
  Result<Resolved> megatron = resolve(comment.request);
  ASSERT_TRUE(titan.ok() && megatron.ok());
  EXPECT_EQ(titan->config.recompute, Recompute::kOp);
  EXPECT_EQ(megatron->config.recompute, Recompute::kSelective);
}

TEST(Annotation, ErrorsSpeakTheSyntaxTheUserWrote) {
  Annotation a;
  // The field is the request's (seq_length) whichever spelling the user wrote; the message is theirs.
  const Error comment = failure_of(annotation_from_comment("trainfit: seq=abc", &a));
  EXPECT_EQ(comment.code, ErrorCode::kInvalidValue) << comment.message;
  EXPECT_EQ(comment.field, "seq_length") << comment.message;
  EXPECT_EQ(comment.message.rfind("seq='abc' is not valid; accepted: integer", 0), 0u) << comment.message;
  EXPECT_EQ(comment.message.find("--llm"), std::string::npos) << comment.message;
  const Error option = failure_of(annotation_from_spank_env({"_SLURM_SPANK_OPTION_trainfit_llm_seq=abc"}, &a));
  EXPECT_EQ(option.code, ErrorCode::kInvalidValue) << option.message;
  EXPECT_EQ(option.field, "seq_length") << option.message;
  EXPECT_EQ(option.message.rfind("--llm-seq='abc' is not valid; accepted: integer", 0), 0u) << option.message;
  const Error bare = failure_of(annotation_from_comment("trainfit: model", &a));
  EXPECT_EQ(bare.code, ErrorCode::kMalformed) << bare.message;
  EXPECT_EQ(bare.field, "model") << bare.message;
  const Error unknown = failure_of(annotation_from_comment("trainfit: colour=red", &a));
  EXPECT_EQ(unknown.code, ErrorCode::kUnknownField) << unknown.message;
  EXPECT_EQ(unknown.field, "colour") << unknown.message;
  const Error file = failure_of(annotation_from_comment("trainfit: hf-config=/x.json", &a));
  EXPECT_EQ(file.code, ErrorCode::kInvalidValue) << file.message;
  EXPECT_EQ(file.field, "hf-config") << file.message;
  EXPECT_NE(file.message.find("submit host"), std::string::npos) << file.message;  // where to give it instead
}

TEST(Annotation, CommentAndOptionsAreOneOrTheOtherOrAgree) {
  const std::string comment = "trainfit: model=llama3-405b seq=131072";
  Annotation a;
  Result<bool> both = annotation_of_job({spank_env_name("model") + "=llama3-8b"}, &comment, &a);
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().code, ErrorCode::kInconsistent);
  EXPECT_EQ(both.error().field, "comment");
  Annotation check_only;
  ASSERT_TRUE(annotation_of_job({spank_env_name("check") + "=1"}, &comment, &check_only).ok());
  EXPECT_TRUE(check_only.found);
  EXPECT_TRUE(check_only.check);
  EXPECT_EQ(check_only.request.model, "llama3-405b");
  const std::string same = "trainfit: model=llama3-8b";
  Annotation agree;
  EXPECT_TRUE(annotation_of_job({spank_env_name("model") + "=llama3-8b"}, &same, &agree).ok());
}

TEST(Review, HugeAnnotationTextIsRefusedCheaply) {
  Annotation a;
  const Result<bool> r = annotation_from_comment("trainfit: " + std::string(200000, 'k') + "=1", &a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidValue) << r.error().message;
  EXPECT_EQ(r.error().field, "comment") << r.error().message;
  EXPECT_LT(r.error().message.size(), 300u);
  const Result<bool> key = annotation_from_comment("trainfit: model=" + std::string(3000, 'm'), &a);
  ASSERT_FALSE(key.ok());
  EXPECT_EQ(key.error().code, ErrorCode::kInvalidValue) << key.error().message.substr(0, 300);
  EXPECT_EQ(key.error().field, "model") << key.error().message.substr(0, 300);
  EXPECT_NE(key.error().message.find("too long"), std::string::npos) << key.error().message;
}

// The estimate's runtime overheads are the site's setting: no face of an annotation switches
// them off (a job refused on 20 GPUs was accepted with --llm-spec=runtime_overhead=false).
TEST(Annotation, SiteSettingsAreNotTheSubmittersToLower) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> env_cases = {
      {{spank_env_name("model") + "=llama3-70b", spank_env_name("spec") + "=runtime_overhead=false"},
       "--llm-spec=runtime_overhead=false"},
      {{spank_env_name("model") + "=llama3-70b", "TRAINFIT_CONFIG=runtime_overhead=0"},  // a forged file field
       "--llm-spec=runtime_overhead=false"}};
  for (const auto& [env, says] : env_cases) {
    Annotation a;
    const Error e = failure_of(annotation_from_spank_env(env, &a));
    EXPECT_EQ(e.field, "runtime_overhead") << e.message;
    EXPECT_NE(e.message.find(says), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("accepted in an annotation: true"), std::string::npos) << e.message;
  }
  Annotation comment;
  const Error e = failure_of(annotation_from_comment("trainfit: model=llama3-70b runtime_overhead=false", &comment));
  EXPECT_EQ(e.field, "runtime_overhead");
  EXPECT_EQ(e.message.rfind("runtime_overhead=false", 0), 0u) << e.message;  // the comment's own syntax
  Annotation site_value;  // the site's own value is no change
  EXPECT_TRUE(annotation_from_comment("trainfit: model=llama3-70b runtime_overhead=true", &site_value).ok());
  Annotation job;  // through job_submit's reader too
  const std::string forged = "trainfit: model=llama3-70b runtime-overhead=false";
  EXPECT_FALSE(annotation_of_job({}, &forged, &job).ok());
}

}  // namespace
}  // namespace trainfit::admission
