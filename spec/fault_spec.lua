-- Faults inside kernels on the simulator: a fault, a trap, a failed assert
-- or a kernel stopped by the watchdog ends its launch with an error naming
-- the kernel and the cause; the state, the process and other states carry
-- on (the simulator is not poisoned, unlike a CUDA context). Tests tagged
-- #oob make invalid accesses in this process on purpose: memcheck reports
-- them, so make test-valgrind leaves them out.
local luacuda = require "luacuda"
local S = require "spec.support"

local sim = luacuda.backend() == "sim"
local BUILD = os.getenv("LUACUDA_BUILD") or "build"

-- Run a Lua chunk in a fresh process (from a file: kernel sources need
-- their line breaks); its output and whether it exited with status 0.
local lua_run = S.lua_run

local SOURCE = [[
extern "C" __global__ void oob(float *a, long long off) { a[off + threadIdx.x] = 1.0f; }
extern "C" __global__ void oob_read(float *a, long long off, float *out) {
  out[threadIdx.x] = a[off + threadIdx.x];
}
extern "C" __global__ void divide(int *a, int d) { a[threadIdx.x] = 100 / (d + 0 * (int)threadIdx.x); }
extern "C" __global__ void check(int *a) { assert(a[threadIdx.x] == 0); }
extern "C" __global__ void trap(int *a) { if (threadIdx.x == 3) __trap(); a[threadIdx.x] = 7; }
// faults after a barrier, while the block's threads are fibers
extern "C" __global__ void fiber_oob(float *a, long long off) {
  __syncthreads();
  if (threadIdx.x == 5) a[off] = 1.0f;
  __syncthreads();
}
__device__ __noinline__ int deep(volatile char *p, int n) {
  volatile char pad[1024];
  pad[0] = p[0];
  return n == 0 ? pad[0] : deep(pad, n - 1) + pad[0];
}
extern "C" __global__ void overflow(int *a, int n) {
  __syncthreads();
  volatile char c = 1;
  a[threadIdx.x] = deep(&c, n);
}
extern "C" __global__ void fiber_divide(int *a, int d) {
  __syncthreads();
  a[threadIdx.x] = 100 / (d + 0 * (int)threadIdx.x);
  __syncthreads();
}
extern "C" __global__ void iota(int *a) { a[threadIdx.x] = threadIdx.x; }
]]

describe("a fault in a kernel on the simulator", function()
  if not sim then
    it("needs the simulator", function() pending("not on the simulator") end)
    return
  end
  local m = luacuda.compile(SOURCE, {name = "faults.cu"})
  local N = 1 << 16               -- 256 KiB of float32: a guarded allocation

  -- a launch after the fault runs and gives the right answer
  local function carries_on()
    local out = luacuda.device_array(32, "int32")
    m.iota[{1, 32}](out)
    local t = out:copy_to_host():totable()
    assert.equal(0, t[1])
    assert.equal(31, t[32])
  end

  it("just past the end of an array is an illegal address naming the kernel #oob", function()
    local a = luacuda.device_array(N, "float32")
    m.oob[{1, 32}](a, N)
    S.misuse({"luacuda.synchronize: kernel 'oob' failed: illegal memory access at address",
              "SIGSEGV", "CUDA_ERROR_ILLEGAL_ADDRESS", "in block (0, 0, 0)"}, luacuda.synchronize)
    luacuda.synchronize()                    -- reported once
    carries_on()
  end)

  it("reading far outside any allocation faults too #oob", function()
    local a = luacuda.device_array(N, "float32")
    local out = luacuda.device_array(32, "float32")
    m.oob_read[{{2, 3}, 32}](a, 1 << 40, out)
    S.misuse({"kernel 'oob_read' failed: illegal memory access", "SIGSEGV"},
             luacuda.synchronize)
    carries_on()
  end)

  it("an integer division by zero traps", function()
    local a = luacuda.device_array(32, "int32")
    m.divide[{1, 32}](a, 0)
    S.misuse({"luacuda.synchronize: kernel 'divide' failed: integer division by zero (SIGFPE)"},
             luacuda.synchronize)
    m.divide[{1, 32}](a, 5)
    assert.equal(20, a[32])
  end)

  it("a failed assert names the expression, the line and the thread", function()
    local a = luacuda.to_device(luacuda.zeros(32, "int32"))
    a[8] = 1
    m.check[{1, 32}](a)
    S.misuse({"kernel 'check' failed: assertion 'a[threadIdx.x] == 0' failed at faults.cu:6",
              "thread (7, 0, 0)"}, luacuda.synchronize)
    a[8] = 0
    m.check[{1, 32}](a)
    luacuda.synchronize()
  end)

  it("__trap() ends the launch", function()
    local a = luacuda.device_array(32, "int32")
    m.trap[{1, 32}](a)
    S.misuse({"kernel 'trap' failed: __trap() called in block (0, 0, 0), thread (3, 0, 0)"},
             luacuda.synchronize)
    carries_on()
  end)

  -- __builtin_trap() is g++'s (NVRTC rejects it), so only a simulator that
  -- does not check its kernels with NVRTC runs it: its fault handling
  it("__builtin_trap() ends the launch, where NVRTC does not check the kernel", function()
    local ok, out = lua_run("LUACUDA_NVRTC_CHECK=0", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void builtin_trap(int *a) { if (threadIdx.x == 2) __builtin_trap(); }
        extern "C" __global__ void ok(int *a) { a[threadIdx.x] = 3; }]=], {name = "trap.cu"})
      local a = luacuda.device_array(32, "int32")
      m.builtin_trap[{1, 32}](a)
      print(pcall(luacuda.synchronize))
      m.ok[{1, 32}](a)
      print("after", a[2])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("kernel 'builtin_trap' failed: illegal instruction", 1, true), out)
    assert.truthy(out:find("SIGILL", 1, true), out)
    assert.truthy(out:find("after\t3", 1, true), out)
  end)

  it("on a fiber, after a barrier, is caught the same way #oob", function()
    local a = luacuda.device_array(N, "float32")
    m.fiber_oob[{{1, 2}, 64}](a, N + 8)
    S.misuse({"kernel 'fiber_oob' failed: illegal memory access", "in block (0, "},
             luacuda.synchronize)
    carries_on()
  end)

  it("a GPU thread that overflows its stack is a stack overflow #oob", function()
    local a = luacuda.device_array(32, "int32")
    m.overflow[{1, 32}](a, 100000)
    S.misuse({"kernel 'overflow' failed: stack overflow in a GPU thread",
              "LUACUDA_SIM_STACK"}, luacuda.synchronize)
    m.overflow[{1, 32}](a, 3)               -- the same stacks, reused
    assert.equal(4, a[1])
  end)

  it("is reported by the stream it was queued on #oob", function()
    local s = luacuda.stream()
    local a = luacuda.device_array(N, "float32")
    m.oob[{1, 32, s}](a, N)
    S.misuse({"kernel 'oob' failed: illegal memory access"}, s.synchronize, s)
    s:synchronize()
    carries_on()
  end)

  it("many times over leaves the workers, stacks and memory as they were", function()
    collectgarbage()
    local before = luacuda.memory_info().used
    local a = luacuda.device_array(64, "int32")
    for i = 1, 40 do
      if i % 2 == 0 then m.fiber_divide[{3, 64}](a, 0)
      else m.divide[{3, 32}](luacuda.device_array(32, "int32"), 0) end
      assert.is_false((pcall(luacuda.synchronize)))
    end
    m.fiber_divide[{1, 64}](a, 4)
    assert.equal(25, a[64])
    carries_on()
    a = nil
    collectgarbage()
    collectgarbage()
    luacuda.synchronize()
    assert.equal(before, luacuda.memory_info().used)
  end)

  -- NVRTC has no <assert.h> (CUDA's assert needs none): the host's assert
  -- is the simulator's own, so NVRTC's check is off here
  it("from assert in <assert.h>, included by the kernel, is an abort", function()
    local ok, out = lua_run("LUACUDA_NVRTC_CHECK=0", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        #include <assert.h>
        extern "C" __global__ void k(int *a) { assert(a[threadIdx.x] == 0); }
        extern "C" __global__ void ok(int *a) { a[threadIdx.x] = 3; }]=], {name = "abort.cu"})
      local a = luacuda.to_device({0, 1, 0, 0}, {dtype = "int32"})
      m.k[{1, 4}](a)
      print(pcall(luacuda.synchronize))
      m.ok[{1, 4}](a)
      print("after", a[2])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("kernel 'k' failed: abort() called", 1, true), out)
    assert.truthy(out:find("CUDA_ERROR_ASSERT", 1, true), out)
    assert.truthy(out:find("after\t3", 1, true), out)
  end)

  it("that runs past LUACUDA_SIM_TIMEOUT is stopped, with or without fibers", function()
    local t0 = os.time()
    local ok, out = lua_run("LUACUDA_SIM_TIMEOUT=0.2", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void spin(int *a) { while (((volatile int *)a)[0] == 0) {} }
        extern "C" __global__ void spin_fibers(int *a) {
          __syncthreads();
          while (((volatile int *)a)[0] == 0) {}
        }
        extern "C" __global__ void quick(int *a) { a[threadIdx.x] += 1; }]=], {name = "spin.cu"})
      local a = luacuda.device_array(64, "int32")
      a[{}] = 0
      m.spin[{16, 8}](a)
      print(pcall(luacuda.synchronize))
      m.spin_fibers[{16, 64}](a)
      print(pcall(luacuda.synchronize))
      m.quick[{1, 64}](a)
      print("after", a[64])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("kernel 'spin' failed: stopped by the watchdog after running longer "
                           .. "than LUACUDA_SIM_TIMEOUT (0.2 s)", 1, true), out)
    assert.truthy(out:find("kernel 'spin_fibers' failed: stopped by the watchdog", 1, true), out)
    assert.truthy(out:find("after\t1", 1, true), out)
    assert.is_true(os.time() - t0 < 20)
  end)

  -- a frame larger than the stack skipped the guard page and wrote into
  -- whatever lay below, a device array here; kernels are now built with
  -- stack-clash protection, so the frame probes its way into the guard
  -- (issue 12)
  it("cannot reach other memory with a frame larger than its stack #oob", function()
    if S.backend ~= "sim" then return pending("simulator only: its stacks") end
    -- the frame is a variable-length array, g++'s (NVRTC rejects it): the
    -- simulator's own stacks are tested, so NVRTC's check is off
    local ok, out = lua_run("LUACUDA_SIM_THREADS=1 LUACUDA_NVRTC_CHECK=0", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void where(long long *out) {
          volatile char x[16];
          x[0] = 1;
          out[0] = (long long)&x[0];
        }
        // n bytes of frame, written from its lowest address up
        extern "C" __global__ void big(int *out, long long n) {
          volatile char frame[n];
          for (long long i = 0; i < n; i += 4096) frame[i] = 7;
          out[threadIdx.x] = frame[0];
        }]=], {name = "clash.cu"})
      local w = luacuda.device_array(1, "int64")
      m.where[{1, 1}](w)                      -- the worker starts, with its stack
      luacuda.synchronize()
      local victim = luacuda.device_array(64 << 20, "uint8")    -- mapped below it
      victim:fill(0)
      local addr = luacuda.device_array(1, "int64")
      m.where[{1, 1}](addr)
      luacuda.synchronize()
      local sp = addr[1]
      -- where the victim lies: a kernel's pointer argument is its address
      local vm = luacuda.compile([=[
        extern "C" __global__ void at(long long *out, unsigned char *v) { out[0] = (long long)v; }
        extern "C" __global__ void nonzero(const unsigned char *v, long long n, int *count) {
          for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
               i += (long long)gridDim.x * blockDim.x)
            if (v[i]) atomicAdd(count, 1);
        }
      ]=], {name = "at.cu"})
      vm.at[{1, 1}](addr, victim)
      luacuda.synchronize()
      local v = addr[1]
      assert(sp > v + (32 << 20), "the victim is not below the stack")
      local n = sp - (v + (32 << 20))          -- the frame starts in the victim's middle
      print(pcall(function() m.big[{1, 1}](luacuda.device_array(1, "int32"), n)
                             luacuda.synchronize() end))
      local count = luacuda.to_device({0}, nil, {dtype = "int32"})
      vm.nonzero[{64, 256}](victim, 64 << 20, count)
      print("changed", count:copy_to_host()[1])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("kernel 'big' failed: stack overflow in a GPU thread", 1, true), out)
    assert.truthy(out:find("changed\t0\n", 1, true), out)
  end)

  -- device memory under 64 KiB came from the host heap: a kernel writing
  -- past such an array overwrote malloc's metadata, and the process aborted
  -- in a later free (issue 12). Memory checking (on by default) stops such
  -- a write at the array's end (memcheck_spec.lua); without it the arena's
  -- blocks must still keep it away from the heap.
  it("cannot corrupt the host heap by writing past a small array #oob", function()
    if S.backend ~= "sim" then return pending("simulator only: its device memory") end
    local ok, out = lua_run("LUACUDA_SIM_MEMCHECK=0", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void past(float *a, int n) {
          for (int i = threadIdx.x; i < n; i += blockDim.x) a[16 + i] = -1.0f;
        }]=], {name = "past.cu"})
      for round = 1, 5 do
        local keep = {}
        for i = 1, 200 do
          keep[i] = luacuda.device_array(16, "float32")
          keep[#keep + 1] = luacuda.zeros(i % 7 + 1)        -- host heap blocks between
        end
        m.past[{1, 64}](keep[100], 4000)     -- 16 KB past a 64-byte array
        luacuda.synchronize()
        for _, a in ipairs(keep) do a:close() end
        collectgarbage()
      end
      local t = {}
      for i = 1, 10000 do t[i] = luacuda.device_array(i % 50 + 1, "float64") end
      t = nil
      collectgarbage()
      print("survived")]])
    assert.is_true(ok, out)
    assert.truthy(out:find("survived", 1, true), out)
  end)

  -- a kernel stopped inside malloc would leave the arena's lock held, and
  -- the next kernel that allocates on that worker would hang (issue 12)
  it("is never stopped inside the C library: kernels after it still allocate", function()
    if S.backend ~= "sim" then return pending("simulator only: its watchdog") end
    -- (a kernel stopped between malloc and free loses that block, as on a
    -- GPU: under ASan its leak check is off here)
    local ok, out = lua_run("ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 timeout 120 env "
                            .. "LUACUDA_SIM_TIMEOUT=0.05 LUACUDA_SIM_THREADS=2", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        // large enough for the arena (and its lock), past malloc's thread cache
        extern "C" __global__ void churn(int *a) {
          while (((volatile int *)a)[0] == 0) {
            char *p = (char *)malloc(100000);
            ((volatile char *)p)[0] = 1;      // used: not optimized away
            free(p);
            // time in its own code too, where a stop may land (ASan's
            // malloc is slow enough to take all of it otherwise)
            for (volatile int j = 0; j < 200; j++) {}
          }
        }
        extern "C" __global__ void alloc(int *a) {
          char *p = (char *)malloc(100000);
          ((volatile char *)p)[0] = 1;
          a[threadIdx.x + 1] = p != 0;
          free(p);
        }]=], {name = "churn.cu"})
      local a = luacuda.device_array(64, "int32")
      a[{}] = 0
      for i = 1, 8 do
        m.churn[{2, 32}](a)
        assert(not pcall(luacuda.synchronize))
        m.alloc[{1, 32}](a)
        luacuda.synchronize()
      end
      print("after", a[32])]])
    assert.is_true(ok, out)
    assert.truthy(out:find("after\t1", 1, true), out)
  end)

  it("does not hide a fault outside kernel code: that still ends the process", function()
    -- the handlers are installed by the first launch; the signal then goes
    -- to any thread of the process, a worker between launches included
    local ok, out = lua_run("", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[extern "C" __global__ void k(int *a) { a[0] = 1; }]=])
      m.k[{4, 1}](luacuda.device_array(1, "int32"))
      luacuda.synchronize()
      local pid = io.open("/proc/self/stat"):read("n")
      os.execute("kill -SEGV " .. pid .. "; sleep 1")
      print("survived")]])
    assert.is_false(ok, out)
    assert.falsy(out:find("survived", 1, true), out)
    assert.falsy(out:find("kernel 'k' failed", 1, true), out)
  end)

  it("leaves another lua_State of the process, on another thread, running", function()
    -- a host program with two states: one launches faulting kernels while
    -- the other launches good ones and checks their results. Each uses a
    -- stream of its own: luacuda.synchronize() and the legacy default
    -- stream are the device's, so they report a failure from any state.
    local dir = S.tmpdir()
    local c = dir .. "/two_states.c"
    local f = assert(io.open(c, "w"))
    f:write([[
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdio.h>
static const char *scripts[2] = {
  "local l = require 'luacuda'\n"
  "local m = l.compile([=[extern \"C\" __global__ void bad(int *a, int d) { a[threadIdx.x] = 100 / d; }]=])\n"
  "local a, n, s = l.device_array(32, 'int32'), 0, l.stream()\n"
  "for i = 1, 30 do m.bad[{4, 32, s}](a, 0) if not pcall(s.synchronize, s) then n = n + 1 end end\n"
  "return 'faulted ' .. n\n",
  "local l = require 'luacuda'\n"
  "local m = l.compile([=[extern \"C\" __global__ void add(int *a) { a[threadIdx.x] += 1; }]=])\n"
  "local a, s = l.device_array(32, 'int32'), l.stream()\n"
  "a:copy_to_device(l.zeros(32, 'int32'), s)\n"
  "for i = 1, 30 do m.add[{1, 32, s}](a) s:synchronize() end\n"
  "local h = l.zeros(32, 'int32')\n"
  "a:copy_to_host(h, s) s:synchronize()\n"
  "return 'counted ' .. h[32]\n"};
static char results[2][200];
static void *run(void *arg) {
  int i = (int)(long)arg;
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_dostring(L, scripts[i]) != 0) snprintf(results[i], 200, "error %s", lua_tostring(L, -1));
  else snprintf(results[i], 200, "%s", lua_tostring(L, -1));
  lua_close(L);
  return NULL;
}
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("%s\n%s\n", results[0], results[1]);
  return 0;
}
]])
    f:close()
    local exe = dir .. "/two_states"
    local built = os.execute(("env -u LD_PRELOAD cc -o %s %s -I/usr/include/lua5.4 -llua5.4 -lpthread 2>&1")
                             :format(exe, c))
    assert.is_true(built == true, "cannot build the two-state host")
    local p = io.popen(exe .. " 2>&1")
    local out = p:read("a")
    local ok = p:close()
    os.execute("rm -rf " .. dir)
    assert.is_true(ok == true, out)
    assert.truthy(out:find("faulted 30", 1, true), out)
    assert.truthy(out:find("counted 30", 1, true), out)
  end)
end)

describe("guard pages after simulated device memory", function()
  if not sim then
    it("needs the simulator", function() pending("not on the simulator") end)
    return
  end

  it("LUACUDA_SIM_GUARD=1 guards small arrays too", function()
    local code = [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void past(float *a, int n) { a[n + 64] = 1.0f; }]=])
      local a = luacuda.device_array(256, "float32")      -- 1 KiB
      m.past[{1, 1}](a, 256 + 1024)                        -- 5 KiB in: beyond its page
      print(pcall(luacuda.synchronize))]]
    local ok, out = lua_run("LUACUDA_SIM_GUARD=1", code)
    assert.is_true(ok, out)
    assert.truthy(out:find("kernel 'past' failed: illegal memory access", 1, true), out)
  end)

  -- a block's end is its guard page's start, so with memory checking (the
  -- default) it is aligned to the largest power of two dividing its size,
  -- up to 256; without, to 256 (as cudaMalloc's)
  it("leave the arrays' contents as they were, aligned as their size allows", function()
    local m = luacuda.compile([=[
      extern "C" __global__ void align(unsigned char *a, int *out) {
        out[0] = (int)((unsigned long long)a % 256);
      }]=])
    local checked = (os.getenv("LUACUDA_SIM_MEMCHECK") or "1") ~= "0"
    local out = luacuda.device_array(1, "int32")
    for _, n in ipairs({2, 255, 257, 4096, 1 << 16, (1 << 16) + 3, 1 << 20}) do
      local h = luacuda.zeros(n, "uint8")
      h[1], h[n] = 7, 9
      local d = luacuda.to_device(h)
      local back = d:copy_to_host()
      assert.equal(7, back[1])
      assert.equal(9, back[n])
      m.align[{1, 1}](d, out)
      assert.equal(0, out[1] % (checked and math.min(256, n & -n) or 256))
    end
  end)
end)

-- issue 29, finding 10: INT_MIN / -1 trapped on x86 (idiv's #DE) and failed
-- the launch as "integer division by zero"; a GPU's division wraps, as
-- PTX's div and rem do (the fake driver's interpreter too): the quotient is
-- the dividend, the remainder 0
describe("a signed division that overflows in a kernel", function()
  -- in a process of its own: under valgrind (make test-valgrind), whose
  -- registers at a trap are not the trapping instruction's, the simulator
  -- leaves the trap a fault
  it("wraps as on a GPU: INT_MIN / -1 is INT_MIN, INT_MIN % -1 is 0, int and long long", function()
    local ok, out = S.lua_run("", [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void div32(const int *a, const int *b, int d, int *q, int *r) {
          int i = threadIdx.x;
          q[i] = a[i] / b[i];                 // the divisor in memory
          r[i] = a[i] % b[i];
          q[i + blockDim.x] = a[i] / d;       // in a register
          r[i + blockDim.x] = a[i] % d;
        }
        extern "C" __global__ void div64(const long long *a, const long long *b, long long d,
                                         long long *q, long long *r) {
          int i = threadIdx.x;
          q[i] = a[i] / b[i];
          r[i] = a[i] % b[i];
          q[i + blockDim.x] = a[i] / d;
          r[i + blockDim.x] = a[i] % d;
        }]=], {name = "wrap.cu"})
      local function show(name, x) print(name, table.concat(x:copy_to_host():totable(), " ")) end
      for _, t in ipairs({{"int32", -2147483648, m.div32}, {"int64", math.mininteger, m.div64}}) do
        local dtype, min, k = t[1], t[2], t[3]
        local a = luacuda.to_device(luacuda.array({min, min, 7, -7}, dtype))
        local b = luacuda.to_device(luacuda.array({-1, 1, -1, 2}, dtype))
        local q, r = luacuda.device_array(8, dtype), luacuda.device_array(8, dtype)
        k[{1, 4}](a, b, -1, q, r)
        show(dtype .. " q", q)
        show(dtype .. " r", r)
      end]])
    assert.is_true(ok, out)
    local I32, I64 = "-2147483648", tostring(math.mininteger)
    for _, t in ipairs({{"int32", I32}, {"int64", I64}}) do
      local min = t[2]
      assert.truthy(out:find(("%s q\t%s %s -7 -3 %s %s -7 7\n"):format(t[1], min, min, min, min),
                             1, true), out)
      assert.truthy(out:find(t[1] .. " r\t0 0 0 -1 0 0 0 0\n", 1, true), out)
    end
  end)

  it("still fails a division by zero on the simulator (a GPU gives an unspecified value)", function()
    if S.backend ~= "sim" then return pending("simulator only: a GPU does not trap") end
    local m = luacuda.compile([=[
      extern "C" __global__ void div0(const int *a, const int *b, int *q) {
        q[threadIdx.x] = a[threadIdx.x] / b[threadIdx.x];
      }]=], {name = "div0.cu"})
    local a = luacuda.to_device(luacuda.array({6, 1}, "int32"))
    local b = luacuda.to_device(luacuda.array({-1, 0}, "int32"))
    local q = luacuda.device_array(2, "int32")
    m.div0[{1, 2}](a, b, q)
    S.misuse({"kernel 'div0' failed: integer division by zero (SIGFPE)", "thread (1, 0, 0)"},
             luacuda.synchronize)
  end)
end)
