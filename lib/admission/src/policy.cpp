// trainfit.conf: key = value lines, validated with one clear message per mistake.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>

#include "trainfit/util/text.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"

namespace trainfit::admission {
namespace {

constexpr Action kActions[] = {Action::kReject, Action::kResize, Action::kWarn};

// "trainfit.conf line N: ...": the field is the key when the line has one.
Error conf_error(int line, const std::string& message, const std::string& key = "trainfit.conf") {
  return located_error(ErrorCode::kInvalidValue, key, "trainfit.conf line " + std::to_string(line), line, message);
}

// A value's problem, said in the words conf_error places on its line.
Error invalid(const std::string& key, const std::string& message) {
  return make_error(ErrorCode::kInvalidValue, key, message);
}

constexpr std::string_view kAliasPrefix = "gpu_alias.";
constexpr std::string_view kPartitionPrefix = "partition.";

using Setter = std::function<Result<bool>(PartitionPolicy&, const std::string&)>;

// One line of trainfit.conf that says something: '#' starts a comment, blanks around.
struct ConfLine {
  int number;        // 1-based
  std::string text;  // the line without its comment, trimmed (names keep their case)
  size_t eq;         // where '=' is in text; npos when there is none
  std::string key() const { return lower(trim(text.substr(0, eq))); }
  std::string value() const { return trim(text.substr(eq + 1)); }
};

// The one reading of trainfit.conf's lines, for the parser, has_settings and fail_open_of.
std::vector<ConfLine> conf_lines(const std::string& text) {
  std::vector<ConfLine> out;
  int number = 0;
  for (const std::string& raw : split(text, '\n')) {
    ++number;
    std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    out.push_back(ConfLine{number, std::move(line), eq});
  }
  return out;
}

// "alice, bob" -> {"alice", "bob"}.
Result<bool> set_list(std::set<std::string>& out, const char* key, const std::string& value) {
  out.clear();
  for (const std::string& item : split(value, ',')) {
    const std::string name = trim(item);
    if (name.empty()) return invalid(key, std::string(key) + "='" + value + "' has an empty entry; accepted: NAME[,NAME...]");
    out.insert(name);
  }
  return true;
}

const std::vector<std::pair<std::string, Setter>>& partition_keys() {
  static const std::vector<std::pair<std::string, Setter>> keys = {
      {"action",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         const std::string word = lower(v);
         std::string accepted;
         for (Action a : kActions) {
           if (word == to_string(a)) return p.action = a, true;
           accepted += (accepted.empty() ? "" : "|") + std::string(to_string(a));
         }
         return invalid("action", "action='" + v + "' is not valid; accepted: " + accepted);
       }},
      {"resize_max_gpus",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         int64_t n = 0;
         if (!parse_int(v, &n) || n < 1 || n > (int64_t{1} << 20)) {
           return invalid("resize_max_gpus", "resize_max_gpus='" + v + "' is not valid; accepted: an integer from 1 to 1048576");
         }
         p.resize_max_gpus = n;
         return true;
       }},
      {"headroom",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         double x = 0;
         if (!parse_number(v, &x) || x < 0 || x >= 0.9) {
           return invalid("headroom", "headroom='" + v + "' is not valid; accepted: a fraction of HBM kept free, 0 <= x < 0.9");
         }
         p.headroom = x;
         return true;
       }},
      {"refuse_when",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         const std::string word = lower(v);
         for (RefuseWhen w : {RefuseWhen::kCertain, RefuseWhen::kLikely}) {
           if (word == to_string(w)) return p.refuse_when = w, true;
         }
         return invalid("refuse_when", "refuse_when='" + v +
                                           "' is not valid; accepted: certain (the likely range's low end does not fit)|"
                                           "likely (the point figure does not fit)");
       }},
      {"resize_to",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         const std::string word = lower(v);
         if (word == "high") return p.resize_to = FitBound::kLikelyHigh, true;
         if (word == "point") return p.resize_to = FitBound::kPoint, true;
         return invalid("resize_to", "resize_to='" + v +
                                         "' is not valid; accepted: high (the likely range's high end fits)|point (the "
                                         "point figure fits)");
       }},
      {"default_gpu",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         Result<const GpuSpec*> gpu = find_gpu(v);
         if (!gpu) return invalid("default_gpu", "default_gpu: " + gpu.error().message);
         p.default_gpu = (*gpu)->name;
         return true;
       }},
      {"gpus_per_node",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         int64_t n = 0;
         if (!parse_int(v, &n) || n < 1 || n > 4096) {
           return invalid("gpus_per_node", "gpus_per_node='" + v + "' is not valid; accepted: an integer from 1 to 4096");
         }
         p.gpus_per_node = n;
         return true;
       }},
      {"require_annotation",
       [](PartitionPolicy& p, const std::string& v) -> Result<bool> {
         if (!parse_bool(v, &p.require_annotation)) {
           return invalid("require_annotation", "require_annotation='" + v + "' is not valid; accepted: true|false");
         }
         return true;
       }},
      {"exempt_users", [](PartitionPolicy& p, const std::string& v) { return set_list(p.exempt_users, "exempt_users", v); }},
      {"exempt_accounts",
       [](PartitionPolicy& p, const std::string& v) { return set_list(p.exempt_accounts, "exempt_accounts", v); }},
      {"exempt_qos", [](PartitionPolicy& p, const std::string& v) { return set_list(p.exempt_qos, "exempt_qos", v); }},
  };
  return keys;
}

// Keys of the whole site (not per partition), in the order messages list them.
using SiteSetter = std::function<Result<bool>(Policy&, const std::string&)>;

const std::vector<std::pair<std::string, SiteSetter>>& site_keys() {
  static const std::vector<std::pair<std::string, SiteSetter>> keys = {
      {"audit_log",
       [](Policy& p, const std::string& v) -> Result<bool> {
         if (v[0] != '/') return invalid("audit_log", "audit_log='" + v + "' must be an absolute path");
         p.audit_log = v;
         return true;
       }},
      {"on_error",
       [](Policy& p, const std::string& v) -> Result<bool> {
         if (lower(v) != "open" && lower(v) != "closed") return invalid("on_error", "on_error='" + v + "' is not valid; accepted: open|closed");
         p.fail_open = lower(v) == "open";
         return true;
       }},
      {"default_partition",
       [](Policy& p, const std::string& v) -> Result<bool> {
         p.default_partition = v;
         return true;
       }},
      {"operators", [](Policy& p, const std::string& v) { return set_list(p.operators, "operators", v); }},
      {"unchecked_updates",
       [](Policy& p, const std::string& v) -> Result<bool> {
         if (lower(v) != "refuse" && lower(v) != "allow") {
           return invalid("unchecked_updates", "unchecked_updates='" + v + "' is not valid; accepted: refuse|allow");
         }
         p.allow_unchecked_updates = lower(v) == "allow";
         return true;
       }},
  };
  return keys;
}

}  // namespace

std::vector<std::string> policy_keys() {
  std::vector<std::string> out;
  for (const auto& entry : partition_keys()) out.push_back(entry.first);
  for (const auto& entry : site_keys()) out.push_back(entry.first);
  out.push_back("gpu_alias.NAME");
  out.push_back("partition.NAME.KEY");
  return out;
}

// A partition's action is named by the verdict it gives a job that does not fit.
const char* to_string(Action action) {
  return to_string(action == Action::kReject ? Verdict::kReject : action == Action::kResize ? Verdict::kResize : Verdict::kWarn);
}

const char* to_string(RefuseWhen when) { return when == RefuseWhen::kCertain ? "certain" : "likely"; }

const PartitionPolicy& Policy::for_partition(const std::string& partition) const {
  auto it = partitions.find(partition.empty() ? default_partition : partition);
  return it == partitions.end() ? defaults : it->second;
}

Result<Policy> parse_policy(const std::string& text) {
  Policy policy;
  // Partition overrides apply on top of the final defaults, whatever the line order.
  std::vector<std::tuple<int, std::string, std::string, std::string>> overrides;
  for (const ConfLine& conf_line : conf_lines(text)) {
    const int number = conf_line.number;
    const std::string& line = conf_line.text;
    if (conf_line.eq == std::string::npos) return conf_error(number, "'" + line + "' is not key = value");
    const std::string key = conf_line.key(), value = conf_line.value();
    if (value.empty()) return conf_error(number, key + " has no value");
    const auto site = std::find_if(site_keys().begin(), site_keys().end(), [&](const auto& entry) { return entry.first == key; });
    if (site != site_keys().end()) {
      Result<bool> set = site->second(policy, value);
      if (!set) return conf_error(number, set.error().message, key);
      policy.lines[key] = number;
      continue;
    }
    if (key.rfind(kAliasPrefix, 0) == 0) {
      const std::string site_name = key.substr(kAliasPrefix.size());
      Result<const GpuSpec*> gpu = find_gpu(value);
      if (site_name.empty()) return conf_error(number, "'" + key + "' should be gpu_alias.NAME = CATALOG_GPU");
      if (!gpu) return conf_error(number, key + ": " + gpu.error().message);
      policy.gpu_aliases[site_name] = (*gpu)->name;
      continue;
    }
    if (key.rfind(kPartitionPrefix, 0) == 0) {
      const size_t dot = key.rfind('.');
      const size_t name_at = kPartitionPrefix.size();
      if (dot <= name_at) return conf_error(number, "'" + key + "' should be partition.NAME.KEY");
      // The name from the line as written: Slurm's partition names are case-sensitive.
      overrides.emplace_back(number, trim(line.substr(name_at, dot - name_at)), key.substr(dot + 1), value);
      continue;
    }
    bool known = false;
    for (const auto& [name, set] : partition_keys()) {
      if (name != key) continue;
      known = true;
      Result<bool> done = set(policy.defaults, value);
      if (!done) return conf_error(number, done.error().message, key);
    }
    if (!known) {
      std::vector<std::string> names;
      std::string list;
      for (const std::string& name : policy_keys()) {
        if (name.find('.') == std::string::npos) names.push_back(name);
        list += (list.empty() ? "" : ", ") + name;
      }
      const std::string hint = did_you_mean(key, names);
      return conf_error(number, "unknown key '" + key + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                                    "; known: " + list);
    }
  }
  for (const auto& [line, partition, key, value] : overrides) {
    auto it = policy.partitions.emplace(partition, policy.defaults).first;
    policy.lines.emplace(std::string(kPartitionPrefix) + partition, line);
    bool known = false;
    for (const auto& [name, set] : partition_keys()) {
      if (name != key) continue;
      known = true;
      Result<bool> done = set(it->second, value);
      if (!done) return conf_error(line, "partition " + partition + ": " + done.error().message, key);
    }
    if (!known) return conf_error(line, "unknown partition key '" + key + "'");
  }
  return policy;
}

bool has_settings(const std::string& text) { return !conf_lines(text).empty(); }

std::vector<Error> unknown_partitions(const Policy& policy, const std::vector<SlurmPartition>& slurm) {
  std::vector<Error> out;
  auto check = [&](const std::string& name, const std::string& key) {
    std::string same_but_case;
    for (const SlurmPartition& p : slurm) {
      if (p.name == name) return;
      if (lower(p.name) == lower(name)) same_but_case = p.name;
    }
    const std::string message = key + ": slurm.conf has no partition '" + name + "'" +
                                (same_but_case.empty() ? std::string("; these keys apply to no job")
                                                       : "; Slurm matches partition names case-sensitively: did you mean '" +
                                                             same_but_case + "'?");
    const auto line = policy.lines.find(key);  // where trainfit.conf says it, when parsed from text
    out.push_back(line == policy.lines.end()
                      ? make_error(ErrorCode::kUnknownName, key, message)
                      : located_error(ErrorCode::kUnknownName, key, "trainfit.conf line " + std::to_string(line->second),
                                      line->second, message));
  };
  for (const auto& [name, rules] : policy.partitions) check(name, "partition." + name);
  if (!policy.default_partition.empty()) check(policy.default_partition, "default_partition");
  return out;
}

bool fail_open_of(const std::string& text) {
  bool open = true;
  for (const ConfLine& line : conf_lines(text)) {
    if (line.eq == std::string::npos || line.key() != "on_error") continue;
    const std::string value = lower(line.value());
    if (value == "open" || value == "closed") open = value == "open";
  }
  return open;
}

std::vector<std::string> resolve_exempt_users(Policy& policy, UidLookup lookup) {
  std::vector<std::string> unknown;
  // Names (or numeric uids) to uids; the names no lookup knows, once each.
  auto resolve = [&](const std::set<std::string>& names, std::set<uint32_t>& uids) {
    uids.clear();
    for (const std::string& user : names) {
      int64_t uid = 0;
      std::optional<uint32_t> found;
      if (parse_int(user, &uid) && uid >= 0 && uid <= UINT32_MAX) found = static_cast<uint32_t>(uid);
      else found = lookup(user);
      if (found) uids.insert(*found);
      else if (std::find(unknown.begin(), unknown.end(), user) == unknown.end()) unknown.push_back(user);
    }
  };
  resolve(policy.defaults.exempt_users, policy.defaults.exempt_uids);
  for (auto& [name, partition] : policy.partitions) resolve(partition.exempt_users, partition.exempt_uids);
  resolve(policy.operators, policy.operator_uids);
  return unknown;
}

Result<const GpuSpec*> catalog_gpu(const Policy& policy, const std::string& gres_type) {
  const std::string type = lower(gres_type);
  auto alias = policy.gpu_aliases.find(type);
  if (const GpuSpec* gpu = gpu_in_catalog(alias != policy.gpu_aliases.end() ? alias->second : type)) return gpu;
  std::string names;
  for (const GpuSpec& spec : gpu_catalog()) names += (names.empty() ? "" : ", ") + spec.name;
  return make_error(ErrorCode::kUnknownName, "gpu",
                    "GPU type '" + gres_type + "' is not in trainfit's catalog; an administrator can map it in "
                    "trainfit.conf: gpu_alias." + type + " = <" + names + ">");
}

}  // namespace trainfit::admission
