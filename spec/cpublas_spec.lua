-- Matrix products on the CPU's BLAS (src/base/cpublas.c): the system's
-- libblas.so.3, opened with dlopen, for host arrays and the simulator's
-- device arrays; LUACUDA_CPU_BLAS=0 keeps the library's own loop and
-- kernel. Both paths give NumPy's products for thin, transposed, strided,
-- batched and vector shapes, in float32 and float64.
local S = require "spec.support"
local luacuda = require "luacuda"

local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"
local have_numpy = S.sh(PYTHON .. " -c 'import numpy'")
local have_blas = S.sh("test -e /usr/lib/x86_64-linux-gnu/libblas.so.3 || "
                       .. "ldconfig -p | grep -q 'libblas.so.3 '")

-- Every case's operands and products (host and device) saved in DIR as
-- .npy files named <case>_a, <case>_b and <case>_<side>_<tag>.
local CASES = [==[
local l = require "luacuda"
local dir, tag = arg[1], arg[2]
local g = l.random(30)
local function view(x, how)
  if how == "T" then return x.T end
  if how == "step" then return x[{{1, -1, 2}, {}}] end       -- every other row
  if how == "rev" then return x[{{}, {-1, 1, -1}}] end       -- columns reversed
  return x
end
local cases = {
  -- name, a's shape, b's shape, a's view, b's view
  {"thin", {300, 32}, {32, 1}},
  {"xt_vec", {300, 32}, {300, 1}, "T"},
  {"xt_1d", {300, 32}, {300}, "T"},
  {"row", {7}, {7, 5}},
  {"row_t", {7}, {5, 7}, nil, "T"},
  {"one_row", {1, 7}, {7, 5}},
  {"dot", {9}, {9}},
  {"square", {33, 33}, {33, 33}},
  {"both_t", {20, 30}, {40, 20}, "T", "T"},
  {"strided", {40, 12}, {12, 9}, "step"},
  {"reversed", {10, 12}, {12, 9}, nil, "rev"},
  {"vec_strided", {10, 12}, {24, 1}, nil, "step"},
  {"batch", {3, 4, 5}, {5, 6}},
  {"batch_rows1", {3, 1, 5}, {5, 6}},
  {"batch_bcast", {2, 1, 4, 5}, {3, 5, 2}},
  {"batch_vec", {3, 4, 5}, {5}},
}
for _, dt in ipairs({"float32", "float64"}) do
  for _, c in ipairs(cases) do
    local name = c[1] .. "_" .. dt
    local a0, b0 = g:uniform(c[2], dt, {kind = "host"}), g:uniform(c[3], dt, {kind = "host"})
    local a, b = view(a0, c[4]), view(b0, c[5])
    if tag == "blas" then
      l.save(dir .. "/" .. name .. "_a.npy", a:copy())
      l.save(dir .. "/" .. name .. "_b.npy", b:copy())
    end
    l.save(dir .. "/" .. name .. "_host_" .. tag .. ".npy", l.matmul(a, b))
    local da, db = view(l.to_device(a0), c[4]), view(l.to_device(b0), c[5])
    l.save(dir .. "/" .. name .. "_device_" .. tag .. ".npy", l.matmul(da, db):copy_to_host())
    -- into a transposed output: written back from BLAS's row-major result
    if #c[2] == 2 and #c[3] == 2 then
      local p = l.matmul(a, b)
      local out = l.empty({p.shape[2], p.shape[1]}, dt).T
      l.matmul(a, b, out)
      l.save(dir .. "/" .. name .. "_hostout_" .. tag .. ".npy", out:copy())
    end
  end
end
print("done", l.blas())
]==]

local CHECK = [==[
import glob, os, sys
import numpy as np
d = sys.argv[1]
for fa in sorted(glob.glob(d + "/*_a.npy")):
    name = os.path.basename(fa)[:-6]
    a, b = np.load(fa), np.load(d + "/" + name + "_b.npy")
    want = np.matmul(a, b)
    tol = 1e-5 if a.dtype == np.float32 else 1e-12
    for f in sorted(glob.glob(d + "/" + name + "_*_*.npy")):
        side = os.path.basename(f)[len(name) + 1:-4]
        if side in ("a", "b"): continue
        got = np.load(f)
        ok = got.shape == want.shape and got.dtype == want.dtype and \
            np.allclose(got, want, rtol=tol, atol=tol * np.abs(a).sum(axis=-1).max())
        print(("ok" if ok else "BAD"), name, side, got.shape, want.shape)
]==]

describe("matmul on the CPU's BLAS", function()
  it("gives NumPy's products with BLAS and without, host and device, every shape", function()
    if not have_numpy then return pending("needs /usr/bin/python3 with NumPy") end
    local dir = S.tmpdir()
    local path = dir .. "/cases.lua"
    local f = assert(io.open(path, "w"))
    f:write(CASES)
    f:close()
    for _, run in ipairs({{"blas", "LUACUDA_CPU_BLAS=1"}, {"loop", "LUACUDA_CPU_BLAS=0"}}) do
      local ok, out = S.sh(("%s lua5.4 %s %s %s"):format(run[2], path, dir, run[1]))
      assert(ok, out)
      assert.matches("^done", out)
    end
    local cf = assert(io.open(dir .. "/check.py", "w"))
    cf:write(CHECK)
    cf:close()
    local ok, out = S.sh(("%s %s/check.py %s"):format(PYTHON, dir, dir))
    os.execute("rm -rf " .. dir)
    assert(ok, out)
    assert.is_nil(out:find("BAD", 1, true), out)
    -- 16 cases in 2 dtypes: host and device with BLAS and without, and
    -- 8 two-dimensional cases' transposed outputs both ways
    local _, n = out:gsub("ok ", "")
    assert.equal(2 * (16 * 4 + 8 * 2), n, out)
  end)

  it("computes host products with the system's BLAS, loaded at the first product", function()
    if not have_blas then return pending("no libblas.so.3 on this machine") end
    local code = [[
      local l = require "luacuda"
      local function mapped()
        for line in io.lines("/proc/self/maps") do
          if line:find("libblas", 1, true) then return true end
        end
        return false
      end
      local before = mapped()
      local a = l.ones({4, 3}, "float64")
      local c = l.matmul(a, a.T)
      print(before, mapped(), c[{2, 3}])
    ]]
    local ok, out = S.lua_run("LUACUDA_CPU_BLAS=1", code)
    assert(ok, out)
    assert.equal("false\ttrue\t3.0\n", out)
    ok, out = S.lua_run("LUACUDA_CPU_BLAS=0", code)
    assert(ok, out)
    assert.equal("false\tfalse\t3.0\n", out)
  end)

  it("computes the simulator's device products with it, so no kernel is compiled", function()
    if S.backend ~= "sim" then return pending("simulator only: its compiler and its products") end
    if not have_blas then return pending("no libblas.so.3 on this machine") end
    local dir = S.tmpdir()
    local ok, out = S.lua_run("LUACUDA_CXX=/nonexistent/c++ LUACUDA_CACHE_DIR=" .. dir, [[
      local l = require "luacuda"
      print(l.blas())
      local a = l.to_device({{1, 2}, {3, 4}}, {dtype = "float32"})
      print(l.matmul(a, a.T):copy_to_host()[{2, 1}])
      print(l.matmul(a, l.to_device({1, 1}, {dtype = "float32"})):copy_to_host()[2])
      -- a logistic regression's two products: a column, and a transposed
      -- view times a column (BLAS reads the view as it lies)
      local X = l.to_device({{1, 2}, {3, 4}, {5, 6}}, {dtype = "float64"})
      local z = X:matmul(l.to_device({{1}, {1}}, {dtype = "float64"}))
      print(z:copy_to_host()[{3, 1}], X.T:matmul(z):copy_to_host()[{2, 1}])
    ]])
    os.execute("rm -rf " .. dir)
    assert(ok, out)
    assert.matches("^blas /[^\n]*libblas[^\n]*\n11%.0\n7%.0\n11%.0\t100%.0\n$", out)
  end)

  it("says why the kernel computes device products when it is off", function()
    if S.backend ~= "sim" then return pending("simulator only: its products") end
    local ok, out = S.lua_run("LUACUDA_CPU_BLAS=0", [[print(require("luacuda").blas())]])
    assert(ok, out)
    assert.equal("builtin\tLUACUDA_CPU_BLAS=0; the sim backend computes matrix products with "
                 .. "the library's own tiled kernel\n", out)
  end)

  it("refuses a LUACUDA_CPU_BLAS that is neither 0 nor 1", function()
    local ok, out = S.lua_run("LUACUDA_CPU_BLAS=yes", [[require "luacuda"]])
    assert.is_false(ok)
    assert.matches("LUACUDA_CPU_BLAS", out, 1, true)
  end)
end)

-- keep the module loaded in this process (its backend chosen) as the
-- other specs do
assert(luacuda.backend())
