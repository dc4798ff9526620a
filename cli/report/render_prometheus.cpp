// The Prometheus text exposition format, for node_exporter's textfile collector.
// Gauges, not counters: the numbers cover a window of files that rotate away, so they
// may go down, which a counter must not.
#include "render.h"

namespace trainfit::cli::report {
namespace {

// Label values escape backslash, double quote and newline (the exposition format's rule).
std::string label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

class Metrics {
 public:
  explicit Metrics(std::ostream& out) : out_(out) {}
  void family(const std::string& name, const std::string& help) {
    name_ = name;
    out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n";
  }
  void sample(const std::vector<std::pair<std::string, std::string>>& labels, const std::string& value) {
    out_ << name_;
    for (size_t i = 0; i < labels.size(); ++i) {
      out_ << (i == 0 ? "{" : ",") << labels[i].first << "=\"" << label(labels[i].second) << "\"";
    }
    out_ << (labels.empty() ? "" : "}") << " " << value << "\n";
  }
  void sample(const std::vector<std::pair<std::string, std::string>>& labels, int64_t value) {
    sample(labels, std::to_string(value));
  }

 private:
  std::ostream& out_;
  std::string name_;
};

void by_action(Metrics& m, const Report& r, Dimension d, const char* name, const char* help) {
  m.family(name, help);
  const size_t i = static_cast<size_t>(d);
  for (const auto& [key, counts] : r.by[i]) {
    for (int a = 0; a < kActions; ++a) m.sample({{"action", to_string(Action(a))}, {to_string(d), key}}, counts.of(Action(a)));
  }
}

void oom(Metrics& m, const Report& r) {
  const std::pair<const char*, const OomGpus*> both[] = {{to_string(Action::kReject), &r.rejected},
                                                          {to_string(Action::kWarn), &r.warned}};
  m.family("trainfit_audit_oom_jobs", std::string("Jobs refused or warned because they do not fit in GPU memory (") + oom_reason() + ").");
  for (const auto& [action, g] : both) m.sample({{"action", action}}, g->jobs);
  m.family("trainfit_audit_oom_gpus_requested", "GPUs those jobs asked for.");
  for (const auto& [action, g] : both) m.sample({{"action", action}}, g->gpus_requested);
  m.family("trainfit_audit_oom_gpus_needed", "Sum of min_gpus_to_fit over those jobs (jobs that fit on no count excluded).");
  for (const auto& [action, g] : both) m.sample({{"action", action}}, g->gpus_needed);
  m.family("trainfit_audit_oom_gpu_hours", "GPUs requested x time limit over those jobs that gave a time limit (reject: saved).");
  for (const auto& [action, g] : both) m.sample({{"action", action}}, hours_text(g->gpu_hours));
  m.family("trainfit_audit_oom_jobs_without_time_limit", "Those jobs without a time limit, not in GPU-hours.");
  for (const auto& [action, g] : both) m.sample({{"action", action}}, g->jobs - g->with_time_limit);
  m.family("trainfit_audit_offload_jobs", "Jobs whose step offloads to host RAM.");
  m.sample({}, r.host_ram.jobs);
  m.family("trainfit_audit_offload_over_memory_request_jobs",
           "Those whose host RAM per node is more than their memory request per node (warned).");
  m.sample({}, r.host_ram.over_memory_request);
  m.family("trainfit_audit_resized_jobs", "Jobs given more GPUs by a resizing partition.");
  m.sample({}, r.resized);
  m.family("trainfit_audit_gpus_added_by_resize", "Sum of resized_to - gpus_requested.");
  m.sample({}, r.gpus_added_by_resize);
}

void input(Metrics& m, const Report& r) {
  m.family("trainfit_audit_skipped_lines", "Audit lines skipped: malformed, or over the 1 MiB line cap.");
  m.sample({{"reason", "malformed"}}, r.input.malformed);
  m.sample({{"reason", "oversize"}}, r.input.oversize);
  m.family("trainfit_audit_records_outside_window", "Records outside --since/--until.");
  m.sample({}, r.input.outside_window);
  if (r.input.unconfirmed) {
    m.family("trainfit_audit_unconfirmed_submissions",
             "Admitted submissions (--jobs given) whose decision no job carries: left out of the counts.");
    m.sample({}, *r.input.unconfirmed);
  }
  if (!r.input.last_time) return;
  m.family("trainfit_audit_last_record_timestamp_seconds", "Time of the newest record in the window.");
  m.sample({}, *r.input.last_time);
}

}  // namespace

void render_prometheus(const Report& r, std::ostream& out) {
  Metrics m(out);
  by_action(m, r, Dimension::kPartition, "trainfit_audit_jobs",
            "Admission decisions in the audit log (one per record), by action and partition.");
  by_action(m, r, Dimension::kAccount, "trainfit_audit_account_jobs", "Admission decisions by action and account.");
  by_action(m, r, Dimension::kGpu, "trainfit_audit_gpu_jobs", "Admission decisions by action and GPU type.");
  by_action(m, r, Dimension::kModel, "trainfit_audit_model_jobs", "Admission decisions by action and model.");
  oom(m, r);
  m.family("trainfit_audit_uncertain_jobs",
           "Checked jobs whose likely range straddled the usable HBM (low end <= capacity < high end), by partition.");
  for (const auto& [key, counts] : r.by[static_cast<size_t>(Dimension::kPartition)]) {
    m.sample({{to_string(Dimension::kPartition), key}}, counts.uncertain);
  }
  input(m, r);
}

}  // namespace trainfit::cli::report
