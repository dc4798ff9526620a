#include "job_desc.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "slurm_compat.h"
#include "slurm_host.h"
#include "trainfit/admission/spank_env.h"

namespace trainfit::plugin {
namespace {

using namespace trainfit::admission;

std::string str(const char* s) { return s == nullptr ? std::string() : std::string(s); }
int64_t count(uint32_t v) { return v == NO_VAL || v == INFINITE ? 0 : static_cast<int64_t>(v); }
int64_t count16(uint16_t v) { return v == NO_VAL16 || v == INFINITE16 ? 0 : static_cast<int64_t>(v); }

JobGpuFields gpu_fields(const job_desc_msg_t* d) {
  JobGpuFields f;
  f.per_job = str(d->tres_per_job);
  f.per_node = str(d->tres_per_node);
  f.per_task = str(d->tres_per_task);
  f.per_socket = str(d->tres_per_socket);
  f.nodes = count(d->min_nodes);
  f.max_nodes = count(d->max_nodes);
  f.tasks = count(d->num_tasks);
  f.tasks_per_node = count16(d->ntasks_per_node);
  f.sockets_per_node = count16(d->sockets_per_node);
  // --exclusive (not =user or =mcs): the nodes, and every GRES on them, are the job's alone.
  f.whole_nodes = d->shared == JOB_SHARED_NONE;
  return f;
}

// --mem or --mem-per-cpu (pn_min_memory, MiB; the MEM_PER_CPU bit marks the second), with the
// fewest CPUs per node the job asks for: --mincpus, or --cpus-per-task x --ntasks-per-node.
// Unset (NO_VAL64) or --mem=0: none, the nodes' whole memory is the job's.
JobMemory memory(const job_desc_msg_t* d) {
  JobMemory m;
  const uint64_t mem = d->pn_min_memory;
  if (mem == NO_VAL64 || mem == INFINITE64 || (mem & ~MEM_PER_CPU) > (uint64_t{1} << 40)) return m;
  const int64_t per_task = std::max<int64_t>(1, count16(d->cpus_per_task));
  m.cpus_per_node = std::max({int64_t{1}, count16(d->pn_min_cpus), per_task * std::max<int64_t>(1, count16(d->ntasks_per_node))});
  if (mem & MEM_PER_CPU) m.per_cpu_mb = static_cast<int64_t>(mem & ~MEM_PER_CPU);
  else m.per_node_mb = static_cast<int64_t>(mem);
  return m;
}

void read_comment(const job_desc_msg_t* d, Job* job) {
  if (d->comment == nullptr) return;
  Result<bool> read = annotation_from_comment(d->comment, &job->annotation);
  job->annotation_read = read;
}

// Strips GPU entries from a TRES list, keeping the rest ("" when nothing is left).
std::string without_gpus(const char* text) {
  Result<TresList> list = parse_tres(str(text));
  if (!list) return str(text);
  std::string out;
  for (const std::string& other : list->others) out += (out.empty() ? "" : ",") + other;
  return out;
}

// Only trainfit's entries are copied: the job's environment may be large.
bool starts_with(const char* entry, std::string_view prefix) {
  return std::strncmp(entry, prefix.data(), prefix.size()) == 0;
}
bool is_variable(const char* entry, std::string_view name) { return starts_with(entry, name) && entry[name.size()] == '='; }
bool ours(const char* entry) {
  return starts_with(entry, kSpankOptionPrefix) || is_variable(entry, kGeometryVariable) ||
         is_variable(entry, kConfigVariable);
}

// Whether an update touches a field the job's GPU count is computed from (total_gpus): a GPU
// request, --exclusive, or the nodes, tasks and sockets that --gpus-per-node, -per-task and
// -per-socket multiply. scontrol update sets them as NumNodes=/MinNodes=/MaxNodes= (min_nodes,
// max_nodes), NumTasks= (num_tasks), ReqSockets= (sockets_per_node) (src/scontrol/update_job.c).
bool changes_gpu_count(const job_desc_msg_t* d) {
  const bool gres = d->tres_per_job != nullptr || d->tres_per_node != nullptr || d->tres_per_task != nullptr ||
                    d->tres_per_socket != nullptr;
  return gres || d->shared != NO_VAL16 || count(d->min_nodes) > 0 || count(d->max_nodes) > 0 ||
         count(d->num_tasks) > 0 || count16(d->ntasks_per_node) > 0 || count16(d->sockets_per_node) > 0 ||
         count16(d->ntasks_per_socket) > 0;
}

}  // namespace

void job_from_submission(const job_desc_msg_t* d, uint32_t submit_uid, Job* out) {
  Job& job = *out;
  std::vector<std::string> env;
  for (uint32_t i = 0; d->spank_job_env != nullptr && i < d->spank_job_env_size; ++i) {
    if (d->spank_job_env[i] != nullptr && ours(d->spank_job_env[i])) env.emplace_back(d->spank_job_env[i]);
  }
  job.fields = gpu_fields(d);
  job.memory = memory(d);
  job.partition = str(d->partition);
  job.uid = d->user_id != NO_VAL ? d->user_id : submit_uid;
  job.account = str(d->account);
  job.constraint = str(d->features);
  job.qos = str(d->qos);
  job.het_component = d->het_job_offset == NO_VAL ? -1 : static_cast<int64_t>(d->het_job_offset);
  if (job.het_component > 0) return;  // the annotation sbatch copied here is the first component's
  const std::string comment = str(d->comment);
  Result<bool> read = annotation_of_job(env, d->comment != nullptr ? &comment : nullptr, &job.annotation);
  if (!read) {
    job.annotation_read = read;
    job.annotation.found = true;  // what was given is judged (and refused), never passed over
  }
}

Update update_from(const job_desc_msg_t* d, uint32_t submit_uid) {
  Update u;
  read_comment(d, &u.job);
  u.job.fields = gpu_fields(d);
  u.job.memory = memory(d);
  u.job.partition = str(d->partition);
  u.job.uid = submit_uid;
  u.job.account = str(d->account);
  u.job.constraint = str(d->features);
  u.job.qos = str(d->qos);
  u.job_id = job_id_of(d);
  u.sets_gpus = changes_gpu_count(d);
  u.sets_partition = d->partition != nullptr;
  u.sets_features = d->features != nullptr;  // scontrol update Features= (also when clearing it)
  return u;
}

std::string job_id_of(const job_desc_msg_t* d) {
  if (d->job_id_str != nullptr) return d->job_id_str;
  return TRAINFIT_JOB_ID(d) != NO_VAL && TRAINFIT_JOB_ID(d) != 0 ? std::to_string(TRAINFIT_JOB_ID(d)) : "";
}

// Appended in place: this runs for every audited job, inside slurmctld's job path.
std::string gpu_request_as_written(const job_desc_msg_t* d) {
  std::string out;
  auto add = [&out](const char* name, const char* value) {
    if (value == nullptr || value[0] == '\0') return;
    if (!out.empty()) out += ' ';
    out += name;
    out += '=';
    out += value;
  };
  add("tres_per_job", d->tres_per_job);
  add("tres_per_node", d->tres_per_node);
  add("tres_per_task", d->tres_per_task);
  add("tres_per_socket", d->tres_per_socket);
  if (count(d->min_nodes) > 0) add("nodes", std::to_string(d->min_nodes).c_str());
  if (count(d->num_tasks) > 0) add("tasks", std::to_string(d->num_tasks).c_str());
  return out;
}

void apply_resize(job_desc_msg_t* d, const Decision& decision) {
  // Every new string first: nothing below may throw once the job is being changed.
  const bool per_job = !decision.new_tres_per_job.empty(), per_node = !decision.new_tres_per_node.empty();
  const std::string job = per_job ? decision.new_tres_per_job : str(d->tres_per_job);
  const std::string node = per_node ? decision.new_tres_per_node : per_job ? without_gpus(d->tres_per_node) : str(d->tres_per_node);
  const std::string task = per_job || per_node ? without_gpus(d->tres_per_task) : str(d->tres_per_task);
  const std::string socket =
      decision.clear_tres_per_socket || per_node ? without_gpus(d->tres_per_socket) : str(d->tres_per_socket);
  set_slurm_string(&d->tres_per_job, job);
  set_slurm_string(&d->tres_per_node, node);
  set_slurm_string(&d->tres_per_task, task);
  set_slurm_string(&d->tres_per_socket, socket);
  if (decision.new_nodes > 0) {
    d->min_nodes = static_cast<uint32_t>(decision.new_nodes);
    if (d->max_nodes != NO_VAL && d->max_nodes < d->min_nodes) d->max_nodes = d->min_nodes;
  }
  if (decision.new_tasks > 0) d->num_tasks = static_cast<uint32_t>(decision.new_tasks);
}

void stamp_admin_comment(job_desc_msg_t* d, const Decision& decision, const std::string& decision_id) {
  // "trainfit accept: 26.6 of 79.6 GiB per GPU on 8 x h100; min_gpus_to_fit=2; decision 674e2b1c-17"
  // Appended in place into one buffer: one allocation, then Slurm's copy.
  std::string stamp;
  const bool earlier = d->admin_comment != nullptr && d->admin_comment[0] != '\0';
  stamp.reserve(160 + (earlier ? strnlen(d->admin_comment, 4096) : 0));
  if (earlier) {
    stamp += d->admin_comment;
    stamp += "; ";
  }
  stamp += "trainfit ";
  stamp += to_string(decision.verdict);
  stamp += ": ";
  append_fixed(stamp, decision.per_gpu_gb, 1);
  stamp += " of ";
  append_fixed(stamp, decision.capacity_gb, 1);
  stamp += " GiB per GPU on ";
  stamp += std::to_string(decision.resized_to > 0 ? decision.resized_to : decision.gpus_requested);
  if (decision.gpus_held > 0) {  // "on 4 of the 64 x h100 the job holds (--exclusive)"
    stamp += " of the ";
    stamp += std::to_string(decision.gpus_held);
  }
  stamp += " x ";
  stamp += decision.gpu;
  if (decision.gpus_held > 0) {
    stamp += " the job holds (";
    stamp += decision.held_because;
    stamp += ')';
  }
  if (decision.min_gpus > 0) {
    stamp += "; min_gpus_to_fit=";
    stamp += std::to_string(decision.min_gpus);
  }
  stamp += "; ";
  stamp += kStampDecision;
  stamp += decision_id;
  set_slurm_string(&d->admin_comment, stamp);
}

}  // namespace trainfit::plugin
