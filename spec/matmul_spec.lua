-- Matrix products: luacuda.matmul(a, b [, out] [, stream]) and a:matmul(b
-- ...), NumPy's rules, against a product computed here in plain Lua, on
-- host arrays (the host's loop) and device arrays (the backend: the
-- library's tiled kernel on the simulator; make check-fake-cuda runs this
-- spec twice, with the fake cuBLAS, spec/fake/fake_cublas.c, and without it,
-- when the same kernel runs on the fake driver's PTX interpreter). Small
-- integers make every float64 result exact, and float32 ones too; other
-- values are checked to float32's precision. The calls luacuda makes to
-- cuBLAS are checked on the fake cuBLAS's trace, in child processes.
local luacuda = require "luacuda"
local S = require "spec.support"

local BUILD = os.getenv("LUACUDA_BUILD") or "build"
local FAKE = BUILD .. "/fake/libcuda.so.1"
local FAKE_CUBLAS = BUILD .. "/fake/libcublas.so.13"

-- ---- the reference -----------------------------------------------------------

-- a deterministic stream of small integers in [-4, 4] (or of floats)
local function gen(seed)
  local x = seed
  return function(float)
    x = (x * 1103515245 + 12345) % 2147483648
    if float then return (x % 20001 - 10000) / 1000 end
    return x % 9 - 4
  end
end

-- a nested table of the given shape filled by f()
local function filled(shape, f, d)
  d = d or 1
  if d > #shape then return f() end
  local t = {}
  for i = 1, shape[d] do t[i] = filled(shape, f, d + 1) end
  return t
end

local function at(t, idx)
  for _, i in ipairs(idx) do t = t[i] end
  return t
end

-- NumPy's matmul of the nested tables A (shape sa) and B (shape sb): the
-- result as a nested table (a number for 0-d), and its shape
local function ref(A, sa, B, sb)
  local av, bv = #sa == 1, #sb == 1
  local ash = av and {1, sa[1]} or sa
  local bsh = bv and {sb[1], 1} or sb
  local m, k, n = ash[#ash - 1], ash[#ash], bsh[#bsh]
  local ba, bb = #ash - 2, #bsh - 2
  local nb = math.max(ba, bb)
  local batch = {}
  for i = 1, nb do
    local x = i - (nb - ba) >= 1 and ash[i - (nb - ba)] or 1
    local y = i - (nb - bb) >= 1 and bsh[i - (nb - bb)] or 1
    assert(x == y or x == 1 or y == 1)
    batch[i] = math.max(x, y)
    if x == 0 or y == 0 then batch[i] = 0 end
  end
  local function geta(bi, i, q)
    local idx = {}
    for d = 1, ba do
      local v = bi[d + (nb - ba)]
      idx[d] = ash[d] == 1 and 1 or v
    end
    if av then idx[#idx + 1] = q else idx[#idx + 1] = i; idx[#idx + 1] = q end
    return at(A, idx)
  end
  local function getb(bi, q, j)
    local idx = {}
    for d = 1, bb do
      local v = bi[d + (nb - bb)]
      idx[d] = bsh[d] == 1 and 1 or v
    end
    if bv then idx[#idx + 1] = q else idx[#idx + 1] = q; idx[#idx + 1] = j end
    return at(B, idx)
  end
  local shape = {}
  for i = 1, nb do shape[i] = batch[i] end
  if not av then shape[#shape + 1] = m end
  if not bv then shape[#shape + 1] = n end
  local function build(bi, d)
    if d <= nb then
      local t = {}
      for x = 1, batch[d] do bi[d] = x; t[x] = build(bi, d + 1) end
      return t
    end
    local function cell(i, j)
      local s = 0
      for q = 1, k do s = s + geta(bi, i, q) * getb(bi, q, j) end
      return s
    end
    if av and bv then return cell(1, 1) end
    if av then local t = {}; for j = 1, n do t[j] = cell(1, j) end; return t end
    if bv then local t = {}; for i = 1, m do t[i] = cell(i, 1) end; return t end
    local t = {}
    for i = 1, m do
      t[i] = {}
      for j = 1, n do t[i][j] = cell(i, j) end
    end
    return t
  end
  return build({}, 1), shape
end

-- every number of got within tol of want's
local function close(want, got, tol)
  local function cmp(w, g, path)
    if type(w) == "table" then
      assert.equal("table", type(g), path)
      assert.equal(#w, #g, path)
      for i = 1, #w do cmp(w[i], g[i], path .. "[" .. i .. "]") end
    else
      assert(math.abs(w - g) <= tol, ("%s: want %.9g, got %.9g"):format(path, w, g))
    end
  end
  cmp(want, got, "result")
end

local function host_values(a)
  local v = a:copy_to_host():totable()
  return v
end

-- ---- the two sides -----------------------------------------------------------

local SIDES = {
  host = function(t, dt) return luacuda.array(t, dt) end,
  device = function(t, dt) return luacuda.to_device(t, {dtype = dt}) end,
}

for _, side in ipairs({"host", "device"}) do
  local make = SIDES[side]

  -- the product of fresh operands of shapes sa and sb against the reference
  local function check(sa, sb, dt, seed, opts)
    opts = opts or {}
    local g = gen(seed or 1)
    local A = filled(sa, function() return g(opts.float) end)
    local B = filled(sb, function() return g(opts.float) end)
    local a, b = make(A, dt or "float64"), make(B, opts.dtb or dt or "float64")
    local want, shape = ref(A, sa, B, sb)
    local c = luacuda.matmul(a, b)
    assert.same(shape, c.shape)
    assert.equal(side, c.kind)
    assert.equal((dt == "float32" and (opts.dtb or dt) == "float32") and "float32" or "float64",
                 c.dtype)
    -- float32: each of the k terms (|x| <= 10 each side) rounded twice, the
    -- inputs once; the bound is 8 times that
    local k = sb[#sb == 1 and 1 or #sb - 1]
    if opts.float then close(want, host_values(c), k * 100 * 2 ^ -20)
    else assert.same(want, host_values(c)) end
    return c
  end

  describe("matmul of " .. side .. " arrays", function()
    it("multiplies 2-d arrays, float64 exactly", function()
      check({2, 3}, {3, 4})
      check({1, 1}, {1, 1})
      check({5, 1}, {1, 7})
      check({3, 17}, {17, 2})
      check({7, 40}, {40, 5}, "float64", 3)           -- k over several steps
    end)

    it("multiplies 2-d arrays past one tile each way, float64 exactly #heavy", function()
      check({130, 20}, {20, 131}, "float64", 7)
    end)

    it("multiplies float32 arrays: small integers exactly, others to float32's precision", function()
      check({4, 6}, {6, 5}, "float32")
      check({33, 70}, {70, 29}, "float32", 5, {float = true})
      check({129, 3}, {3, 2}, "float32", 9, {float = true})
    end)

    it("promotes float32 with float64 to float64, as NumPy does", function()
      check({3, 4}, {4, 2}, "float32", 2, {dtb = "float64"})
      check({3, 4}, {4, 2}, "float64", 2, {dtb = "float32"})
    end)

    it("takes 1-d operands as a row or a column, and removes that axis", function()
      check({4}, {4, 3})          -- {3}
      check({2, 4}, {4})          -- {2}
      local c = check({5}, {5})   -- 0-d
      assert.same({}, c.shape)
      check({3}, {2, 3, 4})       -- {2, 4}
      check({2, 3, 4}, {4})       -- {2, 3}
    end)

    it("broadcasts the batch axes", function()
      check({2, 3, 4}, {2, 4, 5})
      check({3, 2, 4}, {4, 3})            -- b for every product
      check({2, 3}, {4, 3, 5})            -- a for every product
      check({2, 1, 3, 4}, {5, 4, 2})      -- {2, 5, 3, 2}
      check({1, 3, 2, 2}, {4, 1, 2, 3})   -- {4, 3, 2, 3}
      check({3, 1, 1, 2}, {1, 2, 1})      -- products of one element each
    end)

    it("reads transposed, strided and reversed views", function()
      local g = gen(11)
      local A = filled({6, 5}, g)
      local B = filled({6, 4}, g)
      local a, b = make(A, "float64"), make(B, "float64")
      local at_ = luacuda.array(A, "float64").T:copy():totable()     -- A transposed
      assert.same((ref(at_, {5, 6}, B, {6, 4})), host_values(luacuda.matmul(a.T, b)))
      local bt = luacuda.array(B, "float64").T:copy():totable()
      assert.same((ref(A, {6, 5}, at_, {5, 6})), host_values(a:matmul(a.T)))
      assert.same((ref(bt, {4, 6}, B, {6, 4})), host_values(b.T:matmul(b)))
      -- every other row, every other column reversed
      local sa = a[{{1, 6, 2}, {5, 1, -2}}]             -- {3, 3}
      local sb = b[{{6, 1, -2}, {}}]                    -- {3, 4}
      local SA, SB = luacuda.array(A, "float64")[{{1, 6, 2}, {5, 1, -2}}]:copy():totable(),
                     luacuda.array(B, "float64")[{{6, 1, -2}, {}}]:copy():totable()
      assert.same((ref(SA, {3, 3}, SB, {3, 4})), host_values(luacuda.matmul(sa, sb)))
      -- a batch of transposes: the last two axes swapped
      local T3 = filled({2, 4, 3}, g)
      local t3 = make(T3, "float64")
      local swapped = t3:transpose({1, 3, 2})           -- {2, 3, 4}
      local SW = luacuda.array(T3, "float64"):transpose({1, 3, 2}):copy():totable()
      assert.same((ref(SW, {2, 3, 4}, T3, {2, 4, 3})), host_values(luacuda.matmul(swapped, t3)))
      -- a broadcast view (stride 0) as an operand
      local row = make({{1, 2, 3}}, "float64")
      local rows = row:broadcast_to({4, 3})
      assert.same({{14, 14, 14, 14}, {14, 14, 14, 14}, {14, 14, 14, 14}, {14, 14, 14, 14}},
                  host_values(luacuda.matmul(rows, rows.T)))
    end)

    it("reads a record's fields, which are not aligned, through a copy", function()
      local R = luacuda.record({{"tag", "int8"}, {"v", "float32", 3}}, {align = false})
      local h = luacuda.zeros(4, R)
      for i = 1, 4 do h[i].v = {i, i + 1, -i} end
      local v = side == "host" and h.v or luacuda.to_device(h).v   -- {4, 3}, at odd offsets
      assert.same({4, 3}, v.shape)
      local V = h.v:copy():totable()
      local VT = luacuda.array(V, "float32").T:copy():totable()
      assert.same((ref(VT, {3, 4}, V, {4, 3})), host_values(luacuda.matmul(v.T, v)))
      local out = side == "host" and luacuda.zeros(4, R) or luacuda.to_device(luacuda.zeros(4, R))
      luacuda.matmul(v, luacuda.matmul(v.T, v), out.v)              -- an output not aligned
      assert.same((ref(V, {4, 3}, ref(VT, {3, 4}, V, {4, 3}), {3, 3})), host_values(out.v))
    end)

    it("writes into an output given, of any layout, and returns it", function()
      local g = gen(5)
      local A, B = filled({3, 4}, g), filled({4, 2}, g)
      local a, b = make(A, "float32"), make(B, "float32")
      local want = ref(A, {3, 4}, B, {4, 2})
      local out = side == "host" and luacuda.zeros({3, 2}, "float32")
                  or luacuda.device_array({3, 2}, "float32")
      assert.equal(out, luacuda.matmul(a, b, out))
      assert.same(want, host_values(out))
      -- a transposed output, and the output before the stream
      local outT = (side == "host" and luacuda.zeros({2, 3}, "float32")
                    or luacuda.device_array({2, 3}, "float32"):fill(0)).T
      assert.equal(outT, luacuda.matmul(a, b, nil, outT))
      assert.same(want, host_values(outT))
      -- every other element of a larger array
      local big = side == "host" and luacuda.zeros({6, 4}, "float32")
                  or luacuda.device_array({6, 4}, "float32"):fill(-1)
      local view = big[{{1, 6, 2}, {1, 4, 3}}]
      a:matmul(b, view)
      assert.same(want, host_values(view))
      assert.equal(side == "host" and 0 or -1, host_values(big)[2][1])     -- untouched
    end)

    it("computes into an output that shares memory with an operand from a copy", function()
      local g = gen(8)
      local A = filled({4, 4}, g)
      local a = make(A, "float64")
      local want = ref(A, {4, 4}, A, {4, 4})
      luacuda.matmul(a, a, a)
      assert.same(want, host_values(a))
      local B = filled({3, 3}, g)
      local b = make(B, "float64")
      local wantT = ref(luacuda.array(B, "float64").T:copy():totable(), {3, 3}, B, {3, 3})
      luacuda.matmul(b.T, b, b)
      assert.same(wantT, host_values(b))
    end)

    it("gives zeros for k = 0 and empty results for an empty axis", function()
      local function empty(shape)
        return side == "host" and luacuda.empty(shape, "float64") or luacuda.device_array(shape, "float64")
      end
      local a, b = empty({3, 0}), empty({0, 2})
      assert.same({{0, 0}, {0, 0}, {0, 0}}, host_values(luacuda.matmul(a, b)))
      local e = luacuda.matmul(b, make({{1, 2}, {3, 4}}, "float64"))
      assert.same({0, 2}, e.shape)
      assert.same({0, 3, 2}, luacuda.matmul(empty({0, 3, 4}), empty({4, 2})).shape)
      assert.same({2, 0}, luacuda.matmul(empty({2, 4}), empty({4, 0})).shape)
    end)

    it("keeps the kind of its operands", function()
      if side == "host" then
        local p = luacuda.pinned_array({2, 2}, "float32"):fill(1)
        assert.equal("pinned", luacuda.matmul(p, p).kind)
        assert.equal("host", luacuda.matmul(p, luacuda.ones({2, 2}, "float32")).kind)
      else
        local m = luacuda.managed_array({2, 2}, "float32"):fill(1)
        local r = luacuda.matmul(m, m)
        assert.equal("managed", r.kind)
        assert.same({{2, 2}, {2, 2}}, host_values(r))
        local d = luacuda.to_device({{1, 2}, {3, 4}}, {dtype = "float32"})
        assert.equal("device", luacuda.matmul(m, d).kind)
        local mp = luacuda.mapped_array({2, 2}, "float32")
        mp:fill(2)
        local r2 = luacuda.matmul(mp, d)
        luacuda.synchronize()
        assert.equal("mapped", luacuda.matmul(mp, mp).kind)
        assert.same({{8, 12}, {8, 12}}, host_values(r2))
      end
    end)
  end)
end

describe("matmul on streams", function()
  it("queues device products on the stream given and orders them with its other work", function()
    local s = luacuda.stream()
    local n = 40
    local a = luacuda.device_array({n, n}, "float64")
    a:fill(1, s)
    local b = luacuda.device_array({n, n}, "float64")
    b:copy_to_device(luacuda.full({n, n}, 2, "float64"), s)
    local c = luacuda.matmul(a, b, s)
    local d = luacuda.matmul(c, b, s)            -- reads c after the first product
    local h = d:copy_to_host(nil, s)
    s:synchronize()
    assert.equal(n * 2 * 2 * n, h[{3, 5}])
    -- the output and the stream in either order
    local out = luacuda.device_array({n, n}, "float64")
    luacuda.matmul(a, b, s, out)
    s:synchronize()
    assert.equal(2 * n, out:copy_to_host()[{1, 1}])
    -- a non-blocking stream, waited for through an event
    local nb = luacuda.stream({non_blocking = true})
    local e = luacuda.event()
    luacuda.matmul(a, b, out, nb)
    e:record(nb)
    e:synchronize()
    assert.equal(2 * n, out:copy_to_host()[{n, n}])
  end)

  it("computes host products at once, whatever stream is given", function()
    local s = luacuda.stream()
    local a = luacuda.full({3, 3}, 2, "float32")
    local c = a:matmul(a, s)
    assert.same({{12, 12, 12}, {12, 12, 12}, {12, 12, 12}}, c:totable())
  end)
end)

describe("matmul refuses", function()
  local d2 = luacuda.to_device({{1, 2}, {3, 4}}, {dtype = "float32"})
  local h2 = luacuda.array({{1, 2}, {3, 4}}, "float32")

  it("operands that are not float arrays, naming them", function()
    S.misuse({"luacuda.matmul:", "takes two arrays, got 1 argument"}, luacuda.matmul, d2)
    S.misuse({"luacuda.matmul:", "operand 2 must be an array, got number", "multiply"},
             luacuda.matmul, d2, 2)
    S.misuse({"luacuda.matmul:", "operand 1 is a table: make it an array first"},
             luacuda.matmul, {{1, 2}}, d2)
    S.misuse({"luacuda.matmul:", "operand 1 must be an array, got string"}, luacuda.matmul, "x", d2)
    S.misuse({"luacuda.matmul:", "operand 2 is of dtype int64: matmul takes float32 and float64",
              "astype"}, luacuda.matmul, h2, luacuda.array({{1, 2}, {3, 4}}))
    S.misuse({"luacuda.matmul:", "operand 1 is of dtype float16"}, luacuda.matmul,
             luacuda.to_device({{1}}, {dtype = "float16"}), d2)
    local closed = luacuda.to_device({1, 2}, {dtype = "float32"})
    closed:close()
    S.misuse({"luacuda.matmul:", "closed"}, luacuda.matmul, d2, closed)
  end)

  it("0-d operands", function()
    local z = luacuda.to_device(1.5, {dtype = "float64"})
    S.misuse({"luacuda.matmul:", "operand 1 is 0-d", "one axis or more"}, luacuda.matmul, z, d2)
    S.misuse({"luacuda.matmul:", "operand 2 is 0-d"}, luacuda.matmul, d2, z)
  end)

  it("shapes that do not match, naming both and the axes", function()
    local a = luacuda.device_array({2, 3}, "float64"):fill(0)
    local b = luacuda.device_array({4, 5}, "float64"):fill(0)
    S.misuse({"luacuda.matmul:", "shapes {2, 3} and {4, 5} do not match",
              "axis 2 of the first has 3 elements and axis 1 of the second 4"}, luacuda.matmul, a, b)
    S.misuse({"luacuda.matmul:", "shapes {2, 3} and {2} do not match",
              "axis 2 of the first has 3 elements and axis 1 of the second 2"},
             luacuda.matmul, a, luacuda.device_array(2, "float64"):fill(0))
    S.misuse({"luacuda.matmul:", "shapes {4} and {2, 3} do not match", "axis 1 of the first has 4"},
             luacuda.matmul, luacuda.device_array(4, "float64"):fill(0), a)
    local p = luacuda.device_array({2, 3, 4}, "float64"):fill(0)
    local q = luacuda.device_array({5, 4, 2}, "float64"):fill(0)
    S.misuse({"luacuda.matmul:", "shapes {2, 3, 4} and {5, 4, 2} do not match",
              "their batch axes do not broadcast: axis 1 of the first has 2 elements and axis 1 of the second 5"},
             luacuda.matmul, p, q)
    S.misuse({"their batch axes do not broadcast: axis 2 of the first has 3 elements and axis 1 of the second 2"},
             luacuda.matmul, luacuda.zeros({1, 3, 2, 2}, "float32"), luacuda.zeros({2, 2, 2}, "float32"))
  end)

  it("operands and outputs on different sides", function()
    S.misuse({"luacuda.matmul:", "operand 1 is a host array and operand 2 a device array",
              "different sides"}, luacuda.matmul, h2, d2)
    S.misuse({"luacuda.matmul:", "the output is a host array, the operands compute on the device"},
             luacuda.matmul, d2, d2, luacuda.zeros({2, 2}, "float32"))
    S.misuse({"luacuda.matmul:", "the output is a device array, the operands compute on the host"},
             luacuda.matmul, h2, h2, luacuda.device_array({2, 2}, "float32"):fill(0))
  end)

  it("outputs of another shape or dtype, naming both", function()
    local out = luacuda.device_array({2, 3}, "float32"):fill(7)
    S.misuse({"luacuda.matmul:", "the output must be an array of dtype float32 and shape {2, 2}, "
              .. "got one of dtype float32 and shape {2, 3}"}, luacuda.matmul, d2, d2, out)
    local out64 = luacuda.device_array({2, 2}, "float64"):fill(7)
    S.misuse({"the output must be an array of dtype float32 and shape {2, 2}, got one of dtype "
              .. "float64 and shape {2, 2}", "astype"}, luacuda.matmul, d2, d2, out64)
    S.misuse({"the output must be an array of dtype float64 and shape {2}"}, luacuda.matmul,
             luacuda.to_device({1, 2}, {dtype = "float64"}), d2, luacuda.device_array({1, 2}, "float64"):fill(0))
  end)

  it("arguments past the output and the stream", function()
    local s = luacuda.stream()
    local out = luacuda.device_array({2, 2}, "float32"):fill(0)
    S.misuse({"luacuda.matmul:", "argument 5: expected an output array or a stream, got luacuda.stream"},
             luacuda.matmul, d2, d2, out, s, s)
    S.misuse({"luacuda.matmul:", "argument 4: expected an output array or a stream, got luacuda.array"},
             luacuda.matmul, d2, d2, out, out)
    S.misuse({"luacuda.matmul:", "stream"}, luacuda.matmul, d2, d2, 5)
  end)
end)

describe("matmul's kernel on the simulator", function()
  it("names the library's kernel when the simulator cannot compile it, at every call", function()
    if S.backend ~= "sim" then return pending("simulator only: its compiler") end
    local dir = S.tmpdir()
    -- the CPU's BLAS off: the kernel computes device products
    local ok, out = S.lua_run("LUACUDA_CPU_BLAS=0 LUACUDA_CXX=/nonexistent/c++ LUACUDA_CACHE_DIR=" .. dir, [[
      local l = require "luacuda"
      local a = l.to_device({{1, 2}}, {dtype = "float32"})
      for _ = 1, 2 do print(select(2, pcall(l.matmul, a, a.T))) end
      print(l.matmul(a:copy_to_host(), a:copy_to_host().T)[{1, 1}])   -- the host's loop
    ]])
    os.execute("rm -rf " .. dir)
    assert(ok, out)
    local _, n = out:gsub("luacuda.matmul: the library's matmul kernel did not compile: "
                          .. "cannot run the C%+%+ compiler '/nonexistent/c%+%+'", "")
    assert.equal(2, n, out)
    assert.matches("\n5.0\n$", out)
  end)
end)

describe("luacuda.blas", function()
  it("says which library computes device products", function()
    local name, why = luacuda.blas()
    if S.backend == "sim" and name ~= "builtin" then
      -- the CPU's BLAS: the file its symbols come from
      assert.matches("^blas /.*libblas", name)
      assert.is_nil(why)
    elseif S.backend == "sim" then
      assert.equal("builtin", name)
      assert.matches("the sim backend computes matrix products with the library's own tiled kernel", why, 1, true)
    elseif os.getenv("LUACUDA_CUBLAS") == FAKE_CUBLAS or (os.getenv("LUACUDA_CUBLAS") or ""):find("fake/libcublas", 1, true) then
      assert.matches("^cublas %d+%.%d+%.%d+$", name)
      assert.is_nil(why)
    elseif name == "builtin" then
      assert.is_string(why)
    else
      assert.matches("^cublas ", name)
    end
  end)
end)

-- ---- the calls made to cuBLAS: the fake's trace, in children ------------------

describe("matmul on the CUDA backend with the fake cuBLAS", function()
  local function usable()
    if not S.fake then return false, "the fake cuBLAS's calls: make check-fake-cuda" end
    if not (S.exists(FAKE) and S.exists(FAKE_CUBLAS)) then
      return false, "no fake cuBLAS built (" .. FAKE_CUBLAS .. ")"
    end
    local cur = os.getenv("LUACUDA_CUBLAS") or ""
    if not cur:find("fake/libcublas", 1, true) then
      return false, "checked in check-fake-cuda's run with the fake cuBLAS"
    end
    return true
  end

  -- run code in a child on the fake driver and the fake cuBLAS; its output
  -- and the cuBLAS trace's lines (and the driver's, with streams)
  local function run(code, env)
    local dir = S.tmpdir()
    local f = assert(io.open(dir .. "/c.lua", "w"))
    f:write("local l = require 'luacuda'\n", code, "\nprint('ok')\n")
    f:close()
    local ok, out = S.sh(("env LUACUDA_BACKEND=cuda LUACUDA_LIBCUDA=%s LUACUDA_CUBLAS=%s "
                          .. "LUACUDA_CACHE_DIR=%s/cache FAKE_CUDA_MEMORY=256M FAKE_CUDA_DELAY_US=0 "
                          .. "FAKE_CUBLAS_TRACE=%s/blas FAKE_CUDA_TRACE=%s/cuda FAKE_CUDA_TRACE_STREAMS=1 %s lua5.4 %s/c.lua")
                         :format(FAKE, FAKE_CUBLAS, dir, dir, dir, env or "", dir))
    local function lines(path)
      local t = {}
      local h = io.open(path)
      if h then for l in h:lines() do t[#t + 1] = l end h:close() end
      return t
    end
    local blas, cuda = lines(dir .. "/blas"), lines(dir .. "/cuda")
    os.execute("rm -rf " .. dir)
    assert(ok and out:find("ok\n", 1, true), out)
    return out, blas, cuda
  end

  local function gemms(trace)
    local t = {}
    for _, l in ipairs(trace) do if l:find("gemm") then t[#t + 1] = l end end
    return t
  end

  it("computes C^T = B^T A^T in cuBLAS's column order: no transposes, leading dimensions the row strides", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    local _, blas = run([[
      local a = l.to_device({{1, 2, 3}, {4, 5, 6}}, {dtype = "float32"})      -- 2 x 3
      local b = l.to_device({{1, 0, 2, 1}, {0, 1, 1, 1}, {1, 1, 0, 1}}, {dtype = "float32"})  -- 3 x 4
      local c = l.matmul(a, b)
      assert(c:copy_to_host():totable()[2][3] == 13)
      local d = l.matmul(l.to_device({{1, 2}}, {dtype = "float64"}), l.to_device({{3}, {4}}, {dtype = "float64"}))
      assert(d:copy_to_host()[{1, 1}] == 11)
      print(l.blas())
    ]])
    assert.same({"cublasCreate_v2", "cublasSetPointerMode_v2 host", "cublasSetStream_v2 @legacy",
                 "cublasSgemm_v2 N N m=4 n=2 k=3 alpha=1 lda=4 ldb=3 beta=0 ldc=4",
                 "cublasSetStream_v2 @legacy",
                 "cublasDgemm_v2 N N m=1 n=1 k=2 alpha=1 lda=1 ldb=2 beta=0 ldc=1",
                 "cublasGetVersion_v2"}, blas)
  end)

  it("passes transposed views as transposes, and copies other layouts first", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    local _, blas = run([[
      local a = l.to_device(l.arange(12, "float64"):reshape(3, 4))
      local b = l.to_device(l.arange(20, "float64"):reshape(5, 4))
      local want = l.matmul(a:copy_to_host(), b:copy_to_host().T)
      local c = l.matmul(a, b.T)                              -- 3 x 5
      assert(c:copy_to_host()[{3, 5}] == want[{3, 5}])
      local e = l.matmul(a.T, a)                              -- 4 x 4
      assert(e:copy_to_host()[{4, 4}] == l.matmul(a:copy_to_host().T, a:copy_to_host())[{4, 4}])
      local r = a[{{}, {4, 1, -1}}]                           -- reversed columns: copied
      local f = l.matmul(r, b.T)
      assert(f:copy_to_host()[{1, 1}] == l.matmul(r:copy_to_host(), b:copy_to_host().T)[{1, 1}])
    ]])
    assert.same({"cublasDgemm_v2 T N m=5 n=3 k=4 alpha=1 lda=4 ldb=4 beta=0 ldc=5",
                 "cublasDgemm_v2 N T m=4 n=4 k=3 alpha=1 lda=4 ldb=4 beta=0 ldc=4",
                 "cublasDgemm_v2 T N m=5 n=3 k=4 alpha=1 lda=4 ldb=4 beta=0 ldc=5"}, gemms(blas))
  end)

  it("sends thin shapes to cuBLAS as they lie: a column, X.T times a column, a 1-d vector", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    local _, blas = run([[
      local X = l.to_device(l.arange(200, "float32"):reshape(50, 4))
      local w = l.to_device(l.arange(4, "float32"):reshape(4, 1))
      local r = l.to_device(l.arange(50, "float32"):reshape(50, 1))
      local hX, hw, hr = X:copy_to_host(), w:copy_to_host(), r:copy_to_host()
      assert(l.matmul(X, w):copy_to_host()[{50, 1}] == l.matmul(hX, hw)[{50, 1}])
      assert(l.matmul(X.T, r):copy_to_host()[{4, 1}] == l.matmul(hX.T, hr)[{4, 1}])
      assert(l.matmul(X, w:reshape(4)):copy_to_host()[50] == l.matmul(hX, hw:reshape(4))[50])
    ]])
    assert.same({"cublasSgemm_v2 N N m=1 n=50 k=4 alpha=1 lda=1 ldb=4 beta=0 ldc=1",
                 "cublasSgemm_v2 N T m=1 n=4 k=50 alpha=1 lda=1 ldb=4 beta=0 ldc=1",
                 "cublasSgemm_v2 N N m=1 n=50 k=4 alpha=1 lda=1 ldb=4 beta=0 ldc=1"}, gemms(blas))
  end)

  it("runs a batch as one strided-batched call, a broadcast matrix with stride 0, and folds a batch that shares b into m", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    local _, blas = run([[
      local a = l.to_device(l.arange(2 * 3 * 4, "float32"):reshape(2, 3, 4))
      local b = l.to_device(l.arange(2 * 4 * 5, "float32"):reshape(2, 4, 5))
      local c = l.matmul(a, b)
      local want = l.matmul(a:copy_to_host(), b:copy_to_host())
      assert(c:copy_to_host()[{2, 3, 5}] == want[{2, 3, 5}])
      local b1 = l.to_device(l.arange(4 * 5, "float32"):reshape(4, 5))
      local d = l.matmul(a, b1)                                  -- one gemm of 6 rows
      assert(d:copy_to_host()[{2, 1, 1}] == l.matmul(a:copy_to_host(), b1:copy_to_host())[{2, 1, 1}])
      local a1 = l.to_device(l.arange(3 * 4, "float32"):reshape(3, 4))
      local e = l.matmul(a1, b)                                  -- a broadcast: stride 0
      assert(e:copy_to_host()[{2, 3, 5}] == l.matmul(a1:copy_to_host(), b:copy_to_host())[{2, 3, 5}])
    ]])
    assert.same({"cublasSgemmStridedBatched N N m=5 n=3 k=4 alpha=1 lda=5 strideA=20 ldb=4 strideB=12 beta=0 ldc=5 strideC=15 batch=2",
                 "cublasSgemm_v2 N N m=5 n=6 k=4 alpha=1 lda=5 ldb=4 beta=0 ldc=5",
                 "cublasSgemmStridedBatched N N m=5 n=3 k=4 alpha=1 lda=5 strideA=20 ldb=4 strideB=0 beta=0 ldc=5 strideC=15 batch=2"},
                gemms(blas))
  end)

  it("sets the stream of each call, and makes one handle per device", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    local _, blas = run([[
      local s = l.stream({non_blocking = true})
      local t = l.stream()
      local a = l.to_device({{1, 2}, {3, 4}}, {dtype = "float32"})
      l.synchronize()
      local c1 = l.matmul(a, a, s)
      local c2 = l.matmul(a, a, t)
      local c3 = l.matmul(a, a)
      s:synchronize(); t:synchronize()
      assert(c1:copy_to_host()[{2, 2}] == 22 and c2:copy_to_host()[{2, 2}] == 22 and c3:copy_to_host()[{2, 2}] == 22)
      l.select_device(2)                                       -- a handle of its own
      local b = l.to_device({{1, 2}, {3, 4}}, {dtype = "float64"})
      assert(l.matmul(b, b):copy_to_host()[{1, 2}] == 10)
      l.select_device(1)
      assert(l.matmul(a, a):copy_to_host()[{1, 2}] == 10)
    ]])
    local sets = {}
    local creates = 0
    for _, line in ipairs(blas) do
      if line:find("^cublasSetStream_v2") then sets[#sets + 1] = line end
      if line == "cublasCreate_v2" then creates = creates + 1 end
    end
    assert.equal(2, creates)
    assert.same({"cublasSetStream_v2 @nonblocking", "cublasSetStream_v2 @blocking",
                 "cublasSetStream_v2 @legacy", "cublasSetStream_v2 @legacy",
                 "cublasSetStream_v2 @legacy"}, sets)
  end)

  it("falls back to the library's kernel when cuBLAS cannot be had, and says why", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    local out = run([[
      local name, why = l.blas()
      print(name, why)
      local a = l.to_device({{1, 2}, {3, 4}}, {dtype = "float64"})
      assert(l.matmul(a, a):copy_to_host()[{2, 1}] == 15)
    ]], "FAKE_CUBLAS_FAIL=cublasCreate_v2:1")
    assert.matches("builtin\tcublasCreate_v2: CUBLAS_STATUS_", out, 1, true)
    local out2, blas = run([[
      local name, why = l.blas()
      print(name, why)
      local a = l.to_device({{1, 2}, {3, 4}}, {dtype = "float64"})
      assert(l.matmul(a, a):copy_to_host()[{2, 1}] == 15)
    ]], "LUACUDA_CUBLAS=/nonexistent/libcublas.so.13")
    assert.matches("builtin\t", out2, 1, true)
    assert.matches("/nonexistent/libcublas.so.13", out2, 1, true)
    assert.same({}, blas)
  end)

  it("raises a failed cuBLAS call with its status", function()
    local ok, why = usable()
    if not ok then return pending(why) end
    run([[
      local a = l.to_device({{1, 2}, {3, 4}}, {dtype = "float32"})
      local ok, e = pcall(l.matmul, a, a)
      assert(not ok and e:find("luacuda.matmul: cublasSgemm_v2: CUBLAS_STATUS_INTERNAL_ERROR", 1, true), e)
      local c = l.matmul(a, a)                                 -- the next call works
      assert(c:copy_to_host()[{1, 1}] == 7)
    ]], "FAKE_CUBLAS_FAIL=cublasSgemm_v2:1")
    run([[
      local a = l.to_device({{1, 2}, {3, 4}}, {dtype = "float64"})
      local ok, e = pcall(l.matmul, a, a)
      assert(not ok and e:find("luacuda.matmul: cublasSetStream_v2: CUBLAS_STATUS_INVALID_VALUE", 1, true), e)
      assert(l.matmul(a, a):copy_to_host()[{2, 2}] == 22)
    ]], "FAKE_CUBLAS_FAIL=cublasSetStream_v2:1:7")
  end)
end)
