// AuditWriter::stop_within (the plugin's fini): a writer blocked in a passwd lookup of a hung
// NSS server, or a write() to a hung disk, does not hold slurmctld's shutdown for ever.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "trainfit/admission/audit_writer.h"

namespace trainfit::admission {
namespace {

std::mutex g_gate;
std::condition_variable g_changed;
bool g_entered = false, g_release = false;

// The user-name lookup of a hung NSS server, until the test releases it.
std::string hung_lookup(uint32_t uid) {
  std::unique_lock<std::mutex> lock(g_gate);
  g_entered = true;
  g_changed.notify_all();
  g_changed.wait(lock, [] { return g_release; });
  return std::to_string(uid);
}

TEST(AuditWriterStop, AWriterBlockedInNssIsLeftBehindAfterTheWait) {
  char dir[] = "/tmp/trainfit-stop-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  // Never destroyed: its thread is left running (as the plugin leaves it).
  static AuditWriter* writer = new AuditWriter([](bool, const std::string&) {}, 16, hung_lookup);
  writer->start();
  AuditRecord record;
  record.uid = 1234;
  ASSERT_TRUE(writer->submit(std::move(record), std::string(dir) + "/audit.jsonl"));
  {
    std::unique_lock<std::mutex> lock(g_gate);
    ASSERT_TRUE(g_changed.wait_for(lock, std::chrono::seconds(5), [] { return g_entered; }));
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(writer->stop_within(std::chrono::milliseconds(300)));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::seconds(2));
  {
    std::lock_guard<std::mutex> lock(g_gate);
    g_release = true;  // the thread writes its record and ends, detached
    g_changed.notify_all();
  }
  // Ended before the test process exits (its static destructors would race a running writer).
  for (int i = 0; i < 500 && !writer->finished(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(writer->finished());
}

TEST(AuditWriterStop, AnIdleWriterStopsWithinTheWaitAndWritesWhatIsQueued) {
  char dir[] = "/tmp/trainfit-stop-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/audit.jsonl";
  AuditWriter writer([](bool, const std::string&) {});
  writer.start();
  AuditRecord record;
  record.job_name = "queued";
  ASSERT_TRUE(writer.submit(std::move(record), path));
  EXPECT_TRUE(writer.stop_within(std::chrono::seconds(5)));
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buffer[4096];
    text.assign(buffer, std::fread(buffer, 1, sizeof buffer, f));
    std::fclose(f);
  }
  EXPECT_NE(text.find("\"job_name\":\"queued\""), std::string::npos) << text;
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace trainfit::admission
