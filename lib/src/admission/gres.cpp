// GPU requests in every spelling Slurm versions use (shared/notes/slurm.md:
// <=20.11 "gpu:8"; 21.08-23.02 "gres:gpu:8"; 23.11+ "gres/gpu:8", "=" for the count).
#include "../text.h"
#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

Error tres_error(const std::string& entry, const std::string& why) {
  return make_error(ErrorCode::kInvalidValue, "gres", "GPU request '" + entry + "' " + why);
}

}  // namespace

Result<TresList> parse_tres(const std::string& text) {
  TresList out;
  std::string normalized = text;
  for (char& c : normalized) if (c == ';') c = ',';
  for (const std::string& raw : split(normalized, ',')) {
    const std::string entry = trim(raw);
    if (entry.empty()) continue;
    std::string rest = entry;
    if (rest.rfind("gres:", 0) == 0 || rest.rfind("gres/", 0) == 0) rest = rest.substr(5);
    const size_t name_end = rest.find_first_of(":=");
    const std::string name = lower(rest.substr(0, name_end));
    if (name != "gpu") {
      out.others.push_back(entry);
      continue;
    }
    std::string tail = name_end == std::string::npos ? "" : rest.substr(name_end);
    // tail: "", ":8", "=8", ":h100", ":h100:8", ":h100=8"
    std::string type, count = "1";
    const size_t eq = tail.find('=');
    if (eq != std::string::npos) {
      count = tail.substr(eq + 1);
      tail = tail.substr(0, eq);
    }
    std::vector<std::string> parts = split(tail, ':');
    if (!parts.empty() && parts.front().empty()) parts.erase(parts.begin());
    if (eq == std::string::npos && !parts.empty()) {
      int64_t n = 0;
      if (parse_int(parts.back(), &n)) {
        count = parts.back();
        parts.pop_back();
      }
    }
    if (parts.size() > 1) return tres_error(entry, "has more than one GPU type");
    if (!parts.empty()) type = lower(parts.front());
    int64_t n = 0;
    if (!parse_int(count, &n) || n < 0 || n > (int64_t{1} << 24)) {
      return tres_error(entry, "has count '" + count + "'; accepted: an integer from 0 to 16777216");
    }
    out.gpus += n;
    if (out.gpu_type.empty()) out.gpu_type = type;
  }
  return out;
}

Result<GpuTotal> total_gpus(const JobGpuFields& f) {
  auto count = [](const std::string& text, int64_t multiplier, const char* source) -> Result<GpuTotal> {
    Result<TresList> list = parse_tres(text);
    if (!list) return list.error();
    return GpuTotal{list->gpus * std::max<int64_t>(1, multiplier), list->gpu_type, source};
  };
  const int64_t nodes = std::max<int64_t>(1, f.nodes);
  GpuTotal total;
  // --gpus wins; otherwise per node x nodes, per task x tasks, per socket x sockets x nodes.
  for (const auto& [text, multiplier, source] :
       {std::tuple<const std::string&, int64_t, const char*>{f.per_job, 1, "tres_per_job"},
        {f.per_node, nodes, "tres_per_node"},
        {f.per_task, std::max<int64_t>(1, f.tasks), "tres_per_task"},
        {f.per_socket, std::max<int64_t>(1, f.sockets_per_node) * nodes, "tres_per_socket"}}) {
    if (text.empty()) continue;
    Result<GpuTotal> part = count(text, multiplier, source);
    if (!part) return part.error();
    if (part->gpus > 0) return part.value();
    if (total.type.empty()) total.type = part->type;
  }
  return total;
}

void apply_srun_args(const std::vector<std::string>& argv, JobGpuFields* f) {
  // srun's options that take a value (so that their values are skipped); srun stops
  // reading its own options at the program.
  const std::vector<std::pair<std::string, std::string>> valued = {
      {"--gpus", "-G"}, {"--gpus-per-node", ""}, {"--gres", ""}, {"--gpus-per-task", ""},
      {"--ntasks", "-n"}, {"--nodes", "-N"}, {"--partition", "-p"}, {"--time", "-t"}, {"--job-name", "-J"},
      {"--output", "-o"}, {"--error", "-e"}, {"--cpus-per-task", "-c"}, {"--mem", ""}, {"--account", "-A"}};
  JobGpuFields step;  // the step's own GPU request, if it makes one
  bool gpus_given = false;
  auto set = [&](const std::string& name, const std::string& value) {
    int64_t n = 0;
    // --gpus* take "[type:]count"; --gres takes a GRES list.
    if (name == "--gpus") step.per_job = "gpu:" + value;
    else if (name == "--gpus-per-node") step.per_node = "gpu:" + value;
    else if (name == "--gres") step.per_node = value;
    else if (name == "--gpus-per-task") step.per_task = "gpu:" + value;
    else if (name == "--ntasks" && parse_int(value, &n)) f->tasks = n;
    else if (name == "--nodes" && parse_int(value.substr(0, value.find('-')), &n)) f->nodes = n;
    gpus_given |= name == "--gpus" || name == "--gpus-per-node" || name == "--gres" || name == "--gpus-per-task";
  };
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.empty() || arg[0] != '-' || arg == "--") break;  // the program starts here
    for (const auto& [name, short_name] : valued) {
      if (arg.rfind(name + "=", 0) == 0) {
        set(name, arg.substr(name.size() + 1));
      } else if (arg == name || (!short_name.empty() && arg == short_name)) {
        if (i + 1 < argv.size()) set(name, argv[++i]);
      } else if (!short_name.empty() && arg.size() > 2 && arg.rfind(short_name, 0) == 0) {
        set(name, arg.substr(2));  // -G8, -n4
      } else {
        continue;
      }
      break;
    }
  }
  if (gpus_given) {  // the step's request replaces what the allocation exported
    f->per_job = step.per_job;
    f->per_node = step.per_node;
    f->per_task = step.per_task;
    f->per_socket.clear();
  }
}

std::string rewrite_tres(const TresList& original, const std::string& type, int64_t gpus) {
  std::string out;
  for (const std::string& other : original.others) out += (out.empty() ? "" : ",") + other;
  out += (out.empty() ? "" : ",") + std::string("gres:gpu:") + (type.empty() ? "" : type + ":") + std::to_string(gpus);
  return out;
}

}  // namespace trainfit::admission
