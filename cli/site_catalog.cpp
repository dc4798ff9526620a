#include "site_catalog.h"

#include "report/band.h"

#include <sys/stat.h>
#include <cerrno>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>

#include "command_options.h"
#include "trainfit/admission.h"
#include "trainfit/admission/catalog_dir.h"
#include "trainfit/catalog.h"
#include "trainfit/util/file.h"

namespace po = boost::program_options;

namespace trainfit::cli {
namespace {

constexpr const char* kDefaultConf = "/etc/slurm/trainfit.conf";

struct ConfProblem {
  int line = 0;  // 0: the file as a whole
  std::string message;
};

// Where parse_policy placed its error: {N, message without "trainfit.conf line N: "}, or
// {0, the whole message} for the file as a whole.
ConfProblem conf_problem_of(const Error& error) {
  if (error.line > 0) return {error.line, error.reason};
  return {0, error.message};
}

// *clean: the text with the problem lines blanked (what *last parsed).
std::vector<ConfProblem> conf_problems(std::string text, Result<admission::Policy>* last, std::string* clean) {
  std::vector<ConfProblem> out;
  std::vector<std::string> lines;
  for (size_t start = 0;;) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  for (size_t round = 0; round <= lines.size(); ++round) {
    *last = admission::parse_policy(text);
    if (last->ok()) break;
    const ConfProblem problem = conf_problem_of(last->error());
    out.push_back(problem);
    if (problem.line < 1 || static_cast<size_t>(problem.line) > lines.size() || lines[problem.line - 1].empty()) break;
    lines[problem.line - 1].clear();
    text.clear();
    for (size_t i = 0; i < lines.size(); ++i) text += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  }
  std::stable_sort(out.begin(), out.end(), [](const ConfProblem& a, const ConfProblem& b) { return a.line < b.line; });
  *clean = std::move(text);
  return out;
}

// What assembling the policy against slurm.conf found: problems (returned, counted) and
// warnings on stdout, the notes on stderr unless quiet.
size_t report_assembly(const std::string& path, const std::string& slurm_conf, const admission::AssembledPolicy& a,
                       bool quiet, size_t* warnings) {
  // FILE:LINE: where the problem's line in trainfit.conf is known, as the parser's own problems.
  auto at = [&path](const Error& e) {
    return e.line > 0 ? path + ":" + std::to_string(e.line) + ": " + e.reason : path + ": " + e.message;
  };
  for (const Error& problem : a.problems) std::cout << at(problem) << " (" << slurm_conf << ")\n";
  for (const Error& warning : a.warnings) {
    std::cout << path << ": warning: " << warning.message << " (" << slurm_conf << ")\n";
  }
  *warnings += a.warnings.size();
  if (quiet) return a.problems.size();
  if (!a.slurm_conf_note.empty()) {
    std::cerr << "trainfit: note: " << slurm_conf << " not read (" << a.slurm_conf_note
              << "): partitions, default partition and nodes' GPUs not checked against it\n";
  }
  for (const std::string& user : a.unknown_users) {
    std::cerr << "trainfit: note: " << path << ": exempt user or operator '" << user
              << "' is not known to this host (the plugin ignores it on a host that does not know it)\n";
  }
  return a.problems.size();
}

// Why a folder the user named cannot serve ("" when it can), in the words file errors use.
std::string folder_problem(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return errno == ENOENT ? "not found" : std::string("cannot be read: ") + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return std::string("is ") + file_kind(st.st_mode) + ", not a folder";
  return "";
}

}  // namespace

std::string take_catalog_dir(int* argc, char** argv, std::string* dir) {
  const std::string flag = "--catalog-dir";
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {  // the rest is not ours
      while (i < *argc) argv[out++] = argv[i++];
      break;
    }
    if (arg == flag) {
      if (i + 1 >= *argc || argv[i + 1][0] == '\0') return "--catalog-dir needs a value; accepted: a folder holding gpus.d/ and models.d/";
      *dir = argv[++i];
      continue;
    }
    if (arg.rfind(flag + "=", 0) == 0) {
      *dir = arg.substr(flag.size() + 1);
      if (dir->empty()) return "--catalog-dir needs a value; accepted: a folder holding gpus.d/ and models.d/";
      continue;
    }
    argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = nullptr;
  return "";
}

bool use_site_catalogs(const std::string& option, bool print_notes, std::ostream& err) {
  bool named = false;
  const std::string dir = admission::catalog_dir(option, &named);
  if (const std::string problem = named ? folder_problem(dir) : ""; !problem.empty()) {
    err << "trainfit: catalog-dir='" << dir << "': " << problem << "; accepted: a folder holding gpus.d/ and models.d/\n";
    return false;
  }
  const CatalogSet set = admission::load_site_catalogs(dir, named);
  for (const Error& problem : set.problems) err << "trainfit: " << problem.message << "\n";
  if (!set.problems.empty()) {
    err << "trainfit: the site catalogs in " << dir << " are not valid (see 'trainfit check-config')\n";
    return false;
  }
  if (print_notes) {
    for (const std::string& note : set.notes) err << "trainfit: note: " << note << "\n";
  }
  return true;
}

// How the jobs in the policy's audit log fall in the uncertain band, under this file's rules.
void print_band(const admission::Policy& policy) {
  Result<report::BandCount> band = report::count_band(policy.audit_log, policy);
  if (!band) {
    std::cerr << "trainfit: note: the uncertain band is counted from the audit log once there is one (" << policy.audit_log
              << ": " << band.error().message << ")\n";
    return;
  }
  std::cerr << "trainfit: note: " << policy.audit_log << ": " << band->checked << " checked job"
            << (band->checked == 1 ? "" : "s") << " with a likely range, " << band->uncertain
            << " in the uncertain band (likely range straddling the usable HBM): this file refuses " << band->refused
            << " and warns " << band->uncertain - band->refused << " of them (refuse_when)\n";
}

int run_check_config(int argc, char** argv, const std::string& catalog_dir_option) {
  po::options_description visible = help_group("options");
  visible.add_options()("help,h", "show this help")(
      "quiet,q", "no summary line and no notes when everything is valid")(
      "keys", "list the keys trainfit.conf knows, one per line, and exit")(
      "slurm-conf", po::value<std::string>()->value_name("FILE"),
      "slurm.conf to check against: partition names, the default partition, the nodes' GPUs, AccountingStorageEnforce (default $SLURM_CONF, else /etc/slurm/slurm.conf)");
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::string>(), "trainfit.conf to check");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  try {
    po::options_description all;
    all.add(visible).add(hidden);
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "trainfit: " << e.what() << "; see 'trainfit check-config --help'\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "usage: trainfit check-config [FILE] [options]\n\n"
                 "Checks FILE (default " << kDefaultConf << ") with the job_submit plugin's own parser and the site\n"
                 "catalogs (--catalog-dir, $TRAINFIT_CATALOG_DIR or /etc/trainfit): every problem as\n"
                 "FILE:LINE: message. Exit 0 when everything is valid, 2 otherwise.\n\n"
              << help_text(visible) << "\n";
    return 0;
  }
  if (vm.count("keys")) {
    for (const std::string& key : admission::policy_keys()) std::cout << key << "\n";
    return 0;
  }
  const bool quiet = vm.count("quiet") > 0;
  const std::string path = vm.count("file") ? vm["file"].as<std::string>() : kDefaultConf;
  size_t problems = 0;

  // The catalogs first: trainfit.conf's default_gpu and gpu_alias name their GPUs.
  bool named = false;
  const std::string dir = admission::catalog_dir(catalog_dir_option, &named);
  const CatalogSet set = admission::load_site_catalogs(dir, named);
  for (const Error& problem : set.problems) std::cout << problem.message << "\n";
  problems += set.problems.size();
  if (!quiet) {
    for (const std::string& note : set.notes) std::cerr << "trainfit: note: " << note << "\n";
  }

  Result<std::string> text = read_regular_file(path, admission::kMaxConfBytes);
  size_t partitions = 0, aliases = 0, warnings = 0;
  std::optional<admission::Policy> in_force;  // the file's policy, when valid: its audit log's band
  if (!text) {
    std::cout << path << ": " << text.error().reason << "\n";
    ++problems;
  } else {
    Result<admission::Policy> policy = make_error(ErrorCode::kInvalidValue, "", "");
    std::string clean;
    for (const ConfProblem& p : conf_problems(text.value(), &policy, &clean)) {
      std::cout << path << ":" << (p.line > 0 ? std::to_string(p.line) + ":" : "") << " " << p.message << "\n";
      ++problems;
    }
    if (policy.ok()) {
      const std::string slurm_conf = vm.count("slurm-conf") ? vm["slurm-conf"].as<std::string>() : admission::slurm_conf_path();
      Result<admission::AssembledPolicy> assembled = admission::assemble_policy(
          clean, admission::slurm_conf_text(slurm_conf), admission::passwd_uid);
      if (assembled) {
        problems += report_assembly(path, slurm_conf, assembled.value(), quiet, &warnings);
        if (!quiet) in_force = assembled->policy;
        partitions = assembled->policy.partitions.size();
        aliases = assembled->policy.gpu_aliases.size();
      } else {  // not reached: the same text parsed above
        std::cout << path << ": " << assembled.error().message << "\n";
        ++problems;
      }
    }
  }
  if (problems > 0) {
    std::cerr << "trainfit: " << problems << " problem" << (problems == 1 ? "" : "s") << " found\n";
    return 2;
  }
  if (!quiet) {
    std::cout << path << ": ok" << (warnings > 0 ? " with " + std::to_string(warnings) + " warning" + (warnings == 1 ? "" : "s") : "")
              << ": " << partitions << " partition override" << (partitions == 1 ? "" : "s") << ", "
              << aliases << " GPU alias" << (aliases == 1 ? "" : "es") << "; catalogs: " << gpu_catalog().size()
              << " GPUs, " << model_catalog().size() << " models (" << set.notes.size() << " site entr"
              << (set.notes.size() == 1 ? "y" : "ies") << " from " << dir << ")\n";
    if (in_force) print_band(*in_force);
  }
  return 0;
}

}  // namespace trainfit::cli
