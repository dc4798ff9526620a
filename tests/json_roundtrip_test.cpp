// What the client (estimate --endpoint) relies on: a request survives request_to_json ->
// request_from_json, and a response read back from its JSON gives the same JSON again,
// but for the sums the reader rebuilds from rounded parts (within the rounding).
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "trainfit/json.h"

namespace trainfit {
namespace {

using nlohmann::json;

const char* const kRequests[] = {
    "model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3",
    "model_params_b=70.553706,num_gpus=16,gpu_memory_gb=79.6,micro_batch=4,seq_length=4096,num_layers=80,hidden_dim=8192",
    "model=llama3-8b,num_gpus=8,framework=torchtitan,recompute=op,compile=true",
    "model=llama3-8b,num_gpus=4,adapter=qlora,lora_rank=16,lora_targets=all-linear,lora_dropout=0.05",
    "model=mixtral-8x7b,num_gpus=32,expert_parallel=8,tensor_parallel=2,pipeline_parallel=2,sequence_parallel=true",
};

TEST(RequestJson, RoundTripsExactly) {
  for (const char* spec : kRequests) {
    Request request;
    ASSERT_TRUE(apply_key_values(request, spec).ok()) << spec;
    const std::string text = request_to_json(request);
    Result<Request> back = request_from_json(text);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(request_to_json(back.value()), text) << spec;
    EXPECT_EQ(to_key_values(back.value()), to_key_values(request)) << spec;
  }
}

TEST(RequestJson, KeepsEveryDigit) {
  Request request;
  request.model_params_b = 70.553706123456789;
  EXPECT_EQ(request_from_json(request_to_json(request))->model_params_b, request.model_params_b);
}

// The writer prints a value on the 1e-4 grid (every rounded GiB figure) by its own digit
// path, promising nlohmann's bytes: nlohmann's dump of the same double is the oracle, at
// the edges (digit-count changes, whole numbers, one trailing digit) and 200,000 values
// spread over the whole range (0, 2e4).
TEST(RequestJson, GridNumbersAreNlohmannsBytes) {
  std::vector<int64_t> scaled = {1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 10001, 10010, 10100, 11000, 99999,
                                 100000, 100001, 999999, 1000000, 1234567, 9999999, 10000000, 99999999,
                                 100000000, 123456789, 199999999};
  uint64_t state = 0x9E3779B97F4A7C15;  // splitmix64: a fixed, reproducible spread
  for (int i = 0; i < 200000; ++i) {
    state += 0x9E3779B97F4A7C15;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
    z ^= z >> 31;
    scaled.push_back(1 + static_cast<int64_t>(z % 199999999));
  }
  for (const int64_t m : scaled) {
    Request request;
    request.gpu_memory_gb = static_cast<double>(m) / 1e4;
    const std::string text = request_to_json(request);
    ASSERT_EQ(text, json({{"gpu_memory_gb", *request.gpu_memory_gb}}).dump()) << m;
  }
}

// Members whose value is a sum or product of other members: rebuilt from rounded parts.
bool rebuilt_from_parts(const std::string& path) {
  for (const char* key : {"/model_states_per_gpu_gb", "/activations_per_gpu_gb", "/optimizer_per_gpu_gb",
                          "/breakdown/model_states/total_gb", "/breakdown/activations/total_gb",
                          "/profile/model_state_gb", "/profile/activation_gb", "/breakdown/bytes/model_states",
                          "/breakdown/bytes/activations", "/breakdown/host_offload/per_node_gb", "/aggregate_cluster_gb"}) {
    if (path == key) return true;
  }
  return false;
}

void expect_same(const json& want, const json& got, const std::string& path) {
  if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << path;
    ASSERT_EQ(want.size(), got.size()) << path;
    for (auto it = want.begin(); it != want.end(); ++it) expect_same(it.value(), got.at(it.key()), path + "/" + it.key());
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size()) << path;
    for (size_t i = 0; i < want.size(); ++i) expect_same(want[i], got[i], path + "/" + std::to_string(i));
  } else if (rebuilt_from_parts(path)) {
    EXPECT_NEAR(want.get<double>(), got.get<double>(), want.is_number_integer() ? 4e5 : 1e-3) << path;
  } else {
    EXPECT_EQ(want, got) << path;
  }
}

TEST(ResponseJson, ReadsBackToTheSameJson) {
  for (const char* spec : kRequests) {
    Request request;
    ASSERT_TRUE(apply_key_values(request, spec).ok()) << spec;
    Result<Response> local = respond(request);
    ASSERT_TRUE(local.ok()) << local.error().message;
    const std::string text = response_to_json(local.value(), {"node-a", 1.25}, 2);
    ServingInfo serving;
    Result<Response> read = response_from_json(text, &serving);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(serving.serving_node, "node-a");
    EXPECT_EQ(serving.compute_ms, 1.25);
    EXPECT_EQ(verdict(read.value()), verdict(local.value())) << spec;
    expect_same(json::parse(text), json::parse(response_to_json(read.value(), serving, 2)), "");
  }
}

// An answer from a service whose profile points carry no range: each point's range is its
// own figure (empty), not the top level's nor this build's factors.
TEST(ResponseJson, ProfilePointsWithoutARangeTakeTheirFigure) {
  Request request;
  ASSERT_TRUE(apply_key_values(request, kRequests[0]).ok());
  Result<Response> local = respond(request);
  ASSERT_TRUE(local.ok()) << local.error().message;
  json old = json::parse(response_to_json(local.value(), {"node-a", 1.0}, 0));
  for (const char* profile : {"mem_vs_gpus", "mem_vs_seq"}) {
    for (json& point : old["profile"][profile]) {
      ASSERT_TRUE(point.contains("likely_low_gb") && point.contains("likely_high_gb")) << profile;
      point.erase("likely_low_gb");
      point.erase("likely_high_gb");
    }
  }
  Result<Response> read = response_from_json(old.dump());
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->mem_vs_gpus.size(), old["profile"]["mem_vs_gpus"].size());
  for (size_t i = 0; i < read->mem_vs_gpus.size(); ++i) {
    const double figure = old["profile"]["mem_vs_gpus"][i]["per_gpu_gb"].get<double>();
    EXPECT_EQ(read->mem_vs_gpus[i].likely_low_gb, figure) << i;
    EXPECT_EQ(read->mem_vs_gpus[i].likely_high_gb, figure) << i;
  }
  for (size_t i = 0; i < read->mem_vs_seq.size(); ++i) {
    const double figure = old["profile"]["mem_vs_seq"][i]["per_gpu_gb"].get<double>();
    EXPECT_EQ(read->mem_vs_seq[i].likely_low_gb, figure) << i;
    EXPECT_EQ(read->mem_vs_seq[i].likely_high_gb, figure) << i;
  }
}

TEST(ResponseJson, RefusesWhatIsNotAResponse) {
  for (const char* text : {"", "[]", "{}", "{\"fits\":true}", "not json"}) {
    Result<Response> read = response_from_json(text);
    ASSERT_FALSE(read.ok()) << text;
    EXPECT_EQ(read.error().code, ErrorCode::kMalformed) << text << ": " << read.error().message;
    EXPECT_EQ(read.error().field, "") << text << ": " << read.error().message;  // the answer as a whole
  }
}

TEST(ErrorJson, ReadsBackTheError) {
  const Error error =
      make_error(ErrorCode::kInvalidValue, "seq_length", "seq_length='abc' is not valid; accepted: integer >= 1");
  std::optional<Error> back = error_from_json(error_to_json(error));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->code, error.code);
  EXPECT_EQ(back->field, error.field);
  EXPECT_EQ(back->message, error.message);
  EXPECT_FALSE(error_from_json("{\"fits\":true}").has_value());
}

}  // namespace
}  // namespace trainfit
