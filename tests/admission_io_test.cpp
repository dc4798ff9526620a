// What the plugins write and read: audit records, bounded regular files, log text.
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

// ---- Audit records ----

TEST(Audit, OneJsonLinePerRecordWithCappedUserText) {
  AuditRecord record;
  record.time = 1764633600;
  record.uid = 1000;
  record.user = "alice";
  record.job_name = std::string("bad\xff name \x1b[31m");  // invalid UTF-8 and an escape: kept safe
  record.annotation.model = std::string(120000, 'x');     // a 120 KB comment
  record.decision = decide(parse_policy("").value(), job_of(kBig, "gres:gpu:h100:8"));
  const std::string line = audit_json(record);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_LT(line.size(), 16u * 1024);
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["time"], "2025-12-02T00:00:00Z");
  EXPECT_EQ(j["action"], "reject");
  EXPECT_EQ(j["reason"], "too_few_gpus");
  EXPECT_EQ(j["min_gpus_to_fit"], record.decision.min_gpus);
  EXPECT_TRUE(j["resized_to"].is_null());
  const std::string annotation = j["annotation"].get<std::string>();
  const size_t kept = annotation.find("…[truncated ");
  ASSERT_NE(kept, std::string::npos);
  EXPECT_EQ(annotation.substr(kept), "…[truncated " + std::to_string(120006 - kept) + " bytes]");  // "model=" + 120000
  EXPECT_EQ(truncated(std::string(5000, 'y'), 1024), std::string(1024, 'y') + "…[truncated 3976 bytes]");
  EXPECT_EQ(truncated("short", 1024), "short");
  EXPECT_EQ(truncated(std::string(10, 'z'), 4, 99), "zzzz…[truncated 95 bytes]");
  EXPECT_NE(j["job_name"].get<std::string>().find('\x1b'), std::string::npos);  // JSON-escaped, parsed back
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
}

TEST(Audit, HostRamAndTheMemoryRequestAreRecorded) {
  AuditRecord record;
  EXPECT_TRUE(nlohmann::json::parse(audit_json(record))["host_ram_per_node_gb"].is_null());  // no offload
  EXPECT_TRUE(nlohmann::json::parse(audit_json(record))["mem_per_node_gb"].is_null());
  record.decision.host_ram_per_node_gb = 131.25;
  record.decision.memory_per_node_gb = 64;
  const nlohmann::json j = nlohmann::json::parse(audit_json(record));
  EXPECT_DOUBLE_EQ(j["host_ram_per_node_gb"].get<double>(), 131.25);
  EXPECT_DOUBLE_EQ(j["mem_per_node_gb"].get<double>(), 64.0);
}

// ---- Files and log text ----

TEST(Files, RegularFilesOnlyBoundedAndEachCaseNamed) {
  char dir[] = "/tmp/trainfit-files-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo", file = std::string(dir) + "/conf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Each: the field "file", the file as a whole (line 0), the message "PATH: reason", the reason naming the case.
  auto expect_file_error = [](const Result<std::string>& read, const std::string& path, ErrorCode code,
                              const std::string& reason) {
    const Error e = failure_of(read);
    EXPECT_EQ(e.code, code) << e.message;
    EXPECT_EQ(e.field, "file") << e.message;
    EXPECT_EQ(e.line, 0) << e.message;
    EXPECT_EQ(e.reason, reason) << e.message;
    EXPECT_EQ(e.message, path + ": " + reason);
  };
  expect_file_error(read_regular_file(fifo, 1024), fifo, ErrorCode::kInvalidValue,  // and returns
                    "is a FIFO, not a regular file");
  expect_file_error(read_regular_file(dir, 1024), dir, ErrorCode::kInvalidValue, "is a directory, not a regular file");
  expect_file_error(read_regular_file("/dev/zero", 1024), "/dev/zero", ErrorCode::kInvalidValue,
                    "is a character device, not a regular file");
  expect_file_error(read_regular_file(std::string(dir) + "/none", 1024), std::string(dir) + "/none",
                    ErrorCode::kMissing, "not found");
  { std::ofstream(file) << std::string(2048, '#'); }
  expect_file_error(read_regular_file(file, 1024), file, ErrorCode::kInvalidValue,
                    "is 2048 bytes; accepted: at most 1024");
  EXPECT_EQ(read_regular_file(file, 4096).value().size(), 2048u);
  unlink(fifo.c_str());
  unlink(file.c_str());
  rmdir(dir);
}

// A full descriptor table passes by itself: kUnavailable (a reloader tries again, silently);
// a file that is wrong is kInvalidValue (reported once). plugin/job_submit/policy_store.cpp tells them apart.
TEST(Files, AFullDescriptorTableIsUnavailableNotInvalid) {
  char dir[] = "/tmp/trainfit-files-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/conf";
  { std::ofstream(file) << "action = warn\n"; }
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> held;
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held.push_back(fd);
  const Result<std::string> full = read_regular_file(file, 1024);
  for (int fd : held) ::close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, ErrorCode::kUnavailable) << full.error().message;
  EXPECT_EQ(full.error().field, "file") << full.error().message;
  EXPECT_EQ(read_regular_file(file, 1024).value(), "action = warn\n");  // once descriptors are free
  const Error wrong = failure_of(read_regular_file(dir, 1024));
  EXPECT_EQ(wrong.code, ErrorCode::kInvalidValue) << wrong.message;  // wrong, not passing
  EXPECT_EQ(wrong.field, "file") << wrong.message;
  unlink(file.c_str());
  rmdir(dir);
}

TEST(LogText, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable("a\x1b[31mb\nc"), "a\\x1b[31mb\\x0ac");
  EXPECT_EQ(printable("csi \xc2\x9b" "31m"), "csi \\xc2\\x9b31m");
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");  // ordinary UTF-8 stays
}

}  // namespace
}  // namespace trainfit::admission
