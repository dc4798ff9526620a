// trainfit.conf, read by slurmctld at start and on every change (parse_policy), and its
// on_error key read even from an invalid file (fail_open_of).
#include "fuzz_text.h"
#include "trainfit/admission.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit::admission;
  const std::string text = trainfit::fuzz::text_of(data, size);
  (void)fail_open_of(text);
  auto policy = parse_policy(text);
  if (!policy) return 0;
  // What the plugin does next with a policy: name lookups through its aliases.
  (void)catalog_gpu(policy.value(), "h100");
  (void)catalog_gpu(policy.value(), "nvidia_h100_80gb_hbm3");
  (void)resolve_exempt_users(policy.value(), [](const std::string&) -> std::optional<uint32_t> { return std::nullopt; });
  return 0;
}
