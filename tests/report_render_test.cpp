// `trainfit report`'s words for people (table and HTML), from reports the tests build: each
// expected text is worked out from the records and times given here.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/aggregate.h"
#include "report/record.h"
#include "report/render.h"
#include "trainfit/util/counted.h"

namespace trainfit::cli::report {
namespace {

int64_t at(const char* when) {
  int64_t seconds = 0;
  EXPECT_TRUE(parse_utc(when, true, &seconds)) << when;
  return seconds;
}

Record oom(Action action, int64_t gpus, std::optional<int64_t> time_limit_min) {
  Record r;
  r.action = action;
  r.user = "alice";
  r.model = "llama3-70b";
  r.reason = oom_reason();
  r.gpus_requested = gpus;
  r.min_gpus = gpus * 2;
  r.time_limit_min = time_limit_min;
  return r;
}

Report aggregate(const std::vector<Record>& records) {
  Report report;
  Aggregator aggregator(&report);
  for (const Record& r : records) aggregator.add(r);
  aggregator.finish(10);
  report.input.records = static_cast<int64_t>(records.size());
  return report;
}

std::string table(const Report& r) {
  std::ostringstream out;
  render_table(r, out);
  return out.str();
}

std::string html(const Report& r) {
  std::ostringstream out;
  render_html(r, out);
  return out.str();
}

TEST(Text, CountedSaysOneInTheSingular) {
  EXPECT_EQ(counted(1, "job"), "1 job");
  EXPECT_EQ(counted(2, "job"), "2 jobs");
  EXPECT_EQ(counted(0, "sequence"), "0 sequences");
  EXPECT_EQ(counted(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(counted(3, "entry", "entries"), "3 entries");
}

TEST(ReportRender, PeriodAsPeopleReadIt) {
  Report r = aggregate({oom(Action::kReject, 8, 60)});
  r.since = at("2026-12-01T08:00");
  r.until = at("2026-12-04T17:12");
  const std::string want = "2026-12-01 08:00 \u2013 2026-12-04 17:12 UTC (3 days)";
  EXPECT_EQ(table(r).substr(0, table(r).find('\n')), "trainfit audit report: " + want);
  EXPECT_NE(html(r).find("Period: " + want + "</p>"), std::string::npos);
  EXPECT_EQ(table(r).find(" .. "), std::string::npos);
}

TEST(ReportRender, OpenPeriodIsFirstToLastRecord) {
  Report r = aggregate({oom(Action::kReject, 8, 60)});
  r.input.first_time = at("2026-12-02T10:00:00Z");
  r.input.last_time = at("2026-12-02T19:00:00Z");
  EXPECT_EQ(period_text(r), "2026-12-02 10:00 \u2013 2026-12-02 19:00 UTC (9 hours, first to last record)");
  r.since = at("2026-12-02T09:30");
  EXPECT_EQ(period_text(r), "2026-12-02 09:30 \u2013 2026-12-02 19:00 UTC (10 hours, to the last record)");
}

TEST(ReportRender, OneJobIsSingular) {
  const std::string t = table(aggregate({oom(Action::kReject, 8, 60), oom(Action::kWarn, 1, {})}));
  EXPECT_NE(t.find("rejected: 1 job asking for 8 GPUs"), std::string::npos) << t;
  EXPECT_NE(t.find("GPU-hours saved: 8.0 (1 job with a time limit)"), std::string::npos) << t;
  EXPECT_NE(t.find("ran anyway: 1 job asking for 1 GPU;"), std::string::npos) << t;
  EXPECT_NE(t.find("GPU-hours at risk: unknown (no job gave a time limit)"), std::string::npos) << t;
  EXPECT_EQ(t.find("1 jobs"), std::string::npos) << t;
}

TEST(ReportRender, ZeroIsNotAnAlarm) {
  const std::string page = html(aggregate({oom(Action::kReject, 8, {})}));  // no time limit: no hours
  EXPECT_NE(page.find("<div class=\"card\"><b>0</b><span>GPU-hours saved</span>"), std::string::npos) << page;
  EXPECT_NE(page.find("<div class=\"card\"><b>0</b><span>warned</span>"), std::string::npos) << page;
  EXPECT_NE(page.find("<div class=\"card reject\"><b>1</b><span>rejected</span>"), std::string::npos) << page;
}

TEST(ReportRender, EmptyLogSaysSo) {
  Report r;
  r.input.files = {"trainfit-audit.jsonl"};
  const std::string t = table(r);
  EXPECT_NE(t.find("trainfit audit report: no records\n"), std::string::npos) << t;
  EXPECT_NE(t.find("read 1 file, 0 lines: 0 records in the period"), std::string::npos) << t;
  EXPECT_NE(t.find("no decisions in this period"), std::string::npos) << t;
  EXPECT_EQ(t.find("by user"), std::string::npos) << t;
}

}  // namespace
}  // namespace trainfit::cli::report
