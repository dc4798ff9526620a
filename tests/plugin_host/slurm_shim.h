// The few Slurm functions the plugins import (nm -D --undefined-only on each .so), defined
// here as slurmctld, sbatch and srun define them, so that the sanitizer-built plugins can be
// loaded and driven by an ordinary (sanitizer-built) program. What the plugins log and set is
// recorded for the checks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>
}

// Defined by the host, resolved by the plugins at dlopen: exported from the executable
// (ENABLE_EXPORTS) with default visibility (the project builds with -fvisibility=hidden).
#define HOST_EXPORT __attribute__((visibility("default")))
extern "C" {
HOST_EXPORT char* slurm_xstrdup(const char* str);
HOST_EXPORT void slurm_xfree(void** item);
HOST_EXPORT void slurm_info(const char* format, ...) __attribute__((format(printf, 1, 2)));
HOST_EXPORT void slurm_error(const char* format, ...) __attribute__((format(printf, 1, 2)));
HOST_EXPORT void slurm_spank_log(const char*, ...) __attribute__((format(printf, 1, 2)));
HOST_EXPORT spank_context_t spank_context(void);
HOST_EXPORT spank_err_t spank_option_register(spank_t spank, struct spank_option* opt);
HOST_EXPORT spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...);
HOST_EXPORT spank_err_t spank_getenv(spank_t spank, const char* var, char* buf, int len);
HOST_EXPORT spank_err_t spank_job_control_setenv(spank_t spank, const char* var, const char* val, int overwrite);
}

// spank_t is a pointer to this (opaque to plugins; Slurm's own is in plugstack.c).
struct spank_handle {
  spank_context_t context = S_CTX_ERROR;
  bool in_init = false;                                  // options may be registered only from slurm_spank_init
  std::vector<spank_option> options;                     // as registered (Slurm keeps the plugin's pointers)
  std::map<std::string, std::string> job_control_env;    // spank_job_control_setenv
  std::map<std::string, std::string> job_env;            // what spank_getenv sees (remote context only)
  uint32_t nnodes = 1, total_tasks = 1;
  int job_argc = 0;
  char** job_argv = nullptr;
};

namespace shim {

// spank_context() takes no handle: the process's context.
void set_context(spank_context_t context);

// Lines logged through slurm_info/slurm_error/slurm_spank_log, "info: ...", "error: ...", "log: ...".
std::vector<std::string> logs();
void clear_logs();
bool logged(const std::string& needle);

// Strings handed out by slurm_xstrdup and not yet given back to slurm_xfree.
long outstanding_xstrings();

}  // namespace shim
