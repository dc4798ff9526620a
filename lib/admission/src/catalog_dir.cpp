// Site catalogs on disk: DIR/gpus.d/*.json and DIR/models.d/*.json (docs/site.md).
#include "trainfit/admission/catalog_dir.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "internal.h"
#include "trainfit/admission.h"
#include "trainfit/util/clock.h"
#include "trainfit/util/file.h"

namespace trainfit::admission {
namespace {

// A problem with a catalog folder as a whole: "FOLDER: reason".
Error folder_problem(const std::string& folder, std::string reason, ErrorCode code = ErrorCode::kInvalidValue) {
  return located_error(code, "catalog_dir", folder, 0, std::move(reason));
}

bool ends_with_json(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

// The *.json names of a folder, sorted (byte order, as `LC_ALL=C ls`); hidden files
// (editors' .swp, .#) skipped. Missing folder: no names, no problem.
Result<std::vector<std::string>> json_names(const std::string& folder) {
  std::vector<std::string> names;
  DIR* d = ::opendir(folder.c_str());
  if (d == nullptr) {
    if (errno != ENOENT) return folder_problem(folder, std::string("cannot be read: ") + std::strerror(errno));
    return names;
  }
  size_t seen = 0;
  while (const struct dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name.empty() || name[0] == '.' || !ends_with_json(name)) continue;
    if (++seen > kMaxCatalogFiles) {
      ::closedir(d);
      return folder_problem(folder, "has more than " + std::to_string(kMaxCatalogFiles) + " *.json files; accepted: at most " +
                                        std::to_string(kMaxCatalogFiles));
    }
    names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// A folder's catalog files as read, and what could not be read (each named by its file).
struct Folder {
  std::vector<CatalogText> files;
  std::vector<Error> problems;
};

Folder read_folder(const std::string& folder) {
  Folder out;
  Result<std::vector<std::string>> names = json_names(folder);
  if (!names) {
    out.problems.push_back(names.error());
    return out;
  }
  for (const std::string& name : names.value()) {
    const std::string path = folder + "/" + name;
    Result<std::string> text = read_regular_file(path, kMaxCatalogFileBytes);
    if (!text) {
      out.problems.push_back(located_error(text.error().code, "file", path + ":1", 1, text.error().reason));
      continue;
    }
    out.files.push_back(CatalogText{path, std::move(text).value()});
  }
  return out;
}

// Each catalog file's stamp, named by its path: a file added, removed or changed changes the
// list (a folder that cannot be listed has none: reading it says why).
void add_stamps_of_folder(const std::string& folder, FileStamps& out) {
  const Result<std::vector<std::string>> names = json_names(folder);
  if (!names) return;
  for (const std::string& name : names.value()) {
    const std::string path = folder + "/" + name;
    out.emplace_back(path, file_stamp(path));
  }
}

// A read failure (an EMFILE, an EACCES fixed later) rather than a mistake in a file's content:
// read_folder and folder_problem name the file or folder as the problem's field.
bool is_read_failure(const Error& problem) { return problem.field == "file" || problem.field == "catalog_dir"; }

}  // namespace

std::string catalog_dir(const std::string& option, bool* explicit_dir) {
  *explicit_dir = true;
  if (!option.empty()) return option;
  const char* env = std::getenv("TRAINFIT_CATALOG_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  *explicit_dir = false;
  return kDefaultCatalogDir;
}

CatalogSet read_catalog_dir(const std::string& dir, bool must_exist) {
  std::vector<Error> problems;
  struct stat st;
  std::vector<CatalogText> gpus, models;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || must_exist) {
      problems.push_back(folder_problem(dir, (errno == ENOENT ? std::string("not found") : std::strerror(errno)) +
                                                 "; accepted: a folder holding gpus.d/*.json and models.d/*.json",
                                        errno == ENOENT ? ErrorCode::kMissing : ErrorCode::kUnavailable));
    }
  } else if (!S_ISDIR(st.st_mode)) {
    problems.push_back(folder_problem(dir, std::string("is ") + file_kind(st.st_mode) + ", not a folder"));
  } else {
    Folder gpu_folder = read_folder(dir + "/gpus.d");
    Folder model_folder = read_folder(dir + "/models.d");
    gpus = std::move(gpu_folder.files);
    models = std::move(model_folder.files);
    problems.insert(problems.end(), gpu_folder.problems.begin(), gpu_folder.problems.end());
    problems.insert(problems.end(), model_folder.problems.begin(), model_folder.problems.end());
  }
  CatalogSet set = merge_catalogs(gpus, models);
  set.problems.insert(set.problems.begin(), problems.begin(), problems.end());
  return set;
}

FileStamps catalog_dir_stamps(const std::string& dir) {
  FileStamps out;
  add_stamps_of_folder(dir + "/gpus.d", out);
  add_stamps_of_folder(dir + "/models.d", out);
  return out;
}

CatalogSet load_site_catalogs(const std::string& dir, bool must_exist) {
  CatalogSet set = read_catalog_dir(dir, must_exist);
  if (set.problems.empty()) install_catalogs(set);
  return set;
}


CatalogWatcher::CatalogWatcher(std::string dir, bool must_exist, Log log)
    : dir_(std::move(dir)), must_exist_(must_exist), log_(std::move(log)) {}

CatalogWatcher::~CatalogWatcher() { stop(); }

bool CatalogWatcher::load() {
  std::lock_guard<std::mutex> lock(stamp_mutex_);
  stamp_ = catalog_dir_stamps(dir_);
  const CatalogSet set = load_site_catalogs(dir_, must_exist_);
  read_again_ = std::any_of(set.problems.begin(), set.problems.end(), is_read_failure);  // EMFILE at init too
  for (const Error& problem : set.problems) log_(true, "site catalog: " + problem.message);
  if (!set.problems.empty()) {
    log_(true, "site catalogs in " + dir_ + " not valid; using the built-in catalogs (" +
                   std::to_string(gpu_catalog().size()) + " GPUs, " + std::to_string(model_catalog().size()) + " models)");
    return false;
  }
  for (const std::string& note : set.notes) log_(false, "site catalog: " + note);
  return true;
}

// Whether the change seen may be read now (util/file_stamp.h's rule), logging once each file
// whose mtime is ahead of this host's clock (it would look mid-edit until the clocks meet).
bool CatalogWatcher::settled(const FileStamps& now) {
  bool mid_edit = false;
  for (const auto& [path, stamp] : now) {
    if (!may_be_mid_edit(stamp)) continue;
    mid_edit = true;
    const int64_t ahead = mtime_ahead_ms(stamp);
    const std::pair<std::string, int64_t> key(path, stamp.mtime_ns);
    if (ahead <= 0 || std::find(future_reported_.begin(), future_reported_.end(), key) != future_reported_.end()) continue;
    if (future_reported_.size() >= 2 * kMaxCatalogFiles) future_reported_.clear();
    future_reported_.push_back(key);
    log_(true, "site catalog " + path + ": its mtime is " + std::to_string(ahead / 1000) +
                   " s ahead of this host's clock; it is read anyway " + std::to_string(kMaxSettleMs / 1000) +
                   " s after the change was seen");
  }
  return pending_.ready(mid_edit, monotonic_ms());
}

// The lines of a refusal, logged when they differ from the last refusal's (not every second).
void CatalogWatcher::report_once(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  if (all == last_problem_) return;
  last_problem_ = all;
  for (const std::string& line : lines) log_(true, line);
}

bool CatalogWatcher::install_if_valid(CatalogSet set) {
  if (!set.problems.empty()) {
    read_again_ = std::any_of(set.problems.begin(), set.problems.end(), is_read_failure);
    std::vector<std::string> lines;
    for (const Error& problem : set.problems) lines.push_back("site catalog: " + problem.message);
    lines.push_back("site catalogs in " + dir_ + " changed but are not valid; the catalogs in use stay" +
                    (read_again_ ? " (read again at each check until they can be read)" : ""));
    report_once(lines);
    return false;
  }
  Result<Pair> pair = Pair::kAsRead;
  if (validate_) pair = validate_(set);
  if (!pair) {
    read_again_ = true;  // trainfit.conf may be changed to match: tried again at each check
    report_once({"site catalogs in " + dir_ + " changed but are not installed: " + pair.error().message +
                 "; the catalogs and policy in force stay (tried again at each check)"});
    return false;
  }
  const bool bridge = pair.value() == Pair::kBridged;
  read_again_ = bridge;  // a bridge is replaced by the files as they are once the new policy is in force
  if (bridge && bridged_) return false;  // this bridge is in force already: wait for the policy
  bridged_ = bridge;
  last_problem_.clear();
  install_catalogs(set);
  for (const std::string& note : set.notes) log_(false, "site catalog: " + note);
  log_(false, "site catalogs reloaded from " + dir_ + ": " + std::to_string(set.gpus.size()) + " GPUs, " +
                  std::to_string(set.models.size()) + " models");
  return true;
}

bool CatalogWatcher::check_once() {
  std::lock_guard<std::mutex> lock(stamp_mutex_);
  const FileStamps now = catalog_dir_stamps(dir_);
  if (now == stamp_ && !read_again_) {
    pending_.clear();
    return false;
  }
  if (!settled(now)) return false;
  pending_.clear();
  if (now != stamp_) bridged_ = false;  // other files: a bridge of its own if one is needed
  stamp_ = now;
  return install_if_valid(read_catalog_dir(dir_, must_exist_));
}

void CatalogWatcher::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  finished_ = false;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> held(mutex_);
    while (!wake_.wait_for(held, std::chrono::seconds(1), [this] { return stopping_; })) {
      held.unlock();
      try {
        const bool installed = check_once();
        if (after_check_) after_check_(installed);
      } catch (...) {  // out of memory while reading: try again at the next look
      }
      held.lock();
    }
    finished_ = true;
    ended_.notify_all();
  });
}

void CatalogWatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  std::thread running;
  {
    std::lock_guard<std::mutex> lock(mutex_);  // start() assigns thread_ under the same lock
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) running = std::move(thread_);
  }
  if (running.joinable()) running.join();
}

bool CatalogWatcher::stop_within(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!thread_.joinable() || thread_.get_id() == std::this_thread::get_id()) return true;
  stopping_ = true;
  wake_.notify_all();
  if (!ended_.wait_for(lock, wait, [this] { return finished_; })) {
    thread_.detach();  // blocked in a stat() or read() of a hung disk: left behind
    return false;
  }
  std::thread ended = std::move(thread_);
  lock.unlock();
  ended.join();  // it has left its loop: returns at once
  return true;
}

}  // namespace trainfit::admission
