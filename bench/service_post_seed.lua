-- wrk script: POST the seed's example request (tests/service_test.sh) to /edge/training, and
-- print one line of latency percentiles (ms) at the end. With the argument `get` (after
-- `--`), a plain GET of the URL instead: the same measurement of another server
-- (bench/service_floor_bench.sh's nginx). Used by bench/service_pool_bench.sh too; alone:
-- wrk -t2 -c64 -d10s --latency -s bench/service_post_seed.lua http://HOST:PORT
function init(args)
  if args[1] == "get" then return end
  wrk.method = "POST"
  wrk.path = "/edge/training"
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"model_params_b":8,"num_gpus":8,"gpu_memory_gb":80,"micro_batch":4,'
          .. '"seq_length":4096,"num_layers":32,"hidden_dim":4096,'
          .. '"precision_bits":16,"zero_stage":3,"grad_ckpt":1}'
end

-- wrk itself reports answers that are not 2xx/3xx ("Non-2xx or 3xx responses") and socket errors.
function done(summary, latency, requests)
  local out = {}
  for _, p in ipairs({50, 90, 99, 99.9}) do
    out[#out + 1] = string.format("p%s=%.2f", p, latency:percentile(p) / 1000)
  end
  io.write(table.concat(out, " ") .. " ms\n")
end
