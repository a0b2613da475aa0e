# mk/units.mk: the C unit tests of spec/unit/ (spec/c_units_spec.lua and
# the dist specs run them) and the host programs the specs start.

# bigcount.c with its test, which wraps the MPI calls it makes (MPI's
# profiling interface) to count them
$(DIST_HOST_UNIT): spec/unit/dist_host_test.c spec/unit/unit.h src/luacuda.h $(LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE -I$(LUA_INCDIR) -Isrc spec/unit/dist_host_test.c \
	  -o $@ $(LDFLAGS) $(HOST_LINK)

# agree.c included in its test, which holds back chosen messages (MPI's
# profiling interface)
$(AGREE_UNIT): spec/unit/agree_test.c spec/unit/unit.h src/dist/agree.c src/dist/agree.h
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE spec/unit/agree_test.c -o $@ $(LDFLAGS) -lpthread

$(BIGCOUNT_UNIT): spec/unit/bigcount_test.c spec/unit/unit.h src/dist/bigcount.c src/dist/bigcount.h
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE spec/unit/bigcount_test.c src/dist/bigcount.c \
	  -o $@ $(LDFLAGS) -lpthread

# the C units of src/base: pure C, built without Lua's include path, each
# test program linking the base library for the code it tests: layout,
# the kernel source scanner, reductions and scans on host memory, the .npy
# header, the host's random numbers, the record of the headers a
# compilation read, the process's compiled modules by key, the fatbinary
# writer (spec/fatbin_spec.lua also compares it with the toolkit's tool)
UNIT_CFLAGS = $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L
BASE_UNITS = $(UNIT) $(SCAN_UNIT) $(REDUCE_UNIT) $(NPY_UNIT) $(BUILD)/random_test $(DEPS_UNIT) $(MODCACHE_UNIT) \
             $(FATBIN_UNIT)
$(BASE_UNITS): $(BUILD)/%: spec/unit/%.c spec/unit/unit.h $(BASE_LIB) $(wildcard src/base/*.h) kernels/philox.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BASE_INC) $< $(BASE_LIB) -o $@ $(LDFLAGS) -lpthread -lm
# random_test is built with the loop flags of random.c, and again without
# the AVX2 path (random.c compiled here with it off, the rest from the
# library), so that both paths are tested on an AVX2 machine
$(BUILD)/random_test: UNIT_CFLAGS += $(LOOP_CFLAGS)
$(BUILD)/random_portable_test: spec/unit/random_test.c src/base/random.c spec/unit/unit.h $(BASE_LIB) \
                               src/base/random.h kernels/philox.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(LOOP_CFLAGS) -DLC_RANDOM_AVX2=0 $(BASE_INC) spec/unit/random_test.c src/base/random.c \
	  $(BASE_LIB) -o $@ $(LDFLAGS) -lpthread -lm

# several lua_States on several threads (spec/threads_spec.lua runs it): a
# C program that links Lua itself and requires the module from $(BUILD).
# The -L list is the loader's path, so a Lua found through LD_LIBRARY_PATH
# (the GPU devkit's) links too.
LUA_LIB ?= -llua5.4
$(THREADS_TEST): spec/unit/threads_test.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -I$(LUA_INCDIR) -Isrc \
	  -DLC_BUILD_DIR='"$(BUILD)"' spec/unit/threads_test.c -o $@ \
	  $(LDFLAGS) $(addprefix -L,$(subst :, ,$(LD_LIBRARY_PATH))) $(LUA_LIB) -lpthread

# the simulator's guarded blocks, with mmap and madvise wrapped so a test can fail them
$(GUARD_UNIT): spec/unit/guard_test.c spec/unit/unit.h src/backend/sim/guard.c src/backend/sim/sim.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BACKEND_INC) -Isrc/backend/sim spec/unit/guard_test.c src/backend/sim/guard.c \
	  -o $@ $(LDFLAGS) \
	  -Wl,--wrap=mmap -Wl,--wrap=madvise -lpthread

# the simulator's small-block arena, with realloc wrapped so a write past a
# free list faults
$(ARENA_UNIT): spec/unit/arena_test.c spec/unit/unit.h src/backend/sim/arena.c src/backend/sim/sim.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BACKEND_INC) -Isrc/backend/sim spec/unit/arena_test.c src/backend/sim/arena.c \
	  -o $@ $(LDFLAGS) -Wl,--wrap=realloc -lpthread

# the simulator's stream executor: small work run at the call, in order
$(STREAM_UNIT): spec/unit/stream_test.c spec/unit/unit.h src/backend/sim/stream.c src/backend/sim/sim.h \
                $(BASE_LIB)
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) $(BACKEND_INC) -Isrc/backend/sim spec/unit/stream_test.c src/backend/sim/stream.c \
	  $(BASE_LIB) -o $@ $(LDFLAGS) -lpthread

# the count of live buffer bytes that paces the collector, across threads
$(GCPACE_UNIT): spec/unit/gcpace_test.c spec/unit/unit.h src/binding/gcpace.c src/binding/gcpace.h
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) -Isrc/binding -I$(LUA_INCDIR) spec/unit/gcpace_test.c src/binding/gcpace.c \
	  -o $@ $(LDFLAGS) -llua5.4 -lpthread

# the C API's test: release callbacks, DLPack deleters, accessors
$(CAPI_UNIT): spec/unit/capi_test.c spec/unit/unit.h src/luacuda.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -D_DEFAULT_SOURCE -I$(LUA_INCDIR) -Isrc \
	  spec/unit/capi_test.c -o $@ $(LDFLAGS) $(HOST_LINK) -ldl
