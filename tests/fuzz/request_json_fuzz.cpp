// The request JSON parser: `trainfit estimate --request` and the body of POST /edge/training.
// Errors are fine; a request that parses must write back to JSON that reads back the same
// (request_to_json's contract), and must resolve without crashing.
#include <cstdlib>

#include "fuzz_text.h"
#include "trainfit/config.h"
#include "trainfit/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit;
  const Result<Request> request = request_from_json(fuzz::text_of(data, size));
  if (!request) return 0;
  const std::string written = request_to_json(request.value());
  const Result<Request> again = request_from_json(written);
  if (!again || request_to_json(again.value()) != written) abort();  // the round trip broke
  (void)resolve(request.value());
  return 0;
}
