// Admission: what the Slurm plugins need, as plain C++ they can test and link
// statically (the trainfit_admission library); no exceptions escape. One header per
// concern, in the order they build on each other; this one includes them all.
#pragma once

#include "trainfit/admission/gres.h"        // GPU requests in Slurm's spellings
#include "trainfit/admission/annotation.h"  // --llm-* options, comments, SPANK environment
#include "trainfit/admission/slurm_conf.h"  // slurm.conf's partitions
#include "trainfit/admission/policy.h"      // trainfit.conf
#include "trainfit/admission/decision.h"    // accept / warn / resize / reject
#include "trainfit/admission/assemble.h"    // the policy assembled once: trainfit.conf + slurm.conf
#include "trainfit/admission/audit.h"       // the audit record, printable log text
