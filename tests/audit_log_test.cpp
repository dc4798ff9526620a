// The audit log file: whole JSON lines or nothing, FIFOs refused, rotation
// followed, and JSON strings written without a library.
#include "result_matchers.h"
#include "trainfit/admission/audit_log.h"
#include "trainfit/admission/audit_writer.h"
#include "trainfit/admission.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace trainfit::admission {
namespace {

namespace fs = std::filesystem;
using testing::failure_of;
using testing::Succeeded;
using std::chrono::milliseconds;

// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "audit_log_test.XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
    EXPECT_FALSE(dir_.empty()) << "mkdtemp: " << std::strerror(errno);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string file(const std::string& name) const { return (fs::path(dir_) / name).string(); }

 private:
  std::string dir_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The file's lines; a file of whole lines ends in '\n', checked here too.
std::vector<std::string> lines_of(const std::string& path) {
  const std::string text = read_file(path);
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "ends in a half line: " << text;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool parses(const std::string& line) { return nlohmann::json::accept(line); }

uintmax_t size_of(const std::string& path) {
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error);
  return error ? 0 : size;
}

std::string record(int n) {
  return R"({"event":"submit","n":)" + std::to_string(n) + R"(,"message":"fits on 8 x H100 80GB"})";
}

TEST(AuditLog, AppendsWholeLines) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  AuditLog log;
  ASSERT_TRUE(Succeeded(log.open(path)));
  EXPECT_TRUE(log.is_open());
  EXPECT_EQ(log.path(), path);
  std::vector<std::string> appended;
  for (int n = 0; n < 500; ++n) {
    appended.push_back(record(n));
    ASSERT_TRUE(Succeeded(log.append(appended.back())));
  }
  EXPECT_EQ(lines_of(path), appended);
}

TEST(AuditLog, KeepsWhatIsAlreadyInTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  write_file(path, record(1) + "\n");
  AuditLog log;
  ASSERT_TRUE(Succeeded(log.open(path)));
  ASSERT_TRUE(Succeeded(log.append(record(2))));
  EXPECT_EQ(lines_of(path), (std::vector<std::string>{record(1), record(2)}));
}

// Sets RLIMIT_FSIZE's soft limit for its lifetime. Nothing may be printed while it
// holds: gtest's output may itself go to a file past the limit.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limited = saved_;
    limited.rlim_cur = bytes;
    applied_ = ::setrlimit(RLIMIT_FSIZE, &limited) == 0;
  }
  ~FileSizeLimit() { ::setrlimit(RLIMIT_FSIZE, &saved_); }
  bool applied() const { return applied_; }

 private:
  rlimit saved_{};
  bool applied_ = false;
};

TEST(AuditLog, CutsBackARecordThatDoesNotFit) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  AuditLog log;
  ASSERT_TRUE(Succeeded(log.open(path)));
  ASSERT_TRUE(Succeeded(log.append(record(1))));
  ASSERT_TRUE(Succeeded(log.append(record(2))));
  const uintmax_t size_before = size_of(path);
  const std::string dropped = R"({"event":"submit","n":3,"pad":")" + std::string(200, 'x') + "\"}";

  // A full filesystem, for real: write() stops short at the limit, then EFBIG.
  Error problem;
  uintmax_t size_after = 0;
  bool limited = false;
  ::signal(SIGXFSZ, SIG_IGN);
  {
    FileSizeLimit limit(static_cast<rlim_t>(size_before + (dropped.size() + 1) / 2));
    limited = limit.applied();
    problem = failure_of(log.append(dropped));
    size_after = size_of(path);
  }
  ::signal(SIGXFSZ, SIG_DFL);
  ASSERT_TRUE(limited) << "setrlimit(RLIMIT_FSIZE) failed";
  EXPECT_EQ(problem.code, ErrorCode::kUnavailable);
  EXPECT_EQ(problem.field, "audit_log");
  EXPECT_EQ(problem.message, "cannot append to " + path + ": " + std::strerror(EFBIG) + "; record dropped");
  EXPECT_EQ(size_after, size_before) << "the half record was not cut back";

  // Room again: the same object appends, and the file holds only whole records.
  ASSERT_TRUE(Succeeded(log.append(record(4))));
  const std::vector<std::string> lines = lines_of(path);
  EXPECT_EQ(lines, (std::vector<std::string>{record(1), record(2), record(4)}));
  for (const std::string& line : lines) EXPECT_TRUE(parses(line)) << line;
}

TEST(AuditLog, StartsANewLineAfterAHalfLine) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  const std::string half = R"({"half":)";
  write_file(path, record(1) + "\n" + half);  // a crash in the middle of a write
  AuditLog log;
  ASSERT_TRUE(Succeeded(log.open(path)));
  ASSERT_TRUE(Succeeded(log.append(record(2))));
  ASSERT_TRUE(Succeeded(log.append(record(3))));
  const std::vector<std::string> lines = lines_of(path);
  EXPECT_EQ(lines, (std::vector<std::string>{record(1), half, record(2), record(3)}));
  for (const std::string& line : lines) EXPECT_TRUE(line == half || parses(line)) << line;
}

// open() on a separate thread, so that a blocking open fails the test instead of
// hanging it: a reader is then opened to release it.
Result<bool> open_without_hanging(const std::string& path) {
  std::promise<Result<bool>> opened;
  std::future<Result<bool>> result = opened.get_future();
  std::thread opener([&] {
    AuditLog log;
    opened.set_value(log.open(path));
  });
  if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "open(" << path << ") blocked";
    const int reader = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    result.wait();
    if (reader >= 0) ::close(reader);
  }
  opener.join();
  return result.get();
}

TEST(AuditLog, RefusesAFifoWithoutBlocking) {
  ScratchDir dir;
  const std::string path = dir.file("audit.fifo");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  const Error problem = failure_of(open_without_hanging(path));
  EXPECT_EQ(problem.code, ErrorCode::kInvalidValue);
  EXPECT_EQ(problem.field, "audit_log");
  EXPECT_EQ(problem.message, path + " is not a regular file (a FIFO)");
}

TEST(AuditLog, RefusesADirectory) {
  ScratchDir dir;
  const std::string path = dir.file("audit.d");
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0) << std::strerror(errno);
  AuditLog log;
  const Error problem = failure_of(log.open(path));
  EXPECT_EQ(problem.code, ErrorCode::kInvalidValue);
  EXPECT_EQ(problem.message, path + " is not a regular file (a directory)");
  EXPECT_FALSE(log.is_open());
}

// A world-writable folder (as /tmp) lets a user plant a symlink to a root-owned file, or a
// file of their own, at the log's name: refused as sshd's StrictModes refuses such files.
TEST(AuditLog, RefusesWhatAnotherUserCouldReplace) {
  ScratchDir dir;
  const std::string target = dir.file("root-owned");
  write_file(target, "precious\n");
  const std::string link = dir.file("audit.jsonl");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << std::strerror(errno);
  AuditLog log;
  EXPECT_EQ(failure_of(log.open(link)).message, link + " is a symbolic link; refused (the log is opened with O_NOFOLLOW)");
  EXPECT_FALSE(log.append(record(1)).ok());
  EXPECT_EQ(read_file(target), "precious\n");  // never appended to through the link

  const std::string shared = dir.file("shared");
  ASSERT_EQ(::mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);  // mkdir's mode passes through the umask
  const Error shared_folder = failure_of(log.open(shared + "/audit.jsonl"));
  EXPECT_EQ(shared_folder.code, ErrorCode::kInvalidValue);
  EXPECT_EQ(shared_folder.message.rfind("the folder " + shared + " is writable by others", 0), 0u) << shared_folder.message;

  const std::string loose = dir.file("loose.jsonl");
  write_file(loose, "");
  ASSERT_EQ(::chmod(loose.c_str(), 0666), 0);
  EXPECT_EQ(failure_of(log.open(loose)).message, loose + " is writable by others (mode 0666); refused");
  ASSERT_EQ(::chmod(loose.c_str(), 0640), 0);
  EXPECT_TRUE(Succeeded(log.open(loose)));
}

TEST(AuditLog, NamesThePathWhenItCannotOpen) {
  ScratchDir dir;
  const std::string path = dir.file("missing/audit.jsonl");
  AuditLog log;
  const Error problem = failure_of(log.open(path));
  EXPECT_EQ(problem.code, ErrorCode::kUnavailable);
  EXPECT_EQ(problem.message, "cannot open " + path + ": " + std::strerror(ENOENT));
  EXPECT_FALSE(log.is_open());
}

TEST(AuditLog, OpensTheFileOnceItCanBeCreated) {
  ScratchDir dir;
  const std::string path = dir.file("later/audit.jsonl");
  AuditLog log;
  EXPECT_FALSE(log.open(path).ok());
  EXPECT_FALSE(log.append(record(1)).ok());  // no directory yet: dropped, not fatal
  ASSERT_TRUE(fs::create_directory(dir.file("later")));
  EXPECT_TRUE(Succeeded(log.append(record(2))));
  EXPECT_EQ(lines_of(path), (std::vector<std::string>{record(2)}));
}

TEST(AuditLog, RefusesARecordWithANewline) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  AuditLog log;
  ASSERT_TRUE(Succeeded(log.open(path)));
  EXPECT_FALSE(log.append("{\"a\":1}\n{\"b\":2}").ok());
  EXPECT_EQ(read_file(path), "");
}

TEST(AuditLog, FollowsRotation) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  const std::string moved = dir.file("audit.jsonl.1");
  AuditLog log(milliseconds(0));
  ASSERT_TRUE(Succeeded(log.open(path)));
  ASSERT_TRUE(Succeeded(log.append(record(1))));
  EXPECT_FALSE(log.rotated());

  ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);  // logrotate without "create"
  EXPECT_TRUE(log.rotated());
  ASSERT_TRUE(Succeeded(log.append(record(2))));
  EXPECT_FALSE(log.rotated());
  EXPECT_EQ(lines_of(moved), (std::vector<std::string>{record(1)}));
  EXPECT_EQ(lines_of(path), (std::vector<std::string>{record(2)}));

  ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);  // logrotate with "create"
  write_file(path, "");
  EXPECT_TRUE(log.rotated());
  ASSERT_TRUE(Succeeded(log.append(record(3))));
  EXPECT_EQ(lines_of(moved), (std::vector<std::string>{record(2)}));
  EXPECT_EQ(lines_of(path), (std::vector<std::string>{record(3)}));
}

TEST(AuditLog, LooksForRotationAtMostOncePerInterval) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  const std::string moved = dir.file("audit.jsonl.1");
  AuditLog log(std::chrono::hours(1));
  ASSERT_TRUE(Succeeded(log.open(path)));
  ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);
  ASSERT_TRUE(Succeeded(log.append(record(1))));  // not yet looked: still the moved file
  EXPECT_EQ(lines_of(moved), (std::vector<std::string>{record(1)}));
  EXPECT_FALSE(fs::exists(path));
}

TEST(AuditLog, FollowsRotationAfterTheDefaultSecond) {
  ScratchDir dir;
  const std::string path = dir.file("audit.jsonl");
  const std::string moved = dir.file("audit.jsonl.1");
  AuditLog log;
  ASSERT_TRUE(Succeeded(log.open(path)));
  ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);
  std::this_thread::sleep_for(milliseconds(1100));
  ASSERT_TRUE(Succeeded(log.append(record(1))));
  EXPECT_EQ(lines_of(path), (std::vector<std::string>{record(1)}));
  EXPECT_EQ(read_file(moved), "");
}

// ---- append_json_string ----

std::string json_string(const std::string& text, size_t max_bytes = 1 << 20) {
  std::string out;
  append_json_string(out, text, max_bytes);
  return out;
}

// What nlohmann reads back from the literal; "<unparsable>" if it cannot.
std::string parsed(const std::string& literal) {
  const nlohmann::json value = nlohmann::json::parse(literal, nullptr, false);
  return value.is_string() ? value.get<std::string>() : "<unparsable>";
}

const std::string kFffd = "\xEF\xBF\xBD";

std::string marker(size_t dropped) { return "\xE2\x80\xA6[truncated " + std::to_string(dropped) + " bytes]"; }

TEST(JsonString, EscapesWhatJsonRequires) {
  const std::string text = std::string("a\"b\\c/\n\r\t\b\f") + '\x1b' + '\x7f' + '\x01' + '\x1f' + " end";
  EXPECT_EQ(json_string(text), R"("a\"b\\c/\n\r\t\b\f\u001b\u007f\u0001\u001f end")");
  EXPECT_EQ(parsed(json_string(text)), text);
}

TEST(JsonString, AppendsToWhatIsThere) {
  std::string out = "{\"job_name\":";
  append_json_string(out, "train", 64);
  EXPECT_EQ(out, "{\"job_name\":\"train\"");
  EXPECT_EQ(json_string(""), "\"\"");
}

TEST(JsonString, KeepsValidUtf8) {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xED\x9F\xBF";  // é € 😀 U+10FFFF U+D7FF
  EXPECT_EQ(json_string(text), "\"" + text + "\"");
  EXPECT_EQ(parsed(json_string(text)), text);
}

TEST(JsonString, ReplacesIllFormedUtf8) {
  // Expected per Unicode's "maximal subpart" practice: one U+FFFD per lead byte
  // whose sequence breaks off, plus one per byte that cannot start a character.
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"a\x80z", "a" + kFffd + "z"},                           // stray continuation
      {"\xC0\xAF", kFffd + kFffd},                             // overlong '/' (2 bytes)
      {"\xE0\x80\xAF", kFffd + kFffd + kFffd},                 // overlong '/' (3 bytes)
      {"\xF0\x80\x80\xAF", kFffd + kFffd + kFffd + kFffd},     // overlong '/' (4 bytes)
      {"\xED\xA0\x80", kFffd + kFffd + kFffd},                 // surrogate U+D800
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},     // above U+10FFFF
      {"\xF5\x80", kFffd + kFffd},                             // never a lead byte
      {"x\xE2\x82", "x" + kFffd},                              // truncated at the end
      {"\xE2\x82x", kFffd + "x"},                              // truncated in the middle
      {"\xF0\x9F\x98 \xC3", kFffd + " " + kFffd},              // two truncated
      {"\xFF\xFE", kFffd + kFffd},
  };
  for (const Case& c : cases) {
    const std::string literal = json_string(c.text);
    EXPECT_EQ(literal, "\"" + c.expected + "\"");
    EXPECT_EQ(parsed(literal), c.expected);
  }
}

TEST(JsonString, TruncatesLongTextWithAMarker) {
  const size_t size = 120 * 1024;
  const std::string text(size, 'x');
  const std::string literal = json_string(text, 1024);
  const std::string value = parsed(literal);
  EXPECT_LE(value.size(), 1024 + marker(size - 1024).size());
  EXPECT_EQ(value, std::string(1024, 'x') + marker(size - 1024));
  EXPECT_EQ(marker(size - 1024), "\xE2\x80\xA6[truncated 121856 bytes]");
}

TEST(JsonString, DoesNotTruncateTextThatFits) {
  const std::string text(1024, 'y');
  EXPECT_EQ(json_string(text, 1024), "\"" + text + "\"");
  EXPECT_EQ(json_string("", 0), "\"\"");
  EXPECT_EQ(json_string("z", 0), "\"" + marker(1) + "\"");
}

TEST(JsonString, DoesNotSplitACharacterAtTheCut) {
  const std::string euro = "\xE2\x82\xAC";   // 3 bytes
  const std::string grin = "\xF0\x9F\x98\x80";  // 4 bytes
  // The character would end past byte 1024: it is dropped whole.
  const std::string across = std::string(1023, 'a') + euro + std::string(100, 'b');
  EXPECT_EQ(parsed(json_string(across, 1024)), std::string(1023, 'a') + marker(across.size() - 1023));
  const std::string across4 = std::string(1022, 'a') + grin + "b";
  EXPECT_EQ(parsed(json_string(across4, 1024)), std::string(1022, 'a') + marker(across4.size() - 1022));
  // The character ends exactly at byte 1024: it is kept.
  const std::string ends_at = std::string(1021, 'a') + euro + "b";
  EXPECT_EQ(parsed(json_string(ends_at, 1024)), std::string(1021, 'a') + euro + marker(1));
}

TEST(JsonString, KeepsEscapesAndReplacementsWhenTruncating) {
  const std::string text = std::string(10, '"') + "\x80" + std::string(10, 'q');
  // 11 input bytes kept: ten quotes and the invalid byte, replaced.
  EXPECT_EQ(parsed(json_string(text, 11)), std::string(10, '"') + kFffd + marker(10));
}

}  // namespace
}  // namespace trainfit::admission

// ---- The writer thread ----

namespace trainfit::admission {
namespace {

AuditRecord numbered(int n) {
  AuditRecord r;
  r.time = 1764633600;
  r.job_name = "job-" + std::to_string(n);
  return r;
}

TEST(AuditWriter, WritesEveryRecordInOrderAndDrainsOnStop) {
  char dir[] = "/tmp/trainfit-writer-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/audit.jsonl";
  std::vector<std::string> reports;
  {
    AuditWriter writer([&](bool, const std::string& line) { reports.push_back(line); });
    writer.start();
    for (int i = 0; i < 5000; ++i) ASSERT_TRUE(writer.submit(numbered(i), path));
    writer.stop();  // what is queued is written before stop returns
  }
  const std::vector<std::string> lines = lines_of(path);
  ASSERT_EQ(lines.size(), 5000u);
  for (int i = 0; i < 5000; ++i) {
    EXPECT_EQ(nlohmann::json::parse(lines[static_cast<size_t>(i)])["job_name"], "job-" + std::to_string(i));
  }
  EXPECT_TRUE(reports.empty());
  unlink(path.c_str());
  rmdir(dir);
}

TEST(AuditWriter, ABoundedQueueDropsAndCountsInsteadOfBlocking) {
  AuditWriter writer([](bool, const std::string&) {}, 3);  // not started: nothing drains the queue
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(writer.submit(numbered(i), "/tmp/never-written.jsonl"));
  EXPECT_FALSE(writer.submit(numbered(3), "/tmp/never-written.jsonl"));
  EXPECT_EQ(writer.dropped(), 1);
}

TEST(AuditWriter, ReportsFailureOnceAndRecovery) {
  char dir[] = "/tmp/trainfit-writer-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string missing = std::string(dir) + "/not-yet/audit.jsonl";
  std::vector<std::pair<bool, std::string>> reports;
  std::mutex reports_mutex;
  AuditWriter writer([&](bool error, const std::string& line) {
    std::lock_guard<std::mutex> lock(reports_mutex);
    reports.emplace_back(error, line);
  });
  writer.start();
  writer.submit(numbered(1), missing);
  writer.submit(numbered(2), missing);
  writer.flush();
  ASSERT_EQ(mkdir((std::string(dir) + "/not-yet").c_str(), 0755), 0);
  writer.submit(numbered(3), missing);
  writer.flush();
  writer.stop();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_TRUE(reports[0].first);
  EXPECT_NE(reports[0].second.find("records are dropped"), std::string::npos) << reports[0].second;
  EXPECT_FALSE(reports[1].first);
  EXPECT_NE(reports[1].second.find("writable again; 2 records were dropped"), std::string::npos) << reports[1].second;
  EXPECT_EQ(lines_of(missing).size(), 1u);
  unlink(missing.c_str());
  rmdir((std::string(dir) + "/not-yet").c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace trainfit::admission

namespace trainfit::admission {
namespace {

// ulimit -f on slurmctld must end in a dropped record, not in SIGXFSZ killing it: the
// writer thread blocks the signal. Run in a child process with the default disposition.
TEST(AuditWriter, AFileSizeLimitDoesNotKillTheProcess) {
  char dir[] = "/tmp/trainfit-writer-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/audit.jsonl";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit limit = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    int errors = 0;
    AuditWriter writer([&](bool error, const std::string&) { errors += error ? 1 : 0; });
    writer.start();
    for (int i = 0; i < 200; ++i) writer.submit(numbered(i), path);
    writer.stop();
    _exit(errors > 0 && writer.dropped() > 0 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (WIFEXITED(status)) {
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace trainfit::admission

// ---- Fields that `trainfit report` reads (docs/report.md) ----

namespace trainfit::admission {
namespace {

Job comment_job(const std::string& annotation) {
  Job job;
  EXPECT_TRUE(annotation_from_comment("trainfit: " + annotation, &job.annotation).ok());
  job.fields.per_job = "gres:gpu:h100:8";
  return job;
}

TEST(AuditRecordFields, AdviceAsDataAndTimeLimit) {
  const Policy policy = parse_policy("").value();
  const std::string annotation = "model=llama3-8b seq=16384 zero=1";
  AuditRecord record;
  record.time = 1764633600;
  record.time_limit_minutes = 90;
  record.decision = decide(policy, comment_job(annotation));
  ASSERT_EQ(record.decision.verdict, Verdict::kReject);
  const nlohmann::json j = nlohmann::json::parse(audit_json(record));
  for (const char* key : {"time", "event", "decision_id", "job_id", "uid", "user", "account", "partition", "qos", "job_name",
                          "gpu_request", "annotation", "gpus_requested", "gpu", "predicted_per_gpu_gb", "capacity_gb",
                          "action", "reason", "min_gpus_to_fit", "resized_to", "message"}) {
    EXPECT_TRUE(j.contains(key)) << key;  // every field the log had before stays
  }
  EXPECT_EQ(j["time_limit_min"], 90);
  ASSERT_TRUE(j["advice"].is_array());
  ASSERT_FALSE(j["advice"].empty());
  // The advice is what the user was told, and taking it makes the job fit on the same GPUs.
  std::vector<Change> changes;
  std::string taken = annotation;
  for (const auto& c : j["advice"]) {
    changes.push_back(Change{c["field"], c["value"]});
    taken += " " + c["field"].get<std::string>() + "=" + c["value"].get<std::string>();
  }
  EXPECT_NE(record.decision.message.find("(or: " + spell_changes(changes, Face::kComment) + " fits on 8)"), std::string::npos)
      << record.decision.message;
  EXPECT_EQ(decide(policy, comment_job(taken)).verdict, Verdict::kAccept) << taken;

  record.time_limit_minutes = 0;  // no --time given
  record.decision = decide(policy, comment_job("model=llama3-8b seq=2048 zero=3"));
  const nlohmann::json fits = nlohmann::json::parse(audit_json(record));
  EXPECT_EQ(fits["action"], "accept");
  EXPECT_TRUE(fits["time_limit_min"].is_null());
  EXPECT_EQ(fits["advice"], nlohmann::json::array());
}

}  // namespace
}  // namespace trainfit::admission
