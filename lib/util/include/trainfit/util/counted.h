// Counts in text people read: one helper, so that no output says "1 jobs".
#pragma once

#include <cstdint>
#include <string>

namespace trainfit {

// A count and its noun, the noun singular for exactly one: counted(1, "job") is "1 job",
// counted(3, "job") "3 jobs", counted(0, "job") "0 jobs"; plural for nouns that do not
// just add "s" (counted(2, "entry", "entries")).
std::string counted(int64_t n, const std::string& singular, const std::string& plural = "");

}  // namespace trainfit
