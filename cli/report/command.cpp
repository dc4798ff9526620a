// `trainfit report`: options, then files -> records -> aggregates -> one renderer.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "aggregate.h"
#include "jobs.h"
#include "record.h"
#include "render.h"
#include "report.h"
#include "source.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"

namespace trainfit::cli {
namespace {

using namespace report;

constexpr const char* kFormats[] = {"table", "csv", "json", "html", "prometheus"};
constexpr int kMaxWarnings = 50;  // then one summary line: a damaged file must not flood the terminal

struct Options {
  std::vector<std::string> files, job_files;
  std::string format = "table";
  std::optional<int64_t> since, until;
  size_t top = 10;
};

int bad(const std::string& message) {
  std::cerr << "trainfit: report: " << message << "\n";
  return 2;
}

// "table|csv|json|html|prometheus": for help, errors and completion alike.
std::string formats() {
  std::string out;
  for (const char* k : kFormats) out += (out.empty() ? "" : "|") + std::string(k);
  return out;
}

void usage(std::ostream& out) {
  out << "usage: trainfit report --audit FILE [FILE...] [options]\n\n"
         "Counts the job_submit plugin's decisions from its audit log (JSON lines; rotated and\n"
         "gzip-compressed files too). /usr/share/doc/trainfit/report.md defines every number.\n\n"
         "  --audit FILE [FILE...]  audit log files, e.g. /var/log/slurm/trainfit-audit.jsonl*\n"
         "  --jobs FILE [FILE...]   the jobs, one a line: STATE|REASON|ADMINCOMMENT\n"
         "                          (sacct -a -X -n -P -o State,Reason,AdminComment):\n"
         "                          admitted submissions no job carries the decision of are left out\n"
         "  --since WHEN            only records at or after WHEN (" << kUtcAccepted << ")\n"
         "  --until WHEN            only records before WHEN\n"
         "  --format FORMAT         " << formats() << " (default table)\n"
         "  --top N                 configurations and advice listed (default 10)\n";
}

bool known_format(const std::string& f) {
  for (const char* k : kFormats) {
    if (f == k) return true;
  }
  return false;
}

// One option's value check; returns an exit code, or -1 when the value is fine.
int take_value(const std::string& option, const std::string& value, Options* o) {
  if (option == "--format") {
    if (!known_format(value)) return bad("--format='" + value + "' is not valid; accepted: " + formats());
    o->format = value;
  } else if (option == "--since" || option == "--until") {
    int64_t t = 0;
    if (!parse_utc(value, true, &t)) return bad(option + "='" + value + "' is not valid; accepted: " + kUtcAccepted);
    (option == "--since" ? o->since : o->until) = t;
  } else if (option == "--top") {
    const bool digits = !value.empty() && value.size() <= 6 && value.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(value) == 0) return bad("--top='" + value + "' is not valid; accepted: integer 1..999999");
    o->top = std::stoul(value);
  }
  return -1;
}

// --opt VALUE and --opt=VALUE; --audit takes every following word up to the next option.
int parse_options(int argc, char** argv, Options* o) {
  const std::vector<std::string> valued = {"--format", "--since", "--until", "--top", "--audit", "--jobs"};
  for (int i = 1; i < argc; ++i) {
    std::string option = argv[i], value;
    if (option == "--help" || option == "-h") return usage(std::cout), 0;
    const size_t eq = option.find('=');
    const bool inline_value = option.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) value = option.substr(eq + 1), option.resize(eq);
    if (option.rfind("--", 0) != 0) return bad("unexpected argument '" + option + "'; files follow --audit");
    if (std::find(valued.begin(), valued.end(), option) == valued.end()) {
      std::vector<std::string> names;
      for (const std::string& v : valued) names.push_back(v.substr(2));
      const std::string hint = did_you_mean(option.substr(2), names);
      return bad("unknown option '" + option + "'" + (hint.empty() ? "" : " (did you mean '--" + hint + "'?)") +
                 "; see 'trainfit report --help'");
    }
    if (option == "--audit" || option == "--jobs") {
      std::vector<std::string>& files = option == "--audit" ? o->files : o->job_files;
      if (inline_value) files.push_back(value);
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) files.push_back(argv[++i]);
      if (files.empty()) return bad(option + " needs a file; see 'trainfit report --help'");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) return bad(option + " needs a value; see 'trainfit report --help'");
      value = argv[++i];
    }
    const int code = take_value(option, value, o);
    if (code >= 0) return code;
  }
  if (o->files.empty()) return bad("--audit FILE [FILE...] is required (e.g. --audit /var/log/slurm/trainfit-audit.jsonl*)");
  if (o->since && o->until && *o->until <= *o->since) return bad("--until must be later than --since");
  return -1;
}

class Reader {
 public:
  Reader(const Options& o, Report* report) : options_(o), report_(report), aggregator_(report) {}

  // The decision ids stamped on the jobs' AdminComments (--jobs). False when a file could not
  // be opened at all.
  bool read_jobs(const std::string& path) {
    InputStats& in = report_->input;
    in.job_files.push_back(path);
    in.unconfirmed = in.unconfirmed.value_or(0);
    LineSink sink{[&](int64_t n, const std::string& line) {
                    if (line.find_first_not_of(" \t") == std::string::npos) return;
                    Result<JobLine> job = parse_job_line(line);
                    if (!job) return warn(path, n, job.error().message);
                    if (job->decision_id.empty()) return;
                    if (job->refused_by_slurm) return void(++in.jobs_refused_by_slurm);
                    if (stamped_ids_.insert(std::move(job->decision_id)).second) ++in.stamped_jobs;
                  },
                  [&](int64_t n) { warn(path, n, "longer than 1 MiB"); }};
    const Result<ReadEnd> end = for_each_line(path, kMaxLineBytes, sink);
    if (!end) return std::cerr << "trainfit: report: jobs='" << path << "': " << end.error().message << "\n", false;
    if (!end->damage.empty()) std::cerr << "trainfit: report: warning: " << path << ": " << end->damage << "\n";
    return true;
  }

  // False when the file could not be opened at all.
  bool read(const std::string& path) {
    report_->input.files.push_back(path);
    LineSink sink{[&](int64_t n, const std::string& line) { on_line(path, n, line); },
                  [&](int64_t n) { ++report_->input.lines, ++report_->input.oversize; warn(path, n, "longer than 1 MiB"); }};
    const int64_t before = report_->input.lines;
    const Result<ReadEnd> end = for_each_line(path, kMaxLineBytes, sink);
    if (!end) return std::cerr << "trainfit: report: audit='" << path << "': " << end.error().message << "\n", false;
    if (end->damage.empty()) return true;
    ++report_->input.unreadable_files;  // lines before the damage are counted
    std::cerr << "trainfit: report: warning: " << path << ": " << end->damage << " after line " << report_->input.lines - before
              << "; the rest of the file is skipped\n";
    return true;
  }

  void finish() {
    if (warnings_ > kMaxWarnings) {
      std::cerr << "trainfit: report: warning: " << warnings_ - kMaxWarnings << " more lines skipped (not listed)\n";
    }
    aggregator_.finish(options_.top);
  }

 private:
  void on_line(const std::string& path, int64_t n, const std::string& line) {
    ++report_->input.lines;
    if (line.find_first_not_of(" \t") == std::string::npos) return;  // blank lines are not records
    const Result<Record> parsed = parse_record(line);
    if (!parsed) {
      ++report_->input.malformed;
      return warn(path, n, parsed.error().message);
    }
    const Record& record = *parsed;
    if ((options_.since && record.time < *options_.since) || (options_.until && record.time >= *options_.until)) {
      ++report_->input.outside_window;
      return;
    }
    InputStats& in = report_->input;
    if (in.unconfirmed && unconfirmed(record)) {
      ++*in.unconfirmed;
      return;
    }
    ++in.records;
    if (!in.first_time || record.time < *in.first_time) in.first_time = record.time;
    if (!in.last_time || record.time > *in.last_time) in.last_time = record.time;
    aggregator_.add(record);
  }

  // An admitted submission (the verdicts stamped on the job) whose decision no job carries:
  // trainfit cannot tell a --test-only probe, or a job Slurm refused after it, from a job.
  bool unconfirmed(const Record& r) const {
    const bool stamped = r.action == Action::kAccept || r.action == Action::kWarn || r.action == Action::kResize;
    return r.event == admission::audit_field::kEventSubmit && stamped && stamped_ids_.count(r.decision_id) == 0;
  }

  void warn(const std::string& path, int64_t n, const std::string& why) {
    if (++warnings_ <= kMaxWarnings) {
      std::cerr << "trainfit: report: warning: " << path << ":" << n << ": skipped: " << why << "\n";
    }
  }

  const Options& options_;
  Report* report_;
  Aggregator aggregator_;
  int64_t warnings_ = 0;
  std::unordered_set<std::string> stamped_ids_;
};

void render(const std::string& format, const Report& r) {
  if (format == "csv") render_csv(r, std::cout);
  else if (format == "json") render_json(r, std::cout);
  else if (format == "html") render_html(r, std::cout);
  else if (format == "prometheus") render_prometheus(r, std::cout);
  else render_table(r, std::cout);
}

}  // namespace

int run_report(int argc, char** argv) {
  Options options;
  const int code = parse_options(argc, argv, &options);
  if (code >= 0) return code;
  Report report;
  report.since = options.since;
  report.until = options.until;
  Reader reader(options, &report);
  for (const std::string& path : options.job_files) {
    if (!reader.read_jobs(path)) return 2;
  }
  for (const std::string& path : options.files) {
    if (!reader.read(path)) return 2;
  }
  reader.finish();
  render(options.format, report);
  std::cout.flush();
  return std::cout ? 0 : 2;
}

}  // namespace trainfit::cli
