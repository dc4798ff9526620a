// trainfit plot: the seed's three charts of one request as SVG (or PNG through librsvg's
// rsvg-convert), written atomically (docs/charts.md).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "command_options.h"
#include "plot_command.h"
#include "request_options.h"
#include "trainfit/estimate.h"
#include "trainfit/plot.h"

extern char** environ;

namespace po = boost::program_options;

namespace trainfit::cli {
namespace {

constexpr int kWritten = 0, kBadInput = 2;

int fail(const std::string& message) {
  std::cerr << "trainfit: " << message << "\n";
  return kBadInput;
}

std::string lower_extension(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

// The temporary file beside the destination, so that rename() is atomic.
std::string temporary_beside(const std::string& path, const char* suffix) {
  return path + ".tmp." + std::to_string(::getpid()) + suffix;
}

// The user's path and why it cannot be written (the temporary beside it is ours, not theirs).
Error cannot_write(const std::string& out, int error) {
  return make_error(ErrorCode::kInvalidValue, "out", "out='" + out + "': cannot be written: " + std::strerror(error));
}

// Writes text to temporary, a file beside out; errors name out.
Result<bool> write_file(const std::string& temporary, const std::string& out, const std::string& text) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return cannot_write(out, errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    done += static_cast<size_t>(n);
  }
  const int error = done < text.size() ? errno : 0;
  if (::close(fd) != 0 || error != 0) {
    const int why = error != 0 ? error : errno;
    std::remove(temporary.c_str());
    return cannot_write(out, why);
  }
  return true;
}

Result<bool> publish(const std::string& temporary, const std::string& path) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return cannot_write(path, error);
  }
  return true;
}

// rsvg-convert on the PATH, or "".
std::string find_rsvg_convert() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/rsvg-convert";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// rsvg-convert -f png -o png svg, without a shell.
Result<bool> convert_to_png(const std::string& tool, const std::string& svg, const std::string& png) {
  std::vector<std::string> args = {tool, "-f", "png", "-o", png, svg};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, tool.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    return make_error(ErrorCode::kUnavailable, "out", "cannot run " + tool);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::remove(png.c_str());
    return make_error(ErrorCode::kInternal, "out", tool + " failed to convert the chart to PNG");
  }
  return true;
}

int write_output(const std::string& out, const std::string& svg) {
  if (out == "-") {
    std::cout << svg;
    return std::cout ? kWritten : kBadInput;
  }
  const std::string ext = lower_extension(out);
  if (ext == "svg") {
    const std::string tmp = temporary_beside(out, ".svg");
    Result<bool> written = write_file(tmp, out, svg);
    if (written) written = publish(tmp, out);
    return written ? kWritten : fail(written.error().message);
  }
  const std::string tool = find_rsvg_convert();
  if (tool.empty()) {
    return fail("out='" + out + "': PNG needs rsvg-convert, which is not installed; install librsvg2-bin "
                "(apt-get install librsvg2-bin) or write --out FILE.svg");
  }
  const std::string tmp_svg = temporary_beside(out, ".svg"), tmp_png = temporary_beside(out, ".png");
  Result<bool> written = write_file(tmp_svg, out, svg);
  if (written) written = convert_to_png(tool, tmp_svg, tmp_png);
  if (written) written = publish(tmp_png, out);
  std::remove(tmp_svg.c_str());
  return written ? kWritten : fail(written.error().message);
}

}  // namespace

int run_plot(int argc, char** argv) {
  po::options_description visible = help_group("options");
  po::options_description hidden;
  po::options_description output = help_group("output");
  visible.add_options()("help,h", "show this help");
  output.add_options()(
      "out", po::value<std::string>()->value_name("FILE"),
      "where to write: FILE.svg, FILE.png (needs rsvg-convert, Debian librsvg2-bin) or - (SVG on stdout)")(
      "chart", po::value<std::string>()->default_value("all"), "gpus|seq|budget|all (all: three panels stacked)");
  visible.add(output);
  add_request_options(visible, hidden);
  po::variables_map vm;
  int exit_code = kWritten;
  if (!parse_command(argc, argv, visible, hidden, vm, &exit_code)) return exit_code;
  if (!vm.count("out")) return fail("out is required: --out FILE.svg | FILE.png | -; see 'trainfit plot --help'");
  const std::string out = vm["out"].as<std::string>();
  const std::string ext = lower_extension(out);
  if (out != "-" && ext != "svg" && ext != "png") {
    return fail("out='" + out + "' is not valid; accepted: a path ending in .svg or .png, or - for SVG on stdout");
  }
  Result<std::vector<plot::Chart>> charts = plot::parse_charts(vm["chart"].as<std::string>());
  if (!charts) return fail(charts.error().message);

  std::vector<std::string> notes;
  Result<Request> request = request_from_options(vm, &notes);
  if (!request) return fail(request.error().message);
  for (const std::string& note : notes) std::cerr << "trainfit: note: " << note << "\n";
  ResponseOptions options;
  options.advice = false;
  Result<Response> response = respond(request.value(), options);
  if (!response) return fail(response.error().message);
  const int written = write_output(out, plot::response_svg(response.value(), charts.value()));
  if (written == kWritten && out != "-") std::cout << "wrote " << out << ": " << verdict(response.value()) << "\n";
  return written;
}

}  // namespace trainfit::cli
