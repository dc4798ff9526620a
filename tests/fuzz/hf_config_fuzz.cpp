// A Hugging Face config.json (--hf-config, --llm-hf-config, the page's drop zone): the
// geometry it gives must resolve without crashing.
#include "fuzz_text.h"
#include "trainfit/catalog.h"
#include "trainfit/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit;
  const Result<Geometry> geometry = geometry_from_hf_config(fuzz::text_of(data, size));
  if (!geometry) return 0;
  Request request;
  set_geometry(request, geometry.value());
  (void)resolve(request);
  return 0;
}
