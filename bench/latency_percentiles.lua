-- wrk script: prints one line of latency percentiles (ms) when the run ends; with the
-- argument post-seed, POSTs the seed's example request (as service_post_seed.lua does).
-- Used by bench/service_floor_bench.sh.
function init(args)
  if args[1] == "post-seed" then
    wrk.method = "POST"
    wrk.path = "/edge/training"
    wrk.headers["Content-Type"] = "application/json"
    wrk.body = '{"model_params_b":8,"num_gpus":8,"gpu_memory_gb":80,"micro_batch":4,'
            .. '"seq_length":4096,"num_layers":32,"hidden_dim":4096,'
            .. '"precision_bits":16,"zero_stage":3,"grad_ckpt":1}'
  end
end

function done(summary, latency, requests)
  local out = {}
  for _, p in ipairs({50, 90, 99, 99.9}) do
    out[#out + 1] = string.format("p%s=%.2f", p, latency:percentile(p) / 1000)
  end
  io.write(table.concat(out, " ") .. " ms\n")
end
