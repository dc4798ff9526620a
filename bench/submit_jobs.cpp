// Submits N held batch jobs through libslurm's API (no sbatch process per job), so
// the rate measures slurmctld rather than process start-up. Used by
// bench/slurm_submit_bench.sh. Usage: submit_jobs N "COMMENT" TRES_PER_JOB
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: submit_jobs N COMMENT TRES_PER_JOB\n");
    return 2;
  }
  const int n = std::atoi(argv[1]);
  slurm_init(nullptr);
  std::string comment = argv[2], tres = argv[3];
  char name[] = "bench";
  char script[] = "#!/bin/sh\ntrue\n";
  char work_dir[] = "/tmp";
  char env0[] = "PATH=/usr/bin:/bin";
  char* env[] = {env0, nullptr};
  int failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    desc.name = name;
    desc.script = script;
    desc.work_dir = work_dir;
    desc.environment = env;
    desc.env_size = 1;
    desc.comment = comment.empty() ? nullptr : comment.data();
    desc.tres_per_job = tres.data();
    desc.priority = 0;  // held: nothing runs, only submission is measured
    desc.user_id = getuid();
    desc.group_id = getgid();
    desc.min_nodes = 1;
    submit_response_msg_t* response = nullptr;
    if (slurm_submit_batch_job(&desc, &response) != SLURM_SUCCESS) ++failures;
    if (response != nullptr) slurm_free_submit_response_response_msg(response);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d %.3f %d\n", n, seconds, failures);
  slurm_fini();
  return failures == 0 ? 0 : 1;
}
