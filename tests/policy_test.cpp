// trainfit.conf (the site policy) and slurm.conf's partitions as the gate reads them.
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
#include "admission_helpers.h"

namespace trainfit::admission {
namespace {

using testing::failure_of;

// ---- Policy ----

TEST(Policy, ParsesAndValidates) {
  Result<Policy> p = parse_policy(
      "# site policy\naction = resize\nresize_max_gpus = 32\nheadroom = 0.05\ndefault_gpu = A100\n"
      "partition.debug.action = warn\naudit_log = /var/log/x.jsonl\non_error = closed\n");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->defaults.action, Action::kResize);
  EXPECT_EQ(p->defaults.default_gpu, "a100");
  EXPECT_FALSE(p->fail_open);
  EXPECT_EQ(p->for_partition("debug").action, Action::kWarn);
  EXPECT_EQ(p->for_partition("debug").resize_max_gpus, 32);  // inherits the defaults
  EXPECT_EQ(p->for_partition("other").action, Action::kResize);
}

TEST(Policy, EnumeratedValuesIgnoreCase) {
  Result<Policy> p = parse_policy("on_error = Closed\naction = Warn\nrequire_annotation = TRUE");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->fail_open);
  EXPECT_EQ(p->defaults.action, Action::kWarn);
  EXPECT_TRUE(p->defaults.require_annotation);
}

TEST(Policy, OnErrorIsReadAsAKeyEvenFromAnInvalidFile) {
  EXPECT_TRUE(fail_open_of("# we never run closed here\naction = reject"));
  EXPECT_TRUE(fail_open_of("action = deny  # closed for maintenance?"));
  EXPECT_FALSE(fail_open_of("action = deny\non_error = closed"));
  EXPECT_FALSE(fail_open_of("ON_ERROR = Closed   # really"));
  EXPECT_TRUE(fail_open_of("on_error = closed\non_error = open"));  // the last one counts, as in parse_policy
  EXPECT_TRUE(fail_open_of("on_errors = closed"));
}

struct PolicyMistake {
  const char* text;
  int line;             // the line of trainfit.conf at fault
  const char* field;    // its key ("trainfit.conf" where the error names no key)
  ErrorCode code;
  const char* reason;   // words of the reason the user is promised ("" where code and field say it all)
};

void PrintTo(const PolicyMistake& c, std::ostream* os) { *os << ::testing::PrintToString(std::string(c.text)); }

class PolicyMistakes : public ::testing::TestWithParam<PolicyMistake> {};

TEST_P(PolicyMistakes, GetOneLineWithTheLineAndTheKey) {
  const PolicyMistake& c = GetParam();
  const Error e = failure_of(parse_policy(c.text));
  EXPECT_EQ(e.code, c.code) << e.message;
  EXPECT_EQ(e.field, c.field) << e.message;
  EXPECT_EQ(e.line, c.line) << e.message;
  EXPECT_EQ(e.message, "trainfit.conf line " + std::to_string(c.line) + ": " + e.reason);
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
  EXPECT_NE(e.reason.find(c.reason), std::string::npos) << e.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Policy, PolicyMistakes,
    ::testing::Values(
        PolicyMistake{"action = deny", 1, "action", ErrorCode::kInvalidValue, "accepted: reject|resize|warn"},
        PolicyMistake{"\nheadroom = 2", 2, "headroom", ErrorCode::kInvalidValue, ""},
        PolicyMistake{"actoin = reject", 1, "trainfit.conf", ErrorCode::kInvalidValue, "did you mean 'action'"},
        PolicyMistake{"default_gpu = h1000", 1, "default_gpu", ErrorCode::kInvalidValue, "did you mean 'h100'"},
        PolicyMistake{"audit_log = relative.log", 1, "audit_log", ErrorCode::kInvalidValue, "absolute path"},
        PolicyMistake{"on_error = maybe", 1, "on_error", ErrorCode::kInvalidValue, "open|closed"},
        PolicyMistake{"action = warn\npartition.gpu.colour = red", 2, "trainfit.conf", ErrorCode::kInvalidValue,
                      "unknown partition key 'colour'"},
        PolicyMistake{"partition.gpu.action = deny", 1, "action", ErrorCode::kInvalidValue,
                      "partition gpu: action='deny'"},
        PolicyMistake{"just words", 1, "trainfit.conf", ErrorCode::kInvalidValue, "not key = value"},
        PolicyMistake{"gpu_alias.x = h1000", 1, "trainfit.conf", ErrorCode::kInvalidValue, "gpu_alias.x"},
        PolicyMistake{"# site\n\nexempt_users = alice,,bob", 3, "exempt_users", ErrorCode::kInvalidValue,
                      "empty entry"}));

TEST(Policy, ExemptUsersResolveToUids) {
  Policy p = parse_policy("exempt_users = alice, 2002, mallory\npartition.gpu.exempt_users = alice").value();
  const std::vector<std::string> unknown = resolve_exempt_users(p, fake_passwd);
  EXPECT_EQ(unknown, std::vector<std::string>{"mallory"});
  EXPECT_EQ(p.defaults.exempt_uids, (std::set<uint32_t>{1001, 2002}));
  EXPECT_EQ(p.for_partition("gpu").exempt_uids, std::set<uint32_t>{1001});
}

TEST(Policy, GpuNamesAsClustersSpellThem) {
  const Policy p = parse_policy("gpu_alias.h100_80g = h100\ngpu_alias.A100_40 = a100-40gb").value();
  EXPECT_EQ(catalog_gpu(p, "h100_80g").value()->name, "h100");
  EXPECT_EQ(catalog_gpu(p, "a100_40").value()->name, "a100-40gb");
  EXPECT_EQ(catalog_gpu(p, "H100").value()->name, "h100");
  // Slurm's AutoDetect=nvml names: NVML's product name, lower case, spaces as '_'.
  EXPECT_EQ(catalog_gpu(p, "nvidia_h100_80gb_hbm3").value()->name, "h100");
  EXPECT_EQ(catalog_gpu(p, "nvidia_a100-sxm4-80gb").value()->name, "a100");
  EXPECT_EQ(catalog_gpu(p, "nvidia_a100-sxm4-40gb").value()->name, "a100-40gb");
  const Result<const GpuSpec*> unknown = catalog_gpu(p, "rtx9000");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kUnknownName) << unknown.error().message;
  EXPECT_EQ(unknown.error().field, "gpu") << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("gpu_alias.rtx9000 = "), std::string::npos) << unknown.error().message;
}

TEST(SlurmConf, PartitionsAsSlurmctldReadsThem) {
  const std::vector<SlurmPartition> parts = slurm_partitions(
      "# a comment PartitionName=commented\n"
      "NodeName=n[1-4] Gres=gpu:8\n"
      "partitionname=DEFAULT OverSubscribe=EXCLUSIVE State=UP\n"
      "PartitionName=whole Nodes=n[1-2]\n"
      "PartitionName=Shared Nodes=n[3-4] \\\n"
      "   OverSubscribe=FORCE:4 # continued\n"
      "PartitionName=old Shared=Exclusive\n");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].name, "whole");
  EXPECT_TRUE(parts[0].whole_nodes);  // from DEFAULT
  EXPECT_EQ(parts[1].name, "Shared");
  EXPECT_FALSE(parts[1].whole_nodes);  // the continuation line's value
  EXPECT_TRUE(parts[2].whole_nodes);   // the pre-15.08 spelling
  Policy policy = parse_policy("partition.shared.action = warn\npartition.whole.action = warn").value();
  const std::vector<Error> unknown = unknown_partitions(policy, parts);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].code, ErrorCode::kUnknownName);
  EXPECT_EQ(unknown[0].field, "partition.shared");
  EXPECT_NE(unknown[0].message.find("did you mean 'Shared'"), std::string::npos) << unknown[0].message;
  EXPECT_FALSE(has_settings("# only a comment\n\n   \n"));
  EXPECT_EQ(parts[0].max_nodes, 2);
  EXPECT_EQ(parts[1].max_nodes, 2);
  EXPECT_EQ(parts[2].max_nodes, 0);  // no Nodes=: not known
  EXPECT_TRUE(has_settings("# policy\naction = warn\n"));
}

// The keys check-config --keys lists are the parser's: each is taken (or its value judged),
// none is "unknown", and a key not listed is.
TEST(Policy, KeysListedAreTheParsersKeys) {
  const std::vector<std::string> keys = policy_keys();
  ASSERT_GE(keys.size(), 10u);
  for (std::string key : keys) {
    if (key == "gpu_alias.NAME") key = "gpu_alias.h100_80g";
    if (key == "partition.NAME.KEY") key = "partition.gpu.action";
    Result<Policy> parsed = parse_policy(key + " = x\n");
    if (!parsed) {
      EXPECT_EQ(parsed.error().message.find("unknown key"), std::string::npos) << key << ": " << parsed.error().message;
    }
  }
  Result<Policy> unknown = parse_policy("no_such_key = 1\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().field, "trainfit.conf") << unknown.error().message;  // no key of trainfit.conf's
  EXPECT_EQ(unknown.error().line, 1) << unknown.error().message;
  // kInvalidValue like a bad value of a known key: only the words tell an unknown key apart.
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidValue) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("unknown key 'no_such_key'"), std::string::npos);
}

// A job's most nodes per partition: Nodes= counted as Slurm's hostlists are, MaxNodes= when lower.
TEST(SlurmConf, MostNodesAJobCanHave) {
  const std::vector<SlurmPartition> parts = slurm_partitions(
      "NodeName=gpu[01-16] Gres=gpu:8\n"
      "NodeName=r[1-2]n[1-4],login1\n"
      "NodeSet=fat Feature=fat\n"
      "PartitionName=DEFAULT MaxNodes=UNLIMITED\n"
      "PartitionName=a Nodes=gpu[01-04,07,10-11]\n"
      "PartitionName=b Nodes=r[1-2]n[1-4],login1\n"
      "PartitionName=c Nodes=ALL\n"
      "PartitionName=d Nodes=ALL MaxNodes=5\n"
      "PartitionName=e Nodes=fat\n"
      "PartitionName=f Nodes=gpu[05-03]\n"
      "PartitionName=g Nodes=gpu[01-08] MaxNodes=16\n");
  ASSERT_EQ(parts.size(), 7u);
  EXPECT_EQ(parts[0].max_nodes, 7);   // 4 + 1 + 2
  EXPECT_EQ(parts[1].max_nodes, 9);   // 2 x 4 + 1
  EXPECT_EQ(parts[2].max_nodes, 25);  // 16 + 9
  EXPECT_EQ(parts[3].max_nodes, 5);   // MaxNodes is lower
  EXPECT_EQ(parts[4].max_nodes, 0);   // a NodeSet: not counted here
  EXPECT_EQ(parts[5].max_nodes, 0);   // not a range
  EXPECT_EQ(parts[6].max_nodes, 8);   // MaxNodes above the partition's nodes
}

// Every resized job is one Slurm runs as granted (sbatch's own checks): at least one task per
// node, whole tasks of --gpus-per-task per node, --ntasks-per-node kept, no more GPUs on a node

TEST(Review, TheDefaultPartitionCanBeNamed) {
  const Policy policy = parse_policy("default_partition = gpu\npartition.gpu.require_annotation = true").value();
  Job plain;
  plain.fields.per_job = "gres:gpu:8";  // no -p: slurmctld hands job_submit no partition
  EXPECT_EQ(decide(policy, plain).reason, Reason::kAnnotationRequired);
}

}  // namespace
}  // namespace trainfit::admission
