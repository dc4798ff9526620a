#include "command_options.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "trainfit/catalog.h"

namespace po = boost::program_options;

namespace trainfit::cli {

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
    const std::string hint = did_you_mean(name, flags);
    std::cerr << "trainfit: unknown option '--" << name << "'" << (hint.empty() ? "" : " (did you mean '--" + hint + "'?)")
              << "; see 'trainfit " << argv[0] << " --help'\n";
    *exit_code = 2;
    return false;
  } catch (const po::error& e) {
    std::cerr << "trainfit: " << e.what() << "\n";
    *exit_code = 2;
    return false;
  }
  if (vm.count("help")) {
    std::cout << "usage: trainfit " << argv[0] << " [options]\n\n" << visible << "\n";
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
