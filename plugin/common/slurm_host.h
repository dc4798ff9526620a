// Functions the plugins take from the Slurm process that loads them (slurmctld,
// sbatch, srun): resolved at load time, never linked (-lslurm would bring a second
// copy). Strings handed to Slurm must come from its own allocator (slurm_xstrdup).
#pragma once

#include <string>

extern "C" {
char* slurm_xstrdup(const char* str);
void slurm_xfree(void** item);
void slurm_info(const char* format, ...) __attribute__((format(printf, 1, 2)));
void slurm_error(const char* format, ...) __attribute__((format(printf, 1, 2)));
}

namespace trainfit::plugin {

// Replaces a Slurm-owned string field with a copy of value ("" -> NULL).
inline void set_slurm_string(char** field, const std::string& value) {
  if (*field != nullptr) slurm_xfree(reinterpret_cast<void**>(field));
  *field = value.empty() ? nullptr : slurm_xstrdup(value.c_str());
}

}  // namespace trainfit::plugin
