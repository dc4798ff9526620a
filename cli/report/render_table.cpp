// The terminal report: aligned columns, one section per question.
#include <algorithm>

#include "render.h"
#include "trainfit/admission.h"
#include "trainfit/util/counted.h"

namespace trainfit::cli::report {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// First column left-aligned, the rest right-aligned (numbers).
void print_rows(const Rows& rows, std::ostream& out) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += i == 0 ? row[i] + pad : "  " + pad + row[i];
    }
    line = admission::printable(line);  // user text from the log cannot drive the terminal
    out << line << "\n";
  }
}

constexpr Action kColumns[] = {Action::kAccept, Action::kWarn, Action::kReject, Action::kResize, Action::kExempt,
                               Action::kUnchecked};

std::vector<std::string> count_row(const std::string& key, const Counts& c) {
  std::vector<std::string> row = {key, std::to_string(c.records), std::to_string(c.checked())};
  for (Action a : kColumns) row.push_back(std::to_string(c.of(a)));
  row.push_back(std::to_string(c.oom));
  row.push_back(std::to_string(c.uncertain));
  return row;
}

std::vector<std::string> count_header(const std::string& first) {
  std::vector<std::string> row = {first, "records", "checked"};
  for (Action a : kColumns) row.push_back(to_string(a));
  row.push_back("oom");
  row.push_back("uncertain");
  return row;
}

void window_line(const Report& r, std::ostream& out) {
  out << "trainfit audit report: " << period_text(r) << "\n";
  const InputStats& in = r.input;
  out << "read " << counted(static_cast<int64_t>(in.files.size()), "file") << ", " << counted(in.lines, "line") << ": "
      << counted(in.records, "record") << " in the period, " << in.outside_window << " outside it";
  if (in.malformed + in.oversize > 0) {
    out << "; skipped " << counted(in.malformed, "malformed line") << ", " << counted(in.oversize, "line")
        << " over 1 MiB";
  }
  if (in.unreadable_files > 0) out << "; " << counted(in.unreadable_files, "file") << " not fully read";
  out << "\n" << confirmation_text(in) << "\n";
  if ((r.since || r.until) && in.first_time) {  // else the period already is first to last record
    out << "records from " << minute_text(*in.first_time) << " to " << minute_text(*in.last_time) << " UTC\n";
  }
}

// "GPU-hours saved: 16.0 (2 jobs with a time limit; 1 job without one not counted)"
void hours_line(const OomGpus& g, bool saved, std::ostream& out) {
  const int64_t without = g.jobs - g.with_time_limit;
  out << "    GPU-hours " << (saved ? "saved" : "at risk") << ": ";
  if (g.with_time_limit == 0) {
    out << "unknown (no job gave a time limit)\n";
    return;
  }
  out << shown_hours(g.gpu_hours) << " (" << counted(g.with_time_limit, "job") << " with a time limit"
      << (without > 0 ? "; " + counted(without, "job") + " without one not counted" : "") << ")\n";
}

void oom_line(const char* what, const OomGpus& g, bool saved, std::ostream& out) {
  if (g.jobs == 0) {
    out << "  " << what << ": none\n";
    return;
  }
  out << "  " << what << ": " << counted(g.jobs, "job") << " asking for " << counted(g.gpus_requested, "GPU")
      << "; min_gpus_to_fit adds up to " << g.gpus_needed
      << (g.no_fit ? " (" + counted(g.no_fit, "job") + (g.no_fit == 1 ? " fits" : " fit") + " on no GPU count)" : "")
      << "\n";
  hours_line(g, saved, out);
}

void gpu_section(const Report& r, std::ostream& out) {
  out << "\nGPUs (jobs refused because they do not fit: reason too_few_gpus)\n";
  oom_line("rejected", r.rejected, true, out);
  oom_line("warned, ran anyway", r.warned, false, out);
  out << "  resized: " << (r.resized == 0 ? std::string("none")
                                          : counted(r.resized, "job") + ", " + counted(r.gpus_added_by_resize, "GPU") + " added")
      << "\n";
}

void host_ram_section(const Report& r, std::ostream& out) {
  out << "\nhost RAM for offload (per node, against the job's memory request)\n  " << host_ram_text(r.host_ram) << "\n";
}

void top_sections(const Report& r, std::ostream& out) {
  out << "\nmost frequent configurations that would run out of memory\n";
  Rows rows = {{"model", "config", "gpu", "gpus", "count", "rejected", "warned", "min_gpus_to_fit"}};
  for (const OomConfig& c : r.top_oom_configs) {
    rows.push_back({c.model, c.config.empty() ? "-" : c.config, c.gpu, std::to_string(c.gpus), std::to_string(c.count),
                    std::to_string(c.rejected), std::to_string(c.warned), c.min_gpus ? std::to_string(*c.min_gpus) : "none"});
  }
  if (rows.size() > 1) print_rows(rows, out);
  else out << "  none\n";
  out << "\nmost common advice (the cheapest change that fits on the GPUs asked for)\n";
  rows = {{"advice", "count"}};
  for (const AdviceCount& a : r.top_advice) rows.push_back({a.advice, std::to_string(a.count)});
  if (rows.size() > 1) print_rows(rows, out);
  else out << "  none\n";
}

}  // namespace

void render_table(const Report& r, std::ostream& out) {
  window_line(r, out);
  if (r.totals.records == 0) {
    out << "\nno decisions in this period (the plugin audits annotated GPU jobs and the jobs it refuses)\n";
    return;
  }
  out << "\n";
  print_rows({count_header(""), count_row("all", r.totals)}, out);
  for (size_t i = 0; i < std::size(kDimensions); ++i) {
    out << "\nby " << to_string(kDimensions[i]) << "\n";
    Rows rows = {count_header(to_string(kDimensions[i]))};
    for (const auto& [key, counts] : r.by[i]) rows.push_back(count_row(key, counts));
    print_rows(rows, out);
  }
  gpu_section(r, out);
  host_ram_section(r, out);
  top_sections(r, out);
}

}  // namespace trainfit::cli::report
