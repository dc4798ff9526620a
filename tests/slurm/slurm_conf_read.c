/* slurm_conf_read: what Slurm's own parser (libslurm's slurm_conf_init, the code slurmctld
 * reads slurm.conf with) makes of a slurm.conf: the JobSubmitPlugins and PlugStackConfig
 * values, one "Key=value" line each ("" when unset). The independent side of
 * tests/removal_guard_test.sh, which holds packaging/slurm/removal-guard.sh's shell reading
 * to it on tricky texts.   Usage: slurm_conf_read SLURM_CONF */
#include <stdio.h>

#include <slurm/slurm.h>

/* Exported by libslurm (src/common/read_config.c), declared in no installed header. */
extern int slurm_conf_init(const char *file_name);
extern slurm_conf_t slurm_conf;

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: slurm_conf_read SLURM_CONF\n");
    return 2;
  }
  if (slurm_conf_init(argv[1]) != 0) {
    fprintf(stderr, "slurm_conf_read: libslurm could not read %s\n", argv[1]);
    return 1;
  }
  printf("JobSubmitPlugins=%s\n", slurm_conf.job_submit_plugins ? slurm_conf.job_submit_plugins : "");
  printf("PlugStackConfig=%s\n", slurm_conf.plugstack ? slurm_conf.plugstack : "");
  return 0;
}
