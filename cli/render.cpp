#include "render.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "trainfit/catalog.h"
#include "trainfit/host_offload.h"
#include "trainfit/request.h"
#include "trainfit/util/counted.h"

namespace trainfit::cli {

std::string cli_flags(const std::vector<Change>& changes) {
  std::string out;
  for (const Change& change : changes) {
    const FieldSpec* spec = find_field(change.field);
    const std::string flag = std::string("--") + (spec != nullptr ? spec->flag : change.field.c_str());
    const bool bare = spec != nullptr && spec->kind == FieldKind::kBool && change.value == "true";
    out += (out.empty() ? "" : " ") + flag + (bare ? "" : "=" + change.value);
  }
  return out;
}
namespace {

// The figures as the response JSON rounds them (GiB to 4 decimals): a table rendered from
// a service's answer (response_from_json) then prints the same digits as a local one.
double round4(double value) { return std::round(value * 1e4) / 1e4; }
double gib4(double bytes) { return round4(bytes / kGiB); }

std::string fixed(double value, int decimals = 2) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

void row(std::ostream& out, const std::string& label, double bytes, const std::string& note = "") {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, "  %-34s %10s GiB", label.c_str(), fixed(gib4(bytes)).c_str());
  out << buffer;
  if (!note.empty()) out << "   " << note;
  out << "\n";
}

// (label, bytes) rows of the breakdown, shared by the table and CSV.
struct Line {
  const char* section;
  const char* key;
  double bytes;
};

std::vector<Line> lines(const Response& r) {
  const Breakdown& b = r.breakdown;
  const StageMemory& s = b.stage;
  return {
      {"model_states", "weights", s.states.weights},
      {"model_states", "grads", s.states.grads},
      {"model_states", "master_weights", s.states.master},
      {"model_states", "optimizer_states", s.states.optimizer},
      {"activations", "layers", s.activations.layers},
      {"activations", "embedding", s.activations.embedding},
      {"activations", "logits_loss", s.activations.logits_loss},
      {"activations", "weight_cache", s.activations.weight_cache},
      {"transients", "fsdp_units_forward", s.transients.fsdp_units_fwd},
      {"transients", "fsdp_units_backward", s.transients.fsdp_units_bwd},
      {"transients", "recompute", s.transients.recompute},
      {"transients", "layer_backward", s.transients.layer_backward},
      {"transients", "loss_forward", s.transients.loss_forward},
      {"transients", "loss_backward", s.transients.loss_backward},
      {"transients", "held_logits", s.transients.held_logits},
      {"transients", "comm_buckets", s.transients.comm_buckets},
      {"transients", "optimizer_step", s.transients.optimizer_step},
      {"transients", "context_parallel", s.transients.context_parallel},
      {"transients", "held_layer_inputs", s.transients.held_layer_inputs},
      {"transients", "autocast_cache", s.transients.autocast_cache},
      {"overheads", "cuda_context", b.overheads.cuda_context},
      {"overheads", "nccl", b.overheads.nccl},
      {"overheads", "workspaces", b.overheads.workspaces},
      {"overheads", "allocator", b.overheads.allocator},
      {"phases", "forward", s.forward_peak},
      {"phases", "backward", s.backward_peak},
      {"phases", "optimizer", s.optimizer_peak},
      {"total", "per_gpu_total", b.per_gpu_total},
      {"total", "gpu_capacity", b.capacity},
      {"host", "offload_per_gpu", b.host_offload_per_gpu},
      {"host", "offload_per_node", host_offload_per_node(r.resolved.config, b).bytes},
  };
}

// Host RAM per GPU and per node: what the job's memory request (--mem) must cover.
void host_ram_rows(std::ostream& out, const Config& c, const Breakdown& b) {
  const HostOffloadNode node = host_offload_per_node(c, b);
  out << "host RAM for offload\n";
  row(out, "per GPU", b.host_offload_per_gpu);
  row(out, "per node", node.bytes,
      counted(node.gpus, "GPU") + (node.assumed ? " per node assumed (gpus_per_node not given)" : " on a node"));
}

}  // namespace

void print_estimate_table(std::ostream& out, const Response& r) {
  const Config& c = r.resolved.config;
  const Breakdown& b = r.breakdown;
  out << model_text(c) << " on " << c.num_gpus << " x "
      << c.gpu_name << ", seq " << c.seq_length << ", micro-batch " << c.micro_batch << ", " << precision_text(c)
      << " " << to_string(c.optimizer) << ", ZeRO-" << c.zero_stage << " (" << to_string(c.sharding)
      << "), recompute " << to_string(c.recompute)
      << (c.recompute_every > 1 ? " every " + std::to_string(c.recompute_every) : std::string())
      << (c.adapter != Adapter::kNone ? std::string(", ") + to_string(c.adapter) + " r" + std::to_string(c.lora_rank) : std::string())
      << (c.framework != Framework::kGeneric ? std::string(", framework ") + to_string(c.framework) : std::string()) << ", tp " << c.tp << " pp " << c.pp << " cp " << c.cp << "\n";
  out << "parameters: " << fixed(std::round(b.params.total) / 1e9, 3) << " B total, "
      << fixed(std::round(b.params_on_gpu) / 1e9, 3) << " B on this GPU before sharding; "
      << fixed(round4(b.bytes_per_param), 1) << " B/param of model states\n\n";
  const char* current = "";
  for (const Line& line : lines(r)) {
    if (std::string(line.section) == "total" || std::string(line.section) == "host") continue;
    if (std::string(current) != line.section) {
      current = line.section;
      out << current << (std::string(current) == "phases" ? " (tensor bytes; peak = max)" : "") << "\n";
    }
    if (line.bytes == 0 && std::string(current) != "phases") continue;
    std::string note;
    if (std::string(line.key) == "layers") {
      note = fixed(gib4(b.stage.activations.per_layer), 3) + " GiB x " +
             fixed(round4(b.stage.activations.inflight_layers), 2) + " layer-microbatches (" + b.critical_stage + " stage)";
    }
    if (std::string(current) == "phases" && std::string(line.key) == b.stage.peak_phase) note = "<- peak";
    row(out, line.key, line.bytes, note);
  }
  if (b.host_offload_per_gpu > 0) host_ram_rows(out, c, b);
  out << "\n";
  row(out, "PEAK PER GPU", b.per_gpu_total,
      "of " + fixed(gib4(b.capacity)) + " GiB (" + fixed(100.0 * b.per_gpu_total / b.capacity, 0) + "%)");
  // What the user's own logs will show (breakdown.measures), for holding trainfit to them.
  out << "  your logs: max_memory_allocated " << fixed(gib4(b.measures.max_memory_allocated))
      << ", max_memory_reserved " << fixed(gib4(b.measures.max_memory_reserved)) << ", nvidia-smi "
      << fixed(gib4(b.measures.nvidia_smi)) << " GiB (the fit compares the nvidia-smi figure)\n";
  out << "  min_gpus_to_fit                     "
      << (r.min_gpus.gpus > 0 ? min_gpus_text(c, r.min_gpus.gpus) : "none: " + r.min_gpus.reason) << "\n";
  out << "    counted as                        " << min_gpus_rule(c) << "\n";
  out << "  global_batch                        " << counted(r.global_batch, "sequence") << "\n";
  if (!r.advice.empty()) {
    out << "\nadvice (cheapest first):\n";
    for (const Advice& a : r.advice) {
      char buffer[240];
      std::snprintf(buffer, sizeof buffer, "  %-34s %10s GiB   %s\n", cli_flags(a.changes).c_str(), fixed(round4(a.per_gpu_gb)).c_str(),
                    a.fits ? "fits" : "still OOM");
      out << buffer;
    }
  }
  if (!r.resolved.assumptions.empty()) {
    out << "\nassumed: ";
    for (size_t i = 0; i < r.resolved.assumptions.size(); ++i) out << (i ? "; " : "") << r.resolved.assumptions[i];
    out << "\n";
  }
  out << "\n" << verdict(r, cli_flags) << "\n";
}

void print_estimate_csv(std::ostream& out, const Response& r) {
  out << "section,item,gib\n";
  for (const Line& line : lines(r)) out << line.section << "," << line.key << "," << fixed(gib4(line.bytes), 4) << "\n";
  out << "result,min_gpus_to_fit," << r.min_gpus.gpus << "\n";
  out << "result,fits," << (r.breakdown.fits ? 1 : 0) << "\n";
}

void print_sweep_table(std::ostream& out, const Response& r, bool gpus, bool seq) {
  if (gpus) {
    out << "per-GPU memory vs GPU count (seq " << r.resolved.config.seq_length << ")\n";
    out << "  num_gpus  per_gpu_gib  model_state_gib  activation_gib  fits\n";
    for (const GpuPoint& p : r.mem_vs_gpus) {
      char buffer[160];
      std::snprintf(buffer, sizeof buffer, "  %8lld  %11.2f  %15.2f  %14.2f  %s\n", static_cast<long long>(p.num_gpus),
                    p.per_gpu_gb, p.model_state_gb, p.activation_gb, p.fits ? "yes" : "no");
      out << buffer;
    }
  }
  if (seq) {
    if (gpus) out << "\n";
    out << "per-GPU memory vs sequence length (" << counted(r.resolved.config.num_gpus, "GPU") << ")\n";
    out << "  seq_length  per_gpu_gib  activation_gib  fits\n";
    for (const SeqPoint& p : r.mem_vs_seq) {
      char buffer[160];
      std::snprintf(buffer, sizeof buffer, "  %10lld  %11.2f  %14.2f  %s\n", static_cast<long long>(p.seq_length),
                    p.per_gpu_gb, p.activation_gb, p.fits ? "yes" : "no");
      out << buffer;
    }
  }
}

void print_sweep_csv(std::ostream& out, const Response& r, bool gpus, bool seq) {
  out << "sweep,num_gpus,seq_length,per_gpu_gib,model_state_gib,activation_gib,fits\n";
  const Config& c = r.resolved.config;
  if (gpus) {
    for (const GpuPoint& p : r.mem_vs_gpus) {
      out << "gpus," << p.num_gpus << "," << c.seq_length << "," << fixed(p.per_gpu_gb, 4) << ","
          << fixed(p.model_state_gb, 4) << "," << fixed(p.activation_gb, 4) << "," << (p.fits ? 1 : 0) << "\n";
    }
  }
  if (seq) {
    for (const SeqPoint& p : r.mem_vs_seq) {
      out << "seq," << c.num_gpus << "," << p.seq_length << "," << fixed(p.per_gpu_gb, 4) << ","
          << fixed(r.breakdown.stage.states.total() / kGiB, 4) << "," << fixed(p.activation_gb, 4) << ","
          << (p.fits ? 1 : 0) << "\n";
    }
  }
}

void print_models(std::ostream& out, bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const ModelPreset& m : model_catalog()) {
      const Geometry& g = m.geometry;
      list.push_back({{"name", m.name}, {"aliases", m.aliases}, {"hf_ids", m.hf_ids},
                      {"description", m.description}, {"parameters", static_cast<long long>(count_parameters(g).total)}, {"num_layers", g.layers},
                      {"hidden_dim", g.hidden}, {"num_heads", g.heads}, {"num_kv_heads", g.kv_heads},
                      {"ffn_hidden", g.ffn}, {"vocab_size", g.vocab}, {"num_experts", g.experts},
                      {"source", m.source}});
    }
    out << list.dump(2) << "\n";
    return;
  }
  out << "name                 params(B)  layers  hidden  heads  kv  ffn     vocab   description\n";
  for (const ModelPreset& m : model_catalog()) {
    const Geometry& g = m.geometry;
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, "%-20s %9.3f  %6lld  %6lld  %5lld  %3lld  %-6lld  %-6lld  %s\n",
                  m.name.c_str(), count_parameters(g).total / 1e9, static_cast<long long>(g.layers),
                  static_cast<long long>(g.hidden), static_cast<long long>(g.heads),
                  static_cast<long long>(g.kv_heads), static_cast<long long>(g.experts ? g.moe_ffn : g.ffn),
                  static_cast<long long>(g.vocab), m.description.c_str());
    out << buffer;
  }
}

void print_gpus(std::ostream& out, bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const GpuSpec& g : gpu_catalog()) {
      list.push_back({{"name", g.name}, {"aliases", g.aliases}, {"description", g.description},
                      {"capacity_bytes", static_cast<long long>(g.capacity_bytes)},
                      {"capacity_gb", g.capacity_bytes / kGiB}, {"source", g.source}});
    }
    out << list.dump(2) << "\n";
    return;
  }
  out << "name        capacity(GiB)  description                               aliases\n";
  for (const GpuSpec& g : gpu_catalog()) {
    std::string aliases;
    for (const std::string& a : g.aliases) aliases += (aliases.empty() ? "" : ",") + a;
    char buffer[320];
    std::snprintf(buffer, sizeof buffer, "%-11s %13.2f  %-41s %s\n", g.name.c_str(), g.capacity_bytes / kGiB,
                  g.description.c_str(), aliases.c_str());
    out << buffer;
  }
}

void print_fields(std::ostream& out, bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const FieldSpec& f : request_fields()) {
      list.push_back({{"name", f.name}, {"flag", std::string("--") + f.flag}, {"accepted", f.accepted}, {"help", f.help}});
    }
    out << list.dump(2) << "\n";
    return;
  }
  out << "| JSON field | CLI flag | accepted | meaning |\n|---|---|---|---|\n";
  for (const FieldSpec& f : request_fields()) {
    out << "| `" << f.name << "` | `--" << f.flag << "` | " << f.accepted << " | " << f.help << " |\n";
  }
}

}  // namespace trainfit::cli
