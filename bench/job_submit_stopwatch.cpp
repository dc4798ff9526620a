// job_submit/stopwatch: times the job_submit plugins listed between its own entries,
// inside slurmctld, submission by submission:
//   JobSubmitPlugins=stopwatch,lua,stopwatch,trainfit,stopwatch
// Slurm calls the plugins in list order, one submission at a time (job_submit.c holds
// g_context_lock), and loads a name listed several times once, so one state sees every
// entry; $TRAINFIT_STOPWATCH_ENTRIES says how many entries the list has. The first entry of
// a submission starts the clock; each later one writes the lap "INDEX NANOSECONDS" (1 = the
// first plugin between entries) to $TRAINFIT_STOPWATCH_OUT and restarts the clock after
// the write, so the write is in no lap. An entry that meets another job_desc than its
// submission's writes "desync" and starts over. Lines are flushed at
// once: slurmctld calls no plugin's fini at shutdown unless built with MEMORY_LEAK_DEBUG.
// A plugin that refuses ends the list, so time accepted submissions only.
// Used by bench/job_submit_cost_bench.sh; never installed.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#define EXPORT __attribute__((visibility("default")))

extern "C" {
EXPORT extern const char plugin_name[];
EXPORT extern const char plugin_type[];
EXPORT extern const uint32_t plugin_version;
const char plugin_name[] = "stopwatch: time the job_submit plugin listed between two entries";
const char plugin_type[] = "job_submit/stopwatch";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

std::FILE* out = nullptr;
const job_desc_msg_t* current = nullptr;  // the submission being timed
int entries = 2;                           // stopwatch entries in JobSubmitPlugins
int lap = 0;                               // entries this submission has passed, less one
timespec lap_start{};

uint64_t since(const timespec& t0) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return uint64_t(now.tv_sec - t0.tv_sec) * 1000000000u + uint64_t(now.tv_nsec) - uint64_t(t0.tv_nsec);
}

}  // namespace

extern "C" EXPORT int init(void) {
  const char* path = std::getenv("TRAINFIT_STOPWATCH_OUT");
  if (out == nullptr && path != nullptr) out = std::fopen(path, "a");
  const char* count = std::getenv("TRAINFIT_STOPWATCH_ENTRIES");
  if (count != nullptr && std::atoi(count) >= 2) entries = std::atoi(count);
  return SLURM_SUCCESS;
}

extern "C" EXPORT int fini(void) { return SLURM_SUCCESS; }

extern "C" EXPORT int job_submit(job_desc_msg_t* job_desc, uint32_t, char**) {
  const bool within = current != nullptr && lap + 1 < entries;
  if (within && job_desc == current) {
    const uint64_t ns = since(lap_start);
    if (out != nullptr) std::fprintf(out, "%d %llu\n", ++lap, static_cast<unsigned long long>(ns));
  } else {
    if (within && out != nullptr) std::fputs("desync\n", out);
    current = job_desc;
    lap = 0;
  }
  if (out != nullptr) std::fflush(out);
  clock_gettime(CLOCK_MONOTONIC, &lap_start);
  return SLURM_SUCCESS;
}

// 22.05 passes three arguments, 23.02 and later a fourth (err_msg); neither is read.
extern "C" EXPORT int job_modify(job_desc_msg_t*, void*, uint32_t) { return SLURM_SUCCESS; }
