-- Several lua_States on several OS threads at once: spec/unit/threads_test.c
-- (built next to the module; LUACUDA_BUILD names the build directory) runs
-- 4 threads, each with its own state, compiling, launching and copying,
-- and checks every value. Here it runs with an empty compile cache and a
-- compiler wrapper that counts compilations, so the count shows whether
-- the threads shared the compile caches. make test-tsan runs the same
-- program under ThreadSanitizer.
local luacuda = require "luacuda"
local S = require "spec.support"

local build = os.getenv("LUACUDA_BUILD") or "build"
local bin = build .. "/threads_test"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, how, code = p:close()
  return ok == true and how == "exit" and code == 0, out
end

describe("several states on several threads", function()
  local dir

  before_each(function()
    dir = os.tmpname()
    os.remove(dir)
    assert(sh("mkdir -p " .. dir))
  end)

  after_each(function() sh("rm -rf " .. dir) end)

  -- run the program with an empty cache; its output, the compilations, and
  -- for each run of the compiler its stdout pipe and every pipe it holds
  local function run(args, env)
    local count, fds = dir .. "/compiles", dir .. "/fds"
    local cxx = dir .. "/cxx"
    local f = assert(io.open(cxx, "w"))
    -- counts the modules' compilations (-MD), not the --version probe, the
    -- link step, the precompiled head (c++-header) or the runtime's object
    f:write("#!/bin/sh\n",
            "own=$(readlink /proc/$$/fd/1)\n",
            "held=$(for f in /proc/$$/fd/*; do readlink \"$f\"; done | grep '^pipe:' | tr '\\n' ' ')\n",
            "echo \"$own $held\" >> " .. fds .. "\n",
            "case \" $* \" in *\" c++-header \"* | *\"/runtime.cc \"*) ;; *\" -MD \"*) echo x >> " .. count .. " ;; esac\n",
            "exec c++ \"$@\"\n")
    f:close()
    assert(sh("chmod +x " .. cxx))
    local ok, out = sh(("LUACUDA_CACHE_DIR=%s/cache LUACUDA_CXX=%s LUACUDA_BUILD=%s %s %s %s")
                       :format(dir, cxx, build, env or "", bin, args))
    local n = 0
    f = io.open(count)
    if f then
      n = select(2, f:read("a"):gsub("\n", ""))
      f:close()
    end
    return ok, out, n
  end

  -- the compilers that held another compiler's output pipe (inherited
  -- from a thread that spawned it meanwhile), as "held by / belongs to"
  local function leaked_pipes()
    local runs, outputs, leaks = {}, {}, {}
    local f = io.open(dir .. "/fds")
    if not f then return leaks end
    for line in f:lines() do
      local own, held = line:match("^(%S+)%s*(.*)$")
      if own then
        runs[#runs + 1] = {own, held}
        outputs[own] = true
      end
    end
    f:close()
    for _, r in ipairs(runs) do
      for p in r[2]:gmatch("%S+") do
        if p ~= r[1] and outputs[p] then leaks[#leaks + 1] = r[1] .. " holds " .. p end
      end
    end
    return leaks
  end

  it("run 4 threads x 1000 iterations, every value right", function()
    local ok, out, compiles = run("1000 4")
    assert.is_true(ok, out)
    -- 64 + 64 + 64 + 64 + 2 + 64 values an iteration
    assert.truthy(out:find("4 threads x 1000 iterations, 1288000 values checked, "
                           .. "0 threads failed", 1, true), out)
    if luacuda.backend() == "sim" then
      -- one shared source, compiled once for all, and one per thread
      assert.equal(1 + 4, compiles)
      -- four threads compiled at once, each compiler with its own pipe only
      assert.same({}, leaked_pipes())
    end
  end)

  it("reports each thread that failed, and fails", function()
    -- every state's require "luacuda" fails the same way
    local ok, out = run("10 3", "LUACUDA_BACKEND=nope")
    assert.is_false(ok)
    assert.truthy(out:find("3 threads x 10 iterations, 0 values checked, 3 threads failed",
                           1, true), out)
    for id = 1, 3 do
      assert.truthy(out:find("thread " .. id .. ": .*LUACUDA_BACKEND=nope is not one of"), out)
    end
  end)

  -- the in-process cache is the states' too: what one compiles another
  -- gets, globals included, unless its source has a name of its own
  it("shares a module's globals by source and name, as docs/guide/embedding.md says", function()
    local src = "__device__ int g[1];\n"
    local a = luacuda.compile(src):get_global("g")
    local b = luacuda.compile(src):get_global("g")
    local own = luacuda.compile(src, {name = "state2.cu"}):get_global("g")
    a[1] = 5
    own[1] = 7
    assert.equal(5, b[1])
    assert.equal(7, own[1])
    assert.equal(5, a[1])
  end)

  it("rejects a bad count", function()
    local ok, out = run("0")
    assert.is_false(ok)
    assert.truthy(out:find("argument 1 must be a count from 1", 1, true), out)
  end)
end)
