// Resizing a job to min_gpus_to_fit. Slurm gives a job the GPUs of TresPerJob, else
// TresPerNode x NumNodes, else TresPerTask x NumTasks (docs/slurm.md, Resizes), so the
// plan rewrites the field the user wrote and rounds nodes and tasks up, never down:
// the job gets at least the GPUs the message names.
#include "resize.h"

#include "trainfit/util/text.h"
#include "trainfit/util/counted.h"

namespace trainfit::admission {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string type_of(const GpuTotal& gpus) { return gpus.types.empty() ? "" : gpus.types.front(); }

TresList others_of(const std::string& text) {
  Result<TresList> list = parse_tres(text);
  return list ? list.value() : TresList{};
}

// The spelling slurmctld used for the job's GPUs, to write the resized request in it.
std::string gpu_prefix_of(const JobGpuFields& f) {
  for (const std::string* text : {&f.per_job, &f.per_node, &f.per_task, &f.per_socket}) {
    Result<TresList> list = parse_tres(*text);
    if (list && !list->gpu_prefix.empty()) return list->gpu_prefix;
  }
  return "";
}

// Tasks tied to GPUs (-n 8 --gpus=8, -n 2 --gpus=8) keep the same ratio.
void keep_task_tie(const JobGpuFields& f, int64_t old_gpus, ResizePlan* plan) {
  if (f.tasks <= 0 || old_gpus <= 0) return;
  int64_t tasks = 0;
  if (f.tasks % old_gpus == 0) {
    tasks = f.tasks / old_gpus * plan->granted;
  } else if (old_gpus % f.tasks == 0 && plan->granted % (old_gpus / f.tasks) == 0) {
    tasks = plan->granted / (old_gpus / f.tasks);
  }
  if (tasks == 0) {
    plan->tasks_note = "tasks left at " + std::to_string(f.tasks) + ": " + counted(f.tasks, "task") + " on " +
                       counted(plan->granted, "GPU") + " are no longer tied one to one";
    return;
  }
  plan->tasks = tasks;
  plan->tasks_note = "tasks " + std::to_string(f.tasks) + " -> " + std::to_string(tasks);
}

}  // namespace

ResizePlan plan_resize(const JobGpuFields& f, const GpuTotal& gpus, int64_t target, int64_t per_node) {
  ResizePlan plan;
  const std::string source = gpus.source;
  const std::string type = type_of(gpus);
  const std::string prefix = gpu_prefix_of(f);
  if (source == "tres_per_node") {
    // Never fewer nodes than asked; GPUs spread evenly, at most per_node on each.
    plan.nodes = std::max<int64_t>(std::max<int64_t>(1, f.nodes), ceil_div(target, per_node));
    const int64_t on_each = ceil_div(target, plan.nodes);
    plan.granted = plan.nodes * on_each;
    plan.tres_per_node = rewrite_tres(others_of(f.per_node), prefix, type, on_each);
    keep_task_tie(f, gpus.gpus, &plan);
    if (f.tasks_per_node > 0 && plan.tasks > 0 && ceil_div(plan.tasks, f.tasks_per_node) > plan.nodes) {
      plan.nodes = ceil_div(plan.tasks, f.tasks_per_node);  // --ntasks-per-node holds: more nodes, more GPUs
      plan.granted = plan.nodes * on_each;
    }
  } else if (source == "tres_per_task") {
    const int64_t each = std::max<int64_t>(1, parse_tres(f.per_task) ? parse_tres(f.per_task)->gpus : 1);
    // A task's GPUs are on its node: whole tasks per node (8 GPUs, 3 per task: 2 tasks, 6 GPUs).
    int64_t tasks_per_node = per_node / each;
    if (f.tasks_per_node > 0) tasks_per_node = std::min(tasks_per_node, f.tasks_per_node);
    if (tasks_per_node < 1) return plan;  // a task needs more GPUs than a node has: no plan (granted 0)
    plan.tasks = ceil_div(target, each);
    plan.granted = plan.tasks * each;
    plan.tasks_note = "tasks " + std::to_string(std::max<int64_t>(1, f.tasks)) + " -> " + std::to_string(plan.tasks) +
                      " (" + std::to_string(each) + " GPU" + (each > 1 ? "s" : "") + " per task kept)";
    const int64_t nodes = ceil_div(plan.tasks, tasks_per_node);
    if (nodes > std::max<int64_t>(1, f.nodes)) plan.nodes = nodes;
  } else {  // tres_per_job, or per socket (which becomes a per-job count)
    plan.granted = target;
    plan.tres_per_job = rewrite_tres(others_of(f.per_job), prefix, type, target);
    plan.clear_tres_per_socket = source == "tres_per_socket";
    if (target > per_node && ceil_div(target, per_node) > f.nodes) plan.nodes = ceil_div(target, per_node);
    keep_task_tie(f, gpus.gpus, &plan);
    const int64_t nodes_now = plan.nodes > 0 ? plan.nodes : f.nodes;
    if (f.tasks_per_node > 0 && plan.tasks > 0 && ceil_div(plan.tasks, f.tasks_per_node) > nodes_now) {
      plan.nodes = ceil_div(plan.tasks, f.tasks_per_node);  // --ntasks-per-node holds
    }
    if (plan.clear_tres_per_socket) {
      plan.tasks_note += std::string(plan.tasks_note.empty() ? "" : "; ") + "the per-socket GPU request became --gpus=" +
                         (type.empty() ? "" : type + ":") + std::to_string(target);
    }
  }
  const int64_t nodes = plan.nodes > 0 ? plan.nodes : std::max<int64_t>(1, f.nodes);
  // Slurm runs at least one task per node (sbatch refuses -n below -N): the tasks keep up.
  const int64_t tasks_now = plan.tasks > 0 ? plan.tasks : f.tasks;
  if (tasks_now > 0 && tasks_now < nodes) {
    plan.tasks = nodes;
    plan.tasks_note += std::string(plan.tasks_note.empty() ? "" : "; ") + "tasks raised to " + std::to_string(nodes) +
                       ", one per node";
  }
  if (nodes > 1) {
    plan.layout = std::to_string(nodes) + " nodes" +
                  (source == "tres_per_node" ? " x " + std::to_string(plan.granted / nodes) : std::string());
  }
  return plan;
}

}  // namespace trainfit::admission
