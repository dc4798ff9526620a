#include "command_options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "trainfit/catalog.h"

namespace po = boost::program_options;

namespace trainfit::cli {

po::options_description help_group(const std::string& caption) {
  constexpr unsigned kUnwrapped = 1000000;
  return po::options_description(caption, kUnwrapped, kUnwrapped / 2);
}

namespace {

unsigned terminal_columns() {
  if (const char* text = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(text, &end, 10);
    if (end != text && *end == '\0' && value >= 40 && value <= 100000) return static_cast<unsigned>(value);
  }
  return 80;
}

// Where a word longer than `width` may be cut: after its last separator within width, else at width.
size_t cut_point(const std::string& word, size_t width) {
  const size_t after = word.find_last_of("-|,/_.:=", width - 1);
  return after != std::string::npos && after > 0 ? after + 1 : width;
}

// `text` in lines of at most `width` characters, each after `indent` spaces (the first after
// `first`, already written): breaks at spaces, long words cut by cut_point.
void wrap(std::ostringstream& out, const std::string& text, size_t width, size_t indent, size_t first) {
  std::istringstream in(text);
  std::string word;
  size_t used = first;
  bool line_empty = true;
  auto newline = [&] {
    out << "\n" << std::string(indent, ' ');
    used = indent;
    line_empty = true;
  };
  while (in >> word) {
    while (word.size() > width) {  // no line can hold it
      if (!line_empty) newline();
      const size_t cut = cut_point(word, width);
      out << word.substr(0, cut);
      word.erase(0, cut);
      newline();
    }
    if (!line_empty && used + 1 + word.size() > indent + width) newline();
    if (!line_empty) {
      out << ' ';
      ++used;
    }
    out << word;
    used += word.size();
    line_empty = false;
  }
}

}  // namespace

std::string help_text(const po::options_description& options) {
  std::ostringstream wide;
  wide << options;
  const size_t columns = terminal_columns();
  // The description column boost chose for the widest option, kept unless it takes over half the line.
  size_t column = 0;
  std::istringstream lines(wide.str());
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  for (const std::string& line : all) {
    if (line.rfind("  -", 0) != 0) continue;
    const size_t spec_end = line.find("  ", 2);
    if (spec_end == std::string::npos) continue;
    const size_t desc = line.find_first_not_of(' ', spec_end);
    if (desc != std::string::npos) column = std::max(column, desc);
  }
  column = std::min(column, columns / 2);
  std::ostringstream out;
  for (const std::string& line : all) {
    const size_t spec_end = line.rfind("  -", 0) == 0 ? line.find("  ", 2) : std::string::npos;
    if (line.size() <= columns || spec_end == std::string::npos) {
      out << line << "\n";
      continue;
    }
    const std::string spec = line.substr(0, spec_end);
    const size_t desc = line.find_first_not_of(' ', spec_end);
    const std::string text = desc == std::string::npos ? "" : line.substr(desc);
    out << spec;
    size_t first = spec.size();
    if (spec.size() + 1 > column) {
      out << "\n" << std::string(column, ' ');
      first = column;
    } else {
      out << std::string(column - spec.size(), ' ');
      first = column;
    }
    wrap(out, text, columns - column, column, first);
    out << "\n";
  }
  return out.str();
}

// What frameworks call a request field, for "unknown option" (HF TrainingArguments, Megatron-LM,
// torchrun, DeepSpeed, torchtune): the flag it means, and what it is there.
struct Spelling {
  const char* word;  // lower case, '-' for '_'
  const char* flag;
  const char* there;
};
constexpr Spelling kFrameworkSpellings[] = {
    {"batch-size", "micro-batch", "the per-GPU batch"},
    {"per-device-train-batch-size", "micro-batch", "HF's per-GPU batch"},
    {"micro-batch-size", "micro-batch", "Megatron's per-GPU batch"},
    {"train-micro-batch-size-per-gpu", "micro-batch", "DeepSpeed's per-GPU batch"},
    {"seq-len", "seq", "the sequence length"},
    {"max-seq-len", "seq", "the sequence length"},
    {"max-seq-length", "seq", "the sequence length"},
    {"max-length", "seq", "the sequence length"},
    {"sequence-length", "seq", "the sequence length"},
    {"ngpus", "gpus", "the job's GPU count"},
    {"world-size", "gpus", "the job's GPU count"},
    {"nproc-per-node", "gpus-per-node", "torchrun's processes per node"},
    {"gradient-accumulation-steps", "microbatches", "micro-batches per step"},
    {"tensor-model-parallel-size", "tp", "Megatron's tensor parallelism"},
    {"pipeline-model-parallel-size", "pp", "Megatron's pipeline parallelism"},
    {"context-parallel-size", "cp", "Megatron's context parallelism"},
    {"expert-model-parallel-size", "ep", "Megatron's expert parallelism"},
    {"gradient-checkpointing", "recompute", "recompute=full"},
    {"lora-r", "lora-rank", "the LoRA rank"},
    {"num-layers", "layers", "the layer count"},
};

std::string framework_spelling(const std::string& name, const std::vector<std::string>& flags) {
  std::string word = name;
  for (char& ch : word) ch = ch == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const Spelling& s : kFrameworkSpellings) {
    if (word == s.word && std::find(flags.begin(), flags.end(), s.flag) != flags.end()) {
      return std::string("trainfit's word is '--") + s.flag + "', " + s.there;
    }
  }
  return "";
}

std::string first_positional(const po::parsed_options& parsed) {
  for (const po::option& option : parsed.options) {
    if (option.string_key.empty() && !option.value.empty()) return option.value.front();
  }
  return "";
}

std::string unexpected_argument(const std::string& command, const std::string& word) {
  return "unexpected argument '" + word + "'; see 'trainfit " + command + " --help'";
}

bool parse_command(int argc, char** argv, po::options_description& visible, const po::options_description& hidden,
                   po::variables_map& vm, int* exit_code) {
  po::options_description all;
  all.add(visible).add(hidden);
  try {
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).style(style).run();
    if (const std::string word = first_positional(parsed); !word.empty()) {
      std::cerr << "trainfit: " << unexpected_argument(argv[0], word) << "\n";
      *exit_code = 2;
      return false;
    }
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    while (!name.empty() && name[0] == '-') name.erase(0, 1);
    std::vector<std::string> flags;
    for (const auto& option : visible.options()) flags.push_back(option->long_name());
    std::string hint = framework_spelling(name, flags);
    if (hint.empty()) {
      const std::string close = did_you_mean(name, flags);
      if (!close.empty()) hint = "did you mean '--" + close + "'?";
    }
    std::cerr << "trainfit: unknown option '--" << name << "'" << (hint.empty() ? "" : " (" + hint + ")")
              << "; see 'trainfit " << argv[0] << " --help'\n";
    *exit_code = 2;
    return false;
  } catch (const po::error& e) {
    std::cerr << "trainfit: " << e.what() << "\n";
    *exit_code = 2;
    return false;
  }
  if (vm.count("help")) {
    std::cout << "usage: trainfit " << argv[0] << " [options]\n\n" << help_text(visible) << "\n";
    *exit_code = 0;
    return false;
  }
  return true;
}

std::optional<int64_t> smallest_layout(const Request& r) {
  const int64_t tp = r.tensor_parallel.value_or(1), pp = r.pipeline_parallel.value_or(1);
  const int64_t cp = r.context_parallel.value_or(1), ep = r.expert_parallel.value_or(1);
  for (int64_t size : {tp, pp, cp, ep}) {
    if (size < 1 || size > (int64_t{1} << 20)) return std::nullopt;
  }
  const double model = static_cast<double>(tp) * static_cast<double>(pp);
  if (model * static_cast<double>(std::max(cp, ep)) * static_cast<double>(std::min(cp, ep)) > double(int64_t{1} << 20)) {
    return std::nullopt;
  }
  return std::lcm(tp * pp * cp, tp * pp * ep);
}

std::string host_name() {
  char buffer[256] = {0};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "localhost";
  return buffer;
}

}  // namespace trainfit::cli
