// The site catalog watcher's reload rules (admission/catalog_dir.h, docs/site.md): a new
// catalog is installed only when the policy in force resolves in it; a failed read is retried;
// a file that keeps changing, or whose mtime is in the future, is read after a bounded wait;
// stop_within() does not wait for ever on a look that hangs.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "trainfit/admission/catalog_dir.h"
#include "trainfit/admission/policy_pair.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/util/file_stamp.h"

// A descriptor table that is full for a moment (EMFILE), for open(2)s of the files named by
// g_failing_opens' directory: the real read path meets the real errno, then the table frees.
namespace {
std::atomic<int> g_failing_opens{0};
std::string g_failing_dir;  // set before g_failing_opens, by the test's thread
}  // namespace

extern "C" int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = static_cast<mode_t>(va_arg(args, int));
    va_end(args);
  }
  if (g_failing_opens.load() > 0 && std::strncmp(path, g_failing_dir.c_str(), g_failing_dir.size()) == 0) {
    --g_failing_opens;
    errno = EMFILE;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_openat, AT_FDCWD, path, flags, mode));
}
extern "C" int open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
    va_list args;
    va_start(args, flags);
    mode = static_cast<mode_t>(va_arg(args, int));
    va_end(args);
  }
  return open(path, flags, mode);
}

namespace trainfit {
namespace {

using admission::CatalogWatcher;
using admission::Policy;

const char kSiteGpu[] = R"({"gpus": [{"name": "a40", "capacity_bytes": 48305799168}]})";

bool logged(const std::vector<std::string>& log, const std::string& part) {
  for (const std::string& line : log) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}
size_t count(const std::vector<std::string>& log, const std::string& part) {
  size_t n = 0;
  for (const std::string& line : log) n += line.find(part) != std::string::npos;
  return n;
}
std::string joined(const std::vector<std::string>& log) {
  std::string all;
  for (const std::string& line : log) all += line + "\n";
  return all;
}

class CatalogReload : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/trainfit-reload-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    mkdir((dir_ + "/gpus.d").c_str(), 0755);
    mkdir((dir_ + "/models.d").c_str(), 0755);
  }
  void TearDown() override {
    install_builtin_catalogs();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // Written, then dated two seconds back: settled, as a file installed a while ago.
  void write_settled(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    date(path, std::time(nullptr) - 2);
  }
  static void date(const std::string& path, time_t when) {
    const timespec times[2] = {{when, 0}, {when, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  }
  CatalogWatcher::Log to_log() {
    return [this](bool, const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      log_.push_back(line);
    };
  }
  std::string dir_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
};

Policy policy_of(const std::string& text) {
  Result<Policy> policy = admission::parse_policy(text);
  EXPECT_TRUE(policy.ok()) << text << ": " << (policy.ok() ? "" : policy.error().message);
  return policy.ok() ? policy.value() : Policy{};
}

TEST_F(CatalogReload, PolicyResolvesInNamesTheKeyWhoseGpuIsMissing) {
  const std::vector<GpuSpec> builtin = gpu_catalog();
  EXPECT_TRUE(admission::policy_resolves_in(policy_of("default_gpu = h100\n"), builtin).ok());
  const CatalogSet site = merge_catalogs({{"a.json", kSiteGpu}}, {});
  ASSERT_TRUE(install_catalogs(site));
  const Policy uses_a40 = policy_of("partition.big.default_gpu = a40\ngpu_alias.mygpu = a40\n");
  EXPECT_TRUE(admission::policy_resolves_in(uses_a40, site.gpus).ok());
  const Result<bool> without = admission::policy_resolves_in(uses_a40, builtin);
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.error().code, ErrorCode::kUnknownName);
  EXPECT_EQ(without.error().message, "trainfit.conf's partition.big.default_gpu = a40 names a GPU the new catalog does not have");
  const Result<bool> alias = admission::policy_resolves_in(policy_of("gpu_alias.mygpu = a40\n"), builtin);
  ASSERT_FALSE(alias.ok());
  EXPECT_EQ(alias.error().field, "gpu_alias.mygpu");
}

// The catalog loses a GPU trainfit.conf names: refused, said once, and installed as soon as the
// policy in force no longer names it (the files did not change in between).
TEST_F(CatalogReload, ACatalogThePolicyInForceDoesNotResolveInIsRefusedThenRetried) {
  write_settled("gpus.d/10-site.json", kSiteGpu);
  CatalogWatcher watcher(dir_, true, to_log());
  ASSERT_TRUE(watcher.load()) << joined(log_);
  std::mutex policy_mutex;
  Policy in_force = policy_of("default_gpu = a40\n");  // parsed against the catalog with a40
  watcher.validate_with([&](CatalogSet& set) -> Result<CatalogWatcher::Pair> {
    std::lock_guard<std::mutex> lock(policy_mutex);
    const Result<bool> resolves = admission::policy_resolves_in(in_force, set.gpus);
    if (!resolves) return resolves.error();
    return CatalogWatcher::Pair::kAsRead;
  });
  unlink((dir_ + "/gpus.d/10-site.json").c_str());
  EXPECT_FALSE(watcher.check_once());
  EXPECT_NE(gpu_in_catalog("a40"), nullptr) << "the pair in force must stay";
  const std::string refusal = "changed but are not installed: trainfit.conf's default_gpu = a40 names a GPU the new "
                              "catalog does not have; the catalogs and policy in force stay";
  EXPECT_TRUE(logged(log_, refusal)) << joined(log_);
  EXPECT_FALSE(watcher.check_once());
  EXPECT_EQ(count(log_, refusal), 1u) << "said once, not at every look:\n" << joined(log_);
  {
    std::lock_guard<std::mutex> lock(policy_mutex);
    in_force = policy_of("default_gpu = h100\n");  // the site's trainfit.conf follows
  }
  EXPECT_TRUE(watcher.check_once()) << joined(log_);
  EXPECT_EQ(gpu_in_catalog("a40"), nullptr);
}

// A GPU renamed in the catalog and in trainfit.conf at once: the new catalog is installed with
// the old name kept (the policy in force still names it), then as read once the new policy is.
TEST_F(CatalogReload, ACatalogChangedWithThePolicyIsBridgedThenInstalledAsRead) {
  write_settled("gpus.d/10-site.json", kSiteGpu);
  CatalogWatcher watcher(dir_, true, to_log());
  ASSERT_TRUE(watcher.load());
  Policy in_force = policy_of("gpu_alias.sitegpu = a40\n");
  watcher.validate_with([&](CatalogSet& set) -> Result<CatalogWatcher::Pair> {
    if (admission::policy_resolves_in(in_force, set.gpus).ok()) return CatalogWatcher::Pair::kAsRead;
    admission::keep_gpus_named(in_force, gpu_catalog(), set);
    return CatalogWatcher::Pair::kBridged;
  });
  write_settled("gpus.d/10-site.json", R"({"gpus": [{"name": "a40-renamed", "capacity_bytes": 48305799168}]})");
  ASSERT_TRUE(watcher.check_once()) << joined(log_);
  EXPECT_NE(gpu_in_catalog("a40"), nullptr);
  EXPECT_NE(gpu_in_catalog("a40-renamed"), nullptr);
  EXPECT_TRUE(logged(log_, "gpu 'a40' kept while the trainfit.conf in force names it")) << joined(log_);
  EXPECT_FALSE(watcher.check_once()) << "the bridge is in force already";
  in_force = policy_of("gpu_alias.sitegpu = a40-renamed\n");  // parsed against the bridge
  ASSERT_TRUE(watcher.check_once()) << joined(log_);
  EXPECT_EQ(gpu_in_catalog("a40"), nullptr);
  EXPECT_NE(gpu_in_catalog("a40-renamed"), nullptr);
  EXPECT_FALSE(watcher.check_once());
}

// EMFILE while reading a catalog file: nothing on disk changes, yet the next look reads it.
TEST_F(CatalogReload, AFailedReadIsRetriedAtTheNextLook) {
  CatalogWatcher watcher(dir_, true, to_log());
  ASSERT_TRUE(watcher.load());
  write_settled("gpus.d/10-site.json", kSiteGpu);
  g_failing_dir = dir_ + "/gpus.d/";
  g_failing_opens = 1;
  EXPECT_FALSE(watcher.check_once());
  EXPECT_EQ(g_failing_opens.load(), 0) << "the read did not open the file";
  EXPECT_TRUE(logged(log_, "cannot be read: " + std::string(std::strerror(EMFILE)))) << joined(log_);
  EXPECT_TRUE(logged(log_, "read again at each check")) << joined(log_);
  EXPECT_EQ(gpu_in_catalog("a40"), nullptr);
  ASSERT_TRUE(watcher.check_once()) << joined(log_);
  EXPECT_NE(gpu_in_catalog("a40"), nullptr);
}

// The same at init: the catalog folder could not be read when slurmctld started.
TEST_F(CatalogReload, AReadFailedAtInitIsRetriedAtTheFirstLook) {
  write_settled("gpus.d/10-site.json", kSiteGpu);
  g_failing_dir = dir_ + "/gpus.d/";
  g_failing_opens = 1;
  CatalogWatcher watcher(dir_, true, to_log());
  EXPECT_FALSE(watcher.load());
  EXPECT_EQ(gpu_in_catalog("a40"), nullptr);
  ASSERT_TRUE(watcher.check_once()) << joined(log_);
  EXPECT_NE(gpu_in_catalog("a40"), nullptr);
}

// A file stamped an hour ahead would look mid-edit for an hour: said once, read after the bound.
TEST_F(CatalogReload, AFutureMtimeIsSaidOnceAndReadAfterTheBound) {
  CatalogWatcher watcher(dir_, true, to_log());
  ASSERT_TRUE(watcher.load());
  const std::string path = dir_ + "/gpus.d/10-site.json";
  std::ofstream(path) << kSiteGpu;
  date(path, std::time(nullptr) + 3600);
  const auto seen = std::chrono::steady_clock::now();
  EXPECT_FALSE(watcher.check_once());
  EXPECT_FALSE(watcher.check_once());
  EXPECT_EQ(count(log_, "s ahead of this host's clock"), 1u) << joined(log_);
  bool installed = false;
  while (!installed && std::chrono::steady_clock::now() - seen < std::chrono::milliseconds(kMaxSettleMs + 2000)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    installed = watcher.check_once();
  }
  ASSERT_TRUE(installed) << joined(log_);
  EXPECT_GE(std::chrono::steady_clock::now() - seen, std::chrono::milliseconds(kMaxSettleMs - 100));
  EXPECT_NE(gpu_in_catalog("a40"), nullptr);
}

// Rewritten every 300 ms (a deployment loop, a config manager fighting an editor): it never
// settles for a second, and is read anyway within the bound.
TEST_F(CatalogReload, AFileRewrittenEvery300MsIsStillRead) {
  CatalogWatcher watcher(dir_, true, to_log());
  ASSERT_TRUE(watcher.load());
  const auto start = std::chrono::steady_clock::now();
  bool installed = false;
  for (int i = 0; !installed && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(kMaxSettleMs + 3000); ++i) {
    std::ofstream(dir_ + "/gpus.d/10-site.json")
        << R"({"gpus": [{"name": "a40", "capacity_bytes": )" << 48305799168 + i << "}]}";
    installed = watcher.check_once();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ASSERT_TRUE(installed) << joined(log_);
  EXPECT_NE(gpu_in_catalog("a40"), nullptr);
}

// A look that hangs (a stat() of a hung NFS mount): stop_within gives up after its wait.
TEST_F(CatalogReload, StopWithinDoesNotWaitForAHungLook) {
  static std::mutex gate;
  static std::condition_variable opened;
  static bool release = false, entered = false;
  // Never destroyed: a thread left behind may still use it (as the plugin does).
  static CatalogWatcher* watcher = new CatalogWatcher(dir_, false, [](bool, const std::string&) {});
  watcher->after_each_check([](bool) {
    std::unique_lock<std::mutex> lock(gate);
    entered = true;
    opened.notify_all();
    opened.wait(lock, [] { return release; });
  });
  watcher->start();
  {
    std::unique_lock<std::mutex> lock(gate);
    ASSERT_TRUE(opened.wait_for(lock, std::chrono::seconds(5), [] { return entered; }));
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(watcher->stop_within(std::chrono::milliseconds(300)));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::seconds(2));
  std::lock_guard<std::mutex> lock(gate);
  release = true;  // the detached thread sees stopping_ and ends
  opened.notify_all();
}

TEST_F(CatalogReload, StopWithinJoinsAnIdleWatcher) {
  CatalogWatcher watcher(dir_, false, to_log());
  watcher.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(watcher.stop_within(std::chrono::seconds(5)));
}

}  // namespace
}  // namespace trainfit
