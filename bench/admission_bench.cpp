// The job_submit/trainfit plugin as slurmctld runs it (Google Benchmark): the built
// job_submit_trainfit.so is dlopen'ed, its Slurm symbols (slurm_xstrdup, slurm_xfree,
// slurm_info, slurm_error) resolved from the real libslurm this executable links,
// init() reads a trainfit.conf (action = reject, gpus_per_node = 8, audit log on),
// and job_submit() is called with a job_desc_msg_t as sbatch + the SPANK plugin send it.
// Run: build/bench/admission_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Targets: accepted <= 6 us, rejected <= 20 us per call, audit line included.
#include <benchmark/benchmark.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

// libslurm exports these (xmalloc.h is not a public header).
char* slurm_xstrdup(const char* str);
void slurm_xfree(void** item);
}

#ifndef TRAINFIT_JOB_SUBMIT_PLUGIN
#error "TRAINFIT_JOB_SUBMIT_PLUGIN (the path of job_submit_trainfit.so) must be defined"
#endif

namespace {

using InitFn = int (*)();
using FiniFn = int (*)();
using JobSubmitFn = int (*)(job_desc_msg_t*, uint32_t, char**);

struct Plugin {
  void* handle = nullptr;
  InitFn init = nullptr;
  FiniFn fini = nullptr;
  JobSubmitFn job_submit = nullptr;
};

Plugin g_plugin;
std::filesystem::path g_dir;  // the temporary directory holding trainfit.conf and audit.jsonl

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "admission_bench: %s\n", message.c_str());
  if (!g_dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(g_dir, ignored);
  }
  std::exit(1);
}

void* symbol(void* handle, const char* name) {
  dlerror();
  void* found = dlsym(handle, name);
  const char* error = dlerror();
  if (error != nullptr || found == nullptr) {
    die(std::string("dlsym(") + name + ") failed: " + (error != nullptr ? error : "NULL"));
  }
  return found;
}

// The Slurm functions the plugin takes from its host must come from libslurm.
void check_host_symbols() {
  for (const char* name : {"slurm_xstrdup", "slurm_xfree", "slurm_info", "slurm_error"}) {
    void* found = symbol(RTLD_DEFAULT, name);
    Dl_info info{};
    if (dladdr(found, &info) == 0 || info.dli_fname == nullptr || std::strstr(info.dli_fname, "libslurm") == nullptr) {
      die(std::string(name) + " is not resolved from libslurm (found in " +
          (info.dli_fname != nullptr ? info.dli_fname : "?") + ")");
    }
  }
}

void write_conf() {
  char pattern[] = "/tmp/admission_bench.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) die(std::string("mkdtemp: ") + std::strerror(errno));
  g_dir = pattern;
  const std::filesystem::path conf = g_dir / "trainfit.conf";
  std::ofstream out(conf);
  out << "action = reject\n"
      << "gpus_per_node = 8\n"
      << "audit_log = " << (g_dir / "audit.jsonl").string() << "\n";
  out.close();
  if (!out) die("cannot write " + conf.string());
  if (::setenv("TRAINFIT_CONF", conf.c_str(), 1) != 0) die("setenv TRAINFIT_CONF failed");
}

// dlopen + the checks slurmctld's plugin loader makes, then init().
void load_plugin() {
  check_host_symbols();
  // RTLD_NOW: every undefined symbol of the plugin must resolve now (the plugin is
  // linked with --unresolved-symbols=ignore-all, so a missing one shows up here).
  // TRAINFIT_BENCH_PLUGIN compares another build (e.g. an older commit's) on the same machine.
  const char* other = std::getenv("TRAINFIT_BENCH_PLUGIN");
  const std::string path = other != nullptr && other[0] != '\0' ? other : TRAINFIT_JOB_SUBMIT_PLUGIN;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    die("dlopen(" + path + ") failed: " + (error != nullptr ? error : "?"));
  }
  const auto* type = static_cast<const char*>(symbol(handle, "plugin_type"));
  if (std::strcmp(type, "job_submit/trainfit") != 0) die(std::string("unexpected plugin_type ") + type);
  const auto* version = static_cast<const uint32_t*>(symbol(handle, "plugin_version"));
  if (*version != SLURM_VERSION_NUMBER) die("plugin_version does not match this libslurm's headers");
  g_plugin.handle = handle;
  g_plugin.init = reinterpret_cast<InitFn>(symbol(handle, "init"));
  g_plugin.fini = reinterpret_cast<FiniFn>(symbol(handle, "fini"));
  g_plugin.job_submit = reinterpret_cast<JobSubmitFn>(symbol(handle, "job_submit"));
  const int rc = g_plugin.init();
  if (rc != SLURM_SUCCESS) die("init() returned " + std::to_string(rc));
}

void unload_plugin() {
  if (g_plugin.handle == nullptr) return;
  g_plugin.fini();
  dlclose(g_plugin.handle);
  g_plugin = Plugin{};
}

// What sbatch --llm-* sends: the SPANK options land in spank_job_env.
char kEnvModel8b[] = "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-8b";
char kEnvSeq4096[] = "_SLURM_SPANK_OPTION_trainfit_llm_seq=4096";
char kEnvZero3[] = "_SLURM_SPANK_OPTION_trainfit_llm_zero=3";
char* kEnvAccepted[] = {kEnvModel8b, kEnvSeq4096, kEnvZero3};

char kEnvModel70b[] = "_SLURM_SPANK_OPTION_trainfit_llm_model=llama3-70b";
char kEnvSeq8192[] = "_SLURM_SPANK_OPTION_trainfit_llm_seq=8192";
char kEnvRecomputeFull[] = "_SLURM_SPANK_OPTION_trainfit_llm_recompute=full";
char* kEnvRejected[] = {kEnvModel70b, kEnvSeq8192, kEnvZero3, kEnvRecomputeFull};

char kName[] = "bench";

// A submission as slurmctld receives it; the strings the plugin may free or replace
// come from libslurm's allocator.
struct Submission {
  job_desc_msg_t desc;

  Submission(char** env, uint32_t env_size, const char* tres_per_job) {
    slurm_init_job_desc_msg(&desc);
    desc.spank_job_env = env;
    desc.spank_job_env_size = env_size;
    desc.tres_per_job = slurm_xstrdup(tres_per_job);
    desc.user_id = static_cast<uint32_t>(::getuid());
    desc.name = kName;
    desc.partition = nullptr;
  }
  ~Submission() {
    for (char** owned : {&desc.tres_per_job, &desc.tres_per_node, &desc.tres_per_task, &desc.tres_per_socket,
                         &desc.admin_comment}) {
      reset(owned);
    }
  }
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;

  static void reset(char** field) {
    if (*field != nullptr) slurm_xfree(reinterpret_cast<void**>(field));
    *field = nullptr;
  }

  // slurmctld passes the RPC's uid: no getuid() system call inside the timed loop.
  int submit(char** err_msg) { return g_plugin.job_submit(&desc, desc.user_id, err_msg); }
};

std::string text(const char* s) { return s != nullptr ? s : "(null)"; }

uintmax_t audit_size();

// Waits until the writer thread has caught up (the file stops growing for 50 ms).
void wait_for_writer() {
  uintmax_t size = audit_size();
  for (int i = 0; i < 400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const uintmax_t now = audit_size();
    if (now == size) return;
    size = now;
  }
}

uintmax_t audit_size() {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(g_dir / "audit.jsonl", ec);
  return ec ? 0 : size;
}

// The plugin's writer thread appends the line shortly after the call: wait up to 2 s.
bool audit_grew(uintmax_t before) {
  for (int i = 0; i < 200 && audit_size() <= before; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return audit_size() > before;
}

// CPU time of the whole process (every thread, the audit writer included), in us.
double process_cpu_us() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

// llama3-8b, seq 4096, ZeRO-3 on 8 x H100: fits, accepted (audited, AdminComment stamped).
void BM_JobSubmitAccepted(benchmark::State& state) {
  Submission s(kEnvAccepted, 3, "gres:gpu:h100:8");
  char* err_msg = nullptr;
  const uintmax_t audit_before = audit_size();
  const int first = s.submit(&err_msg);
  const std::string stamped = text(s.desc.admin_comment);
  Submission::reset(&err_msg);
  if (first != SLURM_SUCCESS) {
    state.SkipWithError(("accepted job: job_submit returned " + std::to_string(first)).c_str());
    return;
  }
  const bool other_build = std::getenv("TRAINFIT_BENCH_PLUGIN") != nullptr;  // older builds do not stamp
  if (!other_build && (s.desc.admin_comment == nullptr || std::strstr(s.desc.admin_comment, "trainfit accept") == nullptr)) {
    state.SkipWithError(("accepted job: admin_comment not stamped: " + stamped).c_str());
    return;
  }
  if (text(s.desc.tres_per_job) != "gres:gpu:h100:8") {
    state.SkipWithError(("accepted job: tres_per_job changed to " + text(s.desc.tres_per_job)).c_str());
    return;
  }
  if (!audit_grew(audit_before)) {
    state.SkipWithError("accepted job: no audit line written");
    return;
  }
  Submission::reset(&s.desc.admin_comment);
  const double cpu_before = process_cpu_us();
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.submit(&err_msg));
    Submission::reset(&s.desc.admin_comment);
    Submission::reset(&err_msg);
  }
  wait_for_writer();
  state.counters["cpu_us_per_job"] = (process_cpu_us() - cpu_before) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(stamped);
}
BENCHMARK(BM_JobSubmitAccepted);

// llama3-70b, seq 8192, ZeRO-3, full recompute on 8 x H100: does not fit, rejected
// (audited, err_msg with the advice).
void BM_JobSubmitRejected(benchmark::State& state) {
  Submission s(kEnvRejected, 4, "gres:gpu:h100:8");
  char* err_msg = nullptr;
  const uintmax_t audit_before = audit_size();
  const int first = s.submit(&err_msg);
  const bool has_message = err_msg != nullptr && err_msg[0] != '\0';
  Submission::reset(&err_msg);
  if (first == SLURM_SUCCESS || !has_message) {
    state.SkipWithError(("rejected job: job_submit returned " + std::to_string(first) +
                         (has_message ? "" : " without err_msg"))
                            .c_str());
    return;
  }
  if (!audit_grew(audit_before)) {
    state.SkipWithError("rejected job: no audit line written");
    return;
  }
  const double cpu_before = process_cpu_us();
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.submit(&err_msg));
    Submission::reset(&err_msg);
  }
  wait_for_writer();
  state.counters["cpu_us_per_job"] = (process_cpu_us() - cpu_before) / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("rc " + std::to_string(first));
}
BENCHMARK(BM_JobSubmitRejected);

// No annotation, --gpus=8: passes untouched, no audit line (what every non-LLM job pays).
void BM_JobSubmitUnannotated(benchmark::State& state) {
  Submission s(nullptr, 0, "gpu:8");
  char* err_msg = nullptr;
  const int first = s.submit(&err_msg);
  const bool has_message = err_msg != nullptr;
  Submission::reset(&err_msg);
  if (first != SLURM_SUCCESS || has_message || s.desc.admin_comment != nullptr ||
      text(s.desc.tres_per_job) != "gpu:8") {
    state.SkipWithError(("unannotated job: not passed untouched (rc " + std::to_string(first) + ")").c_str());
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(s.submit(&err_msg));
    Submission::reset(&err_msg);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_JobSubmitUnannotated);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  write_conf();
  load_plugin();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  unload_plugin();
  std::error_code ec;
  std::filesystem::remove_all(g_dir, ec);
  if (ec) std::fprintf(stderr, "admission_bench: cannot remove %s: %s\n", g_dir.c_str(), ec.message().c_str());
  return 0;
}
