// trainfit policy: the sizing matrix administrators post for their users — models x GPU
// types x sequence lengths (x recompute x framework) -> min_gpus_to_fit and the per-GPU
// peak at that count, as table, CSV, JSON or self-contained HTML (docs/charts.md).
// With --partition it applies that partition's trainfit.conf rules (headroom,
// gpus_per_node, default_gpu, gpu_alias) exactly as the job_submit plugin does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command_options.h"
#include "plot_command.h"
#include "request_options.h"
#include "trainfit/admission.h"
#include "trainfit/estimate.h"
#include "trainfit/plot.h"
#include "trainfit/util/file.h"
#include "trainfit/util/counted.h"

namespace po = boost::program_options;

namespace trainfit::cli {
namespace {

constexpr int kDone = 0, kBadInput = 2;
constexpr const char* kDefaultConf = "/etc/slurm/trainfit.conf";

int fail(const std::string& message) {
  std::cerr << "trainfit: " << message << "\n";
  return kBadInput;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, end - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

// The values of one axis of the matrix: the list option, else the request flag(s) (which
// take a comma list here too), else one unset value ("").
std::vector<std::string> axis_values(const po::variables_map& vm, const char* list, std::vector<const char*> singles) {
  if (list != nullptr && vm.count(list)) return split_list(vm[list].as<std::string>());
  for (const char* key : singles) {
    if (vm.count(key)) return split_list(vm[key].as<std::string>());
  }
  return {""};
}

// The partition's rules, when trainfit.conf is read (--partition or an explicit --conf).
struct Site {
  std::optional<admission::Policy> policy;
  admission::PartitionPolicy rules;
  std::string conf, partition;
};

Result<Site> load_site(const po::variables_map& vm) {
  Site site;
  const bool wanted = vm.count("partition") || !vm["conf"].defaulted();
  if (!wanted) return site;
  site.conf = vm["conf"].as<std::string>();
  site.partition = vm.count("partition") ? vm["partition"].as<std::string>() : "";
  Result<std::string> text = read_regular_file(site.conf, admission::kMaxConfBytes);
  if (!text) return file_problem("conf", site.conf, text.error().code, text.error().reason);
  // As slurmctld applies it: with slurm.conf's facts (the partition's GPU types, its default).
  Result<admission::AssembledPolicy> assembled = admission::assemble_policy(
      text.value(), admission::slurm_conf_text(admission::slurm_conf_path()), admission::passwd_uid);
  if (!assembled) return make_error(assembled.error().code, "conf", site.conf + ": " + assembled.error().message);
  site.policy = std::move(assembled->policy);
  if (!site.partition.empty() && site.policy->partitions.count(site.partition) == 0 &&
      site.partition != site.policy->default_partition) {
    std::cerr << "trainfit: note: " << site.conf << " has no partition." << site.partition
              << ".* keys; its top-level rules apply\n";
  }
  site.rules = site.policy->for_partition(site.partition);
  return site;
}

struct Cell {
  std::string model, gpu, seq, recompute, framework;  // as asked; "" = the request's own
};

struct Row {
  Cell cell;
  std::string model, gpu;
  int64_t seq_length = 0;
  int64_t min_gpus = 0;  // 0 = none fits (at the partition's resize_to bound)
  // The uncertain band: GPU counts from `runs_from` (the fewest the partition does not refuse,
  // refuse_when) up to below `high_fits_from` (the fewest where the likely high end fits), where
  // a job is warned with its range; 0: none found.
  int64_t runs_from = 0, high_fits_from = 0;
  std::string reason;
  int64_t gpus_per_node = 0, nodes = 0;
  double per_gpu_gb = 0, capacity_gb = 0;  // at min_gpus (capacity with the partition's headroom)
};

Result<Request> cell_request(const Request& base, const Cell& cell, const Site& site) {
  Request q = base;
  for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"model", &cell.model},
                                     {"seq_length", &cell.seq}, {"recompute", &cell.recompute},
                                     {"framework", &cell.framework}}) {
    if (value->empty()) continue;
    Result<bool> set = set_field_from_text(q, field, *value);
    if (!set) return set.error();
  }
  if (site.policy) {  // GPU types as the site names them (gpu_alias), the partition's layout
    Result<const GpuSpec*> gpu = admission::catalog_gpu(*site.policy, cell.gpu.empty() ? site.rules.default_gpu : cell.gpu);
    if (!gpu) return make_error(gpu.error().code, "gpu", gpu.error().message);
    q.gpu = gpu.value()->name;
    q.gpu_memory_gb.reset();
    q.gpus_per_node = site.rules.gpus_per_node;
  } else if (!cell.gpu.empty()) {
    Result<bool> set = set_field_from_text(q, "gpu", cell.gpu);
    if (!set) return set.error();
  }
  if (!q.num_gpus) q.num_gpus = smallest_layout(q);  // as `trainfit min-gpus` does
  if (site.policy) q.fit_bound = to_string(site.rules.resize_to);  // what job_submit finds min_gpus_to_fit for
  return q;
}

// The fewest GPUs at which `bound` fits (0: none).
Result<int64_t> min_gpus_at(Request q, FitBound bound, double headroom) {
  q.fit_bound = to_string(bound);
  Result<Response> r = admission::local_estimator().predict(q, headroom, true);
  if (!r) return r.error();
  return r->min_gpus.gpus;
}

// The GPU counts job_submit warns on rather than refuses or passes in silence (docs/slurm.md,
// "Deciding on the likely range").
Result<bool> uncertain_band(const Request& q, const Site& site, Row* row) {
  const double headroom = site.policy ? site.rules.headroom : 0.0;
  const FitBound refused_on = site.rules.refuse_when == admission::RefuseWhen::kCertain ? FitBound::kLikelyLow : FitBound::kPoint;
  Result<int64_t> runs = min_gpus_at(q, refused_on, headroom);
  if (!runs) return runs.error();
  Result<int64_t> high = min_gpus_at(q, FitBound::kLikelyHigh, headroom);
  if (!high) return high.error();
  row->runs_from = runs.value();
  row->high_fits_from = high.value();
  return true;
}

// True when some GPU count is warned: it runs there, and the high end does not fit yet.
bool has_band(const Row& r) { return r.runs_from > 0 && (r.high_fits_from == 0 || r.high_fits_from > r.runs_from); }

// "8-15", "8+" (the high end fits at no count), "-".
std::string band_text(const Row& r) {
  if (!has_band(r)) return "-";
  if (r.high_fits_from == 0) return std::to_string(r.runs_from) + "+";
  return std::to_string(r.runs_from) + "-" + std::to_string(r.high_fits_from - 1);
}

// min_gpus_to_fit as `trainfit min-gpus` (and, with a partition, job_submit) finds it,
// then the prediction at that count.
Result<Row> evaluate(const Request& base, const Cell& cell, const Site& site) {
  Result<Request> q = cell_request(base, cell, site);
  if (!q) return q.error();
  const admission::Estimator& estimator = admission::local_estimator();
  const double headroom = site.policy ? site.rules.headroom : 0.0;
  Result<Response> asked = estimator.predict(q.value(), headroom, true);
  if (!asked) return asked.error();
  Row row;
  row.cell = cell;
  const Config& c = asked->resolved.config;
  row.model = c.model_name.empty() ? "custom" : c.model_name;
  row.gpu = gpu_label(c);
  row.seq_length = c.seq_length;
  row.gpus_per_node = c.gpus_per_node;
  row.min_gpus = asked->min_gpus.gpus;
  row.reason = asked->min_gpus.reason;
  row.capacity_gb = asked->breakdown.capacity / kGiB;
  Result<bool> band = uncertain_band(q.value(), site, &row);
  if (!band) return band.error();
  if (row.min_gpus == 0) return row;
  Request at_min = q.value();
  at_min.num_gpus = row.min_gpus;
  Result<Response> fitted = row.min_gpus == c.num_gpus ? asked : estimator.predict(at_min, headroom, false);
  if (!fitted) return fitted.error();
  row.per_gpu_gb = fitted->breakdown.per_gpu_total / kGiB;
  row.capacity_gb = fitted->breakdown.capacity / kGiB;
  row.nodes = row.gpus_per_node > 0 ? (row.min_gpus + row.gpus_per_node - 1) / row.gpus_per_node : 0;  // 0: layout not given
  return row;
}

std::string fixed1(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

std::string shown(const std::string& asked) { return asked.empty() ? "default" : asked; }

std::vector<std::string> columns(const Row& r) {
  const bool fits = r.min_gpus > 0;
  return {r.model, r.gpu, std::to_string(r.seq_length), shown(r.cell.recompute), shown(r.cell.framework),
          fits ? std::to_string(r.min_gpus) : "none", fits && r.nodes > 0 ? std::to_string(r.nodes) : "-",
          fits ? fixed1(r.per_gpu_gb) : "-", fixed1(r.capacity_gb), band_text(r)};
}

const std::vector<std::string> kHeader = {"model", "gpu", "seq_length", "recompute", "framework",
                                          "min_gpus_to_fit", "nodes", "per_gpu_gb", "capacity_gb", "uncertain_gpus"};

std::string scope(const Site& site) {
  if (!site.policy) return "no partition policy (full HBM usable)";
  return "partition " + (site.partition.empty() ? std::string("(default)") : site.partition) + " of " + site.conf +
         ": headroom " + fixed1(100.0 * site.rules.headroom) + "% of HBM, " + counted(site.rules.gpus_per_node, "GPU") +
         " per node";
}

void print_table(std::ostream& out, const std::vector<Row>& rows, const Site& site) {
  std::vector<size_t> width(kHeader.size());
  std::vector<std::vector<std::string>> cells = {kHeader};
  for (const Row& r : rows) cells.push_back(columns(r));
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  out << "trainfit policy: " << scope(site) << "\n";
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) {
      out << (i ? "  " : "") << (i >= 5 ? std::right : std::left) << std::setw(static_cast<int>(width[i])) << line[i];
    }
    out << "\n";
  }
  for (const Row& r : rows) {
    if (r.min_gpus == 0) out << r.model << " on " << r.gpu << " at seq " << r.seq_length << ": " << r.reason << "\n";
  }
  const auto banded = std::count_if(rows.begin(), rows.end(), has_band);
  out << "uncertain band: " << banded << " of " << rows.size() << " row" << (rows.size() == 1 ? "" : "s")
      << " warned, not refused, on the GPU counts in uncertain_gpus (refuse_when=" << to_string(site.rules.refuse_when)
      << ", resize_to=" << (site.rules.resize_to == FitBound::kLikelyHigh ? "high" : "point") << ")\n";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void print_csv(std::ostream& out, const std::vector<Row>& rows) {
  for (size_t i = 0; i < kHeader.size(); ++i) out << (i ? "," : "") << kHeader[i];
  out << ",reason\n";
  for (const Row& r : rows) {
    const std::vector<std::string> line = columns(r);
    for (size_t i = 0; i < line.size(); ++i) out << (i ? "," : "") << csv_field(line[i] == "-" ? "" : line[i]);
    out << "," << csv_field(r.reason) << "\n";
  }
}

double round4(double v) { return std::round(v * 1e4) / 1e4; }

void print_json(std::ostream& out, const std::vector<Row>& rows, const Site& site) {
  nlohmann::ordered_json j;
  j["conf"] = site.policy ? nlohmann::ordered_json(site.conf) : nlohmann::ordered_json(nullptr);
  j["partition"] = site.policy ? nlohmann::ordered_json(site.partition) : nlohmann::ordered_json(nullptr);
  j["headroom"] = site.policy ? site.rules.headroom : 0.0;
  j["refuse_when"] = to_string(site.rules.refuse_when);
  j["resize_to"] = site.rules.resize_to == FitBound::kLikelyHigh ? "high" : "point";
  j["rows"] = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    nlohmann::ordered_json row;
    row["model"] = r.model;
    row["gpu"] = r.gpu;
    row["seq_length"] = r.seq_length;
    row["recompute"] = r.cell.recompute.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.cell.recompute);
    row["framework"] = r.cell.framework.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.cell.framework);
    if (r.gpus_per_node > 0) row["gpus_per_node"] = r.gpus_per_node;
    if (r.min_gpus > 0) {
      row["min_gpus_to_fit"] = r.min_gpus;
      if (r.nodes > 0) row["nodes"] = r.nodes;
      row["per_gpu_gb"] = round4(r.per_gpu_gb);
    } else {
      row["min_gpus_to_fit"] = nullptr;
      row["reason"] = r.reason;
    }
    row["capacity_gb"] = round4(r.capacity_gb);
    if (has_band(r)) {
      row["uncertain_gpus"] = {{"from", r.runs_from},
                               {"to", r.high_fits_from > 0 ? nlohmann::ordered_json(r.high_fits_from - 1) : nlohmann::ordered_json(nullptr)}};
    } else {
      row["uncertain_gpus"] = nullptr;
    }
    j["rows"].push_back(row);
  }
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

// min_gpus_to_fit against sequence length, one line per model/GPU/recompute/framework.
std::string matrix_chart(const std::vector<Row>& rows) {
  static const char* const kColors[] = {"#1f4e9c", "#d9730d", "#2a9d5c", "#c0392b", "#8e6bbf", "#6f7c85", "#b5651d", "#17a2b8"};
  std::map<std::string, size_t> index;
  plot::LineChart chart;
  chart.id = "policy";
  chart.title = "min_gpus_to_fit vs sequence length";
  chart.subtitle = "one line per model, GPU, recompute and framework; missing points: no GPU count fits";
  double lo = 0, hi = 0, top = 1;
  for (const Row& r : rows) {
    if (r.min_gpus == 0) continue;
    const std::string key = r.model + " " + r.gpu + (r.cell.recompute.empty() ? "" : " " + r.cell.recompute) +
                            (r.cell.framework.empty() ? "" : " " + r.cell.framework);
    if (!index.count(key)) {
      index[key] = chart.lines.size();
      plot::Line line;
      line.role = "cell-" + std::to_string(chart.lines.size());
      line.legend = chart.lines.size() < 12 ? key : "";
      line.color = kColors[chart.lines.size() % (sizeof kColors / sizeof kColors[0])];
      chart.lines.push_back(line);
    }
    const double s = static_cast<double>(r.seq_length);
    chart.lines[index[key]].points.push_back({s, static_cast<double>(r.min_gpus)});
    lo = lo == 0 ? s : std::min(lo, s);
    hi = std::max(hi, s);
    top = std::max(top, static_cast<double>(r.min_gpus));
  }
  if (chart.lines.empty() || hi <= lo) return "";
  for (plot::Line& line : chart.lines) {
    std::sort(line.points.begin(), line.points.end(), [](const plot::Point& a, const plot::Point& b) { return a.x < b.x; });
  }
  chart.x.label = "sequence length (tokens, log scale)";
  chart.x.scale = plot::Scale::kLog;
  chart.x.binary_ticks = true;
  chart.x.min = lo;
  chart.x.max = hi;
  chart.y.label = "min_gpus_to_fit (GPUs)";
  chart.y.min = 0;
  chart.y.max = top * 1.1;
  std::string svg = plot::svg_document({plot::render_panel(chart)}, chart.title);
  return svg.substr(svg.find('\n') + 1);  // no XML declaration inside HTML
}

void print_html(std::ostream& out, const std::vector<Row>& rows, const Site& site) {
  using plot::escape_xml;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<title>GPU sizing: min_gpus_to_fit</title>\n<style>\n"
         "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:14px;color:#111;margin:24px;max-width:980px}\n"
         "h1{font-size:20px}p{color:#444}table{border-collapse:collapse;margin:16px 0}\n"
         "th,td{border:1px solid #ccc;padding:4px 10px;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
         "th{background:#f0f3f8}tr.none td{color:#a33}svg{max-width:100%;height:auto}\n"
         "</style>\n</head>\n<body>\n<h1>GPU sizing: the fewest GPUs at which a training step fits</h1>\n";
  out << "<p>" << escape_xml(scope(site)) << ". Per-GPU memory is the predicted peak (nvidia-smi) at min_gpus_to_fit, "
         "in GiB (2<sup>30</sup> bytes). Computed by trainfit " TRAINFIT_VERSION ".</p>\n<table>\n<tr>";
  for (const std::string& h : kHeader) out << "<th>" << escape_xml(h) << "</th>";
  out << "</tr>\n";
  for (const Row& r : rows) {
    const std::vector<std::string> line = columns(r);
    out << (r.min_gpus > 0 ? "<tr>" : "<tr class=\"none\" title=\"" + escape_xml(r.reason) + "\">");
    for (size_t i = 0; i < line.size(); ++i) out << (i >= 5 || i == 2 ? "<td class=\"n\">" : "<td>") << escape_xml(line[i]) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n" << matrix_chart(rows) << "</body>\n</html>\n";
}

}  // namespace

int run_policy(int argc, char** argv) {
  po::options_description visible = help_group("options");
  po::options_description hidden;
  po::options_description matrix = help_group("matrix (each list's values, one row per combination)");
  po::options_description output = help_group("output");
  visible.add_options()("help,h", "show this help");
  matrix.add_options()(
      "models", po::value<std::string>()->value_name("LIST"), "models, comma-separated (default: --model)")(
      "gpu-types", po::value<std::string>()->value_name("LIST"),
      "GPU types, comma-separated; site names through gpu_alias with --partition (default: --gpu, or the partition's default_gpu)")(
      "seqs", po::value<std::string>()->value_name("LIST"), "sequence lengths, comma-separated (default: --seq)")(
      "partition", po::value<std::string>()->value_name("P"),
      "apply this partition's trainfit.conf rules: headroom, gpus_per_node, default_gpu, gpu_alias")(
      "conf", po::value<std::string>()->default_value(kDefaultConf)->value_name("PATH"), "trainfit.conf to read");
  output.add_options()("format", po::value<std::string>()->default_value("table"), "table|csv|json|html");
  visible.add(matrix).add(output);
  hidden.add_options()("gpus-types", po::value<std::string>(), "");
  add_request_options(visible, hidden);
  po::variables_map vm;
  int exit_code = kDone;
  if (!parse_command(argc, argv, visible, hidden, vm, &exit_code)) return exit_code;
  const std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "csv" && format != "json" && format != "html") {
    return fail("format='" + format + "' is not valid; accepted: table|csv|json|html");
  }
  const std::vector<std::string> models = axis_values(vm, "models", {"model"});
  const std::vector<std::string> gpus = axis_values(vm, vm.count("gpu-types") ? "gpu-types" : "gpus-types", {"gpu"});
  const std::vector<std::string> seqs = axis_values(vm, "seqs", {"seq", "seq_length"});
  const std::vector<std::string> recomputes = axis_values(vm, nullptr, {"recompute"});
  const std::vector<std::string> frameworks = axis_values(vm, nullptr, {"framework"});

  // The rest of the request, as for estimate: the matrix's axes are set per cell.
  po::variables_map rest = vm;
  for (const char* key : {"model", "gpu", "seq", "seq_length", "recompute", "framework"}) rest.erase(key);
  std::vector<std::string> notes;
  Result<Request> base = request_from_options(rest, &notes);
  if (!base) return fail(base.error().message);
  for (const std::string& note : notes) std::cerr << "trainfit: note: " << note << "\n";
  Result<Site> site = load_site(vm);
  if (!site) return fail(site.error().message);

  std::vector<Row> rows;
  for (const std::string& model : models) {
    for (const std::string& gpu : gpus) {
      for (const std::string& seq : seqs) {
        for (const std::string& recompute : recomputes) {
          for (const std::string& framework : frameworks) {
            Result<Row> row = evaluate(base.value(), {model, gpu, seq, recompute, framework}, site.value());
            if (!row) return fail(row.error().message);
            rows.push_back(std::move(row).value());
          }
        }
      }
    }
  }
  if (format == "csv") print_csv(std::cout, rows);
  else if (format == "json") print_json(std::cout, rows, site.value());
  else if (format == "html") print_html(std::cout, rows, site.value());
  else print_table(std::cout, rows, site.value());
  return kDone;
}

}  // namespace trainfit::cli
