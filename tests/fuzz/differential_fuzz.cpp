// Differential: one request spelled three ways -- the JSON API body, CLI flags (parsed by
// the CLI's own request_from_options) and a job comment annotation -- must come out the
// same: all three refused, or all three resolved to the same configuration and peak.
// The fuzz input only picks the values (a catalog model and GPU, counts, enum words), so any
// disagreement is a bug. Integers are written as decimal digits: JSON also takes 8.0 or 8e0
// for an integer field (JSON has one number type) where flags and comments want "8", a
// difference of spelling, not of configuration.
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>

#include "fuzz_text.h"
#include "request_options.h"
#include "trainfit/admission.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"

namespace po = boost::program_options;
using namespace trainfit;

namespace {

// Reads the input one byte at a time; zeros when it runs out.
struct Bytes {
  const uint8_t* data;
  size_t size;
  uint8_t next() { return size == 0 ? 0 : (--size, *data++); }
  template <size_t N>
  const char* pick(const char* const (&words)[N]) { return words[next() % N]; }
};

struct Field {
  const char* name;  // the request field
  std::string value;
  bool quoted;       // a JSON string, not a number
};

std::string from_json(const std::vector<Field>& fields, Result<Request>* out) {
  std::string json = "{";
  for (const Field& f : fields) {
    if (json.size() > 1) json += ',';
    json += "\"" + std::string(f.name) + "\":" + (f.quoted ? "\"" + f.value + "\"" : f.value);
  }
  json += "}";
  *out = request_from_json(json);
  return json;
}

std::string from_flags(const std::vector<Field>& fields, Result<Request>* out) {
  std::vector<std::string> args = {"trainfit"};
  for (const Field& f : fields) args.push_back("--" + std::string(find_field(f.name)->flag) + "=" + f.value);
  std::vector<const char*> argv;
  std::string line;
  for (const std::string& a : args) argv.push_back(a.c_str()), line += a + " ";
  po::options_description visible, hidden, all;
  cli::add_request_options(visible, hidden);
  all.add(visible).add(hidden);
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(), all), vm);
    *out = cli::request_from_options(vm);
  } catch (const po::error& e) {  // the CLI answers these with exit code 2
    *out = make_error(ErrorCode::kMalformed, "", e.what());
  }
  return line;
}

// The comment uses the --llm-* option names where one exists ("zero"), else field names.
std::string from_comment(const std::vector<Field>& fields, Result<Request>* out) {
  std::string comment = "trainfit:";
  for (const Field& f : fields) {
    std::string key = f.name;
    for (const admission::OptionSpec& option : admission::llm_options()) {
      if (key == option.field) key = option.option;
    }
    comment += " " + key + "=" + f.value;
  }
  admission::Annotation annotation;
  Result<bool> ok = admission::annotation_from_comment(comment, &annotation);
  *out = ok ? Result<Request>(annotation.request) : Result<Request>(ok.error());
  return comment;
}

// What a face's request comes to: "" when refused, else the configuration that matters.
std::string outcome(const Result<Request>& request) {
  if (!request) return "";
  const Result<Resolved> resolved = resolve(request.value());
  if (!resolved) return "";
  const Config& c = resolved->config;
  char line[512];
  std::snprintf(line, sizeof line, "%s gpus=%lld mb=%lld seq=%lld prec=%s zero=%d rc=%s tp=%lld gpu=%s cap=%.0f off=%d peak=%.0f",
                c.model_name.c_str(), static_cast<long long>(c.num_gpus), static_cast<long long>(c.micro_batch),
                static_cast<long long>(c.seq_length), to_string(c.precision), c.zero_stage, to_string(c.recompute),
                static_cast<long long>(c.tp), c.gpu_name.c_str(), c.capacity_bytes, c.offload_optimizer,
                estimate(c).per_gpu_total);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in{data, size};
  static const char* const kCounts[] = {"1", "2", "8", "64", "0", "-1", "3", "16", "4096", "9223372036854775807",
                                         "9223372036854775808", "-9223372036854775808"};
  static const char* const kZero[] = {"0", "1", "2", "3", "4", "-1"};
  static const char* const kRecompute[] = {"none", "selective", "full", "FULL", "Selective", "partial"};
  static const char* const kPrecision[] = {"bf16", "bf16-amp", "fp16-amp", "fp32", "fp8", "BF16", "int4"};
  static const char* const kBool[] = {"true", "false"};
  const auto& models = model_catalog();
  const auto& gpus = gpu_catalog();
  std::vector<Field> fields;
  const uint8_t present = in.next();  // which optional fields the request carries
  fields.push_back({"model", models[in.next() % models.size()].name, true});
  if (present & 1) fields.push_back({"num_gpus", in.pick(kCounts), false});
  if (present & 2) fields.push_back({"seq_length", std::to_string(1 + (in.next() << 8 | in.next())), false});
  if (present & 4) fields.push_back({"micro_batch", in.pick(kCounts), false});
  if (present & 8) fields.push_back({"zero_stage", in.pick(kZero), false});
  if (present & 16) fields.push_back({"recompute", in.pick(kRecompute), true});
  if (present & 32) fields.push_back({"precision", in.pick(kPrecision), true});
  if (present & 64) fields.push_back({"tensor_parallel", in.pick(kCounts), false});
  if (present & 128) fields.push_back({"gpu", gpus[in.next() % gpus.size()].name, true});
  if (in.next() & 1) {
    fields.push_back({"offload_optimizer", in.pick(kBool), false});
    fields.back().quoted = false;
  }
  Result<Request> json = Error{}, flags = Error{}, comment = Error{};
  const std::string as_json = from_json(fields, &json);
  const std::string as_flags = from_flags(fields, &flags);
  const std::string as_comment = from_comment(fields, &comment);
  const std::string a = outcome(json), b = outcome(flags), c = outcome(comment);
  if (a != b || a != c) {
    std::fprintf(stderr, "differential mismatch\n  json    %s\n    -> %s\n  flags   %s\n    -> %s\n  comment %s\n    -> %s\n",
                 as_json.c_str(), a.empty() ? (json ? "resolve error" : json.error().message.c_str()) : a.c_str(),
                 as_flags.c_str(), b.empty() ? (flags ? "resolve error" : flags.error().message.c_str()) : b.c_str(),
                 as_comment.c_str(), c.empty() ? (comment ? "resolve error" : comment.error().message.c_str()) : c.c_str());
    abort();
  }
  return 0;
}
