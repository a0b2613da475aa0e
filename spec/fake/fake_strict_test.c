/*
** fake_strict_test: where the fake driver (spec/fake/fake_cuda.c) and its PTX
** interpreter are no kinder than a GPU. Fresh device, managed and pool
** memory, a kernel's registers and its local memory hold garbage (0xA5
** bytes), not zeros; a copy whose source and destination overlap is
** refused (undefined on a GPU), and so is a device-to-device 2-D copy at
** a pitch cuMemAllocPitch would not give (the driver may refuse it); an
** event is not recorded on another context's stream; and the threads of a
** block run in a shuffled order (FAKE_CUDA_SCHED_SEED), so a missing
** bar.sync gives a wrong result. A fatbinary loads as the driver loads it (its ELF for the device's SM,
** checked, with the PTX beside it run; else PTX to JIT; else
** NO_BINARY_FOR_GPU), and a cubin loaded alone is not run; a cubin's
** .nv.info that runs past its section or the image is refused, and so is
** one whose section table, names or .note.nv.cuinfo run past the image.
** An address is found in the allocation that holds it, interior pointers
** and the ends of ranges as the driver takes them.
** Two devices (FAKE_CUDA_DEVICES=2, set here before cuInit).
**
**   fake_strict_test [--list | NAME]   (unit.h)
*/
#include <cuda.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit/unit.h"

static CUcontext ctx[2];

static int setup(void) {
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  setenv("FAKE_CUDA_CC", "9.0,9.0", 1);
  if (cuInit(0) != CUDA_SUCCESS) return -1;
  for (int i = 0; i < 2; i++)
    if (cuDevicePrimaryCtxRetain(&ctx[i], i) != CUDA_SUCCESS) return -1;
  return cuCtxSetCurrent(ctx[0]) == CUDA_SUCCESS ? 0 : -1;
}

static bool all_poison(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0xA5) return false;
  return true;
}

static int test_fresh_memory_poisoned(void) {
  unsigned char host[64];
  CUdeviceptr d, m, q;
  CHECK_EQ(cuMemAlloc(&d, sizeof host), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyDtoH(host, d, sizeof host), CUDA_SUCCESS);
  CHECK(all_poison(host, sizeof host));
  CHECK_EQ(cuMemAllocManaged(&m, sizeof host, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
  CHECK(all_poison((unsigned char *)(uintptr_t)m, sizeof host));
  CHECK_EQ(cuMemAllocAsync(&q, sizeof host, NULL), CUDA_SUCCESS);   /* a new pool block */
  CHECK_EQ(cuMemcpyDtoH(host, q, sizeof host), CUDA_SUCCESS);
  CHECK(all_poison(host, sizeof host));
  CHECK_EQ(cuMemFreeAsync(q, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(m), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(d), CUDA_SUCCESS);
  return 0;
}

static int test_overlapping_copies_refused(void) {
  CUdeviceptr d;
  CHECK_EQ(cuMemAlloc(&d, 4096), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyAsync(d + 8, d, 16, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemcpyAsync(d, d + 15, 16, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemcpyAsync(d, d, 16, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemcpyAsync(d + 16, d, 16, NULL), CUDA_SUCCESS);         /* adjacent: fine */
  /* 2-D: even rows to odd rows of the same memory meet nowhere */
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = d;
  c.dstDevice = d + 256;
  c.srcPitch = c.dstPitch = 512;                     /* a pitch cuMemAllocPitch gives */
  c.WidthInBytes = 256;
  c.Height = 4;
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_SUCCESS);
  c.dstDevice = d + 128;                                              /* now they do */
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_ERROR_INVALID_VALUE);
  c.dstDevice = d + 512;                                              /* row k onto row k + 1 */
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(d), CUDA_SUCCESS);
  return 0;
}

/* device to device, a pitch cuMemAllocPitch does not give (a multiple of
** 512) is refused, as the manual says the driver may refuse it; between
** host and device, or one row, any pitch goes */
static int test_intra_device_pitch_refused(void) {
  CUdeviceptr a, b;
  static unsigned char host[4 * 48];
  CHECK_EQ(cuMemAlloc(&a, 4096), CUDA_SUCCESS);
  CHECK_EQ(cuMemAlloc(&b, 4096), CUDA_SUCCESS);
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  c.srcDevice = a;
  c.dstDevice = b;
  c.srcPitch = 48;
  c.dstPitch = 512;
  c.WidthInBytes = 32;
  c.Height = 4;
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_ERROR_INVALID_VALUE);
  c.srcPitch = 1024;
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_SUCCESS);
  c.srcPitch = 48;
  c.Height = 1;
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_SUCCESS);
  c.Height = 4;
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host;
  CHECK_EQ(cuMemcpy2DAsync(&c, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuStreamSynchronize(NULL), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(a), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(b), CUDA_SUCCESS);
  return 0;
}

static int test_event_on_other_context(void) {
  CUstream s1;
  CUevent e;
  CHECK_EQ(cuCtxSetCurrent(ctx[1]), CUDA_SUCCESS);
  CHECK_EQ(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  CHECK_EQ(cuEventCreate(&e, 0), CUDA_SUCCESS);
  CHECK_EQ(cuEventRecord(e, s1), CUDA_ERROR_INVALID_HANDLE);
  CHECK_EQ(cuEventRecord(e, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuEventSynchronize(e), CUDA_SUCCESS);
  CHECK_EQ(cuEventDestroy(e), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[1]), CUDA_SUCCESS);
  CHECK_EQ(cuStreamDestroy(s1), CUDA_SUCCESS);
  CHECK_EQ(cuCtxSetCurrent(ctx[0]), CUDA_SUCCESS);
  return 0;
}

/* unset: stores a register and a word of local memory it never wrote;
** race: thread i writes s[i], then reads s[(i + 1) % 32] with no barrier
** between (race_synced has the bar.sync). */
static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry unset(.param .u64 out)\n{\n"
    "  .local .align 4 .b8 buf[8];\n"
    "  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  st.global.u32 [%rd2], %r1;\n"
    "  ld.local.u32 %r2, [buf+4];\n  st.global.u32 [%rd2+4], %r2;\n  ret;\n}\n"
    ".visible .entry race(.param .u64 out)\n{\n"
    "  .shared .align 4 .b8 s[128];\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, s;\n  shl.b32 %r3, %r1, 2;\n"
    "  add.s32 %r4, %r2, %r3;\n  add.s32 %r5, %r1, 1;\n  st.shared.u32 [%r4], %r5;\n"
    "  and.b32 %r6, %r5, 31;\n  shl.b32 %r6, %r6, 2;\n  add.s32 %r6, %r2, %r6;\n"
    "  ld.shared.u32 %r7, [%r6];\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd4, %rd2, %rd3;\n  st.global.u32 [%rd4], %r7;\n"
    "  ret;\n}\n"
    ".visible .entry race_synced(.param .u64 out)\n{\n"
    "  .shared .align 4 .b8 s[128];\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, s;\n  shl.b32 %r3, %r1, 2;\n"
    "  add.s32 %r4, %r2, %r3;\n  add.s32 %r5, %r1, 1;\n  st.shared.u32 [%r4], %r5;\n"
    "  bar.sync 0;\n"
    "  and.b32 %r6, %r5, 31;\n  shl.b32 %r6, %r6, 2;\n  add.s32 %r6, %r2, %r6;\n"
    "  ld.shared.u32 %r7, [%r6];\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd4, %rd2, %rd3;\n  st.global.u32 [%rd4], %r7;\n"
    "  ret;\n}\n";

static CUmodule module;

static int run(const char *entry, CUdeviceptr out, unsigned threads) {
  CUfunction f;
  if (module == NULL && cuModuleLoadData(&module, ptx) != CUDA_SUCCESS) return -1;
  if (cuModuleGetFunction(&f, module, entry) != CUDA_SUCCESS) return -1;
  void *args[] = {&out};
  if (cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS) return -1;
  return cuStreamSynchronize(NULL) == CUDA_SUCCESS ? 0 : -1;
}

static int test_registers_and_local_poisoned(void) {
  CUdeviceptr out;
  uint32_t got[2] = {0, 0};
  CHECK_EQ(cuMemAlloc(&out, sizeof got), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyHtoD(out, got, sizeof got), CUDA_SUCCESS);   /* what the kernel overwrites */
  CHECK_EQ(run("unset", out, 1), 0);
  CHECK_EQ(cuMemcpyDtoH(got, out, sizeof got), CUDA_SUCCESS);
  CHECK_EQ(got[0], 0xA5A5A5A5u);
  CHECK_EQ(got[1], 0xA5A5A5A5u);
  CHECK_EQ(cuMemFree(out), CUDA_SUCCESS);
  return 0;
}

/* Thread i of the race reads what thread i + 1 wrote: right (i + 2, mod
** 32, plus one) only where i + 1 ran its store first. */
static int wrong_reads(CUdeviceptr out, const char *entry) {
  uint32_t got[32];
  if (run(entry, out, 32) != 0) return -1;
  if (cuMemcpyDtoH(got, out, sizeof got) != CUDA_SUCCESS) return -1;
  int wrong = 0;
  for (unsigned i = 0; i < 32; i++) wrong += got[i] != (i + 1) % 32 + 1;
  return wrong;
}

static int test_missing_barrier_shows(void) {
  CUdeviceptr out;
  CHECK_EQ(cuMemAlloc(&out, 32 * 4), CUDA_SUCCESS);
  /* in order, every thread but the last reads before its neighbour wrote */
  setenv("FAKE_CUDA_SCHED_SEED", "0", 1);
  CHECK_EQ(wrong_reads(out, "race"), 31);
  CHECK_EQ(wrong_reads(out, "race"), 31);
  /* shuffled, the count changes from launch to launch (and is never 31
  ** for long: a few launches show it) */
  setenv("FAKE_CUDA_SCHED_SEED", "12345", 1);
  bool other = false;
  for (int k = 0; k < 8 && !other; k++) {
    int w = wrong_reads(out, "race");
    CHECK(w >= 0);
    other = w != 31;
  }
  CHECK(other);
  /* with the barrier, right under every order */
  for (int k = 0; k < 8; k++) CHECK_EQ(wrong_reads(out, "race_synced"), 0);
  setenv("FAKE_CUDA_SCHED_SEED", "0", 1);
  CHECK_EQ(wrong_reads(out, "race_synced"), 0);
  CHECK_EQ(cuMemFree(out), CUDA_SUCCESS);
  return 0;
}

/* cuMemFreeHost does not wait for the copy queued before it (the driver
** does not promise to): the copy then faults. Last, as the fault is the
** context's for good. The host function holds the stream until the free
** returned (5 s at most, so that a fake that waits is a failure, not a
** hang). */
static atomic_int gate;
static void CUDA_CB hold(void *ud) {
  (void)ud;
  struct timespec ms = {0, 1000000};
  for (int i = 0; i < 5000 && !atomic_load(&gate); i++) nanosleep(&ms, NULL);
}

static int test_free_host_does_not_wait(void) {
  CUstream s;
  void *h;
  CUdeviceptr d;
  CHECK_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CHECK_EQ(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
  CHECK_EQ(cuMemAlloc(&d, 64), CUDA_SUCCESS);
  CHECK_EQ(cuLaunchHostFunc(s, hold, NULL), CUDA_SUCCESS);
  CHECK_EQ(cuMemcpyAsync(d, (CUdeviceptr)(uintptr_t)h, 64, s), CUDA_SUCCESS);
  CHECK_EQ(cuMemFreeHost(h), CUDA_SUCCESS);
  CHECK_EQ(cuStreamQuery(s), CUDA_ERROR_NOT_READY);      /* the free did not wait */
  atomic_store(&gate, 1);
  CHECK_EQ(cuStreamSynchronize(s), CUDA_ERROR_ILLEGAL_ADDRESS);
  return 0;
}

/* The fake finds the allocation holding an address (its index by address):
** a copy may start anywhere inside a device allocation and end at its end,
** not one byte past; a free, an unregistration or a free on a stream takes
** an allocation's first byte only; registered memory may end where
** page-locked memory starts, not one byte inside it. A pool block taken
** again while its last allocation's free is still queued holds both (they
** start at the block): the newest allocation is the one freed. */
static int test_allocations_found_by_address(void) {
  enum { N = 24 };
  static unsigned char bytes[4096];
  CUdeviceptr d[N];
  for (int i = 0; i < N; i++) CHECK_EQ(cuMemAlloc(&d[i], 16 + 8 * (size_t)i), CUDA_SUCCESS);
  for (int i = 0; i < N; i += 3) CHECK_EQ(cuMemFree(d[i]), CUDA_SUCCESS);   /* holes between */
  for (int i = 0; i < N; i += 3) CHECK_EQ(cuMemAlloc(&d[i], 16 + 8 * (size_t)i), CUDA_SUCCESS);
  for (int i = 0; i < N; i++) {
    size_t n = 16 + 8 * (size_t)i;
    CHECK_EQ(cuMemcpyHtoD(d[i], bytes, n), CUDA_SUCCESS);
    CHECK_EQ(cuMemcpyHtoD(d[i] + n / 2, bytes, n - n / 2), CUDA_SUCCESS);   /* to its end */
    CHECK_EQ(cuMemcpyHtoD(d[i] + n - 1, bytes, 2), CUDA_ERROR_INVALID_VALUE);   /* one past */
    CHECK_EQ(cuMemcpyDtoH(bytes, d[i] + 1, n), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(cuMemFree(d[i] + 1), CUDA_ERROR_INVALID_VALUE);                /* not its start */
  }
  for (int i = 0; i < N; i++) CHECK_EQ(cuMemFree(d[i]), CUDA_SUCCESS);
  CHECK_EQ(cuMemFree(d[0]), CUDA_ERROR_INVALID_VALUE);                       /* gone */

  void *h;
  CHECK_EQ(cuMemAllocHost(&h, 64), CUDA_SUCCESS);
  CHECK_EQ(cuMemHostRegister(bytes, 64, 0), CUDA_SUCCESS);
  CHECK_EQ(cuMemHostRegister(bytes + 63, 64, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CHECK_EQ(cuMemHostRegister(bytes + 64, 64, 0), CUDA_SUCCESS);             /* where it ends */
  CHECK_EQ(cuMemHostRegister((char *)h + 63, 1, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  CHECK_EQ(cuMemHostUnregister(bytes + 1), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  CHECK_EQ(cuMemHostUnregister(bytes + 64), CUDA_SUCCESS);
  CHECK_EQ(cuMemHostUnregister(bytes), CUDA_SUCCESS);
  CHECK_EQ(cuMemFreeHost((char *)h + 8), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemFreeHost(h), CUDA_SUCCESS);

  CUstream s;
  CUdeviceptr p, q;
  CHECK_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CHECK_EQ(cuLaunchHostFunc(s, hold, NULL), CUDA_SUCCESS);   /* the frees stay queued */
  CHECK_EQ(cuMemAllocAsync(&p, 256, s), CUDA_SUCCESS);
  CHECK_EQ(cuMemFreeAsync(p + 8, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_EQ(cuMemFreeAsync(p, s), CUDA_SUCCESS);
  CHECK_EQ(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);              /* its free is queued */
  CHECK_EQ(cuMemAllocAsync(&q, 64, s), CUDA_SUCCESS);
  CHECK_EQ(q, p);                                                         /* the same block */
  CHECK_EQ(cuMemcpyHtoD(q + 32, bytes, 64), CUDA_ERROR_INVALID_VALUE);   /* past the newest's end */
  CHECK_EQ(cuMemcpyHtoD(q + 96, bytes, 256), CUDA_ERROR_INVALID_VALUE);  /* past the older's */
  CHECK_EQ(cuMemFreeAsync(q, s), CUDA_SUCCESS);                          /* the newest */
  CHECK_EQ(cuMemFreeAsync(q, s), CUDA_ERROR_INVALID_VALUE);
  atomic_store(&gate, 1);
  CHECK_EQ(cuStreamSynchronize(s), CUDA_SUCCESS);
  atomic_store(&gate, 0);
  CHECK_EQ(cuStreamDestroy(s), CUDA_SUCCESS);
  return 0;
}

/* ---- images: a fatbinary is taken as the driver takes it ---------------- */

/* A kernel that stores 7 at out[0], as PTX for sm_XX (the target patched). */
static char put_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry put(.param .u64 out)\n{\n"
    "  .reg .b32 %r<2>;\n  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, 7;\n  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";

/* The ELF header of a cubin for sm: CUDA's OSABI 0x41, the SM in e_flags'
** second byte, shnum section headers of 64 bytes at shoff, the section
** names in section 1. */
static void cubin_header(unsigned char *elf, unsigned sm, uint64_t shoff, uint16_t shnum) {
  memcpy(elf, "\177ELF\2\1\1\x41\x08", 9);
  uint32_t flags = sm << 8;
  uint16_t shentsize = 64, shstrndx = 1;
  memcpy(elf + 0x30, &flags, 4);
  memcpy(elf + 0x28, &shoff, 8);
  memcpy(elf + 0x3a, &shentsize, 2);
  memcpy(elf + 0x3c, &shnum, 2);
  memcpy(elf + 0x3e, &shstrndx, 2);
}

/* A cubin of the least the fake reads: the ELF header (CUDA's OSABI 0x41,
** the SM in e_flags' second byte) and the section names (their table's
** size too: spec/fake/cubin.c reads within it), one
** ".text.<kernel>" section; 288 bytes into elf. */
static size_t tiny_cubin(unsigned char *elf, int sm, const char *kernel) {
  memset(elf, 0, 288);
  uint64_t shoff = 96;
  cubin_header(elf, (unsigned)sm, shoff, 3);
  /* the section names at 64: "", ".shstrtab", ".text.<kernel>" */
  memcpy(elf + 65, ".shstrtab", 9);
  snprintf((char *)elf + 75, 21, ".text.%s", kernel);
  uint32_t name1 = 1, name2 = 11;
  uint64_t names_at = 64, names_size = 32;
  memcpy(elf + 96 + 64, &name1, 4);
  memcpy(elf + 96 + 64 + 0x18, &names_at, 8);
  memcpy(elf + 96 + 64 + 0x20, &names_size, 8);
  memcpy(elf + 96 + 128, &name2, 4);
  return 288;
}

/* A fatbinary of up to two entries (kind 2 ELF, 1 PTX), packed here by
** the layout src/base/fatbin.c writes down, into f; its length. */
typedef struct image { int kind, sm; const void *data; size_t len; } image;
static size_t pack(unsigned char *f, const image *in, int n) {
  size_t at = 16;
  for (int i = 0; i < n; i++) {
    size_t hdr = in[i].kind == 1 ? 80 : 64, pay = (in[i].len + 1 + 7) / 8 * 8;
    unsigned char *e = f + at;
    memset(e, 0, hdr + pay);
    uint16_t kind = (uint16_t)in[i].kind, ver = 0x0101;
    uint32_t h32 = (uint32_t)hdr, sm = (uint32_t)in[i].sm, opts = 64, optext = 72;
    uint64_t p64 = pay, flags = 0x11;
    memcpy(e, &kind, 2);
    memcpy(e + 2, &ver, 2);
    memcpy(e + 4, &h32, 4);
    memcpy(e + 8, &p64, 8);
    memcpy(e + 28, &sm, 4);
    memcpy(e + 40, &flags, 8);
    if (in[i].kind == 1) {
      memcpy(e + 20, &opts, 4);
      memcpy(e + 64, &optext, 4);
    }
    memcpy(e + hdr, in[i].data, in[i].len);
    at += hdr + pay;
  }
  uint32_t magic = 0xBA55ED50u;
  uint16_t one = 1, sixteen = 16;
  uint64_t total = at - 16;
  memcpy(f, &magic, 4);
  memcpy(f + 4, &one, 2);
  memcpy(f + 6, &sixteen, 2);
  memcpy(f + 8, &total, 8);
  return at;
}

/* Load image and run put; the loader's code, or the launch's, and what
** the kernel stored (0 when it did not run). */
static CUresult load_and_put(const void *image, uint32_t *stored) {
  CUmodule m;
  CUfunction f;
  CUdeviceptr out;
  *stored = 0;
  CUresult r = cuModuleLoadData(&m, image);
  if (r != CUDA_SUCCESS) return r;
  if ((r = cuModuleGetFunction(&f, m, "put")) == CUDA_SUCCESS &&
      (r = cuMemAlloc(&out, 4)) == CUDA_SUCCESS) {
    void *args[] = {&out};
    r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
    if (r == CUDA_SUCCESS) r = cuMemcpyDtoH(stored, out, 4);
    cuMemFree(out);
  }
  cuModuleUnload(m);
  return r;
}

static unsigned char elf90[288], elf80[288], elf_other[288], fat[2048];

static void ptx_for(int sm) {
  char *t = strstr(put_ptx, "sm_") + 3;
  t[0] = (char)('0' + sm / 10);
  t[1] = (char)('0' + sm % 10);
}

/* the device's cubin is checked, the PTX beside it runs */
static int test_fatbin_runs_its_ptx(void) {
  uint32_t got;
  ptx_for(90);
  tiny_cubin(elf90, 90, "put");
  image both[] = {{2, 90, elf90, 288}, {1, 90, put_ptx, strlen(put_ptx)}};
  pack(fat, both, 2);
  CHECK_EQ(load_and_put(fat, &got), CUDA_SUCCESS);
  CHECK_EQ(got, 7);
  /* an entry whose ELF says another SM than the entry: a broken image */
  tiny_cubin(elf80, 80, "put");
  image lying[] = {{2, 90, elf80, 288}, {1, 90, put_ptx, strlen(put_ptx)}};
  pack(fat, lying, 2);
  CHECK_EQ(load_and_put(fat, &got), CUDA_ERROR_INVALID_IMAGE);
  /* a PTX kernel the cubin does not have: not the same module */
  tiny_cubin(elf_other, 90, "other");
  image other[] = {{2, 90, elf_other, 288}, {1, 90, put_ptx, strlen(put_ptx)}};
  pack(fat, other, 2);
  CHECK_EQ(load_and_put(fat, &got), CUDA_ERROR_INVALID_IMAGE);
  return 0;
}

/* no cubin for the device's SM: the PTX is JIT-compiled; without one
** either, NO_BINARY_FOR_GPU */
static int test_fatbin_without_the_devices_cubin(void) {
  uint32_t got;
  ptx_for(80);
  tiny_cubin(elf80, 80, "put");
  image jit[] = {{2, 80, elf80, 288}, {1, 80, put_ptx, strlen(put_ptx)}};
  pack(fat, jit, 2);
  CHECK_EQ(load_and_put(fat, &got), CUDA_SUCCESS);
  CHECK_EQ(got, 7);
  image none[] = {{2, 80, elf80, 288}};
  pack(fat, none, 1);
  CHECK_EQ(load_and_put(fat, &got), CUDA_ERROR_NO_BINARY_FOR_GPU);
  ptx_for(100);                            /* PTX newer than the device: no JIT */
  image newer[] = {{1, 100, put_ptx, strlen(put_ptx)}};
  pack(fat, newer, 1);
  CHECK_EQ(load_and_put(fat, &got), CUDA_ERROR_NO_BINARY_FOR_GPU);
  ptx_for(90);
  return 0;
}

/* a cubin alone loads, its kernels are found, but the fake cannot run them */
static int test_cubin_alone_not_run(void) {
  uint32_t got;
  tiny_cubin(elf90, 90, "put");
  CHECK_EQ(load_and_put(elf90, &got), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_EQ(got, 0);
  return 0;
}

/* A tiny cubin with a .nv.info section of the n bytes at info (up to 32),
** its size said to be `size`, at offset `at` (0: where the bytes are);
** 384 bytes into elf. */
static void cubin_with_info(unsigned char *elf, const void *info, size_t n, uint64_t size,
                            uint64_t at) {
  memset(elf, 0, 384);
  uint64_t shoff = 128, names_at = 64, info_at = at ? at : 96;
  cubin_header(elf, 90, shoff, 4);
  memcpy(elf + 64, "\0.shstrtab\0.text.put\0.nv.info", 30);   /* names at 1, 11, 21 */
  memcpy(elf + 96, info, n);
  uint32_t name1 = 1, name2 = 11, name3 = 21, loproc = 0x70000000;
  uint64_t names_size = 30;
  memcpy(elf + 128 + 64, &name1, 4);
  memcpy(elf + 128 + 64 + 0x18, &names_at, 8);
  memcpy(elf + 128 + 64 + 0x20, &names_size, 8);
  memcpy(elf + 128 + 128, &name2, 4);
  memcpy(elf + 128 + 192, &name3, 4);
  memcpy(elf + 128 + 192 + 4, &loproc, 4);
  memcpy(elf + 128 + 192 + 0x18, &info_at, 8);
  memcpy(elf + 128 + 192 + 0x20, &size, 8);
}

/* a cubin's .nv.info (spec/fake/cubin.c) is read within its section and
** the image: one that runs past either is a broken image, refused */
static int test_cubin_frames_bounded(void) {
  static unsigned char elf[384];
  uint32_t got;
  ptx_for(90);
  /* EIATTR_FRAME_SIZE (format 4, 8 bytes: a symbol, a size) */
  const unsigned char frame[] = {4, 0x11, 8, 0, 0, 0, 0, 0, 64, 0, 0, 0};
  const unsigned char maxreg[] = {3, 0x1b, 0xff, 0};   /* a format 3 attribute: 4 bytes */
  struct { const void *info; size_t n; uint64_t size, at; CUresult want; } cases[] = {
    {maxreg, 4, 4, 0, CUDA_SUCCESS},                     /* well formed, no frames */
    {frame, 12, 6, 0, CUDA_ERROR_INVALID_IMAGE},         /* its value past the section's end */
    {frame, 12, 2, 0, CUDA_ERROR_INVALID_IMAGE},         /* the section ends in its header */
    {frame, 12, 12, 0, CUDA_ERROR_INVALID_IMAGE},        /* symbol 0 of a cubin with no .symtab */
    {maxreg, 4, 4, 1000, CUDA_ERROR_INVALID_IMAGE},      /* the section past the image's end */
    {"\x09\x1b\xff\x00", 4, 4, 0, CUDA_ERROR_INVALID_IMAGE},   /* a format the fake does not know */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cubin_with_info(elf, cases[i].info, cases[i].n, cases[i].size, cases[i].at);
    image both[] = {{2, 90, elf, 384}, {1, 90, put_ptx, strlen(put_ptx)}};
    pack(fat, both, 2);
    if (load_and_put(fat, &got) != cases[i].want)
      return failf(__FILE__, __LINE__, "case %zu: not %d", i, (int)cases[i].want);
    if (cases[i].want == CUDA_SUCCESS) CHECK_EQ(got, 7);
  }
  return 0;
}

/* Section header i of a cubin whose headers are at shoff: its name (an
** offset into the names), type, and bytes [off, off + size). */
static void put_section(unsigned char *elf, uint64_t shoff, int i, uint32_t name, uint32_t type,
                        uint64_t off, uint64_t size) {
  unsigned char *h = elf + shoff + 64 * (uint64_t)i;
  memcpy(h, &name, 4);
  memcpy(h + 4, &type, 4);
  memcpy(h + 0x18, &off, 8);
  memcpy(h + 0x20, &size, 8);
}

/* A cubin of the sections "", .shstrtab, .text.put and .note.nv.cuinfo (a
** toolkit of 12.0), NOTED_LEN bytes into elf: the names at 64 (37 bytes),
** the note at 104 (32: its name "NVIDIA Corp", its description the note's
** version, the SM and the toolkit, 16 bits each, then 16 of padding), the
** section headers at 136, ending the image as a cubin's headers do. */
enum { NOTED_LEN = 392, NOTED_SHOFF = 136 };
static void noted_cubin(unsigned char *elf) {
  memset(elf, 0, NOTED_LEN);
  cubin_header(elf, 90, NOTED_SHOFF, 4);
  memcpy(elf + 64, "\0.shstrtab\0.text.put\0.note.nv.cuinfo", 37);   /* names at 1, 11, 21 */
  const uint32_t note[] = {12, 8, 1000};                                /* namesz, descsz, type */
  const uint16_t desc[] = {2, 90, 120, 0};
  memcpy(elf + 104, note, sizeof note);
  memcpy(elf + 116, "NVIDIA Corp", 12);
  memcpy(elf + 128, desc, sizeof desc);
  put_section(elf, NOTED_SHOFF, 1, 1, 3, 64, 37);      /* SHT_STRTAB */
  put_section(elf, NOTED_SHOFF, 2, 11, 1, 0, 0);       /* SHT_PROGBITS */
  put_section(elf, NOTED_SHOFF, 3, 21, 7, 104, 32);    /* SHT_NOTE */
}

/* The loader reads a cubin's section table, its names and its
** .note.nv.cuinfo within the image (a fatbinary's entry; a cubin alone ends
** where its header's tables end): one that runs past is a broken image,
** refused, loaded alone or in a fatbinary. The cubin alone is loaded from
** a buffer of its own size, so that a read past it shows under ASan. */
static int test_cubin_loader_bounded(void) {
  static unsigned char elf[NOTED_LEN];
  uint32_t got, u32;
  uint16_t u16;
  uint64_t u64;
  struct { const char *what; int at; int size; uint64_t value; bool alone; } cases[] = {
    {"well formed", 0, 0, 0, true},
    {"the section table past the image", 0x3c, 2, 5, false},          /* e_shnum */
    {"the section table starting past the image", 0x28, 8, 4096, false},   /* e_shoff */
    {"the names' table past the image", NOTED_SHOFF + 64 + 0x20, 8, 4096, true},
    {"the names' table starting past the image", NOTED_SHOFF + 64 + 0x18, 8, 4096, true},
    {"a name past its table", NOTED_SHOFF + 128, 4, 1u << 20, true},
    {"a name not NUL-ended in its table", NOTED_SHOFF + 64 + 0x20, 8, 30, true},
    {"the note's section past the image", NOTED_SHOFF + 192 + 0x18, 8, 1u << 20, true},
    {"the note's name past its section", 104, 4, 1u << 20, true},       /* namesz */
    {"the note's description past its section", 108, 4, 1u << 20, true},   /* descsz */
    {"the note's description without the toolkit", 108, 4, 4, true},
    {"the note's section shorter than its header", NOTED_SHOFF + 192 + 0x20, 8, 8, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CUresult want = i == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
    noted_cubin(elf);
    u16 = (uint16_t)cases[i].value, u32 = (uint32_t)cases[i].value, u64 = cases[i].value;
    if (cases[i].size) memcpy(elf + cases[i].at, cases[i].size == 2 ? (void *)&u16 :
                              cases[i].size == 4 ? (void *)&u32 : (void *)&u64, (size_t)cases[i].size);
    image both[] = {{2, 90, elf, NOTED_LEN}, {1, 90, put_ptx, strlen(put_ptx)}};
    pack(fat, both, 2);
    CUresult r = load_and_put(fat, &got);
    if (r != want) return failf(__FILE__, __LINE__, "%s, in a fatbinary: %d, not %d", cases[i].what,
                                (int)r, (int)want);
    if (want == CUDA_SUCCESS) CHECK_EQ(got, 7);
    if (!cases[i].alone) continue;
    unsigned char *alone = malloc(NOTED_LEN);
    CHECK(alone != NULL);
    memcpy(alone, elf, NOTED_LEN);
    CUmodule m;
    r = cuModuleLoadData(&m, alone);
    if (r == CUDA_SUCCESS) cuModuleUnload(m);
    free(alone);
    if (r != want) return failf(__FILE__, __LINE__, "%s, alone: %d, not %d", cases[i].what, (int)r,
                                (int)want);
  }
  /* an ELF header cut short: no e_flags, no section table */
  noted_cubin(elf);
  image cut[] = {{2, 90, elf, 40}, {1, 90, put_ptx, strlen(put_ptx)}};
  pack(fat, cut, 2);
  CHECK_EQ(load_and_put(fat, &got), CUDA_ERROR_INVALID_IMAGE);
  return 0;
}

#define T(name) { #name, test_##name }
static const unit_test tests[] = {T(fresh_memory_poisoned), T(overlapping_copies_refused),
                                  T(intra_device_pitch_refused),
                                  T(event_on_other_context), T(registers_and_local_poisoned),
                                  T(missing_barrier_shows), T(fatbin_runs_its_ptx),
                                  T(fatbin_without_the_devices_cubin), T(cubin_alone_not_run),
                                  T(cubin_frames_bounded), T(cubin_loader_bounded),
                                  T(allocations_found_by_address),
                                  /* last: it leaves the context's sticky error */
                                  T(free_host_does_not_wait)};
#define NTESTS ((int)(sizeof tests / sizeof tests[0]))

int main(int argc, char **argv) {
  (void)err;                     /* unit.h's, for calls checked by message: none here */
  if (setup() != 0) {
    fprintf(stderr, "fake_strict_test: the fake driver did not start\n");
    return 1;
  }
  return unit_main("fake_strict_test", tests, NTESTS, argc, argv);
}
