// Slurm 22.05's semantics (/usr/include/slurm/spank.h, slurm.h; xmalloc.h in Slurm's tree):
// - slurm_xstrdup(NULL) is NULL; otherwise a copy from Slurm's allocator, which keeps a
//   header (a magic word and the size) in front of the pointer it returns;
// - slurm_xfree(&p) frees *p if it is not NULL and sets *p = NULL; a pointer that did not come
//   from Slurm's allocator fails its magic check (Slurm asserts; here: abort, a test failure);
// - spank_option_register works only in slurm_spank_init (else ESPANK_BAD_ARG), keeps the
//   plugin's pointers, refuses a name registered twice;
// - spank_getenv reads the job's environment in slurmstepd only (else ESPANK_NOT_REMOTE),
//   ESPANK_NOSPACE on truncation; spank_job_control_setenv works in sbatch/salloc/srun
//   (else ESPANK_NOT_LOCAL);
// - spank_get_item: S_JOB_NNODES, S_JOB_TOTAL_TASK_COUNT (uint32_t*), S_JOB_ARGV (int*, char***)
//   in srun and slurmstepd; in sbatch/salloc they are not available (ESPANK_NOT_AVAIL).
#include "slurm_shim.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

constexpr size_t kXmallocMagic = 0x42;
spank_err_t rc_of(int rc) { return static_cast<spank_err_t>(rc); }
std::mutex g_mutex;  // the audit writer thread logs too
std::vector<std::string> g_logs;
long g_outstanding = 0;
spank_context_t g_context = S_CTX_ERROR;

std::string format(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return "(format error)";
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&out[0], out.size(), fmt, args);
  out.resize(static_cast<size_t>(n));
  return out;
}

void record(const char* kind, const char* fmt, va_list args) {
  std::string line = std::string(kind) + ": " + format(fmt, args);
  if (std::getenv("PLUGIN_HOST_VERBOSE") != nullptr) std::fprintf(stderr, "  [plugin] %.300s\n", line.c_str());
  std::lock_guard<std::mutex> lock(g_mutex);
  g_logs.push_back(std::move(line));
}

}  // namespace

namespace shim {

void set_context(spank_context_t context) { g_context = context; }

std::vector<std::string> logs() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_logs;
}

void clear_logs() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_logs.clear();
}

bool logged(const std::string& needle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const std::string& line : g_logs) {
    if (line.find(needle) != std::string::npos) return true;
  }
  return false;
}

long outstanding_xstrings() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_outstanding;
}

}  // namespace shim

extern "C" {

char* slurm_xstrdup(const char* str) {
  if (str == nullptr) return nullptr;
  const size_t size = std::strlen(str) + 1;
  auto* block = static_cast<size_t*>(std::malloc(size + 2 * sizeof(size_t)));
  if (block == nullptr) std::abort();  // Slurm's xmalloc aborts too
  block[0] = kXmallocMagic;
  block[1] = size;
  std::memcpy(block + 2, str, size);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_outstanding;
  }
  return reinterpret_cast<char*>(block + 2);
}

void slurm_xfree(void** item) {
  if (item == nullptr || *item == nullptr) return;
  size_t* block = static_cast<size_t*>(*item) - 2;
  if (block[0] != kXmallocMagic) {
    std::fprintf(stderr, "plugin_host: slurm_xfree of memory that slurm_xstrdup did not allocate\n");
    std::abort();
  }
  block[0] = 0;
  std::free(block);
  *item = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  --g_outstanding;
}

void slurm_info(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  record("info", fmt, args);
  va_end(args);
}

void slurm_error(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  record("error", fmt, args);
  va_end(args);
}

void slurm_spank_log(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  record("log", fmt, args);
  va_end(args);
}

spank_context_t spank_context(void) { return g_context; }

spank_err_t spank_option_register(spank_t spank, struct spank_option* opt) {
  if (spank == nullptr || opt == nullptr || opt->name == nullptr || !spank->in_init) return rc_of(ESPANK_BAD_ARG);
  for (const spank_option& other : spank->options) {
    if (std::strcmp(other.name, opt->name) == 0) return rc_of(ESPANK_BAD_ARG);
  }
  spank->options.push_back(*opt);
  return rc_of(ESPANK_SUCCESS);
}

spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...) {
  if (spank == nullptr) return rc_of(ESPANK_BAD_ARG);
  if (spank->context == S_CTX_ALLOCATOR) return rc_of(ESPANK_NOT_AVAIL);
  va_list args;
  va_start(args, item);
  spank_err_t rc = rc_of(ESPANK_SUCCESS);
  switch (item) {
    case S_JOB_NNODES: *va_arg(args, uint32_t*) = spank->nnodes; break;
    case S_JOB_TOTAL_TASK_COUNT: *va_arg(args, uint32_t*) = spank->total_tasks; break;
    case S_JOB_ARGV: {
      int* argc = va_arg(args, int*);
      char*** argv = va_arg(args, char***);
      *argc = spank->job_argc;
      *argv = spank->job_argv;
      break;
    }
    default: rc = rc_of(ESPANK_BAD_ARG);
  }
  va_end(args);
  return rc;
}

spank_err_t spank_getenv(spank_t spank, const char* var, char* buf, int len) {
  if (spank == nullptr || var == nullptr || buf == nullptr || len < 0) return rc_of(ESPANK_BAD_ARG);
  if (spank->context != S_CTX_REMOTE) return rc_of(ESPANK_NOT_REMOTE);
  auto it = spank->job_env.find(var);
  if (it == spank->job_env.end()) return rc_of(ESPANK_ENV_NOEXIST);
  if (len == 0) return rc_of(ESPANK_NOSPACE);
  const size_t n = std::min(it->second.size(), static_cast<size_t>(len) - 1);
  std::memcpy(buf, it->second.data(), n);
  buf[n] = '\0';
  return rc_of(n < it->second.size() ? ESPANK_NOSPACE : ESPANK_SUCCESS);
}

spank_err_t spank_job_control_setenv(spank_t spank, const char* name, const char* value, int overwrite) {
  if (spank == nullptr || name == nullptr || value == nullptr) return rc_of(ESPANK_BAD_ARG);
  if (spank->context != S_CTX_ALLOCATOR && spank->context != S_CTX_LOCAL) return rc_of(ESPANK_NOT_LOCAL);
  if (!overwrite && spank->job_control_env.count(name) != 0) return rc_of(ESPANK_ENV_EXISTS);
  spank->job_control_env[name] = value;
  return rc_of(ESPANK_SUCCESS);
}

}  // extern "C"
