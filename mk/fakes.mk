# mk/fakes.mk: the fakes of spec/fake/ (test code, never installed): the
# CUDA driver with its PTX interpreter, cuBLAS, NCCL, NVRTC, and the
# fake driver's own tests.

# the fake driver, with its PTX interpreter (spec/fake/ptx/) always optimised:
# the specs run every kernel through it
PTX_SRC = spec/fake/ptx/parse.c spec/fake/ptx/exec.c
$(BUILD)/fake/libcuda.so.1: spec/fake/fake_cuda.c $(PTX_SRC) spec/fake/ptx/ptx.h spec/fake/ptx/internal.h kernels/abi.h \
                            spec/fake/cubin.c spec/fake/cubin.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -O2 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  -I$(CUDA_INC) -Ikernels -Ispec/fake/ptx $(LIBFLAG) $< $(PTX_SRC) spec/fake/cubin.c -o $@ $(LDFLAGS) -lpthread -lm

$(BUILD)/fake/fake_peer_test: spec/fake/fake_peer_test.c spec/unit/unit.h $(BUILD)/fake/libcuda.so.1
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -I$(CUDA_INC) $< -o $@ \
	  -L$(BUILD)/fake -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) -lpthread

$(BUILD)/fake/fake_strict_test: spec/fake/fake_strict_test.c spec/unit/unit.h $(BUILD)/fake/libcuda.so.1
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -I$(CUDA_INC) $< -o $@ \
	  -L$(BUILD)/fake -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) -lpthread

# built against the toolkit's cublas_api.h where it is (its own declarations
# otherwise); it finds the fake driver already loaded, with dlopen
$(BUILD)/fake/libcublas.so.13: spec/fake/fake_cublas.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -O2 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  -I$(CUDA_INC) $(LIBFLAG) $< -o $@ $(LDFLAGS) -ldl -lpthread

$(BUILD)/fake/libnccl.so.2: spec/fake/fake_nccl.c src/base/half.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -O2 $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  -I$(CUDA_INC) -Isrc/base $(LIBFLAG) $< -o $@ $(LDFLAGS) -ldl -lpthread -lm

$(FAKE_NVRTC): spec/fake/fake_nvrtc.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	  $(LIBFLAG) $< -o $@ $(LDFLAGS) -ldl -lpthread
