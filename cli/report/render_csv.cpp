// The CSV report: one number per row (section,dimension,key,metric,value), so that every
// section shares one header and a spreadsheet can pivot it. Quoting per RFC 4180.
#include "render.h"

namespace trainfit::cli::report {
namespace {

// A cell a spreadsheet would read as a formula (=, +, -, @, tab, CR first) gets a leading
// apostrophe: keys come from what users submit (account, partition, model), and a report
// opened in a spreadsheet must not run them (OWASP, "CSV Injection").
std::string inert(const std::string& text) {
  if (text.empty() || std::string("=+-@\t\r").find(text.front()) == std::string::npos) return text;
  return "'" + text;
}

std::string field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

class Csv {
 public:
  explicit Csv(std::ostream& out) : out_(out) { out_ << "section,dimension,key,metric,value\r\n"; }
  void row(const std::string& section, const std::string& dimension, const std::string& key, const std::string& metric,
           const std::string& value) {
    out_ << field(section) << ',' << field(dimension) << ',' << field(inert(key)) << ',' << field(metric) << ','
         << field(value)
         << "\r\n";
  }
  void counts(const std::string& section, const std::string& dimension, const std::string& key, const Counts& c) {
    row(section, dimension, key, "records", std::to_string(c.records));
    row(section, dimension, key, "checked", std::to_string(c.checked()));
    for (int a = 0; a < kActions; ++a) row(section, dimension, key, to_string(Action(a)), std::to_string(c.of(Action(a))));
    row(section, dimension, key, "oom", std::to_string(c.oom));
    row(section, dimension, key, "uncertain", std::to_string(c.uncertain));
  }
  void oom(const std::string& action, const OomGpus& g) {
    row("gpus", action, "", "jobs", std::to_string(g.jobs));
    row("gpus", action, "", "gpus_requested", std::to_string(g.gpus_requested));
    row("gpus", action, "", "gpus_needed", std::to_string(g.gpus_needed));
    row("gpus", action, "", "no_fit", std::to_string(g.no_fit));
    row("gpus", action, "", "with_time_limit", std::to_string(g.with_time_limit));
    row("gpus", action, "", "gpu_hours", hours_text(g.gpu_hours));
  }

 private:
  std::ostream& out_;
};

void input_rows(const InputStats& in, Csv& csv) {
  csv.row("input", "", "", "files", std::to_string(in.files.size()));
  csv.row("input", "", "", "lines", std::to_string(in.lines));
  csv.row("input", "", "", "records", std::to_string(in.records));
  csv.row("input", "", "", "outside_window", std::to_string(in.outside_window));
  csv.row("input", "", "", "skipped_malformed", std::to_string(in.malformed));
  csv.row("input", "", "", "skipped_oversize", std::to_string(in.oversize));
  if (in.unconfirmed) {
    csv.row("input", "", "", "stamped_jobs", std::to_string(in.stamped_jobs));
    csv.row("input", "", "", "jobs_refused_by_slurm", std::to_string(in.jobs_refused_by_slurm));
    csv.row("input", "", "", "unconfirmed_submissions", std::to_string(*in.unconfirmed));
  }
}

}  // namespace

void render_csv(const Report& r, std::ostream& out) {
  Csv csv(out);
  input_rows(r.input, csv);
  csv.counts("totals", "", "", r.totals);
  for (size_t i = 0; i < std::size(kDimensions); ++i) {
    for (const auto& [key, counts] : r.by[i]) csv.counts("by", to_string(kDimensions[i]), key, counts);
  }
  csv.oom(to_string(Action::kReject), r.rejected);
  csv.oom(to_string(Action::kWarn), r.warned);
  csv.row("gpus", to_string(Action::kResize), "", "jobs", std::to_string(r.resized));
  csv.row("gpus", to_string(Action::kResize), "", "gpus_added", std::to_string(r.gpus_added_by_resize));
  csv.row("host_ram", "", "", "jobs", std::to_string(r.host_ram.jobs));
  csv.row("host_ram", "", "", "over_memory_request", std::to_string(r.host_ram.over_memory_request));
  csv.row("host_ram", "", "", "largest_per_node_gb", hours_text(r.host_ram.largest_per_node_gb));
  int rank = 0;
  for (const OomConfig& c : r.top_oom_configs) {
    const std::string key = "model=" + c.model + (c.config.empty() ? "" : " " + c.config) + " gpu=" + c.gpu +
                            " gpus=" + std::to_string(c.gpus);
    csv.row("top_oom_config", std::to_string(++rank), key, "count", std::to_string(c.count));
  }
  rank = 0;
  for (const AdviceCount& a : r.top_advice) csv.row("top_advice", std::to_string(++rank), a.advice, "count", std::to_string(a.count));
}

}  // namespace trainfit::cli::report
