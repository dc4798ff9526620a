// srun: a step inside an allocation is judged on its own --llm-* options by the same
// decide() job_submit uses, against the site's policy (conf=), and refused when it is
// predicted to run out of memory.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "contexts.h"
#include "endpoint.h"
#include "options.h"
#include "plugstack_args.h"
#include "say.h"
#include "site_catalogs.h"
#include "state.h"
#include "submission.h"
#include "trainfit/admission.h"
#include "trainfit/util/file.h"

namespace trainfit::spank {
namespace {

using namespace trainfit::admission;

int init(spank_t sp, int ac, char** av) {
  Result<bool> read = take_plugstack_args(ac, av, /*endpoint_used=*/true, &state().settings);
  if (!read) return refused(read.error().message);
  Result<bool> registered = register_options(sp);
  return registered ? 0 : refused(registered.error().message);
}

std::string env_value(spank_t sp, const char* name) {
  char buffer[1024] = {0};
  if (spank_getenv(sp, name, buffer, sizeof buffer) == ESPANK_SUCCESS) return buffer;
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// srun's own options: its command line up to the program, which S_JOB_ARGV holds.
std::vector<std::string> srun_options(spank_t sp) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string arg; argv.size() < 65536 && std::getline(in, arg, '\0');) argv.push_back(arg);
  if (in.peek() != std::char_traits<char>::eof()) return {};  // cut off: the boundary is unknown
  int program_argc = 0;
  char** program_argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &program_argc, &program_argv) != ESPANK_SUCCESS || program_argc < 0 ||
      static_cast<size_t>(program_argc) + 1 > argv.size()) {
    return {};
  }
  return std::vector<std::string>(argv.begin() + 1, argv.end() - program_argc);
}

// The option table's row an --llm-* word names ("--llm-seq=8192", "--llm-seq 8192", or an
// unambiguous prefix as getopt_long takes it); nullopt for none or several.
std::optional<size_t> row_named(const std::string& word) {
  const size_t eq = word.find('=');
  const std::string given = word.substr(6, eq == std::string::npos ? std::string::npos : eq - 6);
  const std::vector<OptionRow>& table = option_table();
  std::optional<size_t> match;
  int matches = 0;
  for (size_t row = 0; row < table.size(); ++row) {
    const std::string name = table[row].spec->option;
    if (name == given) return row;
    if (name.rfind(given, 0) == 0) match = row, ++matches;
  }
  return matches == 1 ? match : std::nullopt;
}

// The rows of the --llm-* options srun's own command line gives: those an allocation
// exported are not the step's.
std::vector<size_t> own_rows(const std::vector<std::string>& srun_argv) {
  std::vector<size_t> own;
  for (const std::string& word : srun_argv) {
    if (word.rfind("--llm-", 0) != 0) continue;
    if (std::optional<size_t> row = row_named(word)) own.push_back(*row);
  }
  return own;
}

void keep_own_options(spank_t sp, std::vector<GivenOption>* given) {
  const std::vector<size_t> own = own_rows(srun_options(sp));
  given->erase(std::remove_if(given->begin(), given->end(),
                              [&](const GivenOption& g) { return std::find(own.begin(), own.end(), g.row) == own.end(); }),
               given->end());
}

// GPUs this srun step gets: its own GPU options, else what the allocation exported.
JobGpuFields step_gpus(spank_t sp) {
  auto as_gres = [](const std::string& value) { return value.empty() ? value : "gpu:" + value; };
  JobGpuFields fields;
  fields.per_job = as_gres(env_value(sp, "SLURM_GPUS"));
  fields.per_node = as_gres(env_value(sp, "SLURM_GPUS_PER_NODE"));
  fields.per_task = as_gres(env_value(sp, "SLURM_GPUS_PER_TASK"));
  uint32_t nodes = 0, tasks = 0;
  if (spank_get_item(sp, S_JOB_NNODES, &nodes) == ESPANK_SUCCESS) fields.nodes = nodes;
  if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks) == ESPANK_SUCCESS) fields.tasks = tasks;
  apply_srun_options(srun_options(sp), &fields);
  return fields;
}

// The step as job_submit would see a job: the annotation, the GPUs, who and where.
Job step_job(spank_t sp, const std::vector<std::string>& env) {
  Job job;
  Result<bool> read = annotation_from_spank_env(env, &job.annotation);
  job.annotation_read = read;
  job.fields = step_gpus(sp);
  job.partition = env_value(sp, "SLURM_JOB_PARTITION");
  job.uid = static_cast<uint32_t>(getuid());
  job.account = env_value(sp, "SLURM_JOB_ACCOUNT");
  job.qos = env_value(sp, "SLURM_JOB_QOS");
  job.step = true;
  return job;
}

// The site policy srun steps are held to (conf=), assembled as slurmctld assembles it
// (exempt users, accounts and QOS, operators, slurm.conf's partitions and nodes); without
// conf= the defaults, with the catalog's default_gpu.
Result<Policy> step_policy(const Settings& settings, const std::string& default_gpu) {
  Result<std::string> text = std::string();
  if (!settings.conf.empty()) text = read_regular_file(settings.conf, kMaxConfBytes);
  const bool site_conf = text.ok() && !settings.conf.empty();
  if (!text && text.error().code == ErrorCode::kMissing) text = std::string();
  if (!text) return text.error();
  Result<AssembledPolicy> assembled =
      assemble_policy(text.value(), slurm_conf_text(slurm_conf_path()), passwd_uid);
  if (!assembled) return assembled.error();
  Policy policy = std::move(assembled.value().policy);
  if (!site_conf) policy.defaults.default_gpu = default_gpu;
  return policy;
}

int local_user_init(spank_t sp) {
  State& s = state();
  if (s.given.empty()) return 0;
  keep_own_options(sp, &s.given);  // a step is judged on its own options
  if (s.given.empty()) return 0;
  const Result<std::string>& default_gpu = catalog_default_gpu();
  if (!default_gpu) return refused(default_gpu.error().message + "; step refused");
  Result<std::vector<std::string>> env = job_env();
  if (!env) return refused("trainfit: " + env.error().message);
  const Job job = step_job(sp, env.value());
  Result<Policy> policy = step_policy(s.settings, default_gpu.value());
  if (!policy) {
    say_error("trainfit: " + policy.error().message + "; the step is not checked");
    return 0;  // the site's file is broken: job_submit reports it; do not block steps on it
  }
  std::optional<ServiceEstimator> service;  // endpoint=: the numbers from the service
  if (s.settings.client) service.emplace(*s.settings.client, job.annotation.check);
  const Decision d = service ? decide(policy.value(), job, *service) : decide(policy.value(), job);
  if (service && service->refusal()) return refused(*service->refusal() + "; step refused");
  if (d.verdict == Verdict::kReject) return refused(d.message + "; step refused");
  if (d.verdict == Verdict::kWarn) say(d.message);
  return 0;
}

}  // namespace

const ContextHooks kLocalHooks = {init, nullptr, local_user_init};

}  // namespace trainfit::spank
