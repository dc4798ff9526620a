# Link-time optimisation for every build but Debug and the instrumented ones (sanitizers, TSan,
# libFuzzer). The job_submit plugin runs cold in slurmctld (a new thread per RPC, caches filled
# by the RPC's other work): whole-program inlining takes its code from 1.74 to 1.19 MB and its
# accepted call from 1.92-1.95x to 1.59-1.72x a minimal job_submit.lua (docs/slurm.md).
# -DTRAINFIT_LTO=OFF builds without it.
option(TRAINFIT_LTO "Link-time optimisation (not for Debug or instrumented builds)" ON)
if(TRAINFIT_LTO AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug" AND NOT TRAINFIT_SANITIZE AND NOT TRAINFIT_TSAN
   AND NOT TRAINFIT_FUZZ)
  include(CheckIPOSupported)
  check_ipo_supported(RESULT trainfit_ipo OUTPUT trainfit_ipo_why LANGUAGES CXX)
  if(trainfit_ipo)
    set(CMAKE_INTERPROCEDURAL_OPTIMIZATION ON)
  else()
    message(STATUS "link-time optimisation not available: ${trainfit_ipo_why}")
  endif()
endif()
