# mk/test.mk: the spec runs: check, the shards of make test, the fake
# driver's runs, the sanitizers (ASan/UBSan, valgrind, TSan).

# what the specs run: the module, the units, the host programs and the fakes
CHECK_DEPS = $(LIB) $(DIST_LIB) $(BIGCOUNT_UNIT) $(AGREE_UNIT) $(DIST_HOST_UNIT) $(UNIT) $(SCAN_UNIT) \
       $(DEPS_UNIT) $(MODCACHE_UNIT) $(FATBIN_UNIT) $(REDUCE_UNIT) $(NPY_UNIT) $(RANDOM_UNITS) $(GUARD_UNIT) \
       $(ARENA_UNIT) $(STREAM_UNIT) $(GCPACE_UNIT) $(THREADS_TEST) $(FAKE_CUDA) $(CAPI_UNIT) $(EMBED_HOST) \
       $(FAKE_NVRTC) $(FAKE_CUBLAS) $(FAKE_NCCL) $(FAKE_PEER_TEST) $(FAKE_STRICT_TEST)
check: $(CHECK_DEPS)
	@test -n "$(BUSTED)" || { echo "busted not found (make deps installs it)"; exit 1; }
	$(RUN_ENV) $(LUA) $(BUSTED) $(BUSTED_ARGS)

# every spec in TEST_SHARDS busted processes, TEST_JOBS at a time
# (tools/run_shards.sh balances the lists by the specs' times in
# spec/timings.lua; each process prints its own summary): make test on a
# machine of several cores. The long runs (the sanitizers, the fake driver)
# use LANE_SHARDS processes one at a time: CI runs them in two lanes side by
# side, and each process's heap, which every test's full collection walks
# (spec/helper.lua), holds only its own spec files.
TEST_SHARDS ?= 4
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
LANE_SHARDS ?= 6
LANE_JOBS ?= 1
check-shards: $(CHECK_DEPS)
	@test -n "$(BUSTED)" || { echo "busted not found (make deps installs it)"; exit 1; }
	$(RUN_ENV) LUA="$(LUA)" BUSTED="$(BUSTED)" BUSTED_ARGS="$(BUSTED_ARGS)" \
	  tools/run_shards.sh $(TEST_SHARDS) $(TEST_JOBS)

# Every spec on the CUDA backend against the fake driver (spec/fake/fake_cuda.c):
# luacuda loads the fatbinary it loads on a GPU (no LUACUDA_PTX), whose
# cubin the fake checks and whose PTX its interpreter runs, so kernels'
# results are checked too. The fake's device has room for the memory specs.
# FAKE_CUDA_DELAY_US=300 slows every queued operation down, so that work
# read or freed before its stream ran it shows (CI runs both: the delayed
# run on the specs of queued work, make check-fake-cuda-delayed).
# Matrix products go to the fake cuBLAS (spec/fake/fake_cublas.c); the matmul
# spec then runs once more without it, so the library's own kernel runs on
# the fake's PTX interpreter too (when BUSTED_ARGS is empty or names it).
FAKE_CUDA_DELAY_US ?= 0
# the order of a block's threads in the fake's PTX interpreter (a missing
# __syncthreads shows): a fixed seed here, a random one in the delayed run;
# FAKE_CUDA_SCHED_SEED=n replays a run, 0 runs threads in order
FAKE_CUDA_SCHED_SEED ?= 1
FAKE_ENV = LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=$(abspath $(BUILD))/fake/libcuda.so.1 \
           LUACUDA_CUBLAS=$(abspath $(BUILD))/fake/libcublas.so.13 \
           LUACUDA_LIBNCCL=$(abspath $(BUILD))/fake/libnccl.so.2 \
           FAKE_CUDA_MEMORY=4G FAKE_CUDA_DELAY_US=$(FAKE_CUDA_DELAY_US) \
           FAKE_CUDA_SCHED_SEED=$(FAKE_CUDA_SCHED_SEED)
MATMUL_SPEC = spec/matmul_spec.lua
check-fake-cuda:
	@test -f $(CUDA_INC)/cuda.h || { echo "no $(CUDA_INC)/cuda.h: the fake driver cannot be built"; exit 1; }
	@echo "== fake driver: FAKE_CUDA_SCHED_SEED=$(FAKE_CUDA_SCHED_SEED) (a failure replays with it)"
	@$(MAKE) --no-print-directory check-shards $(FAKE_ENV) TEST_SHARDS=$(LANE_SHARDS) TEST_JOBS=$(LANE_JOBS)
	@$(if $(or $(if $(strip $(BUSTED_ARGS)),,all),$(findstring $(MATMUL_SPEC),$(BUSTED_ARGS))), \
	  echo "== $(MATMUL_SPEC) again without cuBLAS (LUACUDA_CUBLAS=/nonexistent): the library's kernel"; \
	  $(MAKE) --no-print-directory check-shards $(FAKE_ENV) LUACUDA_CUBLAS=/nonexistent TEST_SHARDS=1 \
	    BUSTED_ARGS="$(filter-out spec/%,$(BUSTED_ARGS)) $(MATMUL_SPEC)")

# The delayed run (CI's): the specs of queued work, that is of streams,
# copies, memory, array math, reductions, products, gathers, sorts, random
# numbers, launches and the C API's waits, where a read or free before the
# stream ran the work would show. The specs of compiling, caching and
# documents queue nothing a delay could reorder; the plain run covers them.
# So do the math library's numerics, half precision and the error messages
# (kernel_math, half, errors): their launches and copies take kernel_spec's
# and copy_spec's paths, which the delayed run runs.
# CI runs the delayed run in two parts, one in each lane (QUEUED_PART=1 in
# the valgrind lane, which ends first, QUEUED_PART=2 in the other; empty:
# both): part 1 takes about a third of its time, which evens the lanes.
QUEUED_SPECS_1 = $(addprefix spec/,$(addsuffix _spec.lua, cuda_fake dist c_units stress array_math))
QUEUED_SPECS_2 = $(addprefix spec/,$(addsuffix _spec.lua, \
  async stream hostmem copy memory alias dlpack devices smart \
  reduce random matmul gather sort npy memory_cache funcs \
  frictions cpublas axis_reduce reentry constructors ranges_and_joins index iterate \
  record dtype kernel generators coop threads differential))
QUEUED_SPECS = $(QUEUED_SPECS_1) $(QUEUED_SPECS_2)
check-fake-cuda-delayed:
	@$(MAKE) --no-print-directory check-fake-cuda FAKE_CUDA_DELAY_US=300 \
	  FAKE_CUDA_SCHED_SEED=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ') \
	  BUSTED_ARGS="$(BUSTED_ARGS) $(if $(QUEUED_PART),$(QUEUED_SPECS_$(QUEUED_PART)),$(QUEUED_SPECS))"

# make test: every spec, in TEST_SHARDS processes (make test BUSTED_ARGS=...:
# those specs, in one)
test: deps
	@if [ -n "$(BUSTED_ARGS)" ]; then \
	  $(MAKE) --no-print-directory check BUSTED="$$(command -v busted)"; \
	else \
	  $(MAKE) --no-print-directory check-shards BUSTED="$$(command -v busted)"; \
	fi

# The specs against a module built with AddressSanitizer and UBSan; the
# runtime is preloaded into the (uninstrumented) interpreter. libasan's
# tracking of dynamic TLS misreads the thread-local blocks of dlopen'ed
# kernel modules and crashes the leak checker (valgrind, which checks the
# same memory, is clean); those blocks hold no heap pointers, so the
# tracking is turned off. The tests tagged #heavy (NVRTC compiling large
# sources in the process, grids of values computed twice: see test-valgrind)
# are left to make test and the fake driver's run, and the differential
# test's sequences are 500 (2,000 elsewhere): the same paths, at a quarter
# of ASan's cost.
SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
test-asan: deps
	@$(MAKE) --no-print-directory check-shards BUILD=build-asan CFLAGS="$(SAN_FLAGS)" \
	  TEST_SHARDS=$(LANE_SHARDS) TEST_JOBS=$(LANE_JOBS) \
	  LDFLAGS="-fsanitize=address,undefined" BUSTED="$$(command -v busted)" \
	  LUA="env LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 LUACUDA_SANITIZED=1 LUACUDA_DIFF_SEQUENCES=500 $(LUA)" \
	  BUSTED_ARGS="--exclude-tags=heavy $(BUSTED_ARGS) $(if $(BUSTED_ARGS),,$(ASAN_SKIP:%=--exclude-pattern=%))"
# Left out: the specs that read the sources or run the examples, the docs'
# snippets and the rock's build in child processes: make test runs them, and
# the paths they take are the other specs', which run here.
ASAN_SKIP = build_spec docs_spec examples_spec errors_catalogue_spec architecture_spec \
            includes_spec sizes_spec

# The specs under valgrind's memcheck: any error, or a definite leak, fails.
# Children (the C++ compiler, the specs' subprocesses) run without it. The
# specs tagged #oob make invalid accesses on purpose (kernel faults caught
# by the simulator), which memcheck rightly reports, so they are left out.
# --fair-sched: valgrind runs one thread at a time, and its default lock can
# leave the interpreter waiting while the simulator's threads run a whole
# kernel, which specs that watch a kernel still running would misread.
VALGRIND = valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
           --show-leak-kinds=definite --error-exitcode=99 --trace-children=no --fair-sched=yes
# Tests tagged #fenv are left out: valgrind runs floating point in the
# default rounding mode whatever fesetround asks, and long double as double,
# so the simulator's directed-rounding intrinsics cannot be right under it.
# Tests tagged #heavy spend their time in NVRTC compiling large sources or
# in grids of thousands of values computed twice: minutes under valgrind in
# code that is not luacuda's (NVRTC) or paths the other tests take too.
# AddressSanitizer still runs them.
# LUACUDA_NVRTC_CHECK=0: the simulator's parity check runs NVRTC inside the
# process (src/backend/sim/check.c), which valgrind then runs too: a minute
# or two for each kernel compiled outside the disk cache (a fresh cache
# directory, a source NVRTC rejects), in code that is not luacuda's. The
# specs of the check see it off (S.nvrtc_checks) and are pending here; the
# other runs check with NVRTC. LUACUDA_DIFF_SEQUENCES=200: the differential
# test's sequences take the same paths as its 2,000 elsewhere.
# Left out of the whole run: the specs whose tests run in child processes
# (which run without valgrind: c_units_spec's unit programs among them) or
# only read the sources, which under valgrind take make test's paths with
# minutes of waiting on children; nvrtc_spec, whose tests are NVRTC
# compiling in the process (NVRTC's code, not luacuda's); and jit_spec,
# whose own code is Lua (the translator) and whose compiles and launches
# take kernel_spec's paths.
VALGRIND_SKIP = build_spec docs_spec examples_spec errors_catalogue_spec architecture_spec \
                includes_spec sizes_spec dist_spec dist_agree_spec dist_bigcount_spec c_units_spec \
                nvrtc_spec jit_spec
test-valgrind: deps
	@$(MAKE) --no-print-directory deps PACKAGES=valgrind
	@$(MAKE) --no-print-directory check-shards BUSTED="$$(command -v busted)" \
	  TEST_SHARDS=$(LANE_SHARDS) TEST_JOBS=$(LANE_JOBS) \
	  LUA="env LUACUDA_NVRTC_CHECK=0 LUACUDA_DIFF_SEQUENCES=200 $(VALGRIND) $(LUA)" \
	  BUSTED_ARGS="--exclude-tags=oob,fenv,heavy $(if $(BUSTED_ARGS),$(BUSTED_ARGS),$(VALGRIND_SKIP:%=--exclude-pattern=%))"

# The threads program against a module built with ThreadSanitizer: the
# program links Lua (uninstrumented, but each state stays on its thread)
# and the TSan runtime, so nothing is preloaded. A report fails the run.
TSAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=thread
TSAN_ITERATIONS ?= 1000
test-tsan: deps
	@$(MAKE) --no-print-directory build-tsan/luacuda/core.so build-tsan/threads_test \
	  BUILD=build-tsan CFLAGS="$(TSAN_FLAGS)" LDFLAGS="-fsanitize=thread"
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
	  LUACUDA_BUILD=build-tsan build-tsan/threads_test $(TSAN_ITERATIONS)
