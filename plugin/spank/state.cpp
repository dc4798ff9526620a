#include "state.h"

#include <memory>

namespace trainfit::spank {
namespace {

std::unique_ptr<State> g_state;

}  // namespace

State& state() {
  if (g_state == nullptr) g_state = std::make_unique<State>();
  return *g_state;
}

void free_state() noexcept { g_state.reset(); }

}  // namespace trainfit::spank
