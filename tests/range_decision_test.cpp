// The gate decides on the likely range (docs/slurm.md, "Deciding on the likely range"): a job
// whose usable HBM lies above the range's high end is accepted, between the ends warned (or, under
// refuse_when = likely, refused past the point figure), below the low end refused; min_gpus_to_fit
// is found for the bound resize_to names. The thresholds come from the CLI's answer for the same
// request (respond(), its point figure and range), and the usable HBM is placed between them with
// the partition's headroom: the expected verdict follows from where it lies, not from decide().
#include <cmath>
#include <string>

#include "admission_helpers.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

// 8B full fine-tuning, ZeRO-3 on 4 H100s: a sharded class whose range is wide enough to place
// the usable HBM inside it.
constexpr const char* kJob = "model=llama3-8b seq=4096 zero=3 recompute=full";
constexpr const char* kGres = "gres:gpu:h100:4";

struct Figures {
  double point = 0, low = 0, high = 0;  // GiB
};

Figures cli_figures() {
  Request request;
  EXPECT_TRUE(apply_key_values(request, std::string(kJob) + " gpu=h100 num_gpus=4 gpus_per_node=8", ' ').ok());
  Result<Response> r = respond(request, {false, false});
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return {};
  return {r->breakdown.per_gpu_total / kGiB, r->breakdown.likely_low / kGiB, r->breakdown.likely_high / kGiB};
}

double h100_gib() { return gpu_in_catalog("h100")->capacity_bytes / kGiB; }

// A policy under which the H100's usable HBM is `usable` GiB.
Policy policy_with_usable(double usable, const std::string& extra) {
  const double headroom = 1.0 - usable / h100_gib();
  EXPECT_GE(headroom, 0.0);
  EXPECT_LT(headroom, 0.9);
  char line[64];
  std::snprintf(line, sizeof line, "headroom = %.9f\n", headroom);
  return parse_policy(std::string(line) + "gpus_per_node = 8\n" + extra).value();
}

Decision decide_at(double usable, const std::string& extra = "") {
  return decide(policy_with_usable(usable, extra), job_of(kJob, kGres));
}

TEST(RangeDecision, TheJobsRangeIsWideEnoughToTest) {
  const Figures f = cli_figures();
  ASSERT_LT(f.low, f.point);
  ASSERT_LT(f.point, f.high);
  ASSERT_LT(f.high * 1.02, h100_gib()) << "the usable HBM must be placeable above the high end";
  ASSERT_GT(f.low * 0.98, h100_gib() * 0.1 + 0.5) << "and below the low end (headroom < 0.9)";
}

TEST(RangeDecision, AboveTheHighEndIsAccepted) {
  const Figures f = cli_figures();
  for (const char* when : {"refuse_when = certain", "refuse_when = likely"}) {
    const Decision d = decide_at(f.high * 1.02, when);
    EXPECT_EQ(d.verdict, Verdict::kAccept) << when << ": " << d.message;
    EXPECT_TRUE(d.message.empty()) << d.message;
  }
}

TEST(RangeDecision, BetweenThePointAndTheHighEndIsWarnedWithTheRange) {
  const Figures f = cli_figures();
  for (const char* when : {"refuse_when = certain", "refuse_when = likely"}) {
    const Decision d = decide_at((f.point + f.high) / 2, when);
    EXPECT_EQ(d.verdict, Verdict::kWarn) << when << ": " << d.message;
    EXPECT_EQ(d.reason, Reason::kUncertainFit);
    EXPECT_NE(d.message.find("warning: may not fit: llama3-8b at seq 4096 needs "), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("(likely " + format_gib(f.low * kGiB) + " to " + format_gib(f.high * kGiB) + ")"),
              std::string::npos)
        << d.message;
    EXPECT_NEAR(d.likely_low_gb, f.low, 1e-9);
    EXPECT_NEAR(d.likely_high_gb, f.high, 1e-9);
    EXPECT_STREQ(d.min_gpus_bound, "likely_high");
  }
}

TEST(RangeDecision, BetweenTheLowEndAndThePointDependsOnRefuseWhen) {
  const Figures f = cli_figures();
  const double usable = (f.low + f.point) / 2;
  const Decision certain = decide_at(usable);  // the default
  EXPECT_EQ(certain.verdict, Verdict::kWarn) << certain.message;
  EXPECT_EQ(certain.reason, Reason::kUncertainFit);
  const Decision likely = decide_at(usable, "refuse_when = likely");
  EXPECT_EQ(likely.verdict, Verdict::kReject) << likely.message;
  EXPECT_EQ(likely.reason, Reason::kTooFewGpus);
  EXPECT_EQ(likely.message.find("even at its likely low end"), std::string::npos) << likely.message;
  const Decision warn_only = decide_at(usable, "refuse_when = likely\naction = warn");
  EXPECT_EQ(warn_only.verdict, Verdict::kWarn);
  EXPECT_EQ(warn_only.reason, Reason::kTooFewGpus);
}

TEST(RangeDecision, BelowTheLowEndIsRefusedEitherWay) {
  const Figures f = cli_figures();
  for (const char* when : {"refuse_when = certain", "refuse_when = likely"}) {
    const Decision d = decide_at(f.low * 0.98, when);
    EXPECT_EQ(d.verdict, Verdict::kReject) << when << ": " << d.message;
    EXPECT_EQ(d.reason, Reason::kTooFewGpus);
  }
  const Decision certain = decide_at(f.low * 0.98);
  EXPECT_NE(certain.message.find("past the usable HBM even at its likely low end"), std::string::npos) << certain.message;
}

// min_gpus_to_fit for the bound resize_to names, as the CLI finds it with the same usable HBM
// (gpu_memory_gb) and fit_bound; a resize grants it.
TEST(RangeDecision, ResizeToNamesTheBoundItSearched) {
  const Figures f = cli_figures();
  const double usable = f.low * 0.98;
  char memory[64];
  std::snprintf(memory, sizeof memory, " gpu_memory_gb=%.9f", usable);
  const std::string spec = std::string(kJob) + memory + " gpus_per_node=8 num_gpus=4";
  const int64_t high = cli_min_gpus(spec + " fit_bound=likely_high");
  const int64_t point = cli_min_gpus(spec + " fit_bound=point");
  ASSERT_GT(high, 0);
  ASSERT_GT(point, 0);
  ASSERT_GE(high, point);
  const Decision to_high = decide_at(usable, "action = resize");
  EXPECT_EQ(to_high.verdict, Verdict::kResize) << to_high.message;
  EXPECT_EQ(to_high.resized_to, high);
  EXPECT_STREQ(to_high.min_gpus_bound, "likely_high");
  const Decision to_point = decide_at(usable, "action = resize\nresize_to = point");
  EXPECT_EQ(to_point.verdict, Verdict::kResize) << to_point.message;
  EXPECT_EQ(to_point.resized_to, point);
  EXPECT_STREQ(to_point.min_gpus_bound, "point");
  const Decision refused = decide_at(usable);
  EXPECT_EQ(refused.min_gpus, high);
  EXPECT_NE(refused.message.find("min_gpus_to_fit=" + std::to_string(high)), std::string::npos) << refused.message;
  EXPECT_NE(refused.message.find("for the likely high end"), std::string::npos) << refused.message;
}

// Brute force: the fewest GPUs (any count up to one 8-GPU node, whole nodes beyond: the node rule)
// at which the likely high end fits, from the point answers' likely_high at each count.
TEST(RangeDecision, TheHighBoundsCountIsTheFewestWhereTheHighEndFits) {
  const Figures f = cli_figures();
  const double usable = f.low * 0.98;
  int64_t brute = 0;
  for (int64_t n = 1; n <= 1024 && brute == 0; n += n < 8 ? 1 : 8) {
    Request request;
    char memory[64];
    std::snprintf(memory, sizeof memory, " gpu_memory_gb=%.9f", usable);
    ASSERT_TRUE(apply_key_values(request, std::string(kJob) + memory + " gpus_per_node=8 num_gpus=" + std::to_string(n), ' ').ok());
    Result<Response> r = respond(request, {false, false});
    ASSERT_TRUE(r.ok());
    if (r->breakdown.likely_high <= r->breakdown.capacity) brute = n;
  }
  ASSERT_GT(brute, 0) << "the test needs a count that fits";
  EXPECT_EQ(decide_at(usable).min_gpus, brute);
}

TEST(RangeDecision, PolicyKeysSayWhatTheyAccept) {
  EXPECT_EQ(parse_policy("refuse_when = Likely").value().defaults.refuse_when, RefuseWhen::kLikely);
  EXPECT_EQ(parse_policy("resize_to = POINT").value().defaults.resize_to, FitBound::kPoint);
  const Policy defaults = parse_policy("action = reject").value();
  EXPECT_EQ(defaults.defaults.refuse_when, RefuseWhen::kCertain);
  EXPECT_EQ(defaults.defaults.resize_to, FitBound::kLikelyHigh);
  const Policy per_partition = parse_policy("partition.gpu.refuse_when = likely").value();
  EXPECT_EQ(per_partition.for_partition("gpu").refuse_when, RefuseWhen::kLikely);
  EXPECT_EQ(per_partition.for_partition("other").refuse_when, RefuseWhen::kCertain);
  const Result<Policy> bad = parse_policy("refuse_when = maybe");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("refuse_when='maybe' is not valid; accepted: certain"), std::string::npos)
      << bad.error().message;
  const Result<Policy> bad_resize = parse_policy("resize_to = low");
  ASSERT_FALSE(bad_resize.ok());
  EXPECT_NE(bad_resize.error().message.find("resize_to='low' is not valid; accepted: high"), std::string::npos);
}

}  // namespace
}  // namespace trainfit::admission
