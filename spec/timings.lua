-- Seconds each spec file takes in a plain run (make check) on the
-- development machine (2 cores; each file alone in its own busted process,
-- measured 2026-11-29 with other work on the machine: about 880 s in all),
-- for tools/spec_shards.lua, which splits make test's specs into lists of
-- about equal time. Rough is enough: a spec missing here counts 2 seconds.
-- Refresh it when the lists' times drift apart (each process prints its
-- own time): tools/spec_shards.lua's header says how.
return {
  cuda_fake_spec = 63, coop_spec = 62, build_spec = 52, pch_spec = 51, ptx_spec = 49,
  dist_spec = 47, cache_spec = 43, kernel_spec = 40, corpus_spec = 40, headers_spec = 31,
  memcheck_spec = 29, kernel_math_spec = 29, c_units_spec = 28, random_spec = 24,
  stress_spec = 22, jit_spec = 21, half_spec = 20, teach_spec = 17, params_spec = 17,
  docs_spec = 14, fault_spec = 13, parity_spec = 13, kernel_styles_spec = 12,
  examples_spec = 10, dist_bigcount_spec = 10, nvrtc_spec = 8, templates_spec = 8,
  generators_spec = 7, matmul_spec = 7, reduce_spec = 7, cuda_spec = 6, threads_spec = 6,
  errors_spec = 5, stream_spec = 5, warp_spec = 5, reentry_spec = 5, async_spec = 4,
  sort_spec = 4, differential_spec = 4, record_spec = 4, cpublas_spec = 3, npy_spec = 3,
  sim_launch_spec = 3, devices_spec = 3,
}
