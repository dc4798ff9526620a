// The decision id a job's AdminComment carries (plugin/job_submit/job_desc.cpp
// stamp_admin_comment), read back from the text `sacct` and `squeue` print: what
// `trainfit report --jobs` confirms submissions with. The stamps below are the form shown by
// `scontrol show job` on the loopback cluster (docs/slurm.md, "The verdict on the job").
#include <gtest/gtest.h>

#include "trainfit/admission.h"

namespace trainfit::admission {
namespace {

TEST(DecisionStamp, ReadsTheIdFromAnAdminComment) {
  EXPECT_EQ(stamped_decision_id("trainfit accept: 54.5 of 79.6 GiB per GPU on 8 x h100; decision 6b107052-7"), "6b107052-7");
  EXPECT_EQ(stamped_decision_id("trainfit resize: 73.1 of 79.6 GiB per GPU on 24 x h100; min_gpus_to_fit=24; "
                                "decision 6b107052-12\r"),
            "6b107052-12");
  // sacct -P with a job id first; a site's own AdminComment before trainfit's stamp.
  EXPECT_EQ(stamped_decision_id("42|site note; trainfit accept: 1.0 of 79.6 GiB per GPU on 4 of the 64 x h100 the job "
                                "holds (--exclusive); decision abc-3"),
            "abc-3");
  // squeue pads its columns.
  EXPECT_EQ(stamped_decision_id("trainfit warn: 90.1 of 79.6 GiB per GPU on 8 x h100; decision ff-1      "), "ff-1");
}

TEST(DecisionStamp, NoIdWhereNoStampIs) {
  EXPECT_EQ(stamped_decision_id(""), "");
  EXPECT_EQ(stamped_decision_id("(null)"), "");
  EXPECT_EQ(stamped_decision_id("site note"), "");
  EXPECT_EQ(stamped_decision_id("decision pending"), "");     // not <hex>-<n>
  EXPECT_EQ(stamped_decision_id("decision 6B10-7"), "");       // ids are lower-case hex
  EXPECT_EQ(stamped_decision_id("decision 6b10-"), "");
  EXPECT_EQ(stamped_decision_id("the decision 6b10-7"), "");   // not a part of its own
}

}  // namespace
}  // namespace trainfit::admission
