// The audit record: one JSON line per decision, written by hand (this runs for every
// job submission; a JSON tree costs more than the decision). User strings are capped
// at kMaxAuditField bytes with a visible marker; invalid UTF-8 is replaced.
// `trainfit report` reads these lines (docs/report.md): add fields, never rename or drop one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "trainfit/admission.h"
#include "trainfit/admission/audit_log.h"
#include "trainfit/util/text.h"

namespace trainfit::admission {
namespace {

class Line {
 public:
  Line() { out_.reserve(768); }
  // The cap leaves room for the marker of fields already cut when the record was built.
  Line& text(const char* key, const std::string& value, size_t cap = kMaxAuditField + 64) {
    field(key);
    append_json_string(out_, value, cap);
    return *this;
  }
  Line& number(const char* key, int64_t value) {
    field(key);
    out_ += std::to_string(value);
    return *this;
  }
  Line& count_or_null(const char* key, int64_t value) {
    field(key);
    out_ += value > 0 ? std::to_string(value) : "null";
    return *this;
  }
  Line& gib(const char* key, double value) {
    field(key);
    append_fixed(out_, value, 2);
    return *this;
  }
  Line& gib_or_null(const char* key, double value) {  // null: none (no offload, no memory request)
    if (value > 0) return gib(key, value);
    field(key);
    out_ += "null";
    return *this;
  }
  // [{"field":"recompute","value":"full"}, ...]: the advice as data, so reports need not parse messages.
  Line& changes(const char* key, const std::vector<Change>& changes) {
    field(key);
    out_ += '[';
    for (const Change& c : changes) {
      out_ += out_.back() == '[' ? "{\"field\":" : ",{\"field\":";
      append_json_string(out_, c.field, kMaxAuditField);
      out_ += ",\"value\":";
      append_json_string(out_, c.value, kMaxAuditField);
      out_ += '}';
    }
    out_ += ']';
    return *this;
  }
  std::string done() { return out_ + "}"; }

 private:
  void field(const char* key) {
    out_ += out_.empty() ? "{\"" : ",\"";
    out_ += key;
    out_ += "\":";
  }
  std::string out_;
};

// ISO 8601 UTC, formatted once per second per thread (records come in bursts).
std::string utc(int64_t seconds) {
  thread_local int64_t cached_seconds = -1;
  thread_local std::string cached;
  if (seconds == cached_seconds) return cached;
  char when[32] = "";
  const time_t t = static_cast<time_t>(seconds);
  struct tm parts;
  if (gmtime_r(&t, &parts) != nullptr) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &parts);
  cached_seconds = seconds;
  cached = when;
  return cached;
}

}  // namespace

int64_t gpus_held(const Decision& d) {
  if (d.gpus_held > 0) return d.gpus_held;
  return d.resized_to > 0 ? d.resized_to : d.gpus_requested;
}

namespace {
bool id_chars(std::string_view s, bool hex) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [hex](char c) {
    return (c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f');
  });
}
}  // namespace

// Ids are "<slurmctld start time, hex>-<n>" (job_submit_trainfit.cpp next_decision_id).
std::string stamped_decision_id(std::string_view line) {
  std::string found;
  size_t start = 0;
  while (start <= line.size()) {
    const size_t end = std::min(line.find(';', start), line.size());
    std::string_view part = line.substr(start, end - start);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t' || part.back() == '\r')) part.remove_suffix(1);
    const std::string_view key = kStampDecision;
    if (part.substr(0, key.size()) == key) {
      const std::string_view id = part.substr(key.size());
      const size_t dash = id.find('-');
      if (dash != std::string_view::npos && id_chars(id.substr(0, dash), true) && id_chars(id.substr(dash + 1), false)) {
        found = std::string(id);
      }
    }
    start = end + 1;
  }
  return found;
}

std::string truncated(const std::string& text, size_t most, size_t total) {
  total = std::max(total, text.size());
  if (total <= most) return text;
  size_t cut = std::min(most, text.size());
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
  return text.substr(0, cut) + "…[truncated " + std::to_string(total - cut) + " bytes]";
}

void append_fixed(std::string& out, double value, int decimals) {
  out += format_fixed(std::isfinite(value) ? value : 0.0, decimals);  // JSON has no inf or nan
}

std::string audit_json(const AuditRecord& r) {
  const Decision& d = r.decision;
  Line line;
  line.text("time", utc(r.time))
      .text("event", r.event)
      .text("decision_id", r.decision_id)
      .text("job_id", r.job_id)
      .number("uid", r.uid)
      .text("user", r.user)
      .text("account", r.account)
      .text("partition", r.partition)
      .text("qos", r.qos)
      .text("job_name", r.job_name)
      .text("gpu_request", r.gpu_request)
      .text("annotation", describe(r.annotation))
      .number("gpus_requested", d.gpus_requested)
      .text("gpu", d.gpu)
      .gib("predicted_per_gpu_gb", d.per_gpu_gb)
      .gib("capacity_gb", d.capacity_gb)
      .text("action", d.exempt ? "exempt" : d.unchecked ? "unchecked" : to_string(d.verdict))
      .text("reason", to_string(d.reason))
      .count_or_null("min_gpus_to_fit", d.min_gpus)
      .count_or_null("resized_to", d.resized_to)
      .count_or_null("time_limit_min", r.time_limit_minutes)
      .changes("advice", d.advice)
      .gib_or_null("host_ram_per_node_gb", d.host_ram_per_node_gb)
      .gib_or_null("mem_per_node_gb", d.memory_per_node_gb)
      .text("message", d.message, 4 * kMaxAuditField + 64)
      .number("gpus_held", gpus_held(d));
  return line.done();
}

}  // namespace trainfit::admission
