# luacuda: build, test, demo and bench.
#
#   make demo    set up a fresh Debian 12 machine if needed, build, run the demo
#   make test    the same set-up, then every spec (and the C unit tests)
#   make check   build and run the specs without the set-up step (for a
#                machine where Lua comes from elsewhere, e.g. the GPU devkit)
#   make check-fake-cuda   the specs on the CUDA backend against the fake driver
#   make fuzz-long   the differential test's long run (SEED=n replays one)
#   make fuzz        the libFuzzer targets, FUZZ_TIME seconds each (clang)
#   make docs        the API reference, docs/api/, from the sources' doc comments
#   make docs-check  docs/api/ is current and documents every public name
#   make         just build build/luacuda/core.so (needs a C compiler and
#                Lua 5.4's headers; luarocks calls this same Makefile), and
#                luacuda.dist's MPI engine, build/luacuda/dist_mpi.so, where
#                mpicc is (MPICC= leaves it out)

LUA        ?= lua5.4
LUA_INCDIR ?= /usr/include/lua5.4
CC         ?= cc
CFLAGS     ?= -O2 -g
LIBFLAG    ?= -shared
BUILD      ?= build
BUSTED     ?= $(shell command -v busted 2>/dev/null)
PACKAGES    = lua5.4 liblua5.4-dev lua-busted luarocks g++ libdlpack-dev python3-numpy openmpi-bin \
              libopenmpi-dev
# what make docs needs: LDoc and the Markdown it formats the comments with
DOC_PACKAGES = lua-ldoc lua-discount

# One set of warning flags for every C file built here.
WARN       = -std=c11 -Wall -Wextra -Wpedantic -Werror=implicit-function-declaration
LC_CFLAGS  = $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden -MMD -MP
LC_LIBS    = -lpthread -ldl -lm
# lua_close dlcloses C modules; the simulator's worker threads (and the
# CUDA driver's callbacks) live in this one, so it must stay mapped
LC_LDFLAGS = -Wl,-z,nodelete

# The layers (docs/architecture.md), each built with only the include
# paths of the layers below it, so the compiler keeps them apart:
#   src/base      pure C: knows neither Lua nor a device
#   src/backend   the backend interface, cuda/ and sim/ behind it: no Lua
#   src/binding   the Lua binding, the only layer that sees Lua's headers
# kernels/ gives every layer abi.h, the kernel argument ABI that C and
# kernel code share (and the simulator's sim_abi.h).
BASE_INC    = -Isrc/base -Ikernels
BACKEND_INC = $(BASE_INC) -Isrc/backend
BINDING_INC = -Isrc $(BACKEND_INC) -I$(LUA_INCDIR)

SRC  = $(wildcard src/base/*.c src/backend/*.c src/backend/*/*.c src/binding/*.c)
OBJ  = $(SRC:src/%.c=$(BUILD)/obj/%.o)
LIB  = $(BUILD)/luacuda/core.so
UNIT = $(BUILD)/layout_test
SCAN_UNIT = $(BUILD)/scan_test
# the kernel source scanner's files, for the unit test and the fuzzer
SCAN_SRC = src/base/scan.c src/base/scan_lex.c src/base/scan_types.c src/base/scan_decl.c
DEPS_UNIT = $(BUILD)/deps_test
MODCACHE_UNIT = $(BUILD)/modcache_test
REDUCE_UNIT = $(BUILD)/reduce_test
NPY_UNIT = $(BUILD)/npy_test
RANDOM_UNITS = $(BUILD)/random_test $(BUILD)/random_portable_test
# a fake CUDA driver for spec/cuda_fake_spec.lua, built against the toolkit's
# cuda.h where there is one (test code: never installed)
CUDA_INC  ?= /usr/local/cuda/include
FAKE_CUDA  = $(if $(wildcard $(CUDA_INC)/cuda.h),$(BUILD)/fake/libcuda.so.1)
# a fake cuBLAS on the fake driver (spec/c/fake_cublas.c), for the matrix
# products' calls (make check-fake-cuda sets LUACUDA_CUBLAS to it)
FAKE_CUBLAS = $(if $(FAKE_CUDA),$(BUILD)/fake/libcublas.so.13)
# a fake NCCL on the fake driver (spec/c/fake_nccl.c), for luacuda.dist's
# NCCL engine (spec/dist_spec.lua), where the toolkit has nccl.h
FAKE_NCCL = $(if $(and $(FAKE_CUDA),$(wildcard $(CUDA_INC)/nccl.h)),$(BUILD)/fake/libnccl.so.2)
# an NVRTC that says it is 12.9, for the spec of which NVRTC suits a driver
FAKE_NVRTC = $(BUILD)/fake/nvrtc/libnvrtc.so.12
# the fake driver's rules for several devices and peer access (spec/devices_spec.lua)
FAKE_PEER_TEST = $(if $(FAKE_CUDA),$(BUILD)/fake/fake_peer_test)
# where the fake driver is no kinder than a GPU (spec/cuda_fake_spec.lua)
FAKE_STRICT_TEST = $(if $(FAKE_CUDA),$(BUILD)/fake/fake_strict_test)
CAPI_UNIT = $(BUILD)/capi_test
EMBED_HOST = $(BUILD)/embed_host

# luacuda.dist's MPI engine (src/dist/, luacuda/dist_mpi.so), built where
# mpicc is: it links MPI and core.so (whose C API, src/luacuda.h, is its
# way into arrays); core.so itself never needs MPI. -z nodelete: its
# on_exit handler must stay mapped after lua_close.
MPICC    ?= $(shell command -v mpicc 2>/dev/null)
DIST_LIB  = $(if $(MPICC),$(BUILD)/luacuda/dist_mpi.so)
# the MPI calls with 64-bit counts (src/dist/bigcount.c), tested under
# mpirun by spec/dist_bigcount_spec.lua
BIGCOUNT_UNIT = $(if $(MPICC),$(BUILD)/bigcount_test)
# a host program that starts MPI itself, then runs luacuda.dist (with mpicc)
DIST_HOST_UNIT = $(if $(MPICC),$(BUILD)/dist_host_test)
# the control channel of luacuda.dist (src/dist/agree.c), tested under mpirun
AGREE_UNIT = $(if $(MPICC),$(BUILD)/agree_test)

# C programs that embed Lua and link the module; they find it next to them
HOST_LINK = -L$(BUILD)/luacuda -l:core.so -Wl,-rpath,'$$ORIGIN/luacuda' -llua5.4 -lm
GUARD_UNIT = $(BUILD)/guard_test
ARENA_UNIT = $(BUILD)/arena_test
STREAM_UNIT = $(BUILD)/stream_test
THREADS_TEST = $(BUILD)/threads_test

# the spec runner sees the in-tree Lua files and the module just built
RUN_ENV = LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="$(BUILD)/?.so;;" LUACUDA_BUILD="$(BUILD)"

.PHONY: all install deps check check-shards check-fake-cuda test demo bench bench-chart bench-dist bench-streams bench-ptx bench-gpu bench-gpu-smoke test-asan test-tsan \
        test-valgrind check-fake-cuda-delayed rock clean embed errors-catalogue devkit fuzz-long fuzz fuzz-run docs docs-check

all: $(LIB) $(DIST_LIB)

# The files of the host's element loops (reductions, array math) are built
# with the loop vectoriser at its full cost model, as -O3 has it: at -O2
# GCC vectorises only loops of a known trip count.
LOOP_CFLAGS = -ftree-vectorize -fvect-cost-model=dynamic
$(BUILD)/obj/base/reduce.o $(BUILD)/obj/base/ufunc_host.o $(BUILD)/obj/base/random.o: LC_CFLAGS += $(LOOP_CFLAGS)
# and without errno from the math functions, which no caller reads: sqrt is
# then one instruction over a vector (NaN and infinities are IEEE's still);
# without trapping math (no caller reads the exception flags either), so
# that float32 exp's clamps do not stop its loop vectorising
$(BUILD)/obj/base/ufunc_host.o: LC_CFLAGS += -fno-math-errno -fno-trapping-math

$(BUILD)/obj/base/%.o: src/base/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LC_CFLAGS) $(BASE_INC) -c $< -o $@

$(BUILD)/obj/backend/%.o: src/backend/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LC_CFLAGS) $(BACKEND_INC) -c $< -o $@

$(BUILD)/obj/binding/%.o: src/binding/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LC_CFLAGS) $(BINDING_INC) -c $< -o $@

# header dependencies, written by -MMD
-include $(OBJ:.o=.d)

# the files built in with .incbin (common.h's LC_EMBED)
$(BUILD)/obj/base/kernels.o: $(wildcard kernels/*.cuh kernels/*.cu) kernels/abi.h kernels/ufunc_ops.h \
  kernels/philox.h kernels/gather_abi.h kernels/sort_keys.h
$(BUILD)/obj/backend/std_headers.o: $(wildcard kernels/std/*)
$(BUILD)/obj/backend/sim/compile.o: kernels/abi.h $(wildcard kernels/sim_*.h) \
  $(shell find kernels/sim_include -type f 2>/dev/null)
$(BUILD)/obj/binding/embed.o: $(wildcard lua/luacuda/*.lua lua/luacuda/jit/*.lua)

$(LIB): $(OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIBFLAG) $(OBJ) -o $@ $(LDFLAGS) $(LC_LDFLAGS) $(LC_LIBS)

# its NCCL engine (src/dist/nccl_engine.c) needs the toolkit's nccl.h and cuda.h,
# and is left out without them; NCCL itself is opened with dlopen
DIST_NCCL_FLAGS = $(if $(and $(wildcard $(CUDA_INC)/nccl.h),$(wildcard $(CUDA_INC)/cuda.h)),\
                    -DLUACUDA_NCCL -I$(CUDA_INC))
DIST_SRC = $(addprefix src/dist/,dist.c process.c dtypes.c comm.c header.c args.c jobs.c \
             route.c collectives.c agree.c nccl_engine.c bigcount.c)
# the pure-C base it shares with core.so (the dtype table), linked in, not
# copied: core.so's own copy is hidden
DIST_BASE = $(BUILD)/obj/base/dtype.o
$(BUILD)/luacuda/dist_mpi.so: $(DIST_SRC) $(DIST_BASE) $(wildcard src/dist/*.h) src/luacuda.h $(LIB)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE -fPIC -fvisibility=hidden -Isrc $(BASE_INC) -I$(LUA_INCDIR) \
	  $(DIST_NCCL_FLAGS) $(LIBFLAG) $(DIST_SRC) $(DIST_BASE) -o $@ $(LDFLAGS) \
	  -L$(BUILD)/luacuda -l:core.so -Wl,-rpath,'$$ORIGIN' -Wl,-z,nodelete -ldl -lpthread -lm

# bigcount.c with its test, which wraps the MPI calls it makes (MPI's
# profiling interface) to count them
$(DIST_HOST_UNIT): spec/c/dist_host_test.c spec/c/unit.h src/luacuda.h $(LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE -I$(LUA_INCDIR) -Isrc spec/c/dist_host_test.c \
	  -o $@ $(LDFLAGS) $(HOST_LINK)

# agree.c included in its test, which holds back chosen messages (MPI's
# profiling interface)
$(AGREE_UNIT): spec/c/agree_test.c spec/c/unit.h src/dist/agree.c src/dist/agree.h
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE spec/c/agree_test.c -o $@ $(LDFLAGS) -lpthread

$(BIGCOUNT_UNIT): spec/c/bigcount_test.c spec/c/unit.h src/dist/bigcount.c src/dist/bigcount.h
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE spec/c/bigcount_test.c src/dist/bigcount.c \
	  -o $@ $(LDFLAGS) -lpthread

# the C units of src/base: pure C, built without Lua's include path
UNIT_CFLAGS = $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L
$(UNIT): spec/c/layout_test.c spec/c/unit.h src/base/layout.c src/base/layout.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/layout_test.c src/base/layout.c -o $@ $(LDFLAGS)

$(SCAN_UNIT): spec/c/scan_test.c spec/c/unit.h $(wildcard src/base/*.[ch])
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/scan_test.c $(SCAN_SRC) src/base/dtype.c \
	  src/base/probe.c src/base/strbuf.c -o $@ \
	  $(LDFLAGS) -lm

# reductions and scans on host memory: pure C, no Lua
$(REDUCE_UNIT): spec/c/reduce_test.c spec/c/unit.h src/base/reduce.c src/base/reduce.h \
                src/base/dtype.c src/base/layout.c
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/reduce_test.c src/base/reduce.c src/base/dtype.c \
	  src/base/layout.c -o $@ $(LDFLAGS) -lm

# the .npy header, read and written: pure C, no Lua
$(NPY_UNIT): spec/c/npy_test.c spec/c/unit.h src/base/npy.c src/base/npy.h src/base/dtype.c \
             src/base/strbuf.c src/base/layout.c src/base/layout.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/npy_test.c src/base/npy.c src/base/dtype.c \
	  src/base/strbuf.c src/base/layout.c -o $@ $(LDFLAGS) -lm

# the host's random numbers: pure C, no Lua; built twice, the second time
# without the AVX2 path, so that both paths are tested on an AVX2 machine
RANDOM_UNIT_SRC = spec/c/random_test.c src/base/random.c src/base/dtype.c src/base/layout.c
$(BUILD)/random_test: $(RANDOM_UNIT_SRC) spec/c/unit.h src/base/random.h kernels/philox.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(LOOP_CFLAGS) $(BASE_INC) $(RANDOM_UNIT_SRC) -o $@ $(LDFLAGS) -lm
$(BUILD)/random_portable_test: $(RANDOM_UNIT_SRC) spec/c/unit.h src/base/random.h kernels/philox.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(LOOP_CFLAGS) -DLC_RANDOM_AVX2=0 $(BASE_INC) $(RANDOM_UNIT_SRC) -o $@ $(LDFLAGS) -lm

# the record of the headers a compilation read: pure C, no Lua
$(DEPS_UNIT): spec/c/deps_test.c spec/c/unit.h $(wildcard src/base/*.[ch])
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/deps_test.c src/base/deps.c src/base/includes.c src/base/strbuf.c \
	  src/base/cache.c src/base/hash.c -o $@ $(LDFLAGS) -lpthread

# the process's compiled modules by key: pure C, no Lua
$(MODCACHE_UNIT): spec/c/modcache_test.c spec/c/unit.h src/base/modcache.c src/base/modcache.h \
                  src/base/hash.c src/base/hash.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/modcache_test.c src/base/modcache.c src/base/hash.c \
	  -o $@ $(LDFLAGS) -lpthread

# the fatbinary writer: pure C, no Lua (spec/fatbin_spec.lua compares it
# with the toolkit's fatbinary tool)
FATBIN_UNIT = $(BUILD)/fatbin_test
$(FATBIN_UNIT): spec/c/fatbin_test.c spec/c/unit.h src/base/fatbin.c src/base/fatbin.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) spec/c/fatbin_test.c src/base/fatbin.c -o $@ $(LDFLAGS)

# several lua_States on several threads (spec/threads_spec.lua runs it): a
# C program that links Lua itself and requires the module from $(BUILD).
# The -L list is the loader's path, so a Lua found through LD_LIBRARY_PATH
# (the GPU devkit's) links too.
LUA_LIB ?= -llua5.4
$(THREADS_TEST): spec/c/threads_test.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -I$(LUA_INCDIR) -Isrc \
	  -DLC_BUILD_DIR='"$(BUILD)"' spec/c/threads_test.c -o $@ \
	  $(LDFLAGS) $(addprefix -L,$(subst :, ,$(LD_LIBRARY_PATH))) $(LUA_LIB) -lpthread

# the simulator's guarded blocks, with mmap and madvise wrapped so a test can fail them
$(GUARD_UNIT): spec/c/guard_test.c spec/c/unit.h src/backend/sim/guard.c src/backend/sim/sim.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BACKEND_INC) -Isrc/backend/sim spec/c/guard_test.c src/backend/sim/guard.c \
	  -o $@ $(LDFLAGS) \
	  -Wl,--wrap=mmap -Wl,--wrap=madvise -lpthread

# the simulator's small-block arena, with realloc wrapped so a write past a
# free list faults
$(ARENA_UNIT): spec/c/arena_test.c spec/c/unit.h src/backend/sim/arena.c src/backend/sim/sim.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BACKEND_INC) -Isrc/backend/sim spec/c/arena_test.c src/backend/sim/arena.c \
	  -o $@ $(LDFLAGS) -Wl,--wrap=realloc -lpthread

# the simulator's stream executor: small work run at the call, in order
$(STREAM_UNIT): spec/c/stream_test.c spec/c/unit.h src/backend/sim/stream.c src/backend/sim/sim.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BACKEND_INC) -Isrc/backend/sim spec/c/stream_test.c src/backend/sim/stream.c \
	  -o $@ $(LDFLAGS) -lpthread

# the fake driver, with its PTX interpreter (spec/c/ptx/) always optimised:
# the specs run every kernel through it
PTX_SRC = spec/c/ptx/parse.c spec/c/ptx/exec.c
$(BUILD)/fake/libcuda.so.1: spec/c/fake_cuda.c $(PTX_SRC) spec/c/ptx/ptx.h spec/c/ptx/internal.h kernels/abi.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -O2 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  -I$(CUDA_INC) -Ikernels -Ispec/c/ptx $(LIBFLAG) $< $(PTX_SRC) -o $@ $(LDFLAGS) -lpthread -lm

$(BUILD)/fake/fake_peer_test: spec/c/fake_peer_test.c spec/c/unit.h $(BUILD)/fake/libcuda.so.1
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -I$(CUDA_INC) $< -o $@ \
	  -L$(BUILD)/fake -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) -lpthread

$(BUILD)/fake/fake_strict_test: spec/c/fake_strict_test.c spec/c/unit.h $(BUILD)/fake/libcuda.so.1
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -I$(CUDA_INC) $< -o $@ \
	  -L$(BUILD)/fake -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) -lpthread

# built against the toolkit's cublas_api.h where it is (its own declarations
# otherwise); it finds the fake driver already loaded, with dlopen
$(BUILD)/fake/libcublas.so.13: spec/c/fake_cublas.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -O2 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  -I$(CUDA_INC) $(LIBFLAG) $< -o $@ $(LDFLAGS) -ldl -lpthread

$(BUILD)/fake/libnccl.so.2: spec/c/fake_nccl.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -O2 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  -I$(CUDA_INC) $(LIBFLAG) $< -o $@ $(LDFLAGS) -ldl -lpthread -lm

$(FAKE_NVRTC): spec/c/fake_nvrtc.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  $(LIBFLAG) $< -o $@ $(LDFLAGS) -ldl -lpthread

# the C API's test: release callbacks, DLPack deleters, accessors
$(CAPI_UNIT): spec/c/capi_test.c spec/c/unit.h src/luacuda.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE -I$(LUA_INCDIR) -Isrc \
	  spec/c/capi_test.c -o $@ $(LDFLAGS) $(HOST_LINK) -ldl

# examples/embed: a host program that embeds Lua and luacuda
embed: $(EMBED_HOST)
$(EMBED_HOST): examples/embed/host.c src/luacuda.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -I$(LUA_INCDIR) -Isrc examples/embed/host.c \
	  -o $@ $(LDFLAGS) $(HOST_LINK)

# luarocks make: INST_LIBDIR and INST_LUADIR come from the rockspec; the C
# API's header goes to INST_INCDIR (the rock's include/ directory)
install: $(LIB)
	mkdir -p $(INST_LIBDIR)/luacuda $(INST_LUADIR)/luacuda $(INST_INCDIR)
	cp $(LIB) $(INST_LIBDIR)/luacuda/core.so
	$(if $(DIST_LIB),cp $(DIST_LIB) $(INST_LIBDIR)/luacuda/dist_mpi.so)
	cp lua/luacuda/*.lua $(INST_LUADIR)/luacuda/
	mkdir -p $(INST_LUADIR)/luacuda/jit
	cp lua/luacuda/jit/*.lua $(INST_LUADIR)/luacuda/jit/
	cp src/luacuda.h $(INST_INCDIR)/

# For a GPU machine (no apt there): the shared devkit (Lua, busted) plus the
# packages the build needs beyond Lua; tools/devkit-env sets the paths.
devkit:
	mkdir -p "$$(git rev-parse --git-path info)"
	../shared/devkit/prepare
	cd .devkit/debs && { ls libdlpack-dev_*.deb >/dev/null 2>&1 || apt-get download libdlpack-dev; }

# Install the Debian packages that are missing: with apt as root, otherwise
# print the command and stop.
deps:
	@missing=""; \
	for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q $$missing >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && apt-get install -y -q $$missing; } || exit 1; \
	  else \
	    echo "luacuda needs these Debian packages:$$missing"; \
	    echo "  sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi

# what the specs run: the module, the units, the host programs and the fakes
CHECK_DEPS = $(LIB) $(DIST_LIB) $(BIGCOUNT_UNIT) $(AGREE_UNIT) $(DIST_HOST_UNIT) $(UNIT) $(SCAN_UNIT) \
       $(DEPS_UNIT) $(MODCACHE_UNIT) $(FATBIN_UNIT) $(REDUCE_UNIT) $(NPY_UNIT) $(RANDOM_UNITS) $(GUARD_UNIT) \
       $(ARENA_UNIT) $(STREAM_UNIT) $(THREADS_TEST) $(FAKE_CUDA) $(CAPI_UNIT) $(EMBED_HOST) \
       $(FAKE_NVRTC) $(FAKE_CUBLAS) $(FAKE_NCCL) $(FAKE_PEER_TEST) $(FAKE_STRICT_TEST)
check: $(CHECK_DEPS)
	@test -n "$(BUSTED)" || { echo "busted not found (make deps installs it)"; exit 1; }
	$(RUN_ENV) $(LUA) $(BUSTED) $(BUSTED_ARGS)

# every spec in TEST_SHARDS busted processes side by side (tools/run_shards.sh
# balances the lists by the specs' times in spec/timings.lua; each process
# prints its own summary): make test on a machine of several cores
TEST_SHARDS ?= 2
check-shards: $(CHECK_DEPS)
	@test -n "$(BUSTED)" || { echo "busted not found (make deps installs it)"; exit 1; }
	$(RUN_ENV) LUA="$(LUA)" BUSTED="$(BUSTED)" tools/run_shards.sh $(TEST_SHARDS)

# Every spec on the CUDA backend against the fake driver (spec/c/fake_cuda.c):
# luacuda loads the fatbinary it loads on a GPU (no LUACUDA_PTX), whose
# cubin the fake checks and whose PTX its interpreter runs, so kernels'
# results are checked too. The fake's device has room for the memory specs.
# FAKE_CUDA_DELAY_US=300 slows every queued operation down, so that work
# read or freed before its stream ran it shows (CI runs both: the delayed
# run on the specs of queued work, make check-fake-cuda-delayed).
# Matrix products go to the fake cuBLAS (spec/c/fake_cublas.c); the matmul
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
	@$(MAKE) --no-print-directory check $(FAKE_ENV)
	@$(if $(or $(if $(strip $(BUSTED_ARGS)),,all),$(findstring $(MATMUL_SPEC),$(BUSTED_ARGS))), \
	  echo "== $(MATMUL_SPEC) again without cuBLAS (LUACUDA_CUBLAS=/nonexistent): the library's kernel"; \
	  $(MAKE) --no-print-directory check $(FAKE_ENV) LUACUDA_CUBLAS=/nonexistent \
	    BUSTED_ARGS="$(filter-out spec/%,$(BUSTED_ARGS)) $(MATMUL_SPEC)")

# The delayed run (CI's): the specs of queued work, that is of streams,
# copies, memory, array math, reductions, products, gathers, sorts, random
# numbers, launches and the C API's waits, where a read or free before the
# stream ran the work would show. The specs of compiling, caching and
# documents queue nothing a delay could reorder; the plain run covers them.
QUEUED_SPECS = $(addprefix spec/,$(addsuffix _spec.lua, \
  async stream hostmem copy memory alias dlpack devices smart cuda_fake \
  array_math reduce random matmul gather sort npy memory_cache funcs \
  frictions cpublas axis_reduce c_units reentry create creation index iterate \
  record dtype half errors kernel generators math coop threads dist \
  differential stress))
check-fake-cuda-delayed:
	@$(MAKE) --no-print-directory check-fake-cuda FAKE_CUDA_DELAY_US=300 \
	  FAKE_CUDA_SCHED_SEED=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ') \
	  BUSTED_ARGS="$(BUSTED_ARGS) $(QUEUED_SPECS)"

# The API reference: LDoc reads the doc comments listed in config.ld and
# writes docs/api/ (committed, so it reads on GitHub and the file system).
# --date "" and the line removed make the output depend on the sources only;
# links to a type (href="index.html#Array") go to its section's anchor
# (Class_Array), where LDoc's own links miss it (not the module's own
# sections: Functions, Fields, Tables).
LDOC = ldoc
define ldoc_to
	rm -rf $(1)
	$(LDOC) --quiet --fatalwarnings --date "" --dir $(1) . >/dev/null
	find $(1) -name '*.html' -exec sed -i -E -e '/>Last updated /d' \
	  -e 's/href="([^"#]*)#([A-Z][A-Za-z]*)"/href="\1#Class_\2"/g' \
	  -e 's/#Class_(Functions|Fields|Tables)"/#\1"/g' {} +
endef

docs:
	@$(MAKE) --no-print-directory deps PACKAGES="$(DOC_PACKAGES)"
	$(call ldoc_to,docs/api)

# docs/api/ as make docs would write it now, an entry for every public name
# (tools/docs_coverage.lua walks the loaded module), and every example runs
# (tools/docs_examples.lua; a scratch compile cache, as one clears it)
docs-check: $(LIB)
	@$(MAKE) --no-print-directory deps PACKAGES="$(DOC_PACKAGES)"
	$(call ldoc_to,$(BUILD)/docs-api)
	@diff -r docs/api $(BUILD)/docs-api >/dev/null || \
	  { diff -r docs/api $(BUILD)/docs-api | head -40; \
	    echo "docs/api/ is not what the sources give: run make docs and commit it"; exit 1; }
	$(RUN_ENV) $(LUA) tools/docs_coverage.lua docs/api
	rm -rf $(BUILD)/docs-cache
	$(RUN_ENV) LUACUDA_CACHE_DIR=$(abspath $(BUILD))/docs-cache $(LUA) tools/docs_examples.lua docs/api

# make test: every spec, in TEST_SHARDS processes (make test BUSTED_ARGS=...:
# those specs, in one)
test: deps
	@if [ -n "$(BUSTED_ARGS)" ]; then \
	  $(MAKE) --no-print-directory check BUSTED="$$(command -v busted)"; \
	else \
	  $(MAKE) --no-print-directory check-shards BUSTED="$$(command -v busted)"; \
	fi

demo: deps
	@$(MAKE) --no-print-directory all
	$(RUN_ENV) $(LUA) examples/saxpy.lua

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

# docs/errors.md from the error sites in src/ and lua/, with a spec test for
# each found by running the specs with a helper that logs the errors caught
errors-catalogue: $(LIB) $(UNIT) $(SCAN_UNIT) $(DEPS_UNIT) $(MODCACHE_UNIT) $(REDUCE_UNIT) $(NPY_UNIT) $(RANDOM_UNITS)
	$(RUN_ENV) LUACUDA_ERRLOG=$(BUILD)/errors.log $(LUA) $(BUSTED) --helper=tools/errors_harvest.lua >/dev/null || true
	$(LUA) tools/errors_catalogue.lua $(BUILD)/errors.log > docs/errors.md
	@tail -2 docs/errors.md

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

# The specs against a module built with AddressSanitizer and UBSan; the
# runtime is preloaded into the (uninstrumented) interpreter. libasan's
# tracking of dynamic TLS misreads the thread-local blocks of dlopen'ed
# kernel modules and crashes the leak checker (valgrind, which checks the
# same memory, is clean); those blocks hold no heap pointers, so the
# tracking is turned off.
SAN_FLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
test-asan: deps
	@$(MAKE) --no-print-directory check BUILD=build-asan CFLAGS="$(SAN_FLAGS)" \
	  LDFLAGS="-fsanitize=address,undefined" BUSTED="$$(command -v busted)" \
	  LUA="env LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 LUACUDA_SANITIZED=1 $(LUA)"

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
# The specs whose tests run in child processes (which run without valgrind)
# or only read the sources are left out of the whole run: under valgrind they
# take the same paths as in make test, minutes of waiting on children.
VALGRIND_SKIP = build_spec docs_spec examples_spec errors_catalogue_spec architecture_spec \
                includes_spec sizes_spec dist_spec dist_agree_spec dist_bigcount_spec
test-valgrind: deps
	@$(MAKE) --no-print-directory deps PACKAGES=valgrind
	@$(MAKE) --no-print-directory check BUSTED="$$(command -v busted)" \
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

# The long differential run (make test runs 2,000 of these sequences):
# DIFF_COUNT sequences from seed DIFF_FIRST, each failing seed printed;
# SEED=n replays that one sequence and prints its operations.
DIFF_COUNT ?= 100000
DIFF_FIRST ?= 1
fuzz-long: $(LIB)
	$(RUN_ENV) SEED="$(SEED)" $(LUA) spec/fuzz_long.lua $(DIFF_COUNT) $(DIFF_FIRST)

# libFuzzer targets (clang) for the pure-C parts that read user input: the
# layout arithmetic, the kernel source scanner and the .npy header reader. Each runs FUZZ_TIME
# seconds over the corpus kept in fuzz/corpus/<target> (read only: what it
# finds goes to $(BUILD)/fuzz/corpus-<target>, a crash to
# $(BUILD)/fuzz/<target>-crash-*).
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 60
FUZZ_FLAGS  = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined $(WARN) -D_POSIX_C_SOURCE=200809L $(BASE_INC)
FUZZ_TARGETS = layout scan npy

$(BUILD)/fuzz/layout_fuzz: fuzz/layout_fuzz.c src/base/layout.c src/base/layout.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) fuzz/layout_fuzz.c src/base/layout.c -o $@

$(BUILD)/fuzz/scan_fuzz: fuzz/scan_fuzz.c $(wildcard src/base/*.[ch])
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) fuzz/scan_fuzz.c $(SCAN_SRC) src/base/dtype.c -o $@ -lm

$(BUILD)/fuzz/npy_fuzz: fuzz/npy_fuzz.c src/base/npy.c src/base/npy.h src/base/dtype.c src/base/strbuf.c \
                        src/base/layout.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) fuzz/npy_fuzz.c src/base/npy.c src/base/dtype.c src/base/strbuf.c \
	  src/base/layout.c -o $@ -lm

fuzz:
	@$(MAKE) --no-print-directory deps PACKAGES=clang
	@$(MAKE) --no-print-directory fuzz-run

fuzz-run: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%_fuzz)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$t; \
	  echo "== fuzz $$t: $(FUZZ_TIME) s over fuzz/corpus/$$t"; \
	  $(BUILD)/fuzz/$${t}_fuzz -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/$$t- $(BUILD)/fuzz/corpus-$$t fuzz/corpus/$$t \
	    > $(BUILD)/fuzz/$$t.log 2>&1 || { tail -25 $(BUILD)/fuzz/$$t.log; exit 1; }; \
	  grep -E '^stat::(number_of_executed_units|new_units_added)' $(BUILD)/fuzz/$$t.log; \
	done

# build and install the rock into a local tree, as a user would
rock:
	luarocks --lua-version=5.4 make --tree=$(BUILD)/rocks luacuda-scm-1.rockspec

clean:
	rm -rf build build-asan build-tsan
