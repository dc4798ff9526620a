// The examples the packages ship (packaging/): /etc/slurm/trainfit.conf must be a safe start —
// every active line a built-in default, nobody exempt, no partition rules — so that copying it
// changes nothing a site did not choose; its commented examples must be valid lines too.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "trainfit/admission.h"

using namespace trainfit::admission;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kExample = std::string(TRAINFIT_PACKAGING) + "/slurm/trainfit.conf";

// The lines "#key = value" (commented examples), uncommented; prose comments are left out.
std::string uncommented_examples(const std::string& text) {
  std::istringstream lines(text);
  std::string line, out;
  while (std::getline(lines, line)) {
    const bool example = line.size() > 1 && line[0] == '#' && line[1] != ' ' && line.find(" = ") != std::string::npos;
    out += (example ? line.substr(1) : line) + "\n";
  }
  return out;
}

}  // namespace

TEST(ShippedExample, EveryActiveLineIsTheDefault) {
  const std::string text = read(kExample);
  ASSERT_FALSE(text.empty()) << kExample;
  const trainfit::Result<Policy> parsed = parse_policy(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  const Policy& p = parsed.value();
  const Policy built_in;
  EXPECT_EQ(p.defaults.action, built_in.defaults.action);
  EXPECT_EQ(p.defaults.resize_max_gpus, built_in.defaults.resize_max_gpus);
  EXPECT_EQ(p.defaults.headroom, built_in.defaults.headroom);
  EXPECT_EQ(p.defaults.default_gpu, built_in.defaults.default_gpu);
  EXPECT_EQ(p.defaults.gpus_per_node, built_in.defaults.gpus_per_node);
  EXPECT_EQ(p.defaults.require_annotation, built_in.defaults.require_annotation);
  EXPECT_EQ(p.audit_log, built_in.audit_log);
  EXPECT_EQ(p.fail_open, built_in.fail_open);
  EXPECT_EQ(p.allow_unchecked_updates, built_in.allow_unchecked_updates);
  EXPECT_EQ(p.default_partition, "");
}

TEST(ShippedExample, NobodyIsExemptAndNoPartitionHasRules) {
  const trainfit::Result<Policy> parsed = parse_policy(read(kExample));
  ASSERT_TRUE(parsed) << parsed.error().message;
  const Policy& p = parsed.value();
  EXPECT_TRUE(p.defaults.exempt_users.empty());
  EXPECT_TRUE(p.defaults.exempt_accounts.empty());
  EXPECT_TRUE(p.defaults.exempt_qos.empty());
  EXPECT_TRUE(p.operators.empty());
  EXPECT_TRUE(p.partitions.empty());
  EXPECT_TRUE(p.gpu_aliases.empty());
}

TEST(ShippedExample, TheCommentedExamplesAreValidLines) {
  const std::string text = uncommented_examples(read(kExample));
  const trainfit::Result<Policy> parsed = parse_policy(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_FALSE(parsed.value().partitions.empty());  // the partition.NAME examples were read
  EXPECT_FALSE(parsed.value().defaults.exempt_users.empty());
}

TEST(ShippedExample, TheHeaderSaysHowToCheckIt) {
  const std::string text = read(kExample);
  EXPECT_NE(text.find("trainfit check-config /etc/slurm/trainfit.conf"), std::string::npos);
}
