-- wrk script: POST the seed's example request (tests/service_test.sh) to /edge/training.
-- Used by bench/service_pool_bench.sh; alone: wrk -t2 -c64 -d10s --latency -s bench/service_post_seed.lua http://HOST:PORT
wrk.method = "POST"
wrk.path = "/edge/training"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model_params_b":8,"num_gpus":8,"gpu_memory_gb":80,"micro_batch":4,'
        .. '"seq_length":4096,"num_layers":32,"hidden_dim":4096,'
        .. '"precision_bits":16,"zero_stage":3,"grad_ckpt":1}'
-- wrk itself reports answers that are not 2xx/3xx ("Non-2xx or 3xx responses") and socket errors.
