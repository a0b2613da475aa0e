-- Seconds each spec file takes in a plain run (make check) on the
-- development machine (2 cores; from busted's junit output, scaled to the
-- suite's 383 s), for tools/spec_shards.lua, which splits make test's
-- specs into lists of about equal time. Rough is enough: a spec missing
-- here counts 2 seconds.
return {
  kernel_spec = 72, build_spec = 61, half_spec = 32, coop_spec = 29, cache_spec = 24,
  kernel_math_spec = 20, headers_spec = 20, cuda_fake_spec = 15, dist_spec = 18, c_units_spec = 11,
  fault_spec = 10, kernel_styles_spec = 8, differential_spec = 6, jit_spec = 6, async_spec = 5,
  ptx_spec = 5, pch_spec = 5, generators_spec = 4, stress_spec = 4, cuda_spec = 4,
  parity_spec = 3, axis_reduce_spec = 3, random_spec = 3,
}
