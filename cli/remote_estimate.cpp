#include "remote_estimate.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "command_options.h"
#include "render.h"
#include "trainfit/json.h"

namespace po = boost::program_options;

namespace trainfit::cli {
namespace {

// --cacert must be a file we can read: a typo is a usage error, not a TLS failure later.
// The response as a local run prints it, with which endpoint answered (and, on stderr,
// the endpoints that failed before it).
void print_answer(const remote::Outcome& outcome, const std::string& format, int* exit_code) {
  const remote::Answer& answer = *outcome.answer;
  ServingInfo serving;
  const Response r = response_from_json(answer.body, &serving).value();  // checked by remote::is_trainfit_answer
  const std::string by = "answered by " + answer.endpoint + " (serving_node " + serving.serving_node + ")";
  std::cerr << "trainfit: " << by << (outcome.failures.empty() ? "" : " after " + remote::describe(outcome.failures))
            << "\n";
  if (format == "json") {
    // The service writes compact JSON; printed indented, as a local run prints it. Every
    // member the service sent is kept, including any this client does not know.
    std::cout << nlohmann::ordered_json::parse(answer.body).dump(2) << "\n";
  } else if (format == "csv") {
    print_estimate_csv(std::cout, r);
  } else {
    std::cout << by << "\n";
    print_estimate_table(std::cout, r);
  }
  *exit_code = r.breakdown.fits ? 0 : 1;
}

}  // namespace

void add_client_options(po::options_description& visible) {
  po::options_description client = help_group("endpoint (ask a trainfit service)");
  client.add_options()
      ("endpoint", po::value<std::string>()->value_name("URL[,URL...]"),
       "ask these trainfit services (in order) instead of computing locally; same output (/usr/share/doc/trainfit/service.md)")
      ("connect-timeout-ms", po::value<std::string>()->value_name("MS"), "per-endpoint connect timeout [1..60000; default 500]")
      ("timeout-ms", po::value<std::string>()->value_name("MS"), "per-endpoint whole-request timeout [1..60000; default 1500]")
      ("cacert", po::value<std::string>()->value_name("FILE"), "CA certificates to verify https endpoints with [default: the system's]")
      ("endpoint-fallback", po::value<std::string>()->value_name("MODE"),
       "when no endpoint answers: compute locally, or refuse with exit code 3 [local|refuse; default: local]");
  visible.add(client);
}

Result<std::optional<remote::Settings>> client_settings(const po::variables_map& vm) {
  auto given = [&](const char* option) {
    return vm.count(option) ? std::optional<std::string>(vm[option].as<std::string>()) : std::nullopt;
  };
  return remote::parse_settings({given("endpoint"), given("connect-timeout-ms"), given("timeout-ms"), given("cacert"),
                                 given("endpoint-fallback")},
                                {"connect-timeout-ms", "timeout-ms", "endpoint-fallback",
                                 "endpoint is missing; the client options need --endpoint=URL[,URL...]"});
}

RemoteRun estimate_remotely(const remote::Settings& settings, const Request& request, const std::string& format,
                            int* exit_code) {
  std::string body;
  try {
    body = request_to_json(request);
  } catch (const std::exception&) {
    return RemoteRun::kLocal;  // text that is not UTF-8: the local run reports the field
  }
  const remote::Outcome outcome = remote::post_estimate(settings, body);
  if (outcome.answer && outcome.answer->status == 400) {
    std::cerr << "trainfit: " << remote::answer_error(*outcome.answer).message << "\n";
    *exit_code = 2;
    return RemoteRun::kPrinted;
  }
  if (outcome.answer) {
    print_answer(outcome, format, exit_code);
    return RemoteRun::kPrinted;
  }
  const bool local = settings.fallback == remote::Fallback::kLocal;
  std::cerr << "trainfit: no endpoint answered: " << remote::describe(outcome.failures) << "; "
            << (local ? "computed locally" : "refused (--endpoint-fallback=refuse)") << "\n";
  return local ? RemoteRun::kLocal : RemoteRun::kRefused;
}

}  // namespace trainfit::cli
