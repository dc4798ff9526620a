/* What differs between Slurm releases in the structures the plugins and their tests read.
 * Compiled as C (tests/slurm/forge_submit.c) and C++. CMake probes the release's slurm.h
 * (plugin/CMakeLists.txt, target trainfit_slurm_headers): nothing here is keyed by a
 * version number guessed from changelogs. */
#pragma once

/* The job id of job_desc_msg_t and submit_response_msg_t: a plain job_id up to 24.11; a
 * slurm_step_id_t step_id (step_id.job_id) in 26.05. */
#ifdef TRAINFIT_SLURM_JOB_ID_IN_STEP_ID
#define TRAINFIT_JOB_ID(msg) ((msg)->step_id.job_id)
#else
#define TRAINFIT_JOB_ID(msg) ((msg)->job_id)
#endif
