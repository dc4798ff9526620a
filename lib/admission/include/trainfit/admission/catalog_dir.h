// Site catalogs on disk (docs/site.md): DIR/gpus.d/*.json and DIR/models.d/*.json, read
// in sorted order (later files override earlier ones, all of them the built-in catalogs),
// regular files only, each at most kMaxCatalogFileBytes, at most kMaxCatalogFiles per
// folder. The CLI, the service and both plugins read them through this, at start (and the
// job_submit plugin when they change), never per job.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "trainfit/catalog.h"
#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/util/file_stamp.h"

namespace trainfit::admission {

constexpr const char* kDefaultCatalogDir = "/etc/trainfit";
constexpr size_t kMaxCatalogFileBytes = size_t{1} << 20;
constexpr size_t kMaxCatalogFiles = 256;

// The folder to read: `option` when given (--catalog-dir, catalog_dir=), else
// $TRAINFIT_CATALOG_DIR, else /etc/trainfit. *explicit_dir says whether it was named
// (a folder that was named must exist; the default may be absent).
TRAINFIT_API std::string catalog_dir(const std::string& option, bool* explicit_dir);

// Reads and merges DIR's site files (merge_catalogs). A missing DIR is a problem only
// when must_exist; missing gpus.d/ or models.d/ are not.
TRAINFIT_API CatalogSet read_catalog_dir(const std::string& dir, bool must_exist);

// The stamps of DIR's catalog files: differs whenever one is added, removed or changed.
TRAINFIT_API FileStamps catalog_dir_stamps(const std::string& dir);

// read_catalog_dir, then install_catalogs when it has no problems. Returns the set read
// (its notes and problems for the caller to print or log); nothing changes on problems.
TRAINFIT_API CatalogSet load_site_catalogs(const std::string& dir, bool must_exist);

// The job_submit plugin's reload: a thread that looks at DIR's catalog files once a
// second and, when they changed, reads them again and installs them. Rules (docs/site.md):
//  - a file changed less than a second ago may be mid-edit: read at a later look, but never
//    more than kMaxSettleMs after the change was seen (a file rewritten more than once a
//    second, or one whose mtime is in the future, which is logged once);
//  - invalid files leave the catalogs in use as they are, until a file changes again; a file
//    or folder that could not be read (EMFILE, EACCES) is read again at each look;
//  - a new catalog the policy in force does not resolve against (validate_with) is not
//    installed: one log line, and it is tried again at each look (trainfit.conf may follow);
//    when trainfit.conf changed too, the validator may bridge it (keep_gpus_named): installed
//    with the GPUs the policy in force names, and read again once the new policy is in force.
// Jobs never wait for it: lookups read an atomic pointer.
class TRAINFIT_API CatalogWatcher {
 public:
  using Log = std::function<void(bool error, const std::string& line)>;
  // Whether a catalog read without problems may be installed (the policy in force resolves in
  // it): as read, bridged (the validator added to it what the policy in force still names), or
  // not at all (the error says why).
  enum class Pair { kAsRead, kBridged };
  using Validate = std::function<Result<Pair>(CatalogSet& set)>;
  CatalogWatcher(std::string dir, bool must_exist, Log log);
  ~CatalogWatcher();
  CatalogWatcher(const CatalogWatcher&) = delete;
  CatalogWatcher& operator=(const CatalogWatcher&) = delete;
  // Reads and installs at once (init), logging notes and problems. False on problems.
  bool load();
  // Called by the watching thread after each look, with whether a new catalog was installed:
  // the policy reloads there, after the catalogs it names (set before start()).
  void after_each_check(std::function<void(bool installed)> then) { after_check_ = std::move(then); }
  // The pair check of each new catalog before it is installed (set before start()).
  void validate_with(Validate validate) { validate_ = std::move(validate); }
  void start();  // the watching thread (idempotent)
  void stop();   // joins it
  // Ends the thread, waiting at most `wait` for a look in progress (a hung disk): false when
  // it did not end in time; it is then detached, and this object must never be destroyed.
  bool stop_within(std::chrono::milliseconds wait);
  // One look (what the thread does each second); true when a new catalog was installed.
  bool check_once();
  const std::string& dir() const { return dir_; }

 private:
  bool settled(const FileStamps& now);
  void report_once(const std::vector<std::string>& lines);
  bool install_if_valid(CatalogSet set);

  std::string dir_;
  bool must_exist_;
  Log log_;
  std::function<void(bool)> after_check_;
  Validate validate_;
  std::mutex stamp_mutex_;  // guards what follows: load(), check_once() and the thread's looks
  FileStamps stamp_;
  PendingChange pending_;            // a change seen, waiting to settle
  bool read_again_ = false;          // the last read failed, was refused or bridged: read at the next look
  bool bridged_ = false;             // the catalog in force is a bridge for these files
  std::string last_problem_;         // logged once while it stays the same
  std::vector<std::pair<std::string, int64_t>> future_reported_;  // (file, mtime) logged as ahead of the clock
  std::mutex mutex_;        // guards stopping_, finished_ and thread_
  std::condition_variable wake_, ended_;
  bool stopping_ = false, finished_ = false;
  std::thread thread_;
};

}  // namespace trainfit::admission
