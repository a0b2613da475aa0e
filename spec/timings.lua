-- Seconds each spec file took in a plain run (make check) on the
-- development machine (2 cores), for tools/spec_shards.lua, which splits
-- make test's specs into lists of about equal time. Rough is enough: a
-- spec missing here counts 5 seconds.
return {
  build_spec = 40, corpus_spec = 30, examples_spec = 30, dist_spec = 30, differential_spec = 20,
  stress_spec = 20, memcheck_spec = 15, coop_spec = 15, docs_spec = 15, array_math_spec = 15,
  fault_spec = 12, c_units_spec = 12, cache_spec = 12, headers_spec = 10, pch_spec = 10,
  kernel_spec = 10, memory_spec = 10, memory_cache_spec = 10, dist_agree_spec = 10,
}
