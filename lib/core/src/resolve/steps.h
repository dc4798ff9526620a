// resolve() in steps, one file each: the framework preset rewrites the request into
// trainfit's own words (presets.cpp), then geometry, training (step shape, numerics,
// activations, adapters) and layout (parallelism, hardware) fill a Config.
#pragma once

#include <string>
#include <vector>

#include "trainfit/config.h"
#include "trainfit/request.h"

namespace trainfit::resolving {

using Notes = std::vector<std::string>;

// Whether the request needs apply_framework: a framework, or a word that is not trainfit's.
bool speaks_a_framework(const Request& request);
// The request in trainfit's vocabulary: the framework's words translated, its
// defaults filled where the request is silent (each one noted with its source).
// *precision_shown: the regime the framework's precision word means, in words ("" when the
// request used trainfit's own word).
// *varies: resolved at one GPU, the framework's defaults would differ at two.
Result<Request> apply_framework(const Request& request, Framework* framework, std::string* precision_shown, Notes* notes,
                                bool* varies);

Result<bool> resolve_geometry(const Request& r, Config* c, Notes* notes);
Result<bool> resolve_training(const Request& r, Config* c, Notes* notes);
Result<bool> resolve_layout(const Request& r, Config* c, Notes* notes);
// batch_lengths, rising_lengths and alloc_conf (allocator.cpp), from resolve_layout.
Result<bool> resolve_allocator(const Request& r, Config& c, Notes& notes);

}  // namespace trainfit::resolving
