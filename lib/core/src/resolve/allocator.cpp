// What the job tells about PyTorch's caching allocator: the lengths its steps take
// (batch_lengths, rising_lengths) and PYTORCH_CUDA_ALLOC_CONF (alloc_conf).
#include <string>

#include "choices.h"
#include "steps.h"

namespace trainfit::resolving {

namespace {

constexpr Choice<BatchLengths> kBatchLengths[] = {
    {"fixed", BatchLengths::kFixed}, {"rising", BatchLengths::kRising}, {"random", BatchLengths::kRandom}};

// The options c10/cuda/CUDAAllocatorConfig.cpp parseArgs accepts (torch 2.x); it refuses any other.
bool known_alloc_option(const std::string& key) {
  for (const char* k : {"max_split_size_mb", "garbage_collection_threshold", "roundup_power2_divisions",
                        "expandable_segments", "backend", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
                        "pinned_num_register_threads", "pinned_use_background_threads"}) {
    if (key == k) return true;
  }
  return false;
}

// PYTORCH_CUDA_ALLOC_CONF, "key:value" pairs separated by commas, as the allocator reads it.
Result<bool> parse_alloc_conf(const std::string& text, Config& c, Notes& notes) {
  const char* accepted = "PYTORCH_CUDA_ALLOC_CONF text, key:value pairs separated by commas (e.g. expandable_segments:True)";
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string pair = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (pair.empty()) continue;
    const size_t colon = pair.find(':');
    const std::string key = pair.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : pair.substr(colon + 1);
    if (colon == std::string::npos || value.empty() || !known_alloc_option(key)) {
      return invalid("alloc_conf", "'" + pair + "'", accepted);
    }
    if (key == "expandable_segments") {
      if (value != "True" && value != "False") return invalid("alloc_conf", "'" + pair + "'", "expandable_segments:True|False");
      c.expandable_segments = value == "True";
    } else if (key == "backend" && value == "cudaMallocAsync") {
      notes.push_back("alloc_conf backend:cudaMallocAsync: the reserve is the CUDA driver's pool, not modelled (the "
                      "native allocator's is)");
    }
  }
  return true;
}

}  // namespace

// A length curriculum (rising) takes new segments for each longer step's largest buffers; in
// random order the longest step's cached blocks are split for the shorter ones (measured,
// tests/fidelity/gpu/hf_stack-h200-varying.json), so random is judged at its longest length,
// as fixed is. rising_lengths gives the number of distinct lengths.
Result<bool> resolve_allocator(const Request& r, Config& c, Notes& notes) {
  Error e;
  if (!take_int(r.rising_lengths, "rising_lengths", 1, 100000, &c.rising_lengths, &e)) return e;
  c.batch_lengths = c.rising_lengths > 1 ? BatchLengths::kRising : BatchLengths::kFixed;
  if (!take_enum(r.batch_lengths, "batch_lengths", kBatchLengths, &c.batch_lengths, &e)) return e;
  if (c.batch_lengths == BatchLengths::kRising && c.rising_lengths < 2) {
    return make_error(ErrorCode::kInconsistent, "rising_lengths",
                      "batch_lengths=rising needs rising_lengths, the number of distinct lengths (integer >= 2)");
  }
  if (c.batch_lengths != BatchLengths::kRising && c.rising_lengths > 1) {
    return make_error(ErrorCode::kInconsistent, "rising_lengths",
                      "rising_lengths=" + std::to_string(c.rising_lengths) + " contradicts batch_lengths=" +
                          (c.batch_lengths == BatchLengths::kRandom ? "random" : "fixed") + "; give one of them");
  }
  if (r.alloc_conf) return parse_alloc_conf(*r.alloc_conf, c, notes);
  return true;
}

}  // namespace trainfit::resolving
