#include "record.h"

#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "trainfit/admission.h"

namespace trainfit::cli::report {
namespace {

using nlohmann::json;
namespace field = admission::audit_field;

constexpr Action kAllActions[] = {Action::kAccept, Action::kWarn,   Action::kReject,
                                  Action::kResize, Action::kExempt, Action::kUnchecked};

// The verdict words come from the admission library itself, so the two cannot drift.
const char* verdict_word(Action a) {
  using admission::Verdict;
  switch (a) {
    case Action::kAccept: return admission::to_string(Verdict::kAccept);
    case Action::kWarn: return admission::to_string(Verdict::kWarn);
    case Action::kReject: return admission::to_string(Verdict::kReject);
    case Action::kResize: return admission::to_string(Verdict::kResize);
    case Action::kExempt: return admission::audit_field::kActionExempt;
    case Action::kUnchecked: return admission::audit_field::kActionUnchecked;
  }
  return "?";
}

bool action_of(const std::string& word, Action* out) {
  for (Action a : kAllActions) {
    if (word == verdict_word(a)) return *out = a, true;
  }
  return false;
}

// A string field; absent or null reads as "".
Result<std::string> text(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return make_error(ErrorCode::kInvalidValue, key, std::string("field '") + key + "' is not a string");
  return it->get<std::string>();
}

// A count; absent or null reads as none.
Result<std::optional<int64_t>> count(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return make_error(ErrorCode::kInvalidValue, key, std::string("field '") + key + "' is not a count");
  }
  return std::optional<int64_t>(it->get<int64_t>());
}

// GiB; absent or null reads as none.
Result<std::optional<double>> gib(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number() || it->get<double>() < 0) {
    return make_error(ErrorCode::kInvalidValue, key, std::string("field '") + key + "' is not a GiB figure");
  }
  return std::optional<double>(it->get<double>());
}

Result<std::vector<Change>> advice_of(const json& j) {
  using field::kAdvice, field::kAdviceField, field::kAdviceValue;
  std::vector<Change> advice;
  const auto it = j.find(kAdvice);
  if (it == j.end() || it->is_null()) return advice;
  if (!it->is_array()) return make_error(ErrorCode::kInvalidValue, kAdvice, std::string("field '") + kAdvice + "' is not a list");
  for (const json& change : *it) {
    if (!change.is_object() || !change.value(kAdviceField, json()).is_string() || !change.value(kAdviceValue, json()).is_string()) {
      return make_error(ErrorCode::kInvalidValue, kAdvice,
                        std::string("field '") + kAdvice + "' holds an entry that is not {" + kAdviceField + ", " + kAdviceValue + "}");
    }
    advice.push_back(Change{change[kAdviceField].get<std::string>(), change[kAdviceValue].get<std::string>()});
  }
  return advice;
}

// The annotation as the plugin reads a job comment: the model, and the rest canonical.
void read_annotation(Record* r) {
  if (r->annotation.empty()) {
    r->model = "(none)";
    return;
  }
  admission::Annotation parsed;
  if (!admission::annotation_from_comment("trainfit: " + r->annotation, &parsed).ok() || !parsed.found) {
    r->model = "(unreadable)";
    r->config = r->annotation;
    return;
  }
  r->model = parsed.request.model.value_or("(custom)");
  parsed.request.model.reset();
  r->config = to_key_values(parsed.request);
}

// time and action first: a line without them is not a record, whatever else it holds.
Result<bool> time_and_action(const json& j, Record* r) {
  const Result<std::string> time = text(j, field::kTime);
  if (!time) return time.error();
  const Result<std::string> action = text(j, field::kAction);
  if (!action) return action.error();
  if (time->empty()) return make_error(ErrorCode::kMissing, field::kTime, std::string("no field '") + field::kTime + "'");
  if (!parse_utc(*time, false, &r->time)) {
    return make_error(ErrorCode::kInvalidValue, field::kTime, std::string(field::kTime) + " '" + *time + "' is not YYYY-MM-DDTHH:MM:SSZ");
  }
  if (action->empty()) return make_error(ErrorCode::kMissing, field::kAction, std::string("no field '") + field::kAction + "'");
  if (!action_of(*action, &r->action)) {
    return make_error(ErrorCode::kInvalidValue, field::kAction, std::string(field::kAction) + " '" + *action + "' is not one the audit log writes");
  }
  return true;
}

// The other fields, checked in this order: the first problem is the one reported.
Result<bool> other_fields(const json& j, Record* r) {
  const std::pair<const char*, std::string*> texts[] = {
      {field::kEvent, &r->event}, {field::kUser, &r->user}, {field::kAccount, &r->account},
      {field::kPartition, &r->partition}, {field::kQos, &r->qos}, {field::kGpu, &r->gpu},
      {field::kReason, &r->reason}, {field::kAnnotation, &r->annotation},
      {field::kDecisionId, &r->decision_id}};
  for (const auto& [key, out] : texts) {
    Result<std::string> value = text(j, key);
    if (!value) return value.error();
    *out = std::move(value).value();
  }
  std::optional<int64_t> gpus;
  const std::pair<const char*, std::optional<int64_t>*> counts[] = {{field::kGpusRequested, &gpus},
                                                                    {field::kMinGpusToFit, &r->min_gpus},
                                                                    {field::kResizedTo, &r->resized_to},
                                                                    {field::kTimeLimitMin, &r->time_limit_min},
                                                                    {field::kGpusHeld, &r->gpus_held}};
  for (const auto& [key, out] : counts) {
    const Result<std::optional<int64_t>> value = count(j, key);
    if (!value) return value.error();
    *out = *value;
  }
  r->gpus_requested = gpus.value_or(0);
  for (const auto& [key, out] : {std::make_pair(field::kHostRamPerNodeGb, &r->host_ram_per_node_gb),
                                 std::make_pair(field::kMemPerNodeGb, &r->mem_per_node_gb),
                                 std::make_pair(field::kPredictedPerGpuGb, &r->predicted_gb),
                                 std::make_pair(field::kCapacityGb, &r->capacity_gb),
                                 std::make_pair(field::kLikelyLowGb, &r->likely_low_gb),
                                 std::make_pair(field::kLikelyHighGb, &r->likely_high_gb)}) {
    const Result<std::optional<double>> value = gib(j, key);
    if (!value) return value.error();
    *out = *value;
  }
  Result<std::vector<Change>> advice = advice_of(j);
  if (!advice) return advice.error();
  r->advice = std::move(advice).value();
  return true;
}

bool digits(const std::string& s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  return *out = v, true;
}

}  // namespace

const char* to_string(Action action) { return verdict_word(action); }

const char* oom_reason() { return admission::to_string(admission::Reason::kTooFewGpus); }

Result<Record> parse_record(const std::string& line) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(ErrorCode::kMalformed, "", "not JSON");
  if (!j.is_object()) return make_error(ErrorCode::kMalformed, "", "not a JSON object");
  Record record;
  if (const Result<bool> read = time_and_action(j, &record); !read) return read.error();
  if (const Result<bool> read = other_fields(j, &record); !read) return read.error();
  read_annotation(&record);
  return record;
}

bool parse_utc(const std::string& text, bool date_ok, int64_t* seconds) {
  struct tm t = {};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(text, 0, 4, &year) || text.size() < 10 || text[4] != '-' || text[7] != '-' ||
      !digits(text, 5, 2, &month) || !digits(text, 8, 2, &day)) {
    return false;
  }
  size_t end = 10;
  if (text.size() > 10) {
    if (text[10] != 'T' || !digits(text, 11, 2, &hour) || text.size() < 16 || text[13] != ':' ||
        !digits(text, 14, 2, &minute)) {
      return false;
    }
    end = 16;
    if (text.size() > 16 && text[16] == ':') {
      if (!digits(text, 17, 2, &second)) return false;
      end = 19;
    }
    if (end < text.size() && text[end] == 'Z') ++end;
  }
  const bool full = end == 20 && text.size() == 20 && text[19] == 'Z';
  if (end != text.size() || (!date_ok && !full)) return false;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = second;
  const time_t when = timegm(&t);
  if (t.tm_mday != day) return false;  // 2026-02-30 normalised to March: not a date
  *seconds = static_cast<int64_t>(when);
  return true;
}

}  // namespace trainfit::cli::report
