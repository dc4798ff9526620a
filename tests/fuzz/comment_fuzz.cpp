// The job comment annotation ("trainfit: model=llama3-70b seq=8192 zero=3"), read by
// job_submit inside slurmctld from any user's --comment.
#include "fuzz_text.h"
#include "trainfit/admission.h"
#include "trainfit/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit;
  admission::Annotation annotation;
  if (admission::annotation_from_comment(fuzz::text_of(data, size), &annotation).ok() && annotation.found) {
    (void)resolve(annotation.request);
    (void)admission::describe(annotation.request);
  }
  return 0;
}
