// job_submit/trainfit: the admission authority inside slurmctld. For every
// submission it reads the job's LLM-training annotation and GPU request, predicts
// the per-GPU peak with lib/, and rejects, resizes or warns per /etc/slurm/trainfit.conf.
// Runs under slurmctld's locks: no network, no exceptions across the C boundary,
// bounded work per job, every string given to Slurm from slurm_xstrdup.
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm_host.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"

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
EXPORT int job_modify(job_desc_msg_t* job_desc, void* job_ptr, uint32_t submit_uid);
}

namespace {

using namespace trainfit;
using namespace trainfit::admission;
using trainfit::plugin::set_slurm_string;

constexpr const char* kDefaultConf = "/etc/slurm/trainfit.conf";

std::mutex g_mutex;                 // job_submit may run on several RPC threads
Policy g_policy;                    // valid after init()
bool g_disabled = false;            // config invalid with on_error=open: admit everything
std::atomic<bool> g_audit_warned{false};
std::unordered_map<uint32_t, std::string> g_user_names;  // uid -> name, bounded

std::string conf_path() {
  const char* env = std::getenv("TRAINFIT_CONF");
  return env != nullptr && env[0] != '\0' ? env : kDefaultConf;
}

std::string str(const char* s) { return s == nullptr ? std::string() : std::string(s); }
int64_t count(uint32_t v) { return v == NO_VAL || v == INFINITE ? 0 : static_cast<int64_t>(v); }
int64_t count16(uint16_t v) { return v == NO_VAL16 || v == INFINITE16 ? 0 : static_cast<int64_t>(v); }

// User names from the local passwd database, cached (slurmctld resolves them the same way).
std::string user_name(uint32_t uid) {
  auto it = g_user_names.find(uid);
  if (it != g_user_names.end()) return it->second;
  struct passwd entry, *found = nullptr;
  char buffer[1024];
  std::string name = std::to_string(uid);
  if (getpwuid_r(static_cast<uid_t>(uid), &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr) {
    name = found->pw_name;
  }
  if (g_user_names.size() < 65536) g_user_names.emplace(uid, name);
  return name;
}

Job job_from(const job_desc_msg_t* d, Result<bool>* annotation_status) {
  Job job;
  std::vector<std::string> env;
  for (uint32_t i = 0; d->spank_job_env != nullptr && i < d->spank_job_env_size; ++i) {
    if (d->spank_job_env[i] != nullptr) env.emplace_back(d->spank_job_env[i]);
  }
  *annotation_status = annotation_from_spank_env(env, &job.annotation, &job.annotated);
  if (annotation_status->ok() && !job.annotated && d->comment != nullptr) {
    *annotation_status = annotation_from_comment(d->comment, &job.annotation, &job.annotated);
  }
  job.fields.per_job = str(d->tres_per_job);
  job.fields.per_node = str(d->tres_per_node);
  job.fields.per_task = str(d->tres_per_task);
  job.fields.per_socket = str(d->tres_per_socket);
  job.fields.nodes = count(d->min_nodes);
  job.fields.tasks = count(d->num_tasks);
  job.fields.sockets_per_node = count16(d->sockets_per_node);
  job.partition = str(d->partition);
  return job;
}

void audit(const char* event, const job_desc_msg_t* d, uint32_t uid, const Job& job, const Decision& decision) {
  AuditRecord record;
  record.event = event;
  record.time = static_cast<int64_t>(std::time(nullptr));
  record.uid = d->user_id != NO_VAL ? d->user_id : uid;
  record.user = user_name(record.uid);
  record.account = str(d->account);
  record.partition = str(d->partition);
  record.job_name = str(d->name);
  record.annotation = describe(job.annotation);
  record.gpus_requested = job.gpus.gpus;
  record.decision = decision;
  const std::string problem = append_line(g_policy.audit_log, audit_json(record));
  if (!problem.empty() && !g_audit_warned.exchange(true)) {
    slurm_error("job_submit/trainfit: audit log disabled until restart: %s", problem.c_str());
  }
}

// Strips GPU entries from a TRES list, keeping the rest ("" when nothing is left).
std::string without_gpus(const char* text) {
  Result<TresList> list = parse_tres(str(text));
  if (!list) return str(text);
  std::string out;
  for (const std::string& other : list->others) out += (out.empty() ? "" : ",") + other;
  return out;
}

void apply_resize(job_desc_msg_t* d, const Decision& decision) {
  if (!decision.new_tres_per_node.empty()) {
    set_slurm_string(&d->tres_per_node, decision.new_tres_per_node);
  } else {
    set_slurm_string(&d->tres_per_job, decision.new_tres_per_job);
    set_slurm_string(&d->tres_per_node, without_gpus(d->tres_per_node));
  }
  set_slurm_string(&d->tres_per_task, without_gpus(d->tres_per_task));
  set_slurm_string(&d->tres_per_socket, without_gpus(d->tres_per_socket));
  if (decision.new_nodes > 0) {
    d->min_nodes = static_cast<uint32_t>(decision.new_nodes);
    if (d->max_nodes != NO_VAL && d->max_nodes < d->min_nodes) d->max_nodes = d->min_nodes;
  }
}

int check(const char* event, job_desc_msg_t* d, uint32_t uid, char** err_msg) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_disabled) return SLURM_SUCCESS;
  Result<bool> annotation = true;
  Job job = job_from(d, &annotation);
  Decision decision;
  const PartitionPolicy& rules = g_policy.for_partition(job.partition);
  Result<GpuTotal> gpus = total_gpus(job.fields);
  if (!annotation) {
    decision.verdict = rules.action == Action::kWarn ? Verdict::kWarn : Verdict::kReject;
    decision.message = "trainfit: " + annotation.error().message;
  } else if (!gpus) {
    decision.verdict = job.annotated ? Verdict::kReject : Verdict::kPass;
    decision.message = job.annotated ? "trainfit: " + gpus.error().message : "";
  } else if (err_msg == nullptr && gpus->gpus == 0) {
    // An update that does not touch the GPU request cannot change the verdict.
    decision.verdict = Verdict::kPass;
  } else {
    job.gpus = gpus.value();
    decision = decide(g_policy, job);
  }
  if (decision.verdict == Verdict::kPass) return SLURM_SUCCESS;  // not ours: untouched, not audited
  audit(event, d, uid, job, decision);
  switch (decision.verdict) {
    case Verdict::kReject:
      if (err_msg != nullptr) *err_msg = slurm_xstrdup(decision.message.c_str());
      else slurm_info("job_submit/trainfit: refused update: %s", decision.message.c_str());
      return ESLURM_INVALID_GRES;
    case Verdict::kResize:
      apply_resize(d, decision);
      [[fallthrough]];
    case Verdict::kWarn:
      if (err_msg != nullptr) *err_msg = slurm_xstrdup(decision.message.c_str());
      return SLURM_SUCCESS;
    default:
      return SLURM_SUCCESS;
  }
}

int guarded(const char* event, job_desc_msg_t* d, uint32_t uid, char** err_msg) {
  try {
    return check(event, d, uid, err_msg);
  } catch (const std::exception& e) {
    slurm_error("job_submit/trainfit: internal error: %s", e.what());
  } catch (...) {
    slurm_error("job_submit/trainfit: internal error");
  }
  if (g_policy.fail_open) return SLURM_SUCCESS;
  if (err_msg != nullptr) *err_msg = slurm_xstrdup("trainfit: internal error; job refused (on_error = closed)");
  return SLURM_ERROR;
}

}  // namespace

extern "C" int init(void) {
  try {
    // Parse the compiled-in catalogs now, not under slurmctld's locks at the first job.
    if (model_catalog().empty() || gpu_catalog().empty()) {
      slurm_error("job_submit/trainfit: the built-in model/GPU catalog is empty (a broken build); admitting every job");
      g_disabled = true;
      return SLURM_SUCCESS;
    }
    const std::string path = conf_path();
    std::ifstream in(path);
    if (!in) {
      slurm_info("job_submit/trainfit: %s not found; using defaults (action = reject, default_gpu = h100)",
                 path.c_str());
      return SLURM_SUCCESS;
    }
    std::ostringstream text;
    text << in.rdbuf();
    Result<Policy> policy = parse_policy(text.str());
    if (!policy) {
      const bool closed = text.str().find("closed") != std::string::npos;
      slurm_error("job_submit/trainfit: %s: %s; %s", path.c_str(), policy.error().message.c_str(),
                  closed ? "on_error = closed: refusing to start" : "admitting every job until it is fixed");
      if (closed) return SLURM_ERROR;
      g_disabled = true;
      return SLURM_SUCCESS;
    }
    g_policy = policy.value();
    slurm_info("job_submit/trainfit: loaded %s (action = %s, %zu partition overrides, audit_log = %s)", path.c_str(),
               to_string(g_policy.defaults.action), g_policy.partitions.size(), g_policy.audit_log.c_str());
    return SLURM_SUCCESS;
  } catch (...) {
    slurm_error("job_submit/trainfit: init failed; admitting every job");
    g_disabled = true;
    return SLURM_SUCCESS;
  }
}

extern "C" int fini(void) { return SLURM_SUCCESS; }

extern "C" int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  return guarded("submit", job_desc, submit_uid, err_msg);
}

extern "C" int job_modify(job_desc_msg_t* job_desc, void* /*job_ptr*/, uint32_t submit_uid) {
  // 22.05 passes no err_msg here: a refusal reaches the user as the error code.
  return guarded("modify", job_desc, submit_uid, nullptr);
}
