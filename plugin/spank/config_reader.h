// The C boundary between the SPANK plugin and trainfit_config_reader.so, which reads
// --llm-config's file (DeepSpeed JSON, torchtitan TOML, torchtune YAML). The reader links
// yaml-cpp and, with it, the shared libstdc++; the plugin keeps its C++ runtime inside,
// since every sbatch, salloc, srun and slurmstepd loads it (Debian's libstdc++.so.6 costs a
// process 0.5 ms to load, yaml-cpp 0.2 ms more) and most never read a config file. So only
// C crosses: text in, malloc'ed text out, no exception.
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Reads a config file's text (NAME: its path, for the kind and messages). On success: 0,
// *fields = the request's fields as "key=value,key=value", *notes = what the file left out,
// one line each ("trainfit: --llm-config (KIND): ..."), each '\n'-terminated. On failure:
// 1 + the ErrorCode (trainfit/error.h), *message = one line. The caller frees with free().
typedef int (*trainfit_read_config_fn)(const char* text, size_t size, const char* name, char** fields, char** notes,
                                       char** message);
#define TRAINFIT_READ_CONFIG_SYMBOL "trainfit_read_config"

#ifdef __cplusplus
}
#endif
