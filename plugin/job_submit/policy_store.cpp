#include "policy_store.h"

#include <sys/stat.h>

#include <ctime>

#include "slurm_host.h"
#include "trainfit/admission/policy_pair.h"
#include "trainfit/catalog.h"
#include "trainfit/util/clock.h"
#include "trainfit/util/file.h"

namespace trainfit::plugin {
namespace {

using admission::Policy;

std::optional<uint32_t> uid_of(const std::string& name) { return admission::passwd_uid(name); }

std::string describe(const LoadedPolicy& p) {
  if (p.admit_all) return "none: admitting every job";
  return "action = " + std::string(admission::to_string(p.policy.defaults.action)) + ", " +
         std::to_string(p.policy.partitions.size()) + " partition overrides, " +
         std::to_string(p.policy.gpu_aliases.size()) + " GPU aliases, audit_log = " + p.policy.audit_log;
}

// What assembling the policy found, in slurmctld's log: slurm.conf not read (info), names that
// resolve to no user, partitions or GPUs trainfit.conf and slurm.conf disagree on, and unsafe
// settings (errors: the admin must act).
void log_assembly(const std::string& conf, const admission::AssembledPolicy& a) {
  const std::string path = admission::slurm_conf_path();
  if (!a.slurm_conf_note.empty()) {
    slurm_info("job_submit/trainfit: %s not read (%s): partitions are not checked against it, and its "
               "OverSubscribe=EXCLUSIVE, Default=YES and nodes' GPUs are not seen",
               admission::printable(path).c_str(), admission::printable(a.slurm_conf_note).c_str());
  }
  for (const std::string& name : a.unknown_users) {
    slurm_error("job_submit/trainfit: %s: exempt user or operator '%s' is not known to this host; ignored",
                admission::printable(conf).c_str(), admission::printable(name).c_str());
  }
  for (const std::vector<Error>* list : {&a.problems, &a.warnings}) {
    for (const Error& e : *list) {
      slurm_error("job_submit/trainfit: %s: %s (%s)", admission::printable(conf).c_str(),
                  admission::printable(e.message).c_str(), admission::printable(path).c_str());
    }
  }
}

// The stamps of slurm.conf and the files it Includes (as the policy in force read them; slurm.conf
// alone when it was not read): an edit of any of them reloads the policy.
FileStamps slurm_conf_stamps(const std::shared_ptr<const LoadedPolicy>& in_force) {
  std::vector<std::string> files;
  if (in_force != nullptr) files = in_force->slurm_conf_files;
  if (files.empty()) files.push_back(admission::slurm_conf_path());
  FileStamps out;
  for (const std::string& file : files) out.emplace_back(file, file_stamp(file));
  return out;
}

std::shared_ptr<LoadedPolicy> admit_all(const std::string& why) {
  auto p = std::make_shared<LoadedPolicy>();
  p->admit_all = true;
  p->origin = why;
  return p;
}

}  // namespace


Result<std::shared_ptr<LoadedPolicy>> PolicyStore::parse(const std::string& text, const FileStamp& stamp) const {
  std::vector<std::string> slurm_conf_files;
  const Result<std::string> slurm_conf = admission::slurm_conf_text(admission::slurm_conf_path(), &slurm_conf_files);
  Result<admission::AssembledPolicy> assembled = admission::assemble_policy(text, slurm_conf, uid_of);
  if (!assembled) return assembled.error();
  log_assembly(path_, assembled.value());
  auto loaded = std::make_shared<LoadedPolicy>();
  loaded->policy = std::move(assembled.value().policy);
  loaded->slurm_conf_files = std::move(slurm_conf_files);
  loaded->origin = path_ + " (mtime " + std::to_string(stamp.mtime_ns / 1000000000ull) + ")";
  return loaded;
}

// The file's policy; without a file the built-in defaults; else what is wrong.
Result<std::shared_ptr<LoadedPolicy>> PolicyStore::initial_policy(const Result<std::string>& text) const {
  if (model_catalog().empty() || gpu_catalog().empty()) {
    return make_error(ErrorCode::kInternal, "", "the built-in model/GPU catalog is empty (a broken build)");
  }
  if (!text && text.error().code == ErrorCode::kMissing) {
    // The built-in defaults are an empty trainfit.conf's: slurm.conf's facts (its Default=YES
    // partition, its nodes' GPUs) still apply, as they do under any trainfit.conf.
    Result<std::shared_ptr<LoadedPolicy>> defaults = parse("", stamp_);
    if (!defaults) return defaults;
    defaults.value()->origin = "built-in defaults";
    slurm_info("job_submit/trainfit: %s not found; using the built-in defaults (action = reject, default_gpu = h100)",
               admission::printable(path_).c_str());
    return defaults;
  }
  if (!text) return text.error();
  Result<std::shared_ptr<LoadedPolicy>> loaded = parse(text.value(), stamp_);
  if (loaded) {
    slurm_info("job_submit/trainfit: policy in force from %s: %s", admission::printable(loaded.value()->origin).c_str(),
               admission::printable(describe(*loaded.value())).c_str());
  }
  return loaded;
}

Result<bool> PolicyStore::load_initial() {
  std::lock_guard<std::mutex> lock(mutex_);
  stamp_ = file_stamp(path_);
  Result<std::string> text = read_regular_file(path_, admission::kMaxConfBytes);
  const bool open = !text || admission::fail_open_of(text.value());
  Result<std::shared_ptr<LoadedPolicy>> loaded = initial_policy(text);
  if (loaded) {
    current_ = loaded.value();
    slurm_conf_stamps_ = slurm_conf_stamps(current_);
    return true;
  }
  const std::string& problem = loaded.error().message;
  if (!open) {
    slurm_error("job_submit/trainfit: %s; on_error = closed: refusing to start", admission::printable(problem).c_str());
    return loaded.error();
  }
  current_ = admit_all("no valid policy (" + problem + ")");
  slurm_conf_stamps_ = slurm_conf_stamps(current_);
  slurm_error("job_submit/trainfit: %s; on_error = open: admitting every job until it is fixed",
              admission::printable(problem).c_str());
  return true;
}

void PolicyStore::check(bool catalogs_changed) {
  FileStamps slurm_conf = slurm_conf_stamps(current());
  const bool slurm_conf_changed = slurm_conf != slurm_conf_stamps_;
  slurm_conf_stamps_ = std::move(slurm_conf);
  reload_if_changed(catalogs_changed || slurm_conf_changed);
}

// The watcher thread's: the stamps are its own (load_initial set them before it started), and
// the file is read and parsed (passwd lookups, slurm.conf) before the one lock that publishes
// the result, so that job_submit's current() never waits for this I/O.
void PolicyStore::reload_if_changed(bool force) {
  const FileStamp now = file_stamp(path_);
  reload_pending_ = reload_pending_ || force;  // a forced reload waits with the change, never lost
  if (now == stamp_ && !reload_pending_) {
    settle_.clear();
    return;
  }
  report_future_mtime(now);
  // Look again at the next check rather than load half a file; but not for ever.
  if (!settle_.ready(may_be_mid_edit(now), monotonic_ms())) return;
  settle_.clear();
  reload_pending_ = false;
  const std::shared_ptr<const LoadedPolicy> in_force = current();
  const std::string kept = in_force ? in_force->origin : "none";
  if (!now.exists) {
    stamp_ = now;
    slurm_error("job_submit/trainfit: %s was removed; the policy in force stays: %s",
                admission::printable(path_).c_str(), admission::printable(kept).c_str());
    return;
  }
  Result<std::string> text = read_regular_file(path_, admission::kMaxConfBytes);
  // A failure that may pass by itself (EMFILE, ENOMEM) is tried again at the next check; a
  // file too large, unreadable (EACCES, ENOTDIR) or not a regular file is reported once, as
  // an invalid one is.
  if (!text && text.error().code == ErrorCode::kUnavailable) {
    reload_pending_ = true;  // even when the file did not change (a reload forced by the catalogs)
    return;
  }
  stamp_ = now;
  if (text && !admission::has_settings(text.value())) {
    slurm_error("job_submit/trainfit: %s is now empty (no key = value line; a file cut short or a deleted "
                "policy?); the policy in force stays: %s",
                admission::printable(path_).c_str(), admission::printable(kept).c_str());
    return;
  }
  Result<std::shared_ptr<LoadedPolicy>> loaded = text ? parse(text.value(), now) : text.error();
  if (!loaded) {
    slurm_error("job_submit/trainfit: %s changed but is not valid (%s); the policy in force stays: %s",
                admission::printable(path_).c_str(), admission::printable(loaded.error().message).c_str(),
                admission::printable(kept).c_str());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = loaded.value();
  }
  slurm_info("job_submit/trainfit: reloaded; policy in force from %s: %s",
             admission::printable(loaded.value()->origin).c_str(), admission::printable(describe(*loaded.value())).c_str());
}

// An mtime ahead of this host's clock (a file server's clock ahead, a touch -d) would keep the
// file "mid-edit" until the clocks meet: said once per mtime, read after kMaxSettleMs anyway.
void PolicyStore::report_future_mtime(const FileStamp& now) {
  const int64_t ahead = mtime_ahead_ms(now);
  if (ahead <= 0 || now.mtime_ns == future_reported_) return;
  future_reported_ = now.mtime_ns;
  slurm_error("job_submit/trainfit: %s: its mtime is %lld s ahead of this host's clock; it is read anyway %lld s after "
              "the change was seen", admission::printable(path_).c_str(), static_cast<long long>(ahead / 1000),
              static_cast<long long>(kMaxSettleMs / 1000));
}

Result<admission::CatalogWatcher::Pair> PolicyStore::pair_with(CatalogSet& catalogs) {
  using Pair = admission::CatalogWatcher::Pair;
  const std::shared_ptr<const LoadedPolicy> in_force = current();
  if (in_force == nullptr || in_force->admit_all) return Pair::kAsRead;  // no policy names a GPU
  const Result<bool> resolves = admission::policy_resolves_in(in_force->policy, catalogs.gpus);
  if (resolves) return Pair::kAsRead;
  if (file_stamp(path_) == stamp_) return resolves.error();  // trainfit.conf did not change: refused
  admission::keep_gpus_named(in_force->policy, gpu_catalog(), catalogs);
  const Result<bool> bridged = admission::policy_resolves_in(in_force->policy, catalogs.gpus);
  if (!bridged) return bridged.error();
  return Pair::kBridged;
}

std::shared_ptr<const LoadedPolicy> PolicyStore::current() {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_;
}

}  // namespace trainfit::plugin
