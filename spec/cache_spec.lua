-- The compile cache: the same source is compiled once per process, and
-- once per machine through the disk cache; a corrupt entry is recompiled.
-- A wrapper around the compiler counts the real compilations.
local luacuda = require "luacuda"
local S = require "spec.support"

local sh = S.sh

local backend = luacuda.backend()
local it_sim = backend == "sim" and it or pending

describe("the compile cache", function()
  local dir, wrapper, count_file

  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(sh("mkdir -p " .. dir))
    count_file = dir .. "/compiles"
    wrapper = dir .. "/cxx"
    local f = assert(io.open(wrapper, "w"))
    -- counts the modules' compilations (-MD), not the --version probe, the
    -- link step, the precompiled head (c++-header) or the runtime's object
    f:write("#!/bin/sh\ncase \" $* \" in *\" c++-header \"* | *\"/runtime.cc \"*) ;; *\" -MD \"*) echo x >> " .. count_file
            .. " ;; esac\nexec c++ \"$@\"\n")
    f:close()
    assert(sh("chmod +x " .. wrapper))
  end)

  after_each(function() sh("rm -rf " .. dir) end)

  local function compiles()
    local f = io.open(count_file)
    if not f then return 0 end
    local n = select(2, f:read("a"):gsub("\n", ""))
    f:close()
    return n
  end

  -- run a script in a fresh lua5.4 with the cache in dir/cache
  local function fresh(script, env)
    return sh(("LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s %s lua5.4 -e %q")
              :format(dir, wrapper, env or "", script))
  end

  local SCRIPT = [[
    local luacuda = require "luacuda"
    local src = 'extern "C" __global__ void k(int *o) { o[threadIdx.x] = threadIdx.x * 3; }'
    local a = luacuda.compile(src)
    local b = luacuda.compile(src)
    local o = luacuda.device_array(4, "int32")
    b.k[{1, 4}](o)
    print(table.concat(o:copy_to_host():totable(), ","), a == b)
  ]]

  it_sim("compiles a source once per process and once per cache", function()
    local ok, out = fresh(SCRIPT)
    assert.is_true(ok, out)
    assert.truthy(out:find("0,3,6,9", 1, true), out)
    assert.equal(1, compiles())
    ok, out = fresh(SCRIPT)                 -- a new process: a disk cache hit
    assert.is_true(ok, out)
    assert.truthy(out:find("0,3,6,9", 1, true), out)
    assert.equal(1, compiles())
  end)

  -- Entries are loaded from a copy in the process's own directory: the
  -- loader knows a module by its name, and /proc/self/fd/N names another
  -- module each time the descriptor number is reused.
  it_sim("loads each of several modules from the cache as itself", function()
    local script = [[
      local luacuda = require "luacuda"
      local o = luacuda.device_array(3, "int32")
      for v = 1, 3 do
        local src = 'extern "C" __global__ void k(int *o) { o[%d] = %d; }'
        luacuda.compile(src:format(v - 1, v)).k[{1, 1}](o)
      end
      print(table.concat(o:copy_to_host():totable(), ","))
    ]]
    local ok, out = fresh(script)
    assert.is_true(ok, out)
    assert.truthy(out:find("1,2,3", 1, true), out)
    ok, out = fresh(script)                 -- three hits in one process
    assert.is_true(ok, out)
    assert.truthy(out:find("1,2,3", 1, true), out)
    assert.equal(3, compiles())
  end)

  it_sim("recompiles, and does not trust, a corrupt entry", function()
    assert.is_true((fresh(SCRIPT)))
    local ok, files = sh("ls " .. dir .. "/cache")
    local entry = dir .. "/cache/" .. files:match("(sim%-%x+%.so)")
    -- flip bytes in the middle of the object
    local f = assert(io.open(entry, "r+b"))
    f:seek("set", 2000)
    f:write(("\255"):rep(64))
    f:close()
    local out
    ok, out = fresh(SCRIPT)
    assert.is_true(ok, out)
    assert.truthy(out:find("0,3,6,9", 1, true), out)
    assert.equal(2, compiles())
    -- a truncated one too
    assert(sh("truncate -s 100 " .. entry))
    ok, out = fresh(SCRIPT)
    assert.is_true(ok, out)
    assert.equal(3, compiles())
  end)

  it_sim("recompiles when the options or the name change", function()
    local script = [[
      local luacuda = require "luacuda"
      local src = 'extern "C" __global__ void k(int *o) { o[0] = V; }'
      for _, v in ipairs({1, 2, 1}) do
        local o = luacuda.device_array(1, "int32")
        luacuda.compile(src, {options = {"-DV=" .. v}}).k[{1, 1}](o)
        io.write(o[1], " ")
      end
      luacuda.compile(src, {options = {"-DV=1"}, name = "other.cu"})
    ]]
    local ok, out = fresh(script)
    assert.is_true(ok, out)
    assert.truthy(out:find("1 2 1", 1, true), out)
    assert.equal(3, compiles())
  end)

  -- An entry records every header its compilation read, with its contents,
  -- and a hit re-reads them (issue 12: an edited header kept the old kernel
  -- running until the cache was cleared).
  it_sim("recompiles when a header the source includes, or one it includes, changes", function()
    local function write(path, text)
      local f = assert(io.open(path, "w"))
      f:write(text)
      f:close()
    end
    assert(sh("mkdir -p " .. dir .. "/inc"))
    write(dir .. "/inc/v.h", '#include "w.h"\n#define V 1\n')
    write(dir .. "/inc/w.h", "#define W 10\n")
    local script = ([[
      local luacuda = require "luacuda"
      local src = '#include "v.h"\nextern "C" __global__ void k(int *o) { o[0] = V + W; }'
      local o = luacuda.device_array(1, "int32")
      luacuda.compile(src, {options = {"-I%s/inc"}}).k[{1, 1}](o)
      print("value " .. o[1])
    ]]):format(dir)
    local function value()
      local ok, out = fresh(script)
      assert.is_true(ok, out)
      return tonumber(out:match("value (%d+)")), compiles()
    end
    assert.same({11, 1}, {value()})
    assert.same({11, 1}, {value()})          -- unchanged: a hit
    write(dir .. "/inc/v.h", '#include "w.h"\n#define V 2\n')
    assert.same({12, 2}, {value()})
    assert.same({12, 2}, {value()})
    write(dir .. "/inc/w.h", "#define W 20\n")   -- included by the included header
    assert.same({22, 3}, {value()})
    assert.same({22, 3}, {value()})
    assert(sh("rm " .. dir .. "/inc/w.h"))       -- gone: the compiler says so
    local ok, out = fresh(script)
    assert.is_false(ok)
    assert.truthy(out:find("w.h", 1, true), out)
  end)

  -- the simulator's cuda_fp16.h is written beside each compilation's source
  -- and searched before the -I directories (which may hold the toolkit's,
  -- which the host compiler refuses); its contents are in the key, so the
  -- entry holds in a new process, where that directory is another
  it_sim("keeps a module that includes cuda_fp16.h for the next process", function()
    assert(sh("mkdir -p " .. dir .. "/inc"))
    local f = assert(io.open(dir .. "/inc/cuda_fp16.h", "w"))
    f:write('#error "the toolkit\'s header, which only NVCC and NVRTC read"\n')
    f:close()
    local script = ([[
      local luacuda = require "luacuda"
      local src = '#include <cuda_fp16.h>\n'
        .. 'extern "C" __global__ void k(float *o) { o[0] = __half2float(__float2half(0.1f)); }'
      local o = luacuda.device_array(1, "float32")
      luacuda.compile(src, {options = {"-I%s/inc"}}).k[{1, 1}](o)
      print("value " .. o[1])
    ]]):format(dir)
    for n = 1, 2 do
      -- (NVRTC's check would read the -I's header: it is the simulator's
      -- own search that is tested here)
      local ok, out = fresh(script, "LUACUDA_NVRTC_CHECK=0")
      assert.is_true(ok, out)
      assert.truthy(out:find("value 0.0999755859375", 1, true), out)
      assert.equal(1, compiles(), "run " .. n)
    end
  end)

  it_sim("is shared by processes compiling at the same time", function()
    local cmds = {}
    for i = 1, 4 do
      cmds[i] = ("(LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s lua5.4 -e %q > %s/out%d 2>&1)")
                :format(dir, wrapper, SCRIPT, dir, i)
    end
    assert(sh(table.concat(cmds, " & ") .. "; wait"))
    for i = 1, 4 do
      local f = assert(io.open(dir .. "/out" .. i))
      local out = f:read("a")
      f:close()
      assert.truthy(out:find("0,3,6,9", 1, true), out)
    end
    local ok, files = sh("ls " .. dir .. "/cache")
    assert.is_true(ok)
    assert.is_nil(files:find("tmp-", 1, true), files)
    assert.equal(1, select(2, files:gsub("sim%-", "")))
  end)

  it_sim("can be cleared and turned off", function()
    assert.is_true((fresh(SCRIPT)))
    local _, files = sh("ls " .. dir .. "/cache")
    local ok, out = fresh([[
      local luacuda = require "luacuda"
      print(luacuda.cache_dir())
      print(luacuda.clear_cache())
    ]])
    assert.is_true(ok, out)
    -- the module; where the simulator checks with NVRTC, its pass and
    -- NVRTC's facts too (src/backend/sim/check.c); with GCC, the
    -- precompiled head and the runtime's object (src/backend/sim/pch.c)
    local entries = (S.nvrtc_checks() and 3 or 1) + (files:find("pch%-%x+%.gch") and 1 or 0)
                    + (files:find("simrt%-%x+%.o") and 1 or 0)
    assert.truthy(out:find(("%s/cache\n%d\n"):format(dir, entries), 1, true), out)
    ok, out = fresh(SCRIPT)
    assert.equal(2, compiles())
    ok, out = fresh("print(require 'luacuda'.cache_dir())", "LUACUDA_CACHE=0")
    assert.is_true(ok, out)
    assert.truthy(out:find("nil"), out)
    ok, out = fresh(SCRIPT, "LUACUDA_CACHE=0")
    assert.is_true(ok, out)
    assert.equal(3, compiles())
  end)

  -- Whoever can write the cache runs code in every process that loads from
  -- it: a directory or an entry that is not the user's, or that others may
  -- write, is not used (issue 12). Root can give files away, so the specs
  -- play the other user (uid 65534) when they run as root.
  local as_root = sh("test \"$(id -u)\" = 0")
  local it_root = (backend == "sim" and as_root) and it or pending

  it_root("refuses a directory owned by another user, with a warning", function()
    assert(sh(("mkdir -p %s/cache && chown 65534 %s/cache"):format(dir, dir)))
    local ok, out = fresh(SCRIPT)
    assert.is_true(ok, out)
    assert.truthy(out:find("0,3,6,9", 1, true), out)
    assert.truthy(out:find("luacuda: not using the compile cache " .. dir .. "/cache: it belongs "
                           .. "to uid 65534, not to this process's user (uid 0)", 1, true), out)
    ok, out = fresh(SCRIPT)
    assert.equal(2, compiles())
    local _, files = sh("ls -A " .. dir .. "/cache")
    assert.equal("", files)
    ok, out = fresh("print(require 'luacuda'.cache_dir())")
    assert.truthy(out:find("nil", 1, true), out)
  end)

  it_sim("refuses a directory others may write, with a warning", function()
    assert(sh(("mkdir -p %s/cache && chmod 0777 %s/cache"):format(dir, dir)))
    local ok, out = fresh(SCRIPT)
    assert.is_true(ok, out)
    assert.truthy(out:find("not using the compile cache " .. dir .. "/cache: others may write "
                           .. "it (mode 777)", 1, true), out)
    assert.is_true((fresh(SCRIPT)))
    assert.equal(2, compiles())
  end)

  it_root("ignores an entry another user owns or others may write, and a link", function()
    assert.is_true((fresh(SCRIPT)))
    local _, files = sh("ls " .. dir .. "/cache")
    local name = files:match("(sim%-%x+%.so)")
    local entry = dir .. "/cache/" .. name
    -- a valid entry (its checksum is anyone's to recompute), given away
    assert(sh("chown 65534 " .. entry))
    local ok, out = fresh(SCRIPT)
    assert.is_true(ok, out)
    assert.truthy(out:find("luacuda: ignoring the cache entry " .. entry .. ": it belongs to "
                           .. "uid 65534", 1, true), out)
    assert.equal(2, compiles())     -- compiled anew, and stored as the user's
    assert(sh("chmod 0666 " .. entry))
    ok, out = fresh(SCRIPT)
    assert.truthy(out:find("ignoring the cache entry " .. entry .. ": others may write it "
                           .. "(mode 666)", 1, true), out)
    assert.equal(3, compiles())
    assert(sh(("mv %s %s/elsewhere.so && ln -s %s/elsewhere.so %s"):format(entry, dir, dir, entry)))
    ok, out = fresh(SCRIPT)
    assert.truthy(out:find("ignoring the cache entry " .. entry .. ": it is a symbolic link",
                           1, true), out)
    assert.equal(4, compiles())
    ok, out = fresh(SCRIPT)         -- the link was replaced by a real entry
    assert.is_true(ok, out)
    assert.equal(4, compiles())
    assert.falsy(out:find("ignoring", 1, true), out)
  end)

  it("reports where it is", function()
    local d = luacuda.cache_dir()
    assert.truthy(d == nil or type(d) == "string")
  end)
end)
