// job_submit/trainfit: the admission authority inside slurmctld. For every
// submission it reads the job's LLM-training annotation and GPU request, predicts
// the per-GPU peak with lib/, and rejects, resizes or warns per /etc/slurm/trainfit.conf.
// Runs in slurmctld's RPC threads: no network, no exceptions across the C boundary,
// bounded work per job, no global lock around the decision (the policy is an
// immutable snapshot), every string given to Slurm from slurm_xstrdup.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "job_desc.h"
#include "policy_store.h"
#include "slurm_host.h"
#include "trainfit/admission.h"
#include "trainfit/admission/audit_writer.h"
#include "trainfit/admission/catalog_dir.h"
#include "trainfit/util/file.h"
#include "trainfit/util/passwd.h"

extern "C" {
#define EXPORT __attribute__((visibility("default")))
EXPORT extern const char plugin_name[];
EXPORT extern const char plugin_type[];
EXPORT extern const uint32_t plugin_version;
const char plugin_name[] = "trainfit: LLM training memory admission";
const char plugin_type[] = "job_submit/trainfit";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
EXPORT int init(void);
EXPORT int fini(void);
EXPORT int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg);
// Slurm 23.02 added err_msg to job_modify.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
EXPORT int job_modify(job_desc_msg_t* job_desc, void* job_ptr, uint32_t submit_uid, char** err_msg);
#else
EXPORT int job_modify(job_desc_msg_t* job_desc, void* job_ptr, uint32_t submit_uid);
#endif
}

namespace {

using namespace trainfit;
using namespace trainfit::admission;
using namespace trainfit::plugin;

constexpr const char* kDefaultConf = "/etc/slurm/trainfit.conf";

std::string conf_path() {
  const char* env = std::getenv("TRAINFIT_CONF");
  return env != nullptr && env[0] != '\0' ? env : kDefaultConf;
}

PolicyStore* g_store = nullptr;  // set by init(); slurmctld calls init before any job
uint32_t g_slurm_user = 0;       // slurmctld's own uid (SlurmUser), read once by init()
// Test hook (TRAINFIT_FAIL_DECISIONS=1 in slurmctld's environment): every decision
// throws, so the integration test can see on_error and the internal-error class at work.
bool g_fail_decisions = false;
// Test hook (TRAINFIT_FAIL_AUDIT=1): auditing a decision throws bad_alloc, so that the tests
// see the verdict stand when its audit fails.
bool g_fail_audit = false;
bool g_broken = false;           // init failed open (e.g. an internal error): admit everything

// The audit log: decisions queue their records; one thread writes them, in order.
AuditWriter* g_audit = nullptr;

// Site catalogs ($TRAINFIT_CATALOG_DIR, else /etc/trainfit; docs/site.md) and trainfit.conf:
// read at init, then by one thread when their files change; jobs only read what is installed.
CatalogWatcher* g_catalogs = nullptr;

// Decision ids link an audit line to the job's AdminComment: "<start time hex>-<n>".
std::string g_id_prefix;
std::atomic<uint64_t> g_decisions{0};

// uid -> user name, for the writer thread (NSS may be slow: never in job_submit itself).
std::unordered_map<uint32_t, std::string> g_user_names;  // only the writer thread uses it

std::string user_name(uint32_t uid) {
  auto it = g_user_names.find(uid);
  if (it != g_user_names.end()) return it->second;
  Result<std::string> found = name_of_uid(uid);  // an entry too large for one buffer is looked up again
  if (!found && found.error().code == ErrorCode::kUnavailable) return std::to_string(uid);  // not kept: NSS may come back
  const std::string name = found ? found.value() : std::to_string(uid);
  if (g_user_names.size() < 65536) g_user_names.emplace(uid, name);
  return name;
}

// User text is cut when the record is built, so that the queue holds little of it.
std::string capped(const std::string& text) { return truncated(text, kMaxAuditField); }
std::string capped(const char* text) {
  if (text == nullptr) return "";
  const size_t length = strnlen(text, size_t{1} << 24);  // a bounded scan
  return truncated(std::string(text, std::min(length, kMaxAuditField + 4)), kMaxAuditField, length);
}

// Takes the job and decision over: their strings move into the queued record.
void audit(const char* event, const job_desc_msg_t* d, uint32_t uid, Job&& job, Decision&& decision, std::string&& id,
           std::shared_ptr<const std::string> audit_path) {
  if (g_audit == nullptr) return;
  auto record = std::make_unique<AuditRecord>(std::move(job.annotation.request), std::move(decision));
  AuditRecord& r = *record;
  r.event = event;
  r.time = static_cast<int64_t>(std::time(nullptr));
  r.decision_id = std::move(id);
  r.job_id = job_id_of(d);
  r.uid = d->user_id != NO_VAL ? d->user_id : uid;  // the writer thread looks the name up
  r.account = capped(job.account);
  r.partition = capped(job.partition);
  r.qos = capped(job.qos);
  r.job_name = capped(d->name);
  r.gpu_request = capped(gpu_request_as_written(d));
  r.time_limit_minutes = d->time_limit == NO_VAL || d->time_limit == INFINITE ? 0 : d->time_limit;  // GPU-hours in reports
  r.decision.message = truncated(r.decision.message, 4 * kMaxAuditField);
  g_audit->submit(std::move(record), std::move(audit_path));
}

// Each class of refusal has its own Slurm error code, so that the last line sbatch
// prints ("Batch job submission failed: ...") names the right kind of problem.
int error_code(Reason reason) {
  switch (reason) {
    case Reason::kTooFewGpus:
    case Reason::kGpuRequest: return ESLURM_INVALID_GRES;
    case Reason::kUnknownGpu: return ESLURM_INVALID_GRES_TYPE;
    case Reason::kAnnotationRequired:
    // An update must restate the annotation: 22.05's scontrol shows only this code's text
    // ("Access/permission denied"), the closest to "not without the annotation" (docs/slurm.md).
    case Reason::kRestateRequired: return ESLURM_ACCESS_DENIED;
    case Reason::kInternal: return ESLURM_INTERNAL;
    case Reason::kInvalidAnnotation:
    case Reason::kUncertainFit:  // a warning: never refused
    case Reason::kNone: break;
  }
  return SLURM_ERROR;
}

std::string next_decision_id() { return g_id_prefix + "-" + std::to_string(++g_decisions); }

void tell_user(char** err_msg, const std::string& message) {
  if (err_msg != nullptr && !message.empty()) *err_msg = slurm_xstrdup(printable(message).c_str());
}

// Tells the user and Slurm, then hands the job and decision to the audit log.
int finish(const char* event, job_desc_msg_t* d, uint32_t uid, Job&& job, Decision&& decision,
           const std::shared_ptr<const LoadedPolicy>& loaded, char** err_msg) {
  const bool audited = decision.verdict != Verdict::kPass || decision.unchecked || (decision.exempt && job.annotation.found);
  if (!audited) return SLURM_SUCCESS;
  std::string id = next_decision_id();
  const bool submit = std::strcmp(event, admission::audit_field::kEventSubmit) == 0;
  if (!submit && !decision.message.empty()) {
    slurm_info("job_submit/trainfit: %s update by uid %u: %s", to_string(decision.verdict), uid,
               printable(decision.message).c_str());
  }
  int rc = SLURM_SUCCESS;
  switch (decision.verdict) {
    case Verdict::kReject:
      tell_user(err_msg, decision.message);
      rc = error_code(decision.reason);
      break;
    case Verdict::kResize:
      apply_resize(d, decision);
      [[fallthrough]];
    case Verdict::kAccept:
    case Verdict::kWarn:
      if (submit) stamp_admin_comment(d, decision, id);
      tell_user(err_msg, decision.message);
      break;
    case Verdict::kPass: break;
  }
  // The verdict is decided and Slurm told: a failure to audit it (bad_alloc building the record)
  // loses the record, never turns a refusal into an acceptance through on_error.
  try {
    if (g_fail_audit) throw std::bad_alloc();
    // The path is shared with the policy that holds it (no copy per record).
    std::shared_ptr<const std::string> path(loaded, &loaded->policy.audit_log);
    // A job without -p runs in slurmctld's default partition: the record names it where
    // trainfit.conf says which (default_partition), as reports group by it.
    if (job.partition.empty()) job.partition = loaded->policy.default_partition;
    audit(event, d, uid, std::move(job), std::move(decision), std::string(id), std::move(path));
  } catch (...) {  // logged without allocating (the id is ours: hex and digits)
    slurm_error("job_submit/trainfit: decision %s not audited (out of memory building its record); its verdict stands",
                id.c_str());
  }
  return rc;
}

int check_submit(job_desc_msg_t* d, uint32_t uid, char** err_msg) {
  if (g_broken || g_store == nullptr) return SLURM_SUCCESS;
  const CatalogUse use;  // the catalog entries this decision looks up are not freed under it
  const std::shared_ptr<const LoadedPolicy> loaded = g_store->current();
  if (loaded->admit_all) return SLURM_SUCCESS;
  // The 2.3 KB Job on the heap: slurmctld runs each RPC on a new thread, and every stack page it
  // touches first costs a page fault (resolve.cpp); the plugin's stack stays shallow.
  auto job = std::make_unique<Job>();
  job_from_submission(d, uid, job.get());
  if (g_fail_decisions) throw std::runtime_error("TRAINFIT_FAIL_DECISIONS is set (a test hook)");
  Decision decision = decide(loaded->policy, *job);
  return finish(admission::audit_field::kEventSubmit, d, uid, std::move(*job), std::move(decision), loaded, err_msg);
}

int check_update(job_desc_msg_t* d, uint32_t uid, char** err_msg) {
  if (g_broken || g_store == nullptr) return SLURM_SUCCESS;
  const CatalogUse use;
  const std::shared_ptr<const LoadedPolicy> loaded = g_store->current();
  if (loaded->admit_all) return SLURM_SUCCESS;
  Update update = update_from(d, uid);
  // Slurm's own operators: root and SlurmUser (slurmctld runs as SlurmUser); the site's in
  // trainfit.conf `operators` (Slurm's AdminLevel lives in slurmdbd, out of the plugin's reach).
  update.by_operator = uid == 0 || uid == g_slurm_user || loaded->policy.operator_uids.count(uid) > 0;
  Decision decision = decide_update(loaded->policy, update);
  return finish(admission::audit_field::kEventModify, d, uid, std::move(update.job), std::move(decision), loaded, err_msg);
}

bool fail_open() {
  if (g_store == nullptr) return true;
  const std::shared_ptr<const LoadedPolicy> loaded = g_store->current();
  return loaded == nullptr || loaded->policy.fail_open;
}

template <typename Check>
int guarded(Check check, job_desc_msg_t* d, uint32_t uid, char** err_msg) {
  try {
    try {
      return check(d, uid, err_msg);
    } catch (const std::exception& e) {
      slurm_error("job_submit/trainfit: internal error: %s", printable(e.what()).c_str());
    } catch (...) {
      slurm_error("job_submit/trainfit: internal error");
    }
    if (fail_open()) return SLURM_SUCCESS;
    tell_user(err_msg, "trainfit: internal error; job refused (on_error = closed)");
    return ESLURM_INTERNAL;
  } catch (...) {  // even reporting failed (out of memory): nothing crosses into slurmctld
    return SLURM_SUCCESS;
  }
}

void log_line(bool error, const std::string& line) {
  if (error) slurm_error("job_submit/trainfit: %s", printable(line).c_str());
  else slurm_info("job_submit/trainfit: %s", printable(line).c_str());
}

// How long fini() waits for each thread: slurmctld's shutdown or reconfigure must not hang on
// a hung disk or NSS server.
constexpr std::chrono::seconds kFiniWait{5};

// A thread that did not end keeps running this plugin's code: the plugin stays loaded
// (RTLD_NODELETE: a later dlclose by slurmctld does not unmap it) and its object is never freed.
void left_behind(const char* what) {
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&left_behind), &self) != 0 && self.dli_fname != nullptr) {
    ::dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
  slurm_error("job_submit/trainfit: fini: %s did not stop within %lld s; left running, detached", what,
              static_cast<long long>(kFiniWait.count()));
}

}  // namespace

extern "C" int init(void) {
  try {
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "%lx", static_cast<unsigned long>(std::time(nullptr)));
    g_id_prefix = prefix;
    g_slurm_user = static_cast<uint32_t>(::getuid());
    const char* fail = std::getenv("TRAINFIT_FAIL_DECISIONS");
    g_fail_decisions = fail != nullptr && std::string(fail) == "1";
    const char* fail_audit = std::getenv("TRAINFIT_FAIL_AUDIT");
    g_fail_audit = fail_audit != nullptr && std::string(fail_audit) == "1";
    bool catalog_dir_named = false;
    const std::string catalog_path = catalog_dir("", &catalog_dir_named);
    // On the heap: fini() leaves a thread stuck on a hung disk behind, and it must not find
    // its object destroyed (nor the plugin unloaded: left_behind).
    auto catalogs = std::make_unique<CatalogWatcher>(catalog_path, catalog_dir_named, log_line);
    catalogs->load();  // before the policy: default_gpu and gpu_alias may name a site GPU
    static PolicyStore store(conf_path());
    g_store = &store;
    if (!store.load_initial()) return SLURM_ERROR;
    // One thread looks once a second: the catalogs first (installed only when the policy in
    // force resolves in them), then the policy that names them (parsed against the catalog
    // in force): jobs always see a policy and a catalog that were validated as a pair.
    catalogs->validate_with([](CatalogSet& set) { return g_store->pair_with(set); });
    // A replaced catalog is freed once no decision uses it (each holds a CatalogUse): tens of
    // KB per reload otherwise, kept for slurmctld's lifetime.
    catalogs->after_each_check([](bool installed) {
      g_store->check(installed);
      free_replaced_catalogs();
    });
    try {
      catalogs->start();
      g_catalogs = catalogs.release();
    } catch (const std::exception& e) {
      slurm_error("job_submit/trainfit: trainfit.conf and the site catalogs will not be reloaded: cannot start a "
                  "thread: %s", e.what());
    }
    try {  // no audit thread (a thread limit) must not mean no admission
      auto writer = std::make_unique<AuditWriter>(log_line, 65536, user_name);
      writer->start();
      g_audit = writer.release();
    } catch (const std::exception& e) {
      slurm_error("job_submit/trainfit: audit log disabled: cannot start its writer thread: %s", e.what());
    }
    return SLURM_SUCCESS;
  } catch (...) {
    const Result<std::string> conf = read_regular_file(conf_path(), kMaxConfBytes);
    const bool open = fail_open_of(conf ? conf.value() : std::string());
    slurm_error("job_submit/trainfit: init failed; %s", open ? "admitting every job (on_error = open)"
                                                               : "refusing to start (on_error = closed)");
    g_broken = true;
    return open ? SLURM_SUCCESS : SLURM_ERROR;
  }
}

extern "C" int fini(void) {
  try {
    if (g_catalogs != nullptr) {
      if (g_catalogs->stop_within(kFiniWait)) delete g_catalogs;
      else left_behind("the site catalog watcher (a stat or read of a hung disk)");
      g_catalogs = nullptr;
    }
    if (g_audit != nullptr) {  // what is queued is written first
      if (g_audit->stop_within(kFiniWait)) delete g_audit;
      else left_behind("the audit writer (a write to a hung disk or a passwd lookup to a hung NSS; queued records may be lost)");
      g_audit = nullptr;
    }
  } catch (...) {
  }
  return SLURM_SUCCESS;
}

extern "C" int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  return guarded(check_submit, job_desc, submit_uid, err_msg);
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
extern "C" int job_modify(job_desc_msg_t* job_desc, void* /*job_ptr*/, uint32_t submit_uid, char** err_msg) {
  return guarded(check_update, job_desc, submit_uid, err_msg);
}
#else
extern "C" int job_modify(job_desc_msg_t* job_desc, void* /*job_ptr*/, uint32_t submit_uid) {
  // 22.05 passes no err_msg here: the refusal reaches the user as the error code, the
  // message goes to slurmctld's log and the audit log.
  return guarded(check_update, job_desc, submit_uid, nullptr);
}
#endif
