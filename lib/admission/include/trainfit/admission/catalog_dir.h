// Site catalogs on disk (docs/site.md): DIR/gpus.d/*.json and DIR/models.d/*.json, read
// in sorted order (later files override earlier ones, all of them the built-in catalogs),
// regular files only, each at most kMaxCatalogFileBytes, at most kMaxCatalogFiles per
// folder. The CLI, the service and both plugins read them through this, at start (and the
// job_submit plugin when they change), never per job.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "trainfit/catalog.h"
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
// second and, when they changed (and none may be mid-edit, util/file_stamp.h), reads them again and installs them. Invalid files leave the catalogs in use
// as they are. Jobs never wait for it: lookups read an atomic pointer.
class TRAINFIT_API CatalogWatcher {
 public:
  using Log = std::function<void(bool error, const std::string& line)>;
  CatalogWatcher(std::string dir, bool must_exist, Log log);
  ~CatalogWatcher();
  CatalogWatcher(const CatalogWatcher&) = delete;
  CatalogWatcher& operator=(const CatalogWatcher&) = delete;
  // Reads and installs at once (init), logging notes and problems. False on problems.
  bool load();
  // Called by the watching thread after each look, with whether a new catalog was installed:
  // the policy reloads there, after the catalogs it names (set before start()).
  void after_each_check(std::function<void(bool installed)> then) { after_check_ = std::move(then); }
  void start();  // the watching thread (idempotent)
  void stop();   // joins it
  // One look (what the thread does each second); true when a new catalog was installed.
  bool check_once();
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  bool must_exist_;
  Log log_;
  std::function<void(bool)> after_check_;
  std::mutex stamp_mutex_;  // guards stamp_: load(), check_once() and the thread's looks
  FileStamps stamp_;
  std::mutex mutex_;        // guards stopping_ and thread_
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainfit::admission
