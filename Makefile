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
#
#   The rules are in mk/*.mk, one file per concern (build, units, fakes,
#   test, docs, bench, fuzz, deps); this file holds the variables they share.

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
# the pure-C base, built once into a static library that the module, the
# MPI engine, the C units and (built again with the fuzzer's compiler and
# flags, $(FUZZ_BASE_LIB)) the fuzzers link, so none lists base sources
BASE_OBJ = $(filter $(BUILD)/obj/base/%,$(OBJ))
BASE_LIB = $(BUILD)/libluacuda_base.a
UNIT = $(BUILD)/layout_test
SCAN_UNIT = $(BUILD)/scan_test
DEPS_UNIT = $(BUILD)/deps_test
MODCACHE_UNIT = $(BUILD)/modcache_test
FATBIN_UNIT = $(BUILD)/fatbin_test
REDUCE_UNIT = $(BUILD)/reduce_test
NPY_UNIT = $(BUILD)/npy_test
RANDOM_UNITS = $(BUILD)/random_test $(BUILD)/random_portable_test
# a fake CUDA driver for spec/cuda_fake_spec.lua, built against the toolkit's
# cuda.h where there is one (test code: never installed)
CUDA_INC  ?= /usr/local/cuda/include
FAKE_CUDA  = $(if $(wildcard $(CUDA_INC)/cuda.h),$(BUILD)/fake/libcuda.so.1)
# a fake cuBLAS on the fake driver (spec/fake/fake_cublas.c), for the matrix
# products' calls (make check-fake-cuda sets LUACUDA_CUBLAS to it)
FAKE_CUBLAS = $(if $(FAKE_CUDA),$(BUILD)/fake/libcublas.so.13)
# a fake NCCL on the fake driver (spec/fake/fake_nccl.c), for luacuda.dist's
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
GCPACE_UNIT = $(BUILD)/gcpace_test
THREADS_TEST = $(BUILD)/threads_test

# the spec runner sees the in-tree Lua files and the module just built
RUN_ENV = LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="$(BUILD)/?.so;;" LUACUDA_BUILD="$(BUILD)"

# The files of the host's element loops (reductions, array math) are built
# with the loop vectoriser at its full cost model, as -O3 has it: at -O2
# GCC vectorises only loops of a known trip count.
LOOP_CFLAGS = -ftree-vectorize -fvect-cost-model=dynamic

.PHONY: all install deps check check-shards check-fake-cuda test demo bench bench-chart bench-dist bench-streams bench-ptx bench-gpu bench-gpu-smoke test-asan test-tsan \
        test-valgrind check-fake-cuda-delayed rock clean embed errors-catalogue devkit fuzz-long fuzz fuzz-run docs docs-check

all: $(LIB) $(DIST_LIB)

include mk/build.mk mk/units.mk mk/fakes.mk mk/test.mk mk/docs.mk mk/bench.mk mk/fuzz.mk mk/deps.mk
