// trainfit.conf as slurmctld sees it: read at init, then picked up again by the catalog
// watcher's thread whenever it, slurm.conf or the site catalogs change (a stat once a
// second), swapped atomically, the old policy kept when the new file is invalid or empty.
// Jobs only read the snapshot: no file I/O, no passwd lookups in job_submit.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "trainfit/admission.h"
#include "trainfit/admission/catalog_dir.h"
#include "trainfit/catalog.h"
#include "trainfit/error.h"
#include "trainfit/util/file_stamp.h"

namespace trainfit::plugin {

struct LoadedPolicy {
  admission::Policy policy;
  bool admit_all = false;  // no usable policy and on_error = open: every job passes
  std::string origin;      // "PATH (mtime ...)" or "built-in defaults"
  std::vector<std::string> slurm_conf_files;  // slurm.conf and the files it Includes, as read
};

class PolicyStore {
 public:
  explicit PolicyStore(std::string path) : path_(std::move(path)) {}
  // True, or why slurmctld must not start (on_error = closed and no usable policy).
  Result<bool> load_initial();
  // The policy in force (never reads a file).
  std::shared_ptr<const LoadedPolicy> current();
  // The watcher thread's look: reloads when trainfit.conf or slurm.conf changed, or when the
  // site catalogs were reinstalled (the policy names their GPUs: validated again).
  // A change is read once it has settled (no write in the last second), or kMaxSettleMs after
  // it was seen when it keeps changing or its mtime is in the future (logged once).
  void check(bool catalogs_changed);
  // The watcher's pair check of a new catalog before it installs it (admission/policy_pair.h):
  // as read when the policy in force names only its GPUs; bridged (keep_gpus_named) when not
  // but trainfit.conf changed too (its new policy is parsed against the bridge next); else why not.
  Result<admission::CatalogWatcher::Pair> pair_with(CatalogSet& catalogs);
  const std::string& path() const { return path_; }

 private:
  void reload_if_changed(bool force);
  Result<std::shared_ptr<LoadedPolicy>> initial_policy(const Result<std::string>& text) const;
  // The policy of trainfit.conf's text, or what is wrong with it.
  Result<std::shared_ptr<LoadedPolicy>> parse(const std::string& text, const FileStamp& stamp) const;

  std::string path_;
  std::mutex mutex_;  // guards current_ (job_submit reads it; the watcher publishes it)
  std::shared_ptr<const LoadedPolicy> current_;
  void report_future_mtime(const FileStamp& now);

  FileStamp stamp_;                // the watcher thread's only (set by load_initial before it starts)
  FileStamps slurm_conf_stamps_;   // likewise: slurm.conf's and its Includes' stamps
  PendingChange settle_;           // the watcher thread's only: a change seen, not read yet
  bool reload_pending_ = false;    // the watcher thread's only: a forced reload not done yet
  int64_t future_reported_ = 0;    // the watcher thread's only: the mtime last logged as ahead
};

}  // namespace trainfit::plugin
