// spank_trainfit: the user's side. Gives sbatch, salloc and srun the --llm-*
// options, fails malformed values at once, reads --llm-hf-config on the submit
// host (the geometry travels in the job's environment as TRAINFIT_GEOMETRY), and
// refuses srun steps inside an allocation that are predicted to run out of memory.
// sbatch/salloc stay silent on success unless --llm-check.
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

#include "slurm_host.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"

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
  std::string default_gpu = "h100";
  std::string conf;      // site trainfit.conf (for headroom and the partition's default GPU)
  std::string endpoint;  // reserved for the HTTP service
};

Settings g_settings;
std::map<std::string, std::string> g_values;  // option -> value as given
std::vector<std::string> g_option_names;      // "llm-seq", ... (kept alive for Slurm)

// One line for the user, prefixed like every trainfit message.
void say_error(const std::string& message) { slurm_error("%s", message.c_str()); }

int option_cb(int val, const char* optarg, int remote) {
  if (remote) return 0;
  try {
    const OptionSpec& option = llm_options().at(static_cast<size_t>(val));
    const std::string value = optarg != nullptr ? optarg : "";
    if (std::string(option.option) == "hf-config") {
      std::ifstream in(value);
      if (!in) {
        say_error("trainfit: --llm-hf-config='" + value + "' cannot be read");
        return -1;
      }
    } else if (std::string(option.option) != "check") {
      Request scratch;
      Result<bool> ok = apply_option(scratch, option.option, value);
      if (!ok) {
        say_error("trainfit: " + ok.error().message);
        return -1;
      }
    }
    g_values[option.option] = value;
    return 0;
  } catch (...) {
    say_error("trainfit: internal error while reading an --llm option");
    return -1;
  }
}

int parse_args(int ac, char** av) {
  for (int i = 0; i < ac; ++i) {
    const std::string arg = av[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq), value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    if (key == "default_gpu" && find_gpu(value).ok()) g_settings.default_gpu = (*find_gpu(value))->name;
    else if (key == "default_gpu") {
      say_error("spank_trainfit: plugstack.conf: " + find_gpu(value).error().message);
      return -1;
    } else if (key == "conf") g_settings.conf = value;
    else if (key == "endpoint") g_settings.endpoint = value;  // reserved for the HTTP service issue
    else {
      say_error("spank_trainfit: plugstack.conf: unknown argument '" + arg +
                "'; accepted: default_gpu=NAME, conf=PATH, endpoint=URL");
      return -1;
    }
  }
  return 0;
}

// The geometry of --llm-hf-config, read on the submit host.
Result<Geometry> hf_geometry() {
  std::ifstream in(g_values["hf-config"]);
  std::ostringstream text;
  text << in.rdbuf();
  return geometry_from_hf_config(text.str());
}

// The annotation the options describe; the HF geometry first, options on top.
Result<Request> annotation() {
  Request request;
  if (g_values.count("hf-config")) {
    Result<Geometry> geometry = hf_geometry();
    if (!geometry) return geometry.error();
    set_geometry(request, geometry.value());
  }
  for (const auto& [option, value] : g_values) {
    if (option == "hf-config" || option == "check") continue;
    Result<bool> ok = apply_option(request, option, value);
    if (!ok) return ok.error();
  }
  return request;
}

// Policy details the checks share with job_submit (headroom), when conf= is given.
double headroom() {
  if (g_settings.conf.empty()) return 0.0;
  std::ifstream in(g_settings.conf);
  std::ostringstream text;
  text << in.rdbuf();
  Result<Policy> policy = parse_policy(text.str());
  return policy ? policy->defaults.headroom : 0.0;
}

int allocator_post_opt(spank_t sp) {
  Result<Request> request = annotation();
  if (!request) {
    say_error("trainfit: " + request.error().message);
    return -1;
  }
  Request probe = request.value();
  if (!probe.gpu) probe.gpu = g_settings.default_gpu;
  Result<Resolved> resolved = resolve(probe);
  if (!resolved) {
    say_error("trainfit: invalid annotation: " + resolved.error().message);
    return -1;
  }
  if (g_values.count("hf-config")) {  // the geometry travels with the job
    Request geometry;
    set_geometry(geometry, hf_geometry().value());  // parsed above by annotation()
    const std::string spec = to_key_values(geometry, ',');
    if (spank_job_control_setenv(sp, "TRAINFIT_GEOMETRY", spec.c_str(), 1) != ESPANK_SUCCESS) {
      say_error("trainfit: could not attach the HF geometry to the job");
      return -1;
    }
  }
  if (g_values.count("check")) {
    resolved->config.capacity_bytes *= 1.0 - headroom();
    const MinGpus min = min_gpus_to_fit(resolved->config);
    const std::string what = describe(request.value());
    if (min.gpus > 0) {
      slurm_spank_log("trainfit: %s: min_gpus_to_fit=%lld on %s", what.c_str(), static_cast<long long>(min.gpus),
                      resolved->config.gpu_name.c_str());
    } else {
      slurm_spank_log("trainfit: %s: no GPU count fits on %s: %s", what.c_str(), resolved->config.gpu_name.c_str(),
                      min.reason.c_str());
    }
  }
  return 0;
}

// srun's own command line: the step's GPU options are not in its environment yet.
std::vector<std::string> own_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
  return argv;
}

// GPUs this srun step gets: its own --gpus/--gpus-per-node/--gres/--gpus-per-task,
// else what the allocation exported (SLURM_GPUS, SLURM_GPUS_PER_NODE x nodes).
GpuTotal step_gpus(spank_t sp) {
  auto env = [&](const char* name) -> std::string {
    char buffer[256] = {0};
    if (spank_getenv(sp, name, buffer, sizeof buffer) == ESPANK_SUCCESS) return buffer;
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
  };
  auto as_gres = [](const std::string& value) {
    return value.empty() || value.find("gpu") != std::string::npos ? value : "gpu:" + value;
  };
  JobGpuFields fields;
  fields.per_job = as_gres(env("SLURM_GPUS"));
  fields.per_node = as_gres(env("SLURM_GPUS_PER_NODE"));
  fields.per_task = as_gres(env("SLURM_GPUS_PER_TASK"));
  uint32_t nodes = 0;
  if (spank_get_item(sp, S_JOB_NNODES, &nodes) == ESPANK_SUCCESS) fields.nodes = nodes;
  apply_srun_args(own_argv(), &fields);
  Result<GpuTotal> total = total_gpus(fields);
  return total ? total.value() : GpuTotal{};
}

int local_user_init(spank_t sp) {
  if (g_values.empty()) return 0;
  Result<Request> request = annotation();
  if (!request) {
    say_error("trainfit: " + request.error().message);
    return -1;
  }
  const GpuTotal gpus = step_gpus(sp);
  if (gpus.gpus <= 0) return 0;  // a step without GPUs is not a training step to check
  Request probe = request.value();
  probe.num_gpus = gpus.gpus;
  probe.gpu = gpus.type.empty() ? g_settings.default_gpu : gpus.type;
  Result<Resolved> resolved = resolve(probe);
  if (!resolved) {
    say_error("trainfit: invalid annotation: " + resolved.error().message);
    return -1;
  }
  resolved->config.capacity_bytes *= 1.0 - headroom();
  Response r = respond(resolved.value(), ResponseOptions{false, false});
  if (r.breakdown.fits) return 0;
  r.advice = advise(r.resolved.config, r.breakdown, r.min_gpus);
  say_error(oom_message(r) + "; step refused");
  return -1;
}

}  // namespace

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    const spank_context_t context = spank_context();
    if (context != S_CTX_ALLOCATOR && context != S_CTX_LOCAL && context != S_CTX_REMOTE) return 0;
    if (parse_args(ac, av) != 0) return -1;
    const std::vector<OptionSpec>& options = llm_options();
    g_option_names.reserve(options.size());
    for (size_t i = 0; i < options.size(); ++i) {
      g_option_names.push_back(std::string("llm-") + options[i].option);
      static std::vector<std::string> usages;
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
