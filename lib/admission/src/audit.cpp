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
#include "trainfit/util/utf8.h"

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
      out_ += out_.back() == '[' ? "{" : ",{";
      field(audit_field::kAdviceField, false);
      append_json_string(out_, c.field, kMaxAuditField);
      field(audit_field::kAdviceValue);
      append_json_string(out_, c.value, kMaxAuditField);
      out_ += '}';
    }
    out_ += ']';
    return *this;
  }
  std::string done() { return out_ + "}"; }

 private:
  // "key": opening the line, after a comma, or (comma false) first in an advice entry.
  void field(const char* key, bool comma = true) {
    out_ += out_.empty() ? "{\"" : comma ? ",\"" : "\"";
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
  while (cut > 0 && is_utf8_continuation(static_cast<unsigned char>(text[cut]))) --cut;  // not inside a character
  return text.substr(0, cut) + "…[truncated " + std::to_string(total - cut) + " bytes]";
}

void append_fixed(std::string& out, double value, int decimals) {
  out += format_fixed(std::isfinite(value) ? value : 0.0, decimals);  // JSON has no inf or nan
}

std::string audit_json(const AuditRecord& r) {
  using namespace audit_field;
  const Decision& d = r.decision;
  Line line;
  line.text(kTime, utc(r.time))
      .text(kEvent, r.event)
      .text(kDecisionId, r.decision_id)
      .text(kJobId, r.job_id)
      .number(kUid, r.uid)
      .text(kUser, r.user)
      .text(kAccount, r.account)
      .text(kPartition, r.partition)
      .text(kQos, r.qos)
      .text(kJobName, r.job_name)
      .text(kGpuRequest, r.gpu_request)
      .text(kAnnotation, describe(r.annotation))
      .number(kGpusRequested, d.gpus_requested)
      .text(kGpu, d.gpu)
      .gib(kPredictedPerGpuGb, d.per_gpu_gb)
      .gib(kCapacityGb, d.capacity_gb)
      .gib(kLikelyLowGb, d.likely_low_gb)
      .gib(kLikelyHighGb, d.likely_high_gb)
      .text(kAction, d.exempt ? kActionExempt : d.unchecked ? kActionUnchecked : to_string(d.verdict))
      .text(kReason, to_string(d.reason))
      .count_or_null(kMinGpusToFit, d.min_gpus)
      .text(kMinGpusBound, d.min_gpus_bound)
      .count_or_null(kResizedTo, d.resized_to)
      .count_or_null(kTimeLimitMin, r.time_limit_minutes)
      .changes(kAdvice, d.advice)
      .gib_or_null(kHostRamPerNodeGb, d.host_ram_per_node_gb)
      .gib_or_null(kMemPerNodeGb, d.memory_per_node_gb)
      .text(kMessage, d.message, 4 * kMaxAuditField + 64)
      .number(kGpusHeld, gpus_held(d));
  return line.done();
}

}  // namespace trainfit::admission
