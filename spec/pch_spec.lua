-- The simulator's precompiled head (src/backend/sim/pch.c): the runtime's
-- headers and the prelude, precompiled by GCC once per compiler, flags and
-- header text into the disk cache, then read by every module's compile;
-- and the runtime's object (kernels/sim_runtime_impl.h), compiled once
-- beside it and linked into every module.
-- A wrapper around the compiler counts the precompilations and the
-- runtime's compiles, and records, from GCC's -H output, the modules'
-- compiles that read the precompiled head ("! .../luacuda_sim.h.gch")
-- rather than its text.
local luacuda = require "luacuda"
local S = require "spec.support"

local sh = S.sh

-- GCC only: Clang's precompiled headers are another format (asked without
-- a sanitizer's LD_PRELOAD, as the simulator runs the compiler)
local gcc = S.backend == "sim" and select(2, sh("env -u LD_PRELOAD " ..
  (os.getenv("LUACUDA_CXX") or "c++") .. " --version")):find("Free Software") ~= nil
local it_gcc = gcc and it or pending

describe("the simulator's precompiled head", function()
  local dir, wrapper

  before_each(function()
    dir = S.tmpdir("sys")
    wrapper = dir .. "/cxx"
    -- sys/ is searched before the system's headers: its stdint.h (which the
    -- runtime includes) stands for a system header that changes
    local f = assert(io.open(dir .. "/sys/stdint.h", "w"))
    f:write("#include_next <stdint.h>\n// version 1\n")
    f:close()
    f = assert(io.open(wrapper, "w"))
    f:write(([[#!/bin/sh
case " $* " in
  *" c++-header "*) echo x >> %s/builds ;;
  *"/runtime.cc "*) echo x >> %s/runtimes ;;
esac
%s -I%s/sys -H "$@" 2> %s/err.$$
rc=$?
case " $* " in *"/runtime.cc "*) ;; *) grep -h '^! .*luacuda_sim.h.gch' %s/err.$$ >> %s/used ;; esac
grep -v '^\.' %s/err.$$ >&2
rm -f %s/err.$$
exit $rc
]]):format(dir, dir, os.getenv("LUACUDA_CXX") or "c++", dir, dir, dir, dir, dir, dir))
    f:close()
    assert(sh("chmod +x " .. wrapper))
  end)

  after_each(function() sh("rm -rf " .. dir) end)

  local function lines(name)
    local f = io.open(dir .. "/" .. name)
    if not f then return 0 end
    local n = select(2, f:read("a"):gsub("\n", ""))
    f:close()
    return n
  end
  local function builds() return lines("builds") end
  local function used() return lines("used") end

  -- a fresh process compiling a kernel that adds k (a new source for each
  -- k), with options opts; the cache in dir/cache
  local function compile(k, opts, env)
    local script = ([[
      local luacuda = require "luacuda"
      local m = luacuda.compile('extern "C" __global__ void f(int *o) { '
                                .. 'o[threadIdx.x] = threadIdx.x + %d; }', {options = {%s}})
      local o = luacuda.device_array(4, "int32")
      m.f[{1, 4}](o)
      print(table.concat(o:copy_to_host():totable(), ","))
    ]]):format(k, opts or "")
    local ok, out = sh(("LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s %s lua5.4 -e %q")
                       :format(dir, wrapper, env or "", script))
    assert.is_true(ok, out)
    assert.truthy(out:find(("%d,%d,%d,%d"):format(k, k + 1, k + 2, k + 3), 1, true), out)
    return out
  end

  local function entries()
    local _, files = sh("ls " .. dir .. "/cache")
    local list = {}
    for name in files:gmatch("pch%-%x+%.gch") do list[#list + 1] = dir .. "/cache/" .. name end
    return list
  end

  it_gcc("is built once and read by every module's compile", function()
    compile(10)
    assert.equal(1, builds())
    assert.equal(1, used())
    compile(20)                     -- another process, another kernel
    compile(30, '"-DTHREADS=4"')    -- a macro the head does not use
    assert.equal(1, builds())
    assert.equal(3, used())
    assert.equal(1, #entries())
  end)

  it_gcc("comes with the runtime's object, compiled once and linked into every module", function()
    -- barriers and warp functions: the runtime's fibers, in its object
    local script = [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void sum(const int *x, int *out) {
          __shared__ int s[64];
          s[threadIdx.x] = x[threadIdx.x];
          __syncthreads();
          for (int k = 32; k > 0; k >>= 1) {
            if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
            __syncthreads();
          }
          int v = __shfl_down_sync(0xffffffffu, (int)threadIdx.x, 1);
          if (threadIdx.x == 0) out[0] = s[0] * 100 + v;
          if (threadIdx.x == 9 && out[1] == 1) __trap();
        }]=])
      local x = luacuda.to_device(luacuda.arange(64, "int32"))
      local out = luacuda.to_device({0, 0}, {dtype = "int32"})
      m.sum[{1, 64}](x, out)
      print("sum", out:copy_to_host()[1])
      out[2] = 1
      print(pcall(function() m.sum[{1, 64}](x, out); luacuda.synchronize() end))
    ]]
    for _ = 1, 2 do
      local ok, out = sh(("LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s lua5.4 -e %q")
                         :format(dir, wrapper, script))
      assert.is_true(ok, out)
      assert.truthy(out:find("sum\t201601", 1, true), out)
      assert.truthy(out:find("__trap() called in block (0, 0, 0), thread (9, 0, 0)", 1, true), out)
    end
    compile(10)
    assert.equal(1, lines("runtimes"))
    assert.equal(2, used())           -- the first process's module and compile(10)
    local _, files = sh("ls " .. dir .. "/cache")
    assert.equal(1, select(2, files:gsub("simrt%-%x+%.o", "")), files)
  end)

  it_gcc("links a module that needs the C++ library with it", function()
    -- operator new is the C++ library's: the link without it fails, and the
    -- module is linked again with it
    local script = [[
      local luacuda = require "luacuda"
      local m = luacuda.compile([=[
        extern "C" __global__ void f(int *o) { int *p = new int(41); o[0] = *p + 1; delete p; }]=])
      local o = luacuda.to_device({0}, {dtype = "int32"})
      m.f[{1, 1}](o)
      print("value", o:copy_to_host()[1])
    ]]
    local ok, out = sh(("LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s lua5.4 -e %q")
                       :format(dir, wrapper, script))
    assert.is_true(ok, out)
    assert.truthy(out:find("value\t42", 1, true), out)
  end)

  it_gcc("is not built with LUACUDA_SIM_PCH=0", function()
    compile(10, nil, "LUACUDA_SIM_PCH=0")
    assert.equal(0, builds())
    assert.equal(0, used())
    assert.equal(0, #entries())
  end)

  it("is turned off only by LUACUDA_SIM_PCH=0, never by a misread value", function()
    local ok, out = S.lua_run("LUACUDA_SIM_PCH=2", 'require "luacuda"')
    assert.is_false(ok)
    assert.truthy(out:find("LUACUDA_SIM_PCH=2 is out of range (0 to 1)", 1, true), out)
    ok, out = S.lua_run("LUACUDA_SIM_PCH=off", 'require "luacuda"')
    assert.is_false(ok)
    assert.truthy(out:find("LUACUDA_SIM_PCH=off is not a whole number", 1, true), out)
  end)

  it_gcc("is one per set of flags that change the head", function()
    compile(10)
    compile(20, '"--use_fast_math"')
    assert.equal(2, builds())
    assert.equal(2, used())
    assert.equal(2, #entries())
    compile(30, '"--use_fast_math"')
    assert.equal(2, builds())
    assert.equal(3, used())
  end)

  it_gcc("is rebuilt when a header it read changes, and so are the modules", function()
    compile(10)
    local f = assert(io.open(dir .. "/sys/stdint.h", "w"))
    f:write("#include_next <stdint.h>\n// version 2\n")
    f:close()
    compile(10)                     -- the same source: its entry is stale too
    assert.equal(2, builds())
    assert.equal(2, used())
    compile(10)                     -- and now a hit
    assert.equal(2, used())
  end)

  -- GCC trusts a file that passes its header check: a truncated one is a
  -- fatal error ("cannot read PCH file"), a damaged one compiles whatever
  -- its bytes say. The cache's checksum keeps both away from it.
  it_gcc("is rebuilt, never read, when damaged or truncated", function()
    compile(10)
    local entry = entries()[1]
    local f = assert(io.open(entry, "r+b"))
    f:seek("set", 1000000)
    f:write("DAMAGED-DAMAGED")
    f:close()
    compile(20)
    assert.equal(2, builds())
    assert.equal(2, used())
    f = assert(io.open(entry, "rb"))
    local head = f:read(1000000)
    assert.are_not.equal("DAMAGED-DAMAGED", f:read(15))   -- rebuilt whole
    f:close()
    f = assert(io.open(entry, "wb"))      -- truncated
    f:write(head)
    f:close()
    compile(30)
    assert.equal(3, builds())
    assert.equal(3, used())
  end)

  it_gcc("is rebuilt when the file is another key's", function()
    compile(10)
    compile(20, '"--use_fast_math"')
    local list = entries()
    assert.equal(2, #list)
    -- a whole, valid entry, under the other's name
    assert(sh(("cp %s %s"):format(list[1], list[2])))
    compile(30)
    compile(40, '"--use_fast_math"')
    assert.equal(3, builds())
    assert.equal(4, used())
  end)

  it_gcc("is built by processes compiling at the same time, all of which succeed", function()
    local cmds = {}
    for i = 1, 3 do
      local script = ([[
        local luacuda = require "luacuda"
        local m = luacuda.compile('extern "C" __global__ void f(int *o) { o[threadIdx.x] = %d; }')
        local o = luacuda.device_array(1, "int32")
        m.f[{1, 1}](o)
        print("value", o:copy_to_host()[1])
      ]]):format(i * 7)
      cmds[i] = ("(LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s lua5.4 -e %q > %s/out%d 2>&1)")
                :format(dir, wrapper, script, dir, i)
    end
    assert(sh(table.concat(cmds, " & ") .. "; wait"))
    for i = 1, 3 do
      local f = assert(io.open(dir .. "/out" .. i))
      local out = f:read("a")
      f:close()
      assert.truthy(out:find("value\t" .. i * 7, 1, true), out)
    end
    local _, files = sh("ls " .. dir .. "/cache")
    assert.is_nil(files:find("tmp-", 1, true), files)
    assert.equal(1, #entries())
    compile(50)                     -- whichever was renamed last is whole
    assert.equal(4, used())
  end)
end)
