// GPU requests in every spelling Slurm versions use (docs/slurm.md, the release table:
// <=20.11 "gpu:8"; 21.08-23.02 "gres:gpu:8"; 23.11+ "gres/gpu:8", "=" for the count).
#include <algorithm>
#include <cctype>
#include <string_view>

#include "trainfit/util/text.h"
#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

Error tres_error(const std::string& entry, const std::string& why) {
  return make_error(ErrorCode::kInvalidValue, "gres", "GPU request '" + entry + "' " + why);
}

// capped: the count was saturated at kMaxJobGpus + 1 (a product that would overflow).
std::string too_many(int64_t gpus, bool capped = false) {
  return "asks for " + (capped ? "more than " + std::to_string(kMaxJobGpus) : std::to_string(gpus)) +
         " GPUs; accepted: at most " + std::to_string(kMaxJobGpus);
}

// a * b, or kMaxJobGpus + 1 when it would exceed kMaxJobGpus (never overflows).
int64_t capped_product(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > kMaxJobGpus || b > (kMaxJobGpus + 1) / a + 1) return kMaxJobGpus + 1;
  return std::min(a * b, kMaxJobGpus + 1);
}

bool digits(std::string_view text) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text) if (c < '0' || c > '9') return false;
  return true;
}

int64_t number(std::string_view text) {
  int64_t n = 0;
  for (char c : text) n = n * 10 + (c - '0');
  return n;
}

// After "gpu": "", ":8", "=8", ":h100", ":h100:8", ":h100=8" -> type, count.
Result<std::pair<std::string, int64_t>> gpu_entry(std::string_view entry, std::string_view tail) {
  std::string_view count = "1", type;
  const size_t eq = tail.find('=');
  if (eq != std::string_view::npos) {
    count = tail.substr(eq + 1);
    tail = tail.substr(0, eq);
  }
  if (!tail.empty() && tail.front() == ':') tail.remove_prefix(1);
  if (!tail.empty()) {
    const size_t colon = tail.rfind(':');
    const std::string_view last = colon == std::string_view::npos ? tail : tail.substr(colon + 1);
    if (eq == std::string_view::npos && digits(last)) {
      count = last;
      tail = colon == std::string_view::npos ? std::string_view() : tail.substr(0, colon);
    }
    if (tail.find(':') != std::string_view::npos) return tres_error(std::string(entry), "has more than one GPU type");
    type = tail;
  }
  if (!digits(count)) {
    return tres_error(std::string(entry), "has count '" + std::string(count) + "'; accepted: an integer from 0 to " +
                                              std::to_string(kMaxJobGpus));
  }
  const int64_t n = number(count);
  if (n > kMaxJobGpus) return tres_error(std::string(entry), too_many(n));
  return std::make_pair(std::string(type), n);  // as written: a resize writes it back for Slurm
}

// A GPU type named twice counts once, with its last non-zero count: Slurm keeps one request per
// (GRES, type) and a later entry overwrites an earlier one (src/common/gres.c,
// _get_next_job_gres at slurm-22-05-8-1; measured: --gpus=h100:5,h100:3 is allocated 3).
// Types are compared in any case, so that a job is never judged on more GPUs than it gets.
bool same_type(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// The count of each type named ("" = untyped); most requests name one: no allocation for it.
class GpuEntries {
 public:
  void set(const std::string& type, int64_t count) {
    if (first_count_ < 0 || same_type(first_type_, type)) {
      if (first_count_ < 0) first_type_ = type;
      first_count_ = count;
      return;
    }
    for (auto& [seen, n] : more_) {
      if (same_type(seen, type)) {
        n = count;
        return;
      }
    }
    more_.emplace_back(type, count);
  }
  int64_t total() const {
    int64_t sum = std::max<int64_t>(first_count_, 0);
    for (const auto& entry : more_) sum += entry.second;  // each <= kMaxJobGpus: no overflow
    return sum;
  }

 private:
  std::string first_type_;
  int64_t first_count_ = -1;
  std::vector<std::pair<std::string, int64_t>> more_;
};

}  // namespace

Result<TresList> parse_tres(const std::string& text) {
  TresList out;
  GpuEntries entries;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t end = rest.find_first_of(",;");
    const std::string_view entry = trimmed(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (entry.empty()) continue;
    std::string_view body = entry;
    if (body.size() > 5 && (body.substr(0, 5) == "gres:" || body.substr(0, 5) == "gres/")) body.remove_prefix(5);
    const size_t name_end = std::min(body.find_first_of(":="), body.size());
    if (!equals_lower(body.substr(0, name_end), "gpu")) {
      // Shares of a GPU are GPU jobs too (for require_annotation), though they count no GPUs.
      out.gpu_shares |= equals_lower(body.substr(0, name_end), "shard") || equals_lower(body.substr(0, name_end), "mps");
      out.others.emplace_back(entry);
      continue;
    }
    Result<std::pair<std::string, int64_t>> gpu = gpu_entry(entry, body.substr(name_end));
    if (!gpu) return gpu.error();
    // Slurm ignores an entry with an explicit zero count: it neither replaces an earlier count
    // of its type nor makes a request typed or untyped (src/common/gres.c, _get_next_job_gres at
    // slurm-22-05-8-1, "Ignore GRES with explicit zero count"; measured: --gpus=h100:5,h100:0
    // and --gpus=h100:5,H100:0 are allocated gpu:h100:5).
    if (gpu->second == 0) continue;
    if (out.gpu_prefix.empty()) out.gpu_prefix = std::string(entry.substr(0, entry.size() - body.size() + name_end));
    const std::string& type = gpu->first;  // not a structured binding: lambdas capture it (C++17)
    entries.set(type, gpu->second);
    if (type.empty()) out.untyped = true;
    else if (std::find_if(out.gpu_types.begin(), out.gpu_types.end(),
                          [&](const std::string& t) { return same_type(t, type); }) == out.gpu_types.end()) {
      out.gpu_types.push_back(type);
    }
  }
  // Slurm refuses GPUs requested both with and without a type (sbatch: "Invalid GRES
  // specification (with and without type identification)"); so does the gate.
  if (out.untyped && !out.gpu_types.empty()) {
    return tres_error(text, "names GPUs both with and without a type; accepted: every GPU entry typed, or none");
  }
  out.gpus = entries.total();
  if (out.gpus > kMaxJobGpus) return tres_error(text, too_many(out.gpus));
  return out;
}

Result<GpuTotal> total_gpus(const JobGpuFields& f) {
  // -n 32 --ntasks-per-node=8 without -N runs on 4 nodes; -N 4 --ntasks-per-node=8 runs 32 tasks.
  const int64_t nodes = std::max<int64_t>(
      {int64_t{1}, f.nodes, f.tasks_per_node > 0 ? (f.tasks + f.tasks_per_node - 1) / f.tasks_per_node : 0});
  const int64_t tasks = std::max<int64_t>({int64_t{1}, f.tasks, f.tasks_per_node > 0 ? capped_product(f.nodes, f.tasks_per_node) : 0});
  struct Source {
    const std::string& text;
    int64_t multiplier;
    const char* field;
    const char* option;
  };
  // --gpus wins; otherwise per node x nodes, per task x tasks, per socket x sockets x nodes.
  const Source sources[] = {{f.per_job, 1, "tres_per_job", "--gpus"},
                            {f.per_node, nodes, "tres_per_node", "--gpus-per-node"},
                            {f.per_task, tasks, "tres_per_task", "--gpus-per-task"},
                            {f.per_socket, capped_product(std::max<int64_t>(1, f.sockets_per_node), nodes),
                             "tres_per_socket", "--gpus-per-socket"}};
  GpuTotal total;
  for (const Source& s : sources) {
    if (s.text.empty()) continue;
    Result<TresList> list = parse_tres(s.text);
    if (!list) return list.error();
    total.gpu_shares |= list->gpu_shares;
    if (list->gpus == 0) continue;
    total.gpus = capped_product(list->gpus, s.multiplier);
    total.types = std::move(list->gpu_types);
    total.untyped = list->untyped;
    total.gpu_shares |= list->gpu_shares;
    total.source = s.field;
    total.written = std::string(s.option) + "=" + s.text;
    if (total.gpus > kMaxJobGpus) {
      return make_error(ErrorCode::kInvalidValue, "gres",
                        "the GPU request " + total.written + " (x" + std::to_string(s.multiplier) + ") " +
                            too_many(total.gpus, total.gpus == kMaxJobGpus + 1));
    }
    return total;
  }
  return total;
}

namespace {

// srun 22.05's options that take a required argument (srun --help, man srun), long
// and short forms. Options with an optional argument ("--exclusive[=user]") take
// one only when attached with '='. Other plugins' options are handled below.
const std::vector<std::string>& srun_valued_options() {
  static const std::vector<std::string> options = {
      "-A", "--account", "--acctg-freq", "--bb", "--bbf", "--bcast", "--bcast-exclude", "-b", "--begin",
      "-c", "--cpus-per-task", "--comment", "--cpu-freq", "--cpu-bind", "-d", "--dependency", "--deadline",
      "--delay-boot", "-D", "--chdir", "--export", "-e", "--error", "--epilog", "--gres", "--gres-flags", "-i",
      "--input", "--jobid", "-J", "--job-name", "-L", "--licenses", "-M", "--clusters", "-m", "--distribution",
      "--mail-type", "--mail-user", "--mcs-label", "--mpi", "-n", "--ntasks", "--ntasks-per-node", "-N", "--nodes",
      "-o", "--output", "--het-group", "-p", "--partition", "--power", "--priority", "--prolog", "--profile", "-q",
      "--qos", "-r", "--relative", "-S", "--core-spec", "--signal", "--slurmd-debug", "--switches", "--task-epilog",
      "--task-prolog", "--thread-spec", "-T", "--threads", "-t", "--time", "--time-min", "-W", "--wait", "--wckey",
      "--cluster-constraint", "-C", "--constraint", "--mem", "--mincpus", "--reservation", "--tmp", "-w",
      "--nodelist", "-x", "--exclude", "--mem-per-cpu", "--sockets-per-node", "--cores-per-socket",
      "--threads-per-core", "--ntasks-per-core", "--ntasks-per-socket", "--cpus-per-gpu", "-G", "--gpus",
      "--gpu-bind", "--gpu-freq", "--gpus-per-node", "--gpus-per-socket", "--gpus-per-task", "--mem-per-gpu",
      "-B", "--extra-node-info", "--hint", "--mem-bind", "--network", "--uid", "--gid", "--tres-per-task",
      "--container", "--x11"};
  return options;
}

bool takes_value(const std::string& option) {
  const auto& options = srun_valued_options();
  return std::find(options.begin(), options.end(), option) != options.end();
}

// The GPU field an option sets, as a GRES string ("--gpus 4" -> per_job "gpu:4").
bool set_gpu_option(const std::string& option, const std::string& value, JobGpuFields* step) {
  if (option == "--gpus" || option == "-G") step->per_job = "gpu:" + value;
  else if (option == "--gpus-per-node") step->per_node = "gpu:" + value;
  else if (option == "--gres") step->per_node = value;
  else if (option == "--gpus-per-task") step->per_task = "gpu:" + value;
  else if (option == "--gpus-per-socket") step->per_socket = "gpu:" + value;
  else return false;
  return true;
}

}  // namespace

bool apply_srun_options(const std::vector<std::string>& options, JobGpuFields* fields) {
  JobGpuFields step;  // the step's own GPU request, if it makes one
  bool gpus_given = false;
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& arg = options[i];
    if (arg.size() < 2 || arg[0] != '-') continue;  // a value of another plugin's option
    std::string name = arg, value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq), value = arg.substr(eq + 1), has_value = true;
    } else if (arg[1] != '-' && arg.size() > 2) {
      // A cluster of short options ("-lG8", "-vG", "-n4"): flags until one that takes a
      // value, which is the rest of the word or else the next word (getopt's rule).
      size_t at = 1;
      while (at < arg.size() && !takes_value(std::string("-") + arg[at])) ++at;
      if (at == arg.size()) continue;  // flags only
      name = std::string("-") + arg[at];
      value = arg.substr(at + 1);
      has_value = !value.empty();
    }
    if (!has_value) {
      // srun's valued options take the next word; so do other plugins' options (every
      // word before the program belongs to an option, since S_JOB_ARGV delimits it).
      const bool next_is_value = i + 1 < options.size() &&
                                 (takes_value(name) || options[i + 1].empty() || options[i + 1][0] != '-');
      if (!next_is_value) continue;
      value = options[++i];
    }
    gpus_given |= set_gpu_option(name, value, &step);
  }
  if (!gpus_given) return false;
  // The step's request replaces what the allocation exported.
  fields->per_job = step.per_job;
  fields->per_node = step.per_node;
  fields->per_task = step.per_task;
  fields->per_socket = step.per_socket;
  return true;
}

std::string rewrite_tres(const TresList& original, const std::string& gpu_prefix, const std::string& type, int64_t gpus) {
  std::string out;
  for (const std::string& other : original.others) out += (out.empty() ? "" : ",") + other;
  out += (out.empty() ? "" : ",") + (gpu_prefix.empty() ? std::string("gres:gpu") : gpu_prefix) + ":" +
         (type.empty() ? "" : type + ":") + std::to_string(gpus);
  return out;
}

}  // namespace trainfit::admission
