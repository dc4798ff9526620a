// spank_trainfit: the user's side. Gives sbatch, salloc and srun the --llm-*
// options, fails malformed values at once, reads --llm-hf-config and --llm-config on
// the submit host (the geometry and the config file's fields travel in the job's
// environment as TRAINFIT_GEOMETRY and TRAINFIT_CONFIG key=value lists), and
// refuses srun steps inside an allocation that are predicted to run out of memory.
// The annotation is read by the same function job_submit uses
// (annotation_from_spank_env) and steps are judged by the same decide(); the
// verdict on a submission (and --llm-check's report) is slurmctld's.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

#include "slurm_host.h"
#include "spank_endpoint.h"
#include "trainfit/admission.h"
#include "trainfit/admission/catalog_dir.h"
#include "config_reader.h"
#include "trainfit/catalog.h"
#include "trainfit/config_file.h"  // kMaxConfigFileBytes; the reading is trainfit_config_reader.so's
#include "trainfit/util/file.h"

extern "C" {
#define EXPORT __attribute__((visibility("default")))
EXPORT extern const char plugin_name[];
EXPORT extern const char plugin_type[];
EXPORT extern const unsigned int plugin_version;
EXPORT extern const unsigned int spank_plugin_version;
const char plugin_name[] = "trainfit";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
const unsigned int spank_plugin_version = 1;
EXPORT int slurm_spank_init(spank_t sp, int ac, char** av);
EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
EXPORT int slurm_spank_local_user_init(spank_t sp, int ac, char** av);
}

namespace {

using namespace trainfit;
using namespace trainfit::admission;

struct Settings {
  std::string default_gpu = "h100";  // the catalog's name, once the catalogs are read
  std::string default_gpu_as_written = "h100";
  std::string catalog_dir;           // catalog_dir= as written ("" = the default)
  std::string conf;      // site trainfit.conf: the policy srun steps are held to
  spank::EndpointArgs endpoint;                   // endpoint=, endpoint_*=, cacert= as written
  std::optional<remote::Settings> client;         // set when endpoint= is given (sbatch/salloc/srun)
};

Settings g_settings;
std::vector<std::pair<std::string, std::string>> g_values;  // option -> value, in the order given
std::vector<std::string> g_option_names;                    // "llm-seq", ... (kept alive for Slurm)

void say_error(const std::string& message) { slurm_error("%s", printable(message).c_str()); }

void remember(const std::string& option, const std::string& value) {
  for (auto& entry : g_values) {
    if (entry.first == option) {  // as Slurm does: the last value of a repeated option wins
      entry.second = value;
      return;
    }
  }
  g_values.emplace_back(option, value);
}

const std::string* value_of(const std::string& option) {
  for (const auto& entry : g_values) if (entry.first == option) return &entry.second;
  return nullptr;
}

// The geometry of --llm-hf-config, read on the submit host (a regular file, bounded).
Result<Request> hf_geometry(const std::string& path) {
  Result<std::string> text = read_regular_file(path, kMaxHfConfigBytes);
  if (!text) return make_error(text.error().code, "hf-config", "--llm-hf-config=" + text.error().message);
  Result<Geometry> geometry = geometry_from_hf_config(text.value());
  if (!geometry) return make_error(geometry.error().code, "hf-config", "--llm-hf-config='" + path + "': " + geometry.error().message);
  Request request;
  set_geometry(request, geometry.value());
  return request;
}

// --llm-config's file as trainfit_config_reader.so reads it (config_reader.h): the request's
// fields as key=value pairs, and what the file left out.
struct ConfigFields {
  std::string fields;
  std::string notes;  // lines, each '\n'-terminated
};

// The reader next to this plugin (a build tree), else where the packages install it.
trainfit_read_config_fn config_reader(std::string* why) {
  static trainfit_read_config_fn reader = nullptr;
  if (reader != nullptr) return reader;
  std::vector<std::string> paths;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&config_reader), &self) != 0 && self.dli_fname != nullptr) {
    const std::string plugin = self.dli_fname;
    paths.push_back(plugin.substr(0, plugin.rfind('/') + 1) + "trainfit_config_reader.so");
  }
  paths.push_back(TRAINFIT_CONFIG_READER_PATH);
  for (const std::string& path : paths) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      *why += (why->empty() ? "" : "; ") + std::string(dlerror());
      continue;
    }
    reader = reinterpret_cast<trainfit_read_config_fn>(dlsym(handle, TRAINFIT_READ_CONFIG_SYMBOL));
    if (reader != nullptr) return reader;
    *why += (why->empty() ? "" : "; ") + path + ": no " + TRAINFIT_READ_CONFIG_SYMBOL;
  }
  return nullptr;
}

// The fields of --llm-config (a framework's config file), read on the submit host.
Result<ConfigFields> config_file(const std::string& path) {
  Result<std::string> text = read_regular_file(path, kMaxConfigFileBytes);
  if (!text) return make_error(text.error().code, "config", "--llm-config=" + text.error().message);
  std::string why;
  const trainfit_read_config_fn read = config_reader(&why);
  if (read == nullptr) {
    return make_error(ErrorCode::kInternal, "config", "--llm-config: the config file reader is not installed (" + why + ")");
  }
  char *fields = nullptr, *notes = nullptr, *message = nullptr;
  const int rc = read(text->data(), text->size(), path.c_str(), &fields, &notes, &message);
  ConfigFields out{fields != nullptr ? fields : "", notes != nullptr ? notes : ""};
  const std::string said = message != nullptr ? message : "out of memory";
  std::free(fields), std::free(notes), std::free(message);
  if (rc != 0) {
    const int code = rc - 1;
    const ErrorCode error_code = code >= 0 && code <= static_cast<int>(ErrorCode::kInternal) ? static_cast<ErrorCode>(code)
                                                                                            : ErrorCode::kInternal;
    return make_error(error_code, "config", "--llm-config: " + said);
  }
  return out;
}

// What --llm-config left out, once, on the user's terminal.
void log_config_notes(const ConfigFields& file) {
  size_t start = 0;
  for (size_t end; (end = file.notes.find('\n', start)) != std::string::npos; start = end + 1) {
    slurm_spank_log("%s", printable(file.notes.substr(start, end - start)).c_str());
  }
}

// Called for the options on the command line and, in srun, again for those an enclosing
// sbatch/salloc exported (SLURM_SPANK__SLURM_SPANK_OPTION_trainfit_*): files are read later,
// only for options that are the submission's or the step's own (local_user_init).
int option_cb(int val, const char* optarg, int remote) {
  if (remote) return 0;
  try {
    const OptionSpec& option = llm_options().at(static_cast<size_t>(val));
    const std::string value = optarg != nullptr ? optarg : "";
    const std::string name = option.option;
    if (name != "check" && name != "hf-config" && name != "config") {
      Annotation scratch;  // each value alone, so that a typo fails at once
      Result<bool> ok = annotation_from_spank_env({spank_env_name(option.option) + "=" + value}, &scratch);
      if (!ok) {
        say_error("trainfit: " + ok.error().message);
        return -1;
      }
    }
    remember(option.option, value);
    return 0;
  } catch (...) {
    say_error("trainfit: internal error while reading an --llm option");
    return -1;
  }
}

// endpoint= and its companions, checked where they are used (not in slurmstepd).
int parse_endpoint_args(spank_context_t context) {
  if (context == S_CTX_REMOTE) return 0;
  Result<std::optional<remote::Settings>> client = spank::endpoint_settings(g_settings.endpoint);
  if (!client) {
    say_error("spank_trainfit: plugstack.conf: " + client.error().message);
    return -1;
  }
  g_settings.client = client.value();
  return 0;
}

// Site catalogs (docs/site.md): catalog_dir=DIR, else $TRAINFIT_CATALOG_DIR, else
// /etc/trainfit; read once, and default_gpu= checked against them: at init in sbatch and
// salloc (a plugstack.conf mistake shows at once), in srun only for a step with --llm-*
// options of its own, never in slurmstepd: every step loads the plugin twice, and
// parsing the catalogs costs each process ~0.4 ms.
int read_catalogs() {
  bool named = false;
  const std::string dir = admission::catalog_dir(g_settings.catalog_dir, &named);
  const CatalogSet set = admission::load_site_catalogs(dir, named);
  for (const std::string& problem : set.problems) say_error("spank_trainfit: site catalog: " + problem);
  if (!set.problems.empty()) say_error("spank_trainfit: site catalogs in " + dir + " not valid; using the built-in catalogs");
  Result<const GpuSpec*> gpu = find_gpu(g_settings.default_gpu_as_written);
  if (!gpu) {
    say_error("spank_trainfit: plugstack.conf: " + gpu.error().message);
    return -1;
  }
  g_settings.default_gpu = gpu.value()->name;
  return 0;
}

int ensure_catalogs() {
  static const int result = read_catalogs();  // once per process; a failure stays a failure
  return result;
}

int parse_args(int ac, char** av, spank_context_t context) {
  for (int i = 0; i < ac; ++i) {
    const std::string arg = av[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "default_gpu") g_settings.default_gpu_as_written = value;  // checked with the catalogs
    else if (key == "conf") g_settings.conf = value;
    else if (key == "catalog_dir") g_settings.catalog_dir = value;
    else if (spank::take_endpoint_arg(key, value, &g_settings.endpoint)) continue;
    else {
      say_error("spank_trainfit: plugstack.conf: unknown argument '" + arg +
                "'; accepted: default_gpu=NAME, conf=PATH, catalog_dir=DIR, endpoint=URL[,URL...], endpoint_connect_timeout_ms=MS, "
                "endpoint_timeout_ms=MS, cacert=FILE, endpoint_fallback=local|refuse");
      return -1;
    }
  }
  return parse_endpoint_args(context);
}

// The environment entries job_submit will see for these options, and the geometry.
Result<std::vector<std::string>> job_env() {
  std::vector<std::string> env;
  if (const std::string* path = value_of("hf-config")) {
    Result<Request> geometry = hf_geometry(*path);
    if (!geometry) return geometry.error();
    env.push_back("TRAINFIT_GEOMETRY=" + to_key_values(geometry.value(), ','));
  }
  if (const std::string* path = value_of("config")) {
    Result<ConfigFields> file = config_file(*path);
    if (!file) return file.error();
    env.push_back("TRAINFIT_CONFIG=" + file->fields);
  }
  for (const auto& [option, value] : g_values) env.push_back(spank_env_name(option) + "=" + value);
  return env;
}

// sbatch/salloc: the options as one annotation, read exactly as slurmctld will.
int allocator_post_opt(spank_t sp) {
  if (ensure_catalogs() != 0) return -1;
  Result<std::vector<std::string>> env = job_env();
  if (!env) {
    say_error("trainfit: " + env.error().message);
    return -1;
  }
  Annotation annotation;
  Result<bool> read = annotation_from_spank_env(env.value(), &annotation);
  if (!read) {
    say_error("trainfit: " + read.error().message);
    return -1;
  }
  // --llm-check alone: the job's comment is the annotation, slurmctld's to read.
  if (!annotation.found) return 0;
  // The model and its settings must make sense before anything is queued; the GPU
  // count is slurmctld's to judge (sbatch does not see --gpus at this point).
  Request probe = annotation.request;
  if (!probe.gpu) probe.gpu = g_settings.default_gpu;
  probe.num_gpus = probe.tensor_parallel.value_or(1) * probe.pipeline_parallel.value_or(1) *
                   probe.context_parallel.value_or(1) * probe.expert_parallel.value_or(1);
  Result<bool> valid = g_settings.client ? spank::check_probe(*g_settings.client, probe, annotation.check)
                                         : spank::check_probe_locally(probe);
  if (!valid) {
    say_error("trainfit: " + valid.error().message);
    return -1;
  }
  // The files' fields travel with the job (slurmctld cannot read the submit host's files).
  for (const std::string& entry : env.value()) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name != "TRAINFIT_GEOMETRY" && name != "TRAINFIT_CONFIG") continue;
    if (spank_job_control_setenv(sp, name.c_str(), entry.substr(name.size() + 1).c_str(), 1) != ESPANK_SUCCESS) {
      say_error("trainfit: could not attach " + name + " to the job");
      return -1;
    }
  }
  if (const std::string* path = value_of("config")) {
    Result<ConfigFields> file = config_file(*path);
    if (file) log_config_notes(file.value());
  }
  return 0;
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

// The site policy srun steps are held to (conf=), else the defaults with default_gpu.
Result<Policy> step_policy() {
  Policy fallback;
  fallback.defaults.default_gpu = g_settings.default_gpu;
  if (g_settings.conf.empty()) return fallback;
  Result<std::string> text = read_regular_file(g_settings.conf, kMaxConfBytes);
  if (!text && text.error().code == ErrorCode::kMissing) return fallback;
  if (!text) return text.error();
  return parse_policy(text.value());
}

// The --llm-* options srun's own command line gives ("--llm-seq=8192", "--llm-seq 8192", or an
// unambiguous prefix as getopt_long takes it): those an allocation exported are not the step's.
std::vector<std::string> own_llm_options(const std::vector<std::string>& srun_argv) {
  std::vector<std::string> own;
  for (const std::string& word : srun_argv) {
    if (word.rfind("--llm-", 0) != 0) continue;
    const std::string given = word.substr(6, word.find('=') == std::string::npos ? std::string::npos : word.find('=') - 6);
    std::string match;
    int matches = 0;
    for (const OptionSpec& option : llm_options()) {
      const std::string name = option.option;
      if (name == given) { match = name, matches = 1; break; }
      if (name.rfind(given, 0) == 0) match = name, ++matches;
    }
    if (matches == 1) own.push_back(match);
  }
  return own;
}

int local_user_init(spank_t sp) {
  if (g_values.empty()) return 0;
  // A step is judged on its own options, not on what the allocation exported.
  const std::vector<std::string> own = own_llm_options(srun_options(sp));
  g_values.erase(std::remove_if(g_values.begin(), g_values.end(),
                                [&](const auto& entry) { return std::find(own.begin(), own.end(), entry.first) == own.end(); }),
                 g_values.end());
  if (g_values.empty()) return 0;
  if (ensure_catalogs() != 0) return -1;
  Result<std::vector<std::string>> env = job_env();
  if (!env) {
    say_error("trainfit: " + env.error().message);
    return -1;
  }
  Job job;
  Result<bool> read = annotation_from_spank_env(env.value(), &job.annotation);
  if (!read) job.annotation_error = read.error();
  job.fields = step_gpus(sp);
  job.partition = env_value(sp, "SLURM_JOB_PARTITION");
  job.uid = static_cast<uint32_t>(getuid());
  job.account = env_value(sp, "SLURM_JOB_ACCOUNT");
  job.qos = env_value(sp, "SLURM_JOB_QOS");
  job.step = true;
  Result<Policy> policy = step_policy();
  if (!policy) {
    say_error("trainfit: " + policy.error().message + "; the step is not checked");
    return 0;  // the site's file is broken: job_submit reports it; do not block steps on it
  }
  std::optional<spank::ServiceEstimator> service;  // endpoint=: the numbers from the service
  if (g_settings.client) service.emplace(*g_settings.client, job.annotation.check);
  const Decision d = service ? decide(policy.value(), job, *service) : decide(policy.value(), job);
  if (service && service->refusal()) {
    say_error(*service->refusal() + "; step refused");
    return -1;
  }
  if (d.verdict == Verdict::kReject) {
    say_error(d.message + "; step refused");
    return -1;
  }
  if (d.verdict == Verdict::kWarn) slurm_spank_log("%s", printable(d.message).c_str());
  return 0;
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    const spank_context_t context = spank_context();
    if (context != S_CTX_ALLOCATOR && context != S_CTX_LOCAL && context != S_CTX_REMOTE) return 0;
    if (parse_args(ac, av, context) != 0) return -1;
    if (context == S_CTX_ALLOCATOR && ensure_catalogs() != 0) return -1;
    const std::vector<OptionSpec>& options = llm_options();
    g_option_names.reserve(options.size());
    static std::vector<std::string> usages;
    usages.reserve(options.size());
    for (size_t i = 0; i < options.size(); ++i) {
      g_option_names.push_back(std::string("llm-") + options[i].option);
      usages.push_back(std::string("[trainfit] ") + options[i].usage);
      struct spank_option option;
      option.name = const_cast<char*>(g_option_names.back().c_str());
      option.arginfo = const_cast<char*>(options[i].arginfo);
      option.usage = const_cast<char*>(usages.back().c_str());
      option.has_arg = options[i].arginfo[0] != '\0' ? 1 : 0;
      option.val = static_cast<int>(i);
      option.cb = option_cb;
      if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
        say_error("spank_trainfit: could not register --" + g_option_names.back());
        return -1;
      }
    }
    return 0;
  } catch (...) {
    say_error("spank_trainfit: internal error at init");
    return -1;
  }
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char** /*av*/) {
  try {
    if (spank_context() != S_CTX_ALLOCATOR || g_values.empty()) return 0;
    return allocator_post_opt(sp);
  } catch (...) {
    say_error("trainfit: internal error while checking the annotation");
    return -1;
  }
}

extern "C" int slurm_spank_local_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  try {
    if (spank_context() != S_CTX_LOCAL) return 0;
    return local_user_init(sp);
  } catch (...) {
    say_error("trainfit: internal error while checking the step");
    return -1;
  }
}
