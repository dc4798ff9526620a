/* forge_submit: submits batch jobs through libslurm with a forged SPANK environment
 * (spank_job_env holding _SLURM_SPANK_OPTION_trainfit_* / TRAINFIT_* entries), as a
 * client without the SPANK plugin could: job_submit/trainfit must validate them again.
 *
 *   forge_submit [-n COUNT] [-J NAME] [-H] -- VARIANT [-- VARIANT ...]
 *   VARIANT: PARTITION TRES_PER_JOB COMMENT ENV_ENTRY...
 *            ("-" for an empty partition, GPU request or comment; an ENV_ENTRY "@BIG=N"
 *             stands for _SLURM_SPANK_OPTION_trainfit_llm_model= followed by N bytes of 'a')
 *
 * Submission i uses variant i % count. One line per submission on stdout:
 *   i variant OK jobid
 *   i variant ERR errno slurm_strerror(errno)
 * -H submits held jobs (priority 0), so that nothing runs. Used by storm_test.sh. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "slurm_compat.h"

struct variant {
  char *partition, *tres, *comment;
  char **env;
  uint32_t env_size;
};

static char *dash_is_null(char *s) { return strcmp(s, "-") == 0 ? NULL : s; }

static char *expand(const char *entry) {
  if (strncmp(entry, "@BIG=", 5) != 0) return strdup(entry);
  const char *prefix = "_SLURM_SPANK_OPTION_trainfit_llm_model=";
  size_t n = strtoul(entry + 5, NULL, 10), p = strlen(prefix);
  char *out = malloc(p + n + 1);
  if (out == NULL) return NULL;
  memcpy(out, prefix, p);
  memset(out + p, 'a', n);
  out[p + n] = '\0';
  return out;
}

int main(int argc, char **argv) {
  long count = 1;
  const char *name = "forge";
  int hold = 0, i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) count = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "-J") == 0 && i + 1 < argc) name = argv[++i];
    else if (strcmp(argv[i], "-H") == 0) hold = 1;
    else { fprintf(stderr, "forge_submit: unknown argument %s\n", argv[i]); return 2; }
  }
  struct variant variants[64];
  int nvariants = 0;
  while (i < argc && nvariants < 64) {  /* argv[i] is "--" */
    int start = ++i, end = start;
    while (end < argc && strcmp(argv[end], "--") != 0) ++end;
    if (end - start < 3) { fprintf(stderr, "forge_submit: a variant needs PARTITION TRES COMMENT\n"); return 2; }
    struct variant *v = &variants[nvariants++];
    v->partition = dash_is_null(argv[start]);
    v->tres = dash_is_null(argv[start + 1]);
    v->comment = dash_is_null(argv[start + 2]);
    v->env_size = (uint32_t)(end - start - 3);
    v->env = calloc(v->env_size + 1, sizeof(char *));
    for (uint32_t k = 0; k < v->env_size; ++k) v->env[k] = expand(argv[start + 3 + k]);
    i = end;
  }
  if (nvariants == 0) { fprintf(stderr, "forge_submit: no variant\n"); return 2; }

  slurm_init(NULL);
  char *environment[] = {"PATH=/usr/bin:/bin", "HOME=/tmp", NULL};
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (long n = 0; n < count; ++n) {
    struct variant *v = &variants[n % nvariants];
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.name = (char *)name;
    d.script = "#!/bin/sh\ntrue\n";
    d.environment = environment;
    d.env_size = 2;
    d.work_dir = "/tmp";
    d.user_id = getuid();
    d.group_id = getgid();
    d.min_nodes = 1;
    d.time_limit = 5;
    if (hold) d.priority = 0;
    d.partition = v->partition;
    d.tres_per_job = v->tres;
    d.comment = v->comment;
    d.spank_job_env = v->env;
    d.spank_job_env_size = v->env_size;
    submit_response_msg_t *resp = NULL;
    if (slurm_submit_batch_job(&d, &resp) == 0) {
      printf("%ld %ld OK %u\n", n, n % nvariants, TRAINFIT_JOB_ID(resp));
      slurm_free_submit_response_response_msg(resp);
    } else {
      int e = errno;  // slurm_get_errno() returned errno; 24.11 removed it
      printf("%ld %ld ERR %d %s\n", n, n % nvariants, e, slurm_strerror(e));
    }
  }
  slurm_fini();
  return 0;
}
