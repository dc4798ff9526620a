// Speed of the estimator (Google Benchmark). Run: build/bench/trainfit_bench
// Target (issue #2): a full response with both 48-point sweeps under 20 us on one core.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include "trainfit/admission.h"
#include "trainfit/estimate.h"
#include "trainfit/json.h"
#include "trainfit/request.h"

namespace {

using namespace trainfit;

Resolved resolved_of(const char* spec) {
  Request request;
  apply_key_values(request, spec);
  Result<Resolved> r = resolve(request);
  if (!r) std::abort();
  return r.value();
}

// Fits: Llama-3-70B, 64 x H100, FSDP, TP 8, seq 8192.
const char* kFits = "model=llama3-70b,num_gpus=64,gpu=h100,seq_length=8192,tensor_parallel=8,sequence_parallel=true,"
                    "sharding=fsdp-full,recompute=selective,gpus_per_node=8";
// Does not fit: Llama-3-70B on 8 x H100 at seq 8192 (advice is computed too).
const char* kOom = "model=llama3-70b,num_gpus=8,gpu=h100,seq_length=8192,zero_stage=3";

void BM_Estimate(benchmark::State& state) {
  const Config c = resolved_of(kFits).config;
  for (auto _ : state) benchmark::DoNotOptimize(estimate(c));
}
BENCHMARK(BM_Estimate);

void BM_MinGpusToFit(benchmark::State& state) {
  const Config c = resolved_of(kOom).config;
  for (auto _ : state) benchmark::DoNotOptimize(min_gpus_to_fit(c));
}
BENCHMARK(BM_MinGpusToFit);

void BM_ResolveRequest(benchmark::State& state) {
  Request request;
  apply_key_values(request, kFits);
  for (auto _ : state) benchmark::DoNotOptimize(resolve(request));
}
BENCHMARK(BM_ResolveRequest);

// estimate + min_gpus_to_fit + both sweeps (+ advice when it does not fit).
void BM_FullResponseFits(benchmark::State& state) {
  const Resolved r = resolved_of(kFits);
  for (auto _ : state) benchmark::DoNotOptimize(respond(r));
}
BENCHMARK(BM_FullResponseFits);

void BM_FullResponseOomWithAdvice(benchmark::State& state) {
  const Resolved r = resolved_of(kOom);
  for (auto _ : state) benchmark::DoNotOptimize(respond(r));
}
BENCHMARK(BM_FullResponseOomWithAdvice);

// Serializing the full response alone (both 48-point profiles, breakdown, config; issue 9: <= 20 us).
void BM_ResponseToJson(benchmark::State& state) {
  const Response response = respond(resolved_of(kFits));
  for (auto _ : state) benchmark::DoNotOptimize(response_to_json(response, {"bench", 0.0}));
}
BENCHMARK(BM_ResponseToJson);

// What the HTTP service does per request: parse JSON, respond, serialize.
void BM_JsonRoundTrip(benchmark::State& state) {
  const std::string body =
      R"({"model":"llama3-70b","num_gpus":64,"gpu":"h100","seq_length":8192,"tensor_parallel":8,)"
      R"("sequence_parallel":true,"sharding":"fsdp-full","recompute":"selective","gpus_per_node":8})";
  for (auto _ : state) {
    Result<Request> request = request_from_json(body);
    Result<Response> response = respond(request.value());
    benchmark::DoNotOptimize(response_to_json(response.value(), {"bench", 0.0}));
  }
}
BENCHMARK(BM_JsonRoundTrip);

// The seed's example request (tests/fixtures/seed_request.json).
const char* const kSeedBody =
    R"({"model_params_b":8,"num_gpus":8,"gpu_memory_gb":80,"micro_batch":4,"seq_length":4096,"num_layers":32,)"
    R"("hidden_dim":4096,"precision_bits":16,"zero_stage":3,"grad_ckpt":1})";

// Exactly what `trainfit serve` computes for the seed's example (compact JSON).
void BM_ServeSeedExample(benchmark::State& state) {
  const std::string body = kSeedBody;
  for (auto _ : state) {
    Result<Request> request = request_from_json(body);
    Result<Response> response = respond(request.value());
    benchmark::DoNotOptimize(response_to_json(response.value(), {"bench", 0.0}));
  }
}
BENCHMARK(BM_ServeSeedExample);

// BM_ServeSeedExample's three parts, to see where a request's time goes.

void BM_SeedParse(benchmark::State& state) {
  const std::string body = kSeedBody;
  for (auto _ : state) benchmark::DoNotOptimize(request_from_json(body));
}
BENCHMARK(BM_SeedParse);

void BM_SeedRespond(benchmark::State& state) {
  const Request request = request_from_json(kSeedBody).value();
  for (auto _ : state) benchmark::DoNotOptimize(respond(request));
}
BENCHMARK(BM_SeedRespond);

void BM_SeedToJson(benchmark::State& state) {
  const Response response = respond(request_from_json(kSeedBody).value()).value();
  for (auto _ : state) benchmark::DoNotOptimize(response_to_json(response, {"bench", 0.0}));
}
BENCHMARK(BM_SeedToJson);

// What `trainfit estimate --format json` writes.
void BM_SeedToJsonIndented(benchmark::State& state) {
  const Response response = respond(request_from_json(kSeedBody).value()).value();
  for (auto _ : state) benchmark::DoNotOptimize(response_to_json(response, {"bench", 0.0}, 2));
}
BENCHMARK(BM_SeedToJsonIndented);

// What job_submit/trainfit decides per annotated job (bench/admission_bench.cpp
// measures the whole plugin call, audit line included).
admission::Job admission_job(const char* comment) {
  admission::Job job;
  admission::annotation_from_comment(comment, &job.annotation);
  job.fields.per_job = "gres:gpu:h100:8";
  return job;
}

void BM_AdmissionAccept(benchmark::State& state) {
  const admission::Policy policy = admission::parse_policy("gpus_per_node = 8").value();
  const admission::Job job = admission_job("trainfit: model=llama3-8b seq=4096 zero=3");
  for (auto _ : state) benchmark::DoNotOptimize(admission::decide(policy, job));
}
BENCHMARK(BM_AdmissionAccept);

void BM_AdmissionReject(benchmark::State& state) {
  const admission::Policy policy = admission::parse_policy("gpus_per_node = 8").value();
  const admission::Job job = admission_job("trainfit: model=llama3-70b seq=8192 zero=3 recompute=full");
  for (auto _ : state) benchmark::DoNotOptimize(admission::decide(policy, job));
}
BENCHMARK(BM_AdmissionReject);

// A job that fits at no GPU count (llama3-405b at seq 131072 with every activation kept):
// its refusal searches for a way out, here four changes at once, the one path that does.
void BM_AdmissionRejectHopeless(benchmark::State& state) {
  const admission::Policy policy = admission::parse_policy("gpus_per_node = 8").value();
  const admission::Job job = admission_job("trainfit: model=llama3-405b seq=131072");
  for (auto _ : state) benchmark::DoNotOptimize(admission::decide(policy, job));
}
BENCHMARK(BM_AdmissionRejectHopeless);

void BM_AdmissionParseAnnotation(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(admission_job("trainfit: model=llama3-70b seq=8192 zero=3"));
}
BENCHMARK(BM_AdmissionParseAnnotation);

}  // namespace

BENCHMARK_MAIN();
