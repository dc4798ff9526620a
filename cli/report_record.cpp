#include "report_record.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "trainfit/admission.h"

namespace trainfit::cli::report {
namespace {

using nlohmann::json;

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
    case Action::kExempt: return "exempt";        // audit.cpp's own words for the
    case Action::kUnchecked: return "unchecked";  // records that are not checks
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
bool text(const json& j, const char* key, std::string* out, std::string* error) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) return *error = std::string("field '") + key + "' is not a string", false;
  *out = it->get<std::string>();
  return true;
}

// A count; absent or null reads as none.
bool count(const json& j, const char* key, std::optional<int64_t>* out, std::string* error) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return *error = std::string("field '") + key + "' is not a count", false;
  }
  *out = it->get<int64_t>();
  return true;
}

bool advice_of(const json& j, std::vector<Change>* out, std::string* error) {
  const auto it = j.find("advice");
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_array()) return *error = "field 'advice' is not a list", false;
  for (const json& change : *it) {
    if (!change.is_object() || !change.value("field", json()).is_string() || !change.value("value", json()).is_string()) {
      return *error = "field 'advice' holds an entry that is not {field, value}", false;
    }
    out->push_back(Change{change["field"].get<std::string>(), change["value"].get<std::string>()});
  }
  return true;
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

bool fields_of(const json& j, Record* r, std::string* error) {
  std::string time, action;
  if (!text(j, "time", &time, error) || !text(j, "action", &action, error)) return false;
  if (time.empty()) return *error = "no field 'time'", false;
  if (!parse_utc(time, false, &r->time)) return *error = "time '" + time + "' is not YYYY-MM-DDTHH:MM:SSZ", false;
  if (action.empty()) return *error = "no field 'action'", false;
  if (!action_of(action, &r->action)) return *error = "action '" + action + "' is not one the audit log writes", false;
  std::optional<int64_t> gpus;
  const bool ok = text(j, "event", &r->event, error) && text(j, "user", &r->user, error) &&
                  text(j, "account", &r->account, error) && text(j, "partition", &r->partition, error) &&
                  text(j, "qos", &r->qos, error) && text(j, "gpu", &r->gpu, error) &&
                  text(j, "reason", &r->reason, error) && text(j, "annotation", &r->annotation, error) &&
                  count(j, "gpus_requested", &gpus, error) && count(j, "min_gpus_to_fit", &r->min_gpus, error) &&
                  count(j, "resized_to", &r->resized_to, error) &&
                  count(j, "time_limit_min", &r->time_limit_min, error) && advice_of(j, &r->advice, error);
  r->gpus_requested = gpus.value_or(0);
  return ok;
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

bool parse_record(const std::string& line, Record* out, std::string* error) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return *error = "not JSON", false;
  if (!j.is_object()) return *error = "not a JSON object", false;
  *out = Record{};
  if (!fields_of(j, out, error)) return false;
  read_annotation(out);
  return true;
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
