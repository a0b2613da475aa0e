# mk/build.mk: the module (core.so) and its objects, the base library,
# luacuda.dist's MPI engine, the embedding example, install, the rock,
# the demo and clean. Included by the Makefile, which holds the variables.

# the files of the host's element loops, with LOOP_CFLAGS (the Makefile)
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

$(BASE_LIB): $(BASE_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# the whole base, as when its objects were listed (no member left out for
# being unreferenced)
$(LIB): $(filter-out $(BASE_OBJ),$(OBJ)) $(BASE_LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LIBFLAG) $(filter-out $(BASE_OBJ),$(OBJ)) -Wl,--whole-archive $(BASE_LIB) \
	  -Wl,--no-whole-archive -o $@ $(LDFLAGS) $(LC_LDFLAGS) $(LC_LIBS)

# its NCCL engine (src/dist/nccl_engine.c) needs the toolkit's nccl.h and cuda.h,
# and is left out without them; NCCL itself is opened with dlopen
DIST_NCCL_FLAGS = $(if $(and $(wildcard $(CUDA_INC)/nccl.h),$(wildcard $(CUDA_INC)/cuda.h)),\
                    -DLUACUDA_NCCL -I$(CUDA_INC))
DIST_SRC = $(addprefix src/dist/,dist.c process.c dtypes.c comm.c header.c args.c jobs.c \
             route.c collectives.c agree.c nccl_engine.c bigcount.c)
# the pure-C base it shares with core.so (the dtype table), linked in from
# the base library (the members it uses), not copied: core.so's own copy
# is hidden
$(BUILD)/luacuda/dist_mpi.so: $(DIST_SRC) $(BASE_LIB) $(wildcard src/dist/*.h) src/luacuda.h $(LIB)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE -fPIC -fvisibility=hidden -Isrc $(BASE_INC) -I$(LUA_INCDIR) \
	  $(DIST_NCCL_FLAGS) $(LIBFLAG) $(DIST_SRC) $(BASE_LIB) -o $@ $(LDFLAGS) \
	  -L$(BUILD)/luacuda -l:core.so -Wl,-rpath,'$$ORIGIN' -Wl,-z,nodelete -ldl -lpthread -lm

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

demo: deps
	@$(MAKE) --no-print-directory all
	$(RUN_ENV) $(LUA) examples/saxpy.lua

# build and install the rock into a local tree, as a user would
rock:
	luarocks --lua-version=5.4 make --tree=$(BUILD)/rocks luacuda-scm-1.rockspec

clean:
	rm -rf build build-asan build-tsan
