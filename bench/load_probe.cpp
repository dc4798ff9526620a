// A process that loads one shared object and exits: what sbatch, salloc and srun pay for the
// SPANK plugin before any option is parsed (bench/start_bench.sh runs it under hyperfine).
// Linked with libslurm, as srun is; RTLD_LAZY: the spank_* functions srun itself provides are
// never called here.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 0;  // no object: the bare process
  void* handle = dlopen(argv[1], RTLD_LAZY | RTLD_GLOBAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "load_probe: %s\n", dlerror());
    return 1;
  }
  return 0;
}
