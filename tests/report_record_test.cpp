// `trainfit report`: one audit line -> a Record, or an Error naming what is wrong with it.
#include <gtest/gtest.h>

#include <string>

#include "report/record.h"

namespace trainfit::cli::report {
namespace {

const std::string kLine =
    R"({"time":"2026-12-02T08:00:00Z","event":"submit","user":"alice","account":"ml","partition":"gpu",)"
    R"("annotation":"seq_length=8192 model=llama3-70b","gpus_requested":8,"gpu":"h100","action":"reject",)"
    R"("reason":"too_few_gpus","min_gpus_to_fit":22,"resized_to":null,"time_limit_min":120,)"
    R"("advice":[{"field":"recompute","value":"full"}]})";

// kLine with one member's text replaced.
std::string with(const std::string& member, const std::string& replacement) {
  std::string line = kLine;
  const size_t at = line.find(member);
  EXPECT_NE(at, std::string::npos) << member;
  return line.replace(at, member.size(), replacement);
}

TEST(ReportRecord, ReadsEveryField) {
  const Result<Record> r = parse_record(kLine);
  ASSERT_TRUE(r.ok()) << r.error().message;
  int64_t time = 0;
  ASSERT_TRUE(parse_utc("2026-12-02T08:00:00Z", false, &time));
  EXPECT_EQ(r->time, time);
  EXPECT_EQ(r->user, "alice");
  EXPECT_EQ(r->account, "ml");
  EXPECT_EQ(r->partition, "gpu");
  EXPECT_EQ(r->gpu, "h100");
  EXPECT_EQ(r->qos, "");  // absent
  EXPECT_EQ(r->action, Action::kReject);
  EXPECT_TRUE(is_oom(*r));
  EXPECT_EQ(r->gpus_requested, 8);
  EXPECT_EQ(r->min_gpus.value_or(-1), 22);
  EXPECT_FALSE(r->resized_to.has_value());  // null
  EXPECT_EQ(r->time_limit_min.value_or(-1), 120);
  ASSERT_EQ(r->advice.size(), 1u);
  EXPECT_EQ(r->advice[0].field, "recompute");
  EXPECT_EQ(r->advice[0].value, "full");
  EXPECT_EQ(r->model, "llama3-70b");  // from the annotation, the rest canonical
  EXPECT_NE(r->config.find("8192"), std::string::npos) << r->config;
}

TEST(ReportRecord, HostRamFiguresAreReadAndOptional) {
  EXPECT_FALSE(parse_record(kLine)->host_ram_per_node_gb.has_value());  // an older plugin's line
  const std::string limit = "\"time_limit_min\":120";
  const Result<Record> r = parse_record(with(limit, limit + ",\"host_ram_per_node_gb\":131.25,\"mem_per_node_gb\":null"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(r->host_ram_per_node_gb.value_or(-1), 131.25);
  EXPECT_FALSE(r->mem_per_node_gb.has_value());
  const Result<Record> bad = parse_record(with(limit, limit + ",\"mem_per_node_gb\":\"64G\""));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().field, "mem_per_node_gb");
}

TEST(ReportRecord, ErrorsNameTheirField) {
  struct Case {
    std::string line;
    ErrorCode code;
    std::string field, message;
  };
  const Case cases[] = {
      {"{\"time\":", ErrorCode::kMalformed, "", "not JSON"},
      {"[1, 2]", ErrorCode::kMalformed, "", "not a JSON object"},
      {with(R"("action":"reject",)", ""), ErrorCode::kMissing, "action", "no field 'action'"},
      {with(R"("time":"2026-12-02T08:00:00Z",)", ""), ErrorCode::kMissing, "time", "no field 'time'"},
      {with("2026-12-02T08:00:00Z", "2026-12-02"), ErrorCode::kInvalidValue, "time",
       "time '2026-12-02' is not YYYY-MM-DDTHH:MM:SSZ"},
      {with(R"("action":"reject")", R"("action":"refuse")"), ErrorCode::kInvalidValue, "action",
       "action 'refuse' is not one the audit log writes"},
      {with(R"("user":"alice")", R"("user":7)"), ErrorCode::kInvalidValue, "user", "field 'user' is not a string"},
      {with(R"("gpus_requested":8)", R"("gpus_requested":-8)"), ErrorCode::kInvalidValue, "gpus_requested",
       "field 'gpus_requested' is not a count"},
      {with(R"("advice":[{"field":"recompute","value":"full"}])", R"("advice":"recompute")"),
       ErrorCode::kInvalidValue, "advice", "field 'advice' is not a list"},
  };
  for (const Case& c : cases) {
    const Result<Record> r = parse_record(c.line);
    ASSERT_FALSE(r.ok()) << c.line;
    EXPECT_EQ(r.error().code, c.code) << c.line;
    EXPECT_EQ(r.error().field, c.field) << c.line;
    EXPECT_EQ(r.error().message, c.message) << c.line;
  }
}

// Several problems in one line: time and action come first, then the fields in the audit's
// order; the first one met is the one reported.
TEST(ReportRecord, FirstProblemWins) {
  const std::string bad_user_and_count = R"({"time":"2026-12-02T08:00:00Z","action":"accept","user":7,"gpus_requested":-1})";
  EXPECT_EQ(parse_record(bad_user_and_count).error().field, "user");
  const std::string bad_user_no_action = R"({"time":"2026-12-02T08:00:00Z","user":7})";
  EXPECT_EQ(parse_record(bad_user_no_action).error().field, "action");
}

}  // namespace
}  // namespace trainfit::cli::report
