// The HTML report: one self-contained page (inline CSS, no scripts, no external assets),
// written as well-formed XHTML-style markup so that an XML parser can check it.
#include "render.h"

#include "trainfit/plot.h"
#include "trainfit/util/counted.h"

namespace trainfit::cli::report {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;background:#f6f7f9;margin:0}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dde5;padding-bottom:4px}
p.meta{color:#5b6678;margin:2px 0}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid #d8dde5;border-radius:8px;padding:10px 14px;min-width:120px}
.card b{display:block;font-size:22px}.card span{color:#5b6678;font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card.reject b{color:#b42318}.card.warn b{color:#b54708}.card.resize b{color:#175cd3}.card.accept b{color:#067647}
table{border-collapse:collapse;background:#fff;border:1px solid #d8dde5;margin:4px 0 8px;width:100%}
th,td{padding:5px 10px;border-bottom:1px solid #eceff3;text-align:right;white-space:nowrap}
th{background:#eef1f5;font-weight:600}th:first-child,td:first-child{text-align:left}
th.text{text-align:left}td.text{text-align:left;white-space:normal;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
tr:nth-child(even) td{background:#fafbfc}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}
)";

class Page {
 public:
  explicit Page(std::ostream& out) : out_(out) {}
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
             size_t text_columns = 1) {
    out_ << "<table><thead><tr>";
    for (size_t i = 0; i < header.size(); ++i) out_ << (i > 0 && i < text_columns ? "<th class=\"text\">" : "<th>") << plot::escape_xml(header[i]) << "</th>";
    out_ << "</tr></thead><tbody>\n";
    for (const auto& row : rows) {
      out_ << "<tr>";
      for (size_t i = 0; i < row.size(); ++i) out_ << (i > 0 && i < text_columns ? "<td class=\"text\">" : "<td>") << plot::escape_xml(row[i]) << "</td>";
      out_ << "</tr>\n";
    }
    if (rows.empty()) out_ << "<tr><td colspan=\"" << header.size() << "\">none</td></tr>\n";
    out_ << "</tbody></table>\n";
  }
  // css colours the figure only when it is not zero: a zero needs no one's attention.
  void card(const char* css, const std::string& label, const std::string& value, bool zero = false) {
    out_ << "<div class=\"card" << (zero || *css == '\0' ? "" : std::string(" ") + css) << "\"><b>" << plot::escape_xml(value) << "</b><span>" << plot::escape_xml(label) << "</span></div>";
  }
  std::ostream& out() { return out_; }

 private:
  std::ostream& out_;
};

std::vector<std::string> counts_header(const std::string& first) {
  std::vector<std::string> h = {first, "records", "checked"};
  for (int a = 0; a < kActions; ++a) h.push_back(to_string(Action(a)));
  h.push_back("oom");
  h.push_back("uncertain");
  return h;
}

std::vector<std::string> counts_row(const std::string& key, const Counts& c) {
  std::vector<std::string> row = {key, std::to_string(c.records), std::to_string(c.checked())};
  for (int a = 0; a < kActions; ++a) row.push_back(std::to_string(c.of(Action(a))));
  row.push_back(std::to_string(c.oom));
  row.push_back(std::to_string(c.uncertain));
  return row;
}

void head(const Report& r, Page& page) {
  std::ostream& out = page.out();
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>"
         "<title>trainfit audit report</title><style>"
      << kStyle << "</style></head>\n<body><main>\n<h1>trainfit audit report</h1>\n";
  out << "<p class=\"meta\">Period: " << plot::escape_xml(period_text(r)) << "</p>\n";
  const InputStats& in = r.input;
  out << "<p class=\"meta\">Read " << counted(static_cast<int64_t>(in.files.size()), "file") << ", "
      << counted(in.lines, "line") << ": " << counted(in.records, "record") << " in the period, " << in.outside_window
      << " outside it; skipped " << counted(in.malformed, "malformed line") << ", " << counted(in.oversize, "line")
      << " over 1 MiB.</p>\n";
  out << "<p class=\"meta\">" << plot::escape_xml(confirmation_text(in)) << "</p>\n";
}

void cards(const Report& r, Page& page) {
  page.out() << "<div class=\"cards\">";
  auto count = [&](const char* label, Action a) {  // styled by the action's word
    page.card(to_string(a), label, std::to_string(r.totals.of(a)), r.totals.of(a) == 0);
  };
  page.card("", "checked", std::to_string(r.totals.checked()));
  count("accepted", Action::kAccept);
  count("warned", Action::kWarn);
  count("rejected", Action::kReject);
  count("resized", Action::kResize);
  page.card("", "exempt / unchecked",
            std::to_string(r.totals.of(Action::kExempt)) + " / " + std::to_string(r.totals.of(Action::kUnchecked)));
  // Saved hours are good news, never an alarm; hours at risk (warned jobs that ran) are.
  page.card("", "GPU-hours saved", shown_hours(r.rejected.gpu_hours));
  page.card(to_string(Action::kWarn), "GPU-hours at risk", shown_hours(r.warned.gpu_hours), r.warned.gpu_hours == 0);
  page.card(to_string(Action::kResize), "GPUs added by resizes", std::to_string(r.gpus_added_by_resize), r.gpus_added_by_resize == 0);
  page.out() << "</div>\n";
}

std::vector<std::string> oom_row(const std::string& what, const OomGpus& g) {
  return {what, std::to_string(g.jobs), std::to_string(g.gpus_requested), std::to_string(g.gpus_needed),
          std::to_string(g.no_fit), std::to_string(g.with_time_limit), shown_hours(g.gpu_hours)};
}

void gpus(const Report& r, Page& page) {
  page.out() << "<h2>GPUs requested and needed (jobs that do not fit)</h2>\n";
  page.table({"", "jobs", "GPUs requested", "min_gpus_to_fit (sum)", "fit on no count", "with time limit", "GPU-hours"},
             {oom_row("rejected (saved)", r.rejected), oom_row("warned (ran anyway)", r.warned)});
  page.out() << "<p class=\"meta\">Resized: " << counted(r.resized, "job") << ", "
             << counted(r.gpus_added_by_resize, "GPU") << " added. GPU-hours count only jobs submitted with a time limit "
             << "(GPUs requested &#215; time limit: an upper bound).</p>\n";
  page.out() << "<h2>Host RAM for offload</h2>\n<p class=\"meta\">" << plot::escape_xml(host_ram_text(r.host_ram))
             << "</p>\n";
}

void tops(const Report& r, Page& page) {
  page.out() << "<h2>Most frequent configurations that would run out of memory</h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const OomConfig& c : r.top_oom_configs) {
    rows.push_back({c.model, c.config.empty() ? "-" : c.config, c.gpu, std::to_string(c.gpus), std::to_string(c.count),
                    std::to_string(c.rejected), std::to_string(c.warned), c.min_gpus ? std::to_string(*c.min_gpus) : "none"});
  }
  page.table({"model", "config", "GPU", "GPUs", "count", "rejected", "warned", "min_gpus_to_fit"}, rows, 2);
  page.out() << "<h2>Most common advice</h2>\n";
  rows.clear();
  for (const AdviceCount& a : r.top_advice) rows.push_back({a.advice, std::to_string(a.count)});
  page.table({"cheapest change that fits on the GPUs asked for", "count"}, rows);
}

}  // namespace

void render_html(const Report& r, std::ostream& out) {
  Page page(out);
  head(r, page);
  cards(r, page);
  page.out() << "<h2>Decisions</h2>\n";
  page.table(counts_header(""), {counts_row("all", r.totals)});
  for (size_t i = 0; i < std::size(kDimensions); ++i) {
    page.out() << "<h2>By " << to_string(kDimensions[i]) << "</h2>\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& [key, counts] : r.by[i]) rows.push_back(counts_row(key, counts));
    page.table(counts_header(to_string(kDimensions[i])), rows);
  }
  gpus(r, page);
  tops(r, page);
  out << "<p class=\"meta\">Numbers are defined in trainfit's docs/report.md.</p>\n</main></body></html>\n";
}

}  // namespace trainfit::cli::report
