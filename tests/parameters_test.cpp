// Parameter counts: the catalog's exact published counts, and HF config.json fixtures.
#include <cctype>
#include <fstream>
#include <sstream>

#include "result_matchers.h"
#include "test_util.h"
#include "trainfit/catalog.h"

namespace trainfit {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(TRAINFIT_FIXTURES) + "/hf/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Catalog, LoadsEveryModelAndGpu) {
  EXPECT_GE(model_catalog().size(), 17u);
  EXPECT_GE(gpu_catalog().size(), 9u);
}

TEST(Catalog, PublishedParameterCountsAreExact) {
  int checked = 0;
  for (const ModelPreset& model : model_catalog()) {
    if (model.expected_params == 0) continue;
    EXPECT_EQ(count_parameters(model.geometry).total, model.expected_params) << model.name;
    ++checked;
  }
  EXPECT_GE(checked, 7);
}

TEST(Parameters, Llama3Counts) {
  // The models' safetensors totals on Hugging Face (tests/fixtures/hf/README.md).
  EXPECT_EQ(count_parameters((*find_model("llama3-8b"))->geometry).total, 8030261248.0);
  EXPECT_EQ(count_parameters((*find_model("llama3-70b"))->geometry).total, 70553706496.0);
  EXPECT_EQ(count_parameters((*find_model("llama3-405b"))->geometry).total, 405853388800.0);
  EXPECT_EQ(count_parameters((*find_model("llama3-8b"))->geometry).per_layer, 218112000.0);
  EXPECT_EQ(count_parameters((*find_model("llama3-70b"))->geometry).per_layer, 855654400.0);
  EXPECT_EQ(count_parameters((*find_model("llama3-405b"))->geometry).per_layer, 3187703808.0);
}

struct HfCase {
  const char* file;
  double params;
};

class HfConfig : public ::testing::TestWithParam<HfCase> {};

TEST_P(HfConfig, CountsMatchThePublishedNumber) {
  Result<Geometry> geometry = geometry_from_hf_config(fixture(GetParam().file));
  ASSERT_TRUE(geometry.ok()) << geometry.error().message;
  EXPECT_EQ(count_parameters(geometry.value()).total, GetParam().params) << GetParam().file;
}

// Counts from tests/fixtures/hf/README.md.
INSTANTIATE_TEST_SUITE_P(Fixtures, HfConfig,
                         ::testing::Values(HfCase{"llama-3-8b.config.json", 8030261248.0},
                                           HfCase{"llama-3-70b.config.json", 70553706496.0},
                                           HfCase{"gpt2.config.json", 124439808.0},
                                           HfCase{"qwen2.5-7b.config.json", 7615616512.0},
                                           HfCase{"mixtral-8x7b.config.json", 46702792704.0}),
                         [](const ::testing::TestParamInfo<HfCase>& param_info) {
                           return testing::fixture_test_name(param_info.param.file);
                         });

TEST(HfConfigErrors, ReportsWhatIsWrong) {
  // All of the field hf_config and kInvalidValue (even the text that is not JSON); the
  // message says where (the byte), which model_type, which key.
  for (const auto& [text, says] : {std::make_pair("{\"model_type\": \"llama\"", "malformed JSON at byte"),
                                   std::make_pair("{\"model_type\": \"t5\"}", "model_type 't5'"),
                                   std::make_pair("{\"model_type\":\"llama\",\"hidden_size\":-4}", "'hidden_size'"),
                                   std::make_pair("[]", "top level must be a JSON object")}) {
    const Error e = testing::failure_of(geometry_from_hf_config(text));
    EXPECT_EQ(e.code, ErrorCode::kInvalidValue) << text << ": " << e.message;
    EXPECT_EQ(e.field, "hf_config") << text << ": " << e.message;
    EXPECT_NE(e.message.find(says), std::string::npos) << text << ": " << e.message;
  }
}

TEST(Parameters, ModelParamsOverrideScalesModelStates) {
  const Breakdown b = testing::estimate_of("model_params_b=7.5,num_layers=32,hidden_dim=4096,precision_bits=16");
  EXPECT_DOUBLE_EQ(b.params.total, 7.5e9);
  EXPECT_NEAR(b.stage.states.total(), 16 * 7.5e9, 1.0);
}

}  // namespace
}  // namespace trainfit
