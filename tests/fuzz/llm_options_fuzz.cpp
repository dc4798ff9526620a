// The SPANK plugin's --llm-* options (and --llm-spec), as job_submit and the SPANK plugin
// both read them: annotation_from_spank_env over the job's environment. Each input line is
// "OPTION=VALUE" (e.g. "spec=micro_batch=2,cp=2"), sent as Slurm mangles it; lines that start
// with "TRAINFIT_" are passed as they are (the geometry and config-file variables).
#include "fuzz_text.h"
#include "trainfit/admission.h"
#include "trainfit/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainfit;
  std::vector<std::string> env;
  for (const std::string& line : fuzz::split_on(fuzz::text_of(data, size), '\n')) {
    const size_t eq = line.find('=');
    if (line.rfind("TRAINFIT_", 0) == 0 || eq == std::string::npos) {
      env.push_back(line);
    } else {
      env.push_back(admission::spank_env_name(line.substr(0, eq)) + line.substr(eq));
    }
  }
  admission::Annotation annotation;
  if (admission::annotation_from_spank_env(env, &annotation).ok() && annotation.found) {
    (void)resolve(annotation.request);
  }
  return 0;
}
