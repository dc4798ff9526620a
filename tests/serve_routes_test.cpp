// The service's routes called directly, without a socket: what each path answers, and the
// HTTP errors (docs/service.md, "Errors").
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "render.h"
#include "serve/routes.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"

namespace trainfit::cli {
namespace {

using nlohmann::json;

constexpr const char* kNode = "node-a";
constexpr std::size_t kMaxBody = 4096;
constexpr int kTimeoutS = 7;

std::string seed_body() {
  std::ifstream in(std::string(TRAINFIT_FIXTURES) + "/seed_request.json");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class RoutesTest : public ::testing::Test {
 protected:
  HttpReply call(std::string_view method, std::string_view path, std::string_view body = "",
                 std::string_view content_type = "application/json") const {
    return routes.handle(HttpRequest{method, path, content_type, body, ""});
  }
  // The "error" object of an error reply.
  static json error_of(const HttpReply& reply) { return json::parse(reply.body).at("error"); }

  Metrics metrics;
  Routes routes{kNode, kMaxBody, kTimeoutS, metrics};
};

TEST_F(RoutesTest, EstimateAnswersWhatTheLibraryComputes) {
  const std::string body = seed_body();
  const HttpReply reply = call("POST", "/edge/training", body);
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_STREQ(reply.content_type, "application/json");
  const json got = json::parse(reply.body);
  const json seed = json::parse(body);
  EXPECT_EQ(got.at("serving_node"), kNode);
  EXPECT_EQ(got.at("zero_stage"), seed.at("zero_stage"));
  EXPECT_EQ(got.at("gpu_capacity_gb"), seed.at("gpu_memory_gb"));
  // Every member as `trainfit estimate --format json` writes it, compute_ms aside (a time).
  const Result<Request> request = request_from_json(body);
  ASSERT_TRUE(request.ok()) << request.error().message;
  const Result<Response> response = respond(request.value(), ResponseOptions{});
  ASSERT_TRUE(response.ok()) << response.error().message;
  json want = json::parse(response_to_json(response.value(), {kNode, 0}));
  json compared = got;
  compared.erase("compute_ms");
  want.erase("compute_ms");
  EXPECT_EQ(compared, want);
}

TEST_F(RoutesTest, EveryEstimateAliasAnswersAlike) {
  const std::string body = seed_body();
  const json training = json::parse(call("POST", "/edge/training", body).body);
  for (const char* path : {"/edge/train", "/edge/finetune", "/edge/fsdp", "/edge/zero"}) {
    const HttpReply reply = call("POST", path, body);
    ASSERT_EQ(reply.status, 200) << path;
    EXPECT_EQ(json::parse(reply.body).at("per_gpu_total_gb"), training.at("per_gpu_total_gb")) << path;
  }
}

TEST_F(RoutesTest, BadFieldIs400NamingIt) {
  const HttpReply reply = call("POST", "/edge/training", R"({"model":"llama3-8b","seq_length":"abc"})");
  EXPECT_EQ(reply.status, 400);
  const json error = error_of(reply);
  EXPECT_EQ(error.at("code"), "invalid_value");
  EXPECT_EQ(error.at("field"), "seq_length");
  EXPECT_NE(error.at("message").get<std::string>().find("abc"), std::string::npos) << reply.body;
}

TEST_F(RoutesTest, BodyThatIsNotJsonIs400Malformed) {
  const HttpReply reply = call("POST", "/edge/training", "{\"model\":");
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(error_of(reply).at("code"), "malformed");
}

TEST_F(RoutesTest, OtherContentTypeIs415) {
  const HttpReply reply = call("POST", "/edge/training", seed_body(), "text/plain");
  EXPECT_EQ(reply.status, 415);
  EXPECT_EQ(error_of(reply).at("field"), "Content-Type");
  EXPECT_NE(error_of(reply).at("message").get<std::string>().find("text/plain"), std::string::npos);
}

// curl -d '{...}' sends its default type, application/x-www-form-urlencoded: the JSON body is
// answered; a form's key=value text is a 400 naming the body as malformed.
TEST_F(RoutesTest, CurlsDefaultTypeWithAJsonBodyIsAnswered) {
  EXPECT_EQ(call("POST", "/edge/training", seed_body(), "application/x-www-form-urlencoded").status, 200);
  const HttpReply form = call("POST", "/edge/training", "model=llama3-8b&num_gpus=8", "application/x-www-form-urlencoded");
  EXPECT_EQ(form.status, 400);
  EXPECT_EQ(error_of(form).at("code"), "malformed");
}

TEST_F(RoutesTest, UnknownPathIs404NamingIt) {
  const HttpReply reply = call("GET", "/no/such/path");
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(error_of(reply).at("code"), "not_found");
  EXPECT_NE(error_of(reply).at("message").get<std::string>().find("'/no/such/path'"), std::string::npos);
}

TEST_F(RoutesTest, WrongMethodIs405WithAllow) {
  const HttpReply get_estimate = call("GET", "/edge/training");
  EXPECT_EQ(get_estimate.status, 405);
  ASSERT_NE(get_estimate.allow, nullptr);
  EXPECT_STREQ(get_estimate.allow, "POST");
  EXPECT_EQ(error_of(get_estimate).at("code"), "method_not_allowed");

  const HttpReply post_health = call("POST", "/healthz");
  EXPECT_EQ(post_health.status, 405);
  ASSERT_NE(post_health.allow, nullptr);
  EXPECT_STREQ(post_health.allow, "GET, HEAD");
}

TEST_F(RoutesTest, HealthzAndHead) {
  for (const char* method : {"GET", "HEAD"}) {
    const HttpReply reply = call(method, "/healthz");
    EXPECT_EQ(reply.status, 200) << method;
    EXPECT_EQ(reply.body, "ok\n") << method;
    EXPECT_STREQ(reply.content_type, "text/plain");
  }
}

TEST_F(RoutesTest, MetricsAreTheRecordedOnes) {
  metrics.observe("/healthz", 200, 0.001);
  const HttpReply reply = call("GET", "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, metrics.render());
  EXPECT_NE(reply.body.find("trainfit_http_requests_total{path=\"/healthz\",status=\"200\"} 1\n"), std::string::npos);
}

TEST_F(RoutesTest, CatalogsAreTheCliJson) {
  const std::pair<const char*, void (*)(std::ostream&, bool)> catalogs[] = {
      {"/v1/models", print_models}, {"/v1/gpus", print_gpus}, {"/v1/fields", print_fields}};
  for (const auto& [path, print] : catalogs) {
    std::ostringstream cli;
    print(cli, true);
    const HttpReply reply = call("GET", path);
    EXPECT_EQ(reply.status, 200) << path;
    EXPECT_EQ(reply.body, cli.str()) << path;
  }
}

TEST_F(RoutesTest, HttpLevelErrorsNameTheirLimits) {
  const HttpReply too_large = routes.body_too_large();
  EXPECT_EQ(too_large.status, 413);
  EXPECT_NE(too_large.body.find(std::to_string(kMaxBody) + " bytes"), std::string::npos) << too_large.body;

  const HttpReply late = routes.timed_out(true, 10, "100");
  EXPECT_EQ(late.status, 408);
  EXPECT_NE(late.body.find("after 10 of 100 bytes"), std::string::npos) << late.body;
  EXPECT_NE(late.body.find(std::to_string(kTimeoutS) + " s"), std::string::npos) << late.body;

  EXPECT_EQ(routes.uri_too_long().status, 414);
  EXPECT_EQ(routes.head_too_large(16384).status, 431);
  EXPECT_EQ(error_of(routes.malformed("bad line")).at("message"), "malformed HTTP request: bad line");
}

TEST(RouteLabel, KnownPathsAreThemselvesOthersOne) {
  for (const char* path : {"/edge/training", "/edge/zero", "/healthz", "/metrics", "/v1/models", "/v1/plot.svg"}) {
    EXPECT_STREQ(route_label(path), path);
  }
  EXPECT_STREQ(route_label("/edge/training/x"), "other");
  EXPECT_STREQ(route_label("/anything"), "other");
}

TEST(JsonMediaType, JsonAndItsSuffixes) {
  EXPECT_TRUE(is_json_media_type("application/json"));
  EXPECT_TRUE(is_json_media_type("Application/JSON ; charset=utf-8"));
  EXPECT_TRUE(is_json_media_type("application/problem+json"));
  EXPECT_FALSE(is_json_media_type("text/json"));
  EXPECT_FALSE(is_json_media_type("application/jsonl"));
}

}  // namespace
}  // namespace trainfit::cli
