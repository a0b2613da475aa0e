# mk/bench.mk: the benches and their chart (bench/), on this machine, on
# the fake driver and on a GPU.

# the benches also write their figures to bench/results/*.dat, which
# bench-chart draws into bench/results/bench.png (gnuplot-nox)
bench: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p bench/results
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/host_arrays.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/sim_kernels.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/compile.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/sim_memcheck.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results CC="$(CC)" $(LUA) bench/transfers.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results CC="$(CC)" $(LUA) bench/array_math.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results CC="$(CC)" $(LUA) bench/reduce.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results CC="$(CC)" LUACUDA_CPU_BLAS=0 $(LUA) bench/matmul.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/blas.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/sort.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/memory.lua
	$(RUN_ENV) BENCH_RESULTS=bench/results $(LUA) bench/programs.lua
	@$(MAKE) --no-print-directory bench-dist BENCH_RESULTS=bench/results
	@if command -v gnuplot >/dev/null; then $(MAKE) --no-print-directory bench-chart; \
	 else echo "no gnuplot: apt-get install gnuplot-nox, then make bench-chart"; fi

# the chart from the committed bench/results/*.dat (one panel per bench:
# host_arrays, sim_kernels, transfers, compile, array_math, reduce, dist), each
# panel dated by its .dat file
bench-chart:
	@$(MAKE) --no-print-directory deps PACKAGES=gnuplot-nox
	gnuplot bench/chart.gp

# examples/streams.lua on one stream and on two against the fake driver,
# every queued operation slowed down: do two streams overlap?
bench-streams: $(LIB) $(FAKE_CUDA)
	$(RUN_ENV) $(LUA) bench/streams.lua

# luacuda.dist's allreduce against MPI_Allreduce from C
# (bench/native_allreduce.c, a Lua module built with mpicc), both in the
# same 4 ranks of one mpirun job; without MPI it says why
NATIVE_ALLREDUCE = $(if $(MPICC),$(BUILD)/bench/native_allreduce.so)
DIST_RANKS = env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun --oversubscribe -np 4
$(BUILD)/bench/native_allreduce.so: bench/native_allreduce.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -fPIC -I$(LUA_INCDIR) $(LIBFLAG) $< -o $@ $(LDFLAGS)

bench-dist: $(LIB) $(DIST_LIB) $(NATIVE_ALLREDUCE)
	@if [ -z "$(NATIVE_ALLREDUCE)" ] || ! command -v mpirun >/dev/null; then \
	  echo "bench: the dist bench needs mpicc and mpirun (openmpi-bin libopenmpi-dev)"; \
	  echo "bench: 0 of 0 targets met"; \
	else $(RUN_ENV) BENCH_RESULTS="$(BENCH_RESULTS)" $(DIST_RANKS) $(LUA) bench/dist.lua; fi

# the fake driver's PTX interpreter: instructions per second on one core
bench-ptx: $(LIB) $(FAKE_CUDA)
	$(RUN_ENV) $(LUA) bench/ptx.lua

# on a GPU machine (no deps step: it may have no apt): luacuda against C,
# CuPy and numba-cuda, side by side
bench-gpu: $(LIB)
	$(RUN_ENV) $(LUA) bench/gpu.lua

# the GPU benchmark's script run end to end against the fake driver, so
# that a GPU session's minutes go to figures, not to the script's bugs (the
# figures themselves mean nothing; the saxpy result is checked, on 2^16
# floats, which the fake interprets from NVRTC's PTX, and the matmul's on
# 64 x 64, which the fake cuBLAS computes)
bench-gpu-smoke: $(LIB) $(FAKE_CUDA) $(FAKE_CUBLAS)
	$(RUN_ENV) LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=$(CURDIR)/$(BUILD)/fake/libcuda.so.1 \
	  LUACUDA_CUBLAS=$(CURDIR)/$(BUILD)/fake/libcublas.so.13 \
	  FAKE_CUDA_MEMORY=8G BENCH_LAUNCHES=2000 BENCH_SAXPY_N=65536 \
	  BENCH_MATMUL_N=64 BENCH_MATMUL_REPEAT=2 $(LUA) bench/gpu.lua
