// Names of the resolved choices, as the response and the CLI print them: the words the
// request takes (enum_names.h).
#include "enum_names.h"

namespace trainfit {

using resolving::name_of;

const char* to_string(Precision v) { return name_of(resolving::kPrecisions, v); }
const char* to_string(Optimizer v) { return name_of(resolving::kOptimizers, v); }
const char* to_string(OptimizerImpl v) { return name_of(resolving::kOptimizerImpls, v); }
const char* to_string(Recompute v) { return name_of(resolving::kRecomputes, v); }
const char* to_string(Attention v) { return name_of(resolving::kAttentions, v); }
const char* to_string(Ops v) { return name_of(resolving::kOps, v); }
const char* to_string(Loss v) { return name_of(resolving::kLosses, v); }
const char* to_string(Sharding v) { return name_of(resolving::kShardings, v); }
const char* to_string(FrozenUnitGrads v) { return name_of(resolving::kFrozenUnitGrads, v); }
const char* to_string(Mlp v) { return name_of(resolving::kMlps, v); }
const char* to_string(Norm v) { return name_of(resolving::kNorms, v); }
const char* to_string(FitBound v) { return name_of(resolving::kFitBounds, v); }
const char* to_string(Framework v) { return name_of(resolving::kFrameworks, v); }
const char* to_string(Adapter v) { return name_of(resolving::kAdapters, v); }
// "follow" (the base in the compute dtype) is resolve's default, not a word a request gives.
const char* to_string(BaseDtype v) { return v == BaseDtype::kFollow ? "follow" : name_of(resolving::kBaseDtypes, v); }

}  // namespace trainfit
