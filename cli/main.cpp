// trainfit: predicts the per-GPU HBM of one LLM training step and the fewest GPUs at which it fits.
// Exit codes: 0 fits, 1 does not fit, 2 bad input or usage, 3 no endpoint answered
// (estimate --endpoint with --endpoint-fallback=refuse).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <iostream>
#include <string>
#include <vector>

#include "command_options.h"
#include "plot_command.h"
#include "remote_estimate.h"
#include "render.h"
#include "report/report.h"
#include "request_options.h"
#include "serve/serve.h"
#include "site_catalog.h"
#include "man_page.h"
#include "trainfit/catalog.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"

namespace po = boost::program_options;
using namespace trainfit;

namespace {

// 70 for a bug (sysexits.h EX_SOFTWARE): an internal error is not the user's bad input.
enum Exit { kFits = 0, kOom = 1, kBadInput = 2, kNoEndpoint = 3, kInternalError = 70 };

const char* const kCommands[] = {"estimate", "min-gpus", "sweep", "models", "gpus", "fields", "serve", "report", "plot", "policy", "check-config"};

void usage(std::ostream& out) {
  out << "usage: trainfit <command> [options]\n\n"
         "commands:\n"
         "  estimate   per-GPU memory of one training step, with breakdown, verdict and advice\n"
         "  min-gpus   the fewest GPUs at which the step fits\n"
         "  sweep      per-GPU memory against GPU count and sequence length (48 points each)\n"
         "  models     the model catalog\n"
         "  gpus       the GPU catalog\n"
         "  fields     every request field: JSON name, CLI flag, accepted values\n"
         "  serve      the HTTP API (POST /edge/training) on 127.0.0.1:8080\n"
         "  report     the job_submit plugin's decisions, from its audit log\n"
         "  plot       the three charts (memory vs GPUs, vs sequence length, the budget) as SVG or PNG\n"
         "  policy     the sizing matrix: models x GPU types x sequence lengths -> min_gpus_to_fit\n"
         "  check-config  check a trainfit.conf (default /etc/slurm/trainfit.conf) and the site catalogs\n\n"
         "Every command takes --catalog-dir DIR: site GPUs and models from DIR/gpus.d/*.json and\n"
         "DIR/models.d/*.json (default $TRAINFIT_CATALOG_DIR, else /etc/trainfit).\n"
         "'trainfit <command> --help' or 'trainfit help <command>' lists a command's options;\n"
         "--version prints the version.\n"
         "Exit codes: 0 fits, 1 does not fit, 2 bad input or usage, 3 no --endpoint answered (and\n"
         "--endpoint-fallback=refuse).\n"
         "Documentation: /usr/share/doc/trainfit/ (README.md; service.md, report.md, site.md, ...).\n"
         "Example: trainfit estimate --model llama3-70b --gpus 8 --gpu h100 --seq 8192 --zero 3 --recompute full\n";
}

int bad_input(const std::string& message) {
  std::cerr << "trainfit: " << message << "\n";
  return kBadInput;
}

// The flags that split the model over the GPUs, for a step that fits at no count unsharded.
std::string sharding_hint() {
  auto flag = [](const char* field) { return std::string("--") + find_field(field)->flag; };
  return "adding GPUs does not reduce per-GPU memory without sharding; shard with " + flag("zero_stage") + " 3 (or " +
         flag("sharding") + " fsdp-full), " + flag("tensor_parallel") + " N or " + flag("pipeline_parallel") + " N";
}

// Parses argv for one command; returns false (and sets *exit_code) when done.
bool parse(int argc, char** argv, po::options_description& visible, const po::options_description& hidden,
           po::variables_map& vm, int* exit_code) {
  return cli::parse_command(argc, argv, visible, hidden, vm, exit_code);
}

// min-gpus: the bare number on stdout (scripts read it), or JSON. How the count was made goes
// to stderr, as notes do, only where it decided the answer: whole nodes beyond one.
int print_min_gpus(const Response& r, const std::string& format) {
  const Config& c = r.resolved.config;
  const int64_t gpus = r.min_gpus.gpus;
  if (format == "json") {
    nlohmann::ordered_json out;
    out["min_gpus_to_fit"] = gpus > 0 ? nlohmann::ordered_json(gpus) : nlohmann::ordered_json(nullptr);
    out["counted_as"] = min_gpus_rule(c);
    out["fit_bound"] = to_string(c.fit_bound);
    if (gpus == 0) out["reason"] = r.min_gpus.reason;
    std::cout << out.dump(2) << "\n";
    return gpus > 0 ? kFits : kOom;
  }
  if (gpus > 0) {
    if (c.gpus_per_node > 0 && gpus > c.gpus_per_node) {
      std::cerr << "trainfit: note: min_gpus_to_fit counts " << min_gpus_rule(c) << "\n";
    }
    std::cout << gpus << "\n";
    return kFits;
  }
  std::cout << "none\n";
  std::cerr << "trainfit: no GPU count fits: " << r.min_gpus.reason << "\n";
  if (r.min_gpus.unsharded) std::cerr << "trainfit: hint: " << sharding_hint() << "\n";
  return kOom;
}

int run_request_command(const std::string& command, int argc, char** argv) {
  po::options_description visible = trainfit::cli::help_group("options");
  po::options_description hidden;
  visible.add_options()("help,h", "show this help");
  po::options_description output = trainfit::cli::help_group("output");
  if (command == "min-gpus") {
    output.add_options()("format", po::value<std::string>()->default_value("number"),
                         "number (the count alone on stdout, 'none' when none) | json");
  } else {
    output.add_options()("format", po::value<std::string>()->default_value("table"),
                         command == "sweep" ? "table|csv|json" : "table|json|csv");
  }
  if (command == "sweep") {
    output.add_options()("over", po::value<std::string>()->default_value("both"), "gpus|seq|both");
  }
  visible.add(output);
  cli::add_request_options(visible, hidden);
  if (command == "estimate") cli::add_client_options(visible);
  po::variables_map vm;
  int exit_code = kFits;
  if (!parse(argc, argv, visible, hidden, vm, &exit_code)) return exit_code;

  const std::string format = vm.count("format") ? vm["format"].as<std::string>() : "table";
  if (command == "min-gpus" ? format != "number" && format != "json"
                            : format != "table" && format != "json" && format != "csv") {
    return bad_input("format='" + format + "' is not valid; accepted: " +
                     (command == "min-gpus" ? "number|json" : "table|json|csv"));
  }
  const std::string over = vm.count("over") ? vm["over"].as<std::string>() : "both";
  if (over != "gpus" && over != "seq" && over != "both") {
    return bad_input("over='" + over + "' is not valid; accepted: gpus|seq|both");
  }

  std::vector<std::string> notes;
  Result<Request> request = cli::request_from_options(vm, &notes);
  if (!request) return bad_input(request.error().message);
  for (const std::string& note : notes) std::cerr << "trainfit: note: " << note << "\n";
  if (command == "estimate") {
    Result<std::optional<remote::Settings>> client = cli::client_settings(vm);
    if (!client) return bad_input(client.error().message);
    if (client.value()) {
      int remote_exit = kFits;
      const cli::RemoteRun run = cli::estimate_remotely(*client.value(), request.value(), format, &remote_exit);
      if (run == cli::RemoteRun::kPrinted) return remote_exit;
      if (run == cli::RemoteRun::kRefused) return kNoEndpoint;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  ResponseOptions options;
  options.profiles = command != "min-gpus" && (command == "sweep" || format == "json");
  Request asked = request.value();
  if (command == "min-gpus" && !asked.num_gpus) asked.num_gpus = cli::smallest_layout(asked);
  Result<Response> response = respond(asked, options);
  if (!response) return bad_input(response.error().message);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const Response& r = response.value();

  if (command == "min-gpus") return print_min_gpus(r, format);
  if (format == "json") {
    std::cout << response_to_json(r, {cli::host_name(), ms}, 2) << "\n";
  } else if (command == "sweep") {
    if (format == "csv") cli::print_sweep_csv(std::cout, r, over != "seq", over != "gpus");
    else cli::print_sweep_table(std::cout, r, over != "seq", over != "gpus");
  } else if (format == "csv") {
    cli::print_estimate_csv(std::cout, r);
  } else {
    cli::print_estimate_table(std::cout, r);
  }
  return r.breakdown.fits ? kFits : kOom;
}

int run_catalog_command(const std::string& command, int argc, char** argv) {
  po::options_description visible = trainfit::cli::help_group("options");
  visible.add_options()("help,h", "show this help")(
      "format", po::value<std::string>()->default_value("table"), "table|json");
  po::variables_map vm;
  int exit_code = kFits;
  if (!parse(argc, argv, visible, po::options_description(), vm, &exit_code)) return exit_code;
  const std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "json") return bad_input("format='" + format + "' is not valid; accepted: table|json");
  if (command == "models") cli::print_models(std::cout, format == "json");
  else if (command == "gpus") cli::print_gpus(std::cout, format == "json");
  else cli::print_fields(std::cout, format == "json");
  return kFits;
}

int unknown_command(const std::string& command) {
  std::vector<std::string> commands(std::begin(kCommands), std::end(kCommands));
  const std::string hint = did_you_mean(command, commands);
  return bad_input("unknown command '" + command + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                   "; see 'trainfit --help'");
}

// One command, argv[0] = its name.
int run_command(const std::string& command, int argc, char** argv, const std::string& catalog_dir) {
  if (command == "--help-man") return cli::run_help_man(argc, argv);  // man/gen_man.sh
  if (command == "check-config") return cli::run_check_config(argc, argv, catalog_dir);
  if (std::find(std::begin(kCommands), std::end(kCommands), command) == std::end(kCommands)) return unknown_command(command);
  if (!cli::use_site_catalogs(catalog_dir, command == "models" || command == "gpus" || command == "serve", std::cerr)) {
    return kBadInput;
  }
  if (command == "models" || command == "gpus" || command == "fields") return run_catalog_command(command, argc, argv);
  if (command == "serve") return cli::run_serve(argc, argv, catalog_dir);
  if (command == "plot") return cli::run_plot(argc, argv);
  if (command == "policy") return cli::run_policy(argc, argv);
  if (command == "report") return cli::run_report(argc, argv);
  return run_request_command(command, argc, argv);
}

// trainfit help CMD: what 'trainfit CMD --help' prints.
int help_on(const std::string& command, const std::string& catalog_dir) {
  std::string name = command, flag = "--help";
  char* args[] = {name.data(), flag.data(), nullptr};
  if (std::find(std::begin(kCommands), std::end(kCommands), command) == std::end(kCommands)) return unknown_command(command);
  return run_command(command, 2, args, catalog_dir);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // Test hook (tests/cli_test.sh): an internal error, to see its exit status and line.
    if (const char* fail = std::getenv("TRAINFIT_FAIL_INTERNAL"); fail != nullptr && std::string(fail) == "1") {
      throw std::runtime_error("TRAINFIT_FAIL_INTERNAL is set (a test hook)");
    }
    std::string catalog_dir;
    const std::string catalog_usage = cli::take_catalog_dir(&argc, argv, &catalog_dir);
    if (!catalog_usage.empty()) return bad_input(catalog_usage);
    if (argc < 2) {
      usage(std::cerr);
      return kBadInput;
    }
    const std::string command = argv[1];
    if (command == "help" && argc >= 3) return help_on(argv[2], catalog_dir);
    if (command == "--help" || command == "-h" || command == "help") {
      usage(std::cout);
      return kFits;
    }
    if (command == "--version" || command == "version") {
      std::cout << "trainfit " << TRAINFIT_VERSION << "\n";
      return kFits;
    }
    return run_command(command, argc - 1, argv + 1, catalog_dir);
  } catch (const std::exception& e) {
    std::cerr << "trainfit: internal error: " << e.what() << "\n";
    return kInternalError;
  }
}
