// A job's model annotation: --llm-* options, the comment, the SPANK environment (annotation.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainfit/error.h"
#include "trainfit/export.h"
#include "trainfit/request.h"

namespace trainfit::admission {

// SPANK option names (without "--llm-") and the request field each sets; "spec",
// "hf-config" and "check" are special. Shared by the SPANK plugin, the comment parser
// and job_submit.
struct OptionSpec {
  const char* option;   // "seq"
  const char* field;    // "seq_length"; "" for spec / hf-config / check
  const char* arginfo;  // "N"
  const char* usage;
};
TRAINFIT_API const std::vector<OptionSpec>& llm_options();

// How the user wrote the annotation: messages and advice speak the same syntax.
enum class Face { kOptions, kComment };  // --llm-seq=8192 | trainfit: seq=8192

struct Annotation {
  Request request;
  bool found = false;  // the job carries a trainfit annotation
  bool check = false;  // --llm-check (or check=true in a comment): report the verdict on accept
  Face face = Face::kOptions;
};

// From job_desc->spank_job_env: "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192" and the
// geometry the SPANK plugin read from an HF config ("TRAINFIT_GEOMETRY=k=v,...").
// The same function checks the options in sbatch (SPANK) and in slurmctld.
TRAINFIT_API Result<bool> annotation_from_spank_env(const std::vector<std::string>& env, Annotation* out);

// A submission's annotation: its --llm-* options, else its comment. Both, saying different
// things, is an error naming both; --llm-check alone asks for the comment's verdict.
TRAINFIT_API Result<bool> annotation_of_job(const std::vector<std::string>& env, const std::string* comment,
                                            Annotation* out);

// From a job comment "trainfit: model=llama3-70b seq=8192 zero=3" (keys: the options
// above or any request field). out->found is false when the comment is not trainfit's.
TRAINFIT_API Result<bool> annotation_from_comment(const std::string& comment, Annotation* out);

// The environment entry sbatch's SPANK plugin sends for one option ("seq" ->
// "_SLURM_SPANK_OPTION_trainfit_llm_seq"), as Slurm mangles it.
TRAINFIT_API std::string spank_env_name(const std::string& option);

// "model=llama3-70b seq=8192" for the audit log and messages.
TRAINFIT_API std::string describe(const Request& request);

// A request field as the user would write it in this face: "--llm-zero" / "zero".
TRAINFIT_API std::string spell_key(const std::string& field, Face face);

}  // namespace trainfit::admission
