-- Reductions (sum, prod, min, max, mean, argmin, argmax, any, all) and
-- scans (cumsum, cumprod) against the same computed in plain Lua, on every
-- kind of array, several dtypes, axis forms, views, 0-d and empty arrays.
local luacuda = require "luacuda"
local S = require "spec.support"

local KINDS = {"host", "pinned", "device", "managed", "mapped"}
local DTYPES = {"bool", "int8", "int32", "uint8", "uint64", "float16", "float32", "float64"}
local OPS = {"sum", "prod", "min", "max", "mean", "argmin", "argmax", "any", "all"}

-- ---- the reference, in plain Lua -------------------------------------------------

local function shape_of(t)
  local shape = {}
  while type(t) == "table" do
    shape[#shape + 1] = #t
    t = t[1]
  end
  return shape
end

local function flatten(t, out)
  out = out or {}
  if type(t) ~= "table" then
    out[#out + 1] = t
  else
    for i = 1, #t do flatten(t[i], out) end
  end
  return out
end

-- a flat C-order list as nested tables of shape (a value for {})
local function nest(flat, shape)
  if #shape == 0 then return flat[1] end
  local at = 0
  local function build(d)
    local t = {}
    for i = 1, shape[d] do
      if d == #shape then
        at = at + 1
        t[i] = flat[at]
      else
        t[i] = build(d + 1)
      end
    end
    return t
  end
  return build(1)
end

local function num(v)
  if v == true then return 1 elseif v == false then return 0 end
  return v
end

local function is_nan(v) return v ~= v end

local function truthy(v) return v ~= false and v ~= 0 end

local INTS = {bool = true, int8 = true, int16 = true, int32 = true, int64 = true, uint8 = true,
              uint16 = true, uint32 = true, uint64 = true}

-- NumPy's result dtype of op over dtype
local function result_dtype(op, dtype)
  if op == "sum" or op == "prod" or op == "cumsum" or op == "cumprod" then
    if dtype == "bool" or dtype:match("^int") then return "int64" end
    if dtype:match("^uint") then return "uint64" end
    return dtype
  elseif op == "mean" then
    return INTS[dtype] and "float64" or dtype
  elseif op == "argmin" or op == "argmax" then
    return "int64"
  elseif op == "any" or op == "all" then
    return "bool"
  end
  return dtype
end

-- op over the elements of one group, in order
local function fold(op, vals, int_result)
  local n = #vals
  if op == "sum" or op == "prod" or op == "mean" then
    local acc = (op == "prod") and 1 or 0
    if not int_result and op ~= "mean" then acc = acc + 0.0 end
    for _, v in ipairs(vals) do
      v = num(v)
      if int_result then v = math.tointeger(v) end
      if op == "prod" then acc = acc * v else acc = acc + v end
    end
    if op == "mean" then return n == 0 and 0 / 0 or acc / n end
    return acc
  elseif op == "min" or op == "max" then
    local best = vals[1]
    for i = 2, n do
      local v = vals[i]
      if is_nan(best) then break end
      if is_nan(v) then best = v
      elseif type(v) == "boolean" then
        if op == "min" then best = best and v else best = best or v end
      elseif (op == "min" and v < best) or (op == "max" and v > best) then best = v end
    end
    return best
  elseif op == "argmin" or op == "argmax" then
    local bi, best = 1, num(vals[1])
    for i = 1, n do
      local v = num(vals[i])
      if is_nan(v) then return i end
      if (op == "argmin" and v < best) or (op == "argmax" and v > best) then bi, best = i, v end
    end
    return bi
  elseif op == "any" then
    for _, v in ipairs(vals) do if truthy(v) then return true end end
    return false
  elseif op == "all" then
    for _, v in ipairs(vals) do if not truthy(v) then return false end end
    return true
  end
end

-- the reference of a:op(axes) over the nested values t (axes: a set of
-- 1-based axes, nil for all), as nested tables (a value when nothing is
-- kept and not keepdims)
local function reference(op, t, shape, axes, keepdims, dtype)
  local flat = flatten(t)
  if #shape == 0 then flat = {t} end
  local nd = #shape
  local reduced = {}
  for d = 1, nd do reduced[d] = axes == nil or axes[d] == true end
  local groups, order, outshape = {}, {}, {}
  for d = 1, nd do
    if not reduced[d] then outshape[#outshape + 1] = shape[d]
    elseif keepdims then outshape[#outshape + 1] = 1 end
  end
  local total = 1
  for d = 1, nd do total = total * shape[d] end
  local kept_count = 1
  for d = 1, nd do if not reduced[d] then kept_count = kept_count * shape[d] end end
  for k = 1, kept_count do groups[k] = {} end
  for i = 0, total - 1 do
    local rest, key, mul = i, 0, 1
    for d = nd, 1, -1 do
      local j = rest % shape[d]
      rest = rest // shape[d]
      if not reduced[d] then
        key = key + j * mul
        mul = mul * shape[d]
      end
    end
    local g = groups[key + 1]
    g[#g + 1] = flat[i + 1]
  end
  local rd = result_dtype(op, dtype)
  for k = 1, kept_count do order[k] = fold(op, groups[k], INTS[rd] and rd ~= "bool") end
  if axes == nil and not keepdims then return order[1] end
  return nest(order, outshape), outshape
end

-- the scan of t along axis (nil: flattened)
local function scan_reference(op, t, shape, axis, dtype)
  local flat = flatten(t)
  if #shape == 0 then flat = {t} end
  local int = INTS[result_dtype(op, dtype)]
  local out = {}
  if axis == nil then
    local acc = op == "cumsum" and 0 or 1
    if not int then acc = acc + 0.0 end
    for i, v in ipairs(flat) do
      v = num(v)
      if op == "cumsum" then acc = acc + v else acc = acc * v end
      out[i] = acc
    end
    return out
  end
  local stride = 1
  for d = axis + 1, #shape do stride = stride * shape[d] end
  for i = 0, #flat - 1 do
    local j = (i // stride) % shape[axis]
    local v = num(flat[i + 1])
    if j == 0 then out[i + 1] = int and v or v + 0.0
    elseif op == "cumsum" then out[i + 1] = out[i + 1 - stride] + v
    else out[i + 1] = out[i + 1 - stride] * v end
  end
  return nest(out, shape)
end

local TOL = {float16 = 4e-3, bfloat16 = 2e-2, float32 = 2e-6, float64 = 1e-12}

-- got and want equal: exactly, or within the dtype's relative tolerance
local function close(got, want, dtype, path)
  path = path or "value"
  if type(want) == "table" then
    assert.equal("table", type(got), path .. " is not a table")
    assert.equal(#want, #got, path .. " has another length")
    for i = 1, #want do close(got[i], want[i], dtype, path .. "[" .. i .. "]") end
    return
  end
  if is_nan(want) then
    assert(is_nan(got), ("%s: got %s, expected NaN"):format(path, tostring(got)))
    return
  end
  if math.type(want) == "integer" and want < 0 and math.type(got) == "float" and got >= 2^63 then
    want = want + 18446744073709551616.0     -- a wrapped uint64 above 2^63 - 1 reads as a float
    assert(math.abs(got - want) <= want * 1e-15, ("%s: got %.17g, expected %.17g")
           :format(path, got, want))
    return
  end
  local tol = TOL[dtype]
  if tol and type(want) == "number" and type(got) == "number" and want ~= got then
    local err = math.abs(got - want) / math.max(math.abs(want), 1e-30)
    assert(err <= tol, ("%s: got %.17g, expected %.17g (relative error %g)")
           :format(path, got, want, err))
    return
  end
  assert(got == want and math.type(got) == math.type(want) or
         (type(got) == "number" and got == want),
         ("%s: got %s, expected %s"):format(path, tostring(got), tostring(want)))
end

-- ---- arrays of each kind ---------------------------------------------------------

local function make(kind, t, dtype)
  local h = luacuda.array(t, dtype)
  if kind == "host" then return h end
  if kind == "device" then return luacuda.to_device(h) end
  local shape = h.shape
  local a
  if kind == "pinned" then
    a = luacuda.pinned_array(shape, dtype)
    h:copy_to_host(a)
  else
    a = kind == "managed" and luacuda.managed_array(shape, dtype)
        or luacuda.mapped_array(shape, dtype)
    a:copy_to_device(h)
  end
  return a
end

local function host_values(x)
  if luacuda.type(x) ~= "array" then return x end
  return x:copy_to_host():totable()
end

-- the test values of a dtype, a {2, 3, 4} array's
local function values(dtype)
  local t = {}
  for i = 1, 2 do
    t[i] = {}
    for j = 1, 3 do
      t[i][j] = {}
      for k = 1, 4 do
        local n = (i - 1) * 12 + (j - 1) * 4 + (k - 1)
        local v
        if dtype == "bool" then v = n % 3 ~= 1
        elseif dtype == "int8" then v = (n * 37) % 256 - 128
        elseif dtype == "int32" then v = (n * 1000003) % 2001 - 1000
        elseif dtype == "uint8" then v = (n * 37) % 256
        elseif dtype == "uint64" then v = (n * 7) % 5 + 1
        else v = (n % 2 == 0 and 1 or -1) * (0.5 + (n * 7 % 5) * 0.25) end
        t[i][j][k] = v
      end
    end
  end
  return t
end

local AXES = {
  {nil, nil}, {1, {true}}, {3, {nil, nil, true}}, {{1, 3}, {true, nil, true}}, {{2}, {nil, true}},
}

describe("reductions", function()
  for _, kind in ipairs(KINDS) do
    describe("of " .. kind .. " arrays", function()
      for _, dtype in ipairs(DTYPES) do
        it("give NumPy's values and dtypes for " .. dtype .. " along every axis form", function()
          local t = values(dtype)
          local a = make(kind, t, dtype)
          local tv = host_values(a)
          local shape = a.shape
          for _, op in ipairs(OPS) do
            local rd = result_dtype(op, dtype)
            for _, form in ipairs(AXES) do
              local axis, set = form[1], form[2]
              local want = reference(op, tv, shape, set, false, dtype)
              local r = a[op](a, axis)
              local what = ("%s(%s) of %s"):format(op, tostring(axis), dtype)
              if axis == nil then
                assert.is_nil(luacuda.type(r), what .. " is a Lua value")
              else
                assert.equal(kind, r.kind, what)
                assert.equal(rd, r.dtype, what)
              end
              close(host_values(r), want, rd, what)
            end
            -- keepdims
            local want, wshape = reference(op, tv, shape, {nil, true}, true, dtype)
            local r = a[op](a, 2, {keepdims = true})
            assert.same(wshape, r.shape)
            close(host_values(r), want, rd, op .. " keepdims")
            local all = a[op](a, nil, {keepdims = true})
            assert.same({1, 1, 1}, all.shape)
          end
          for _, op in ipairs({"cumsum", "cumprod"}) do
            for _, axis in ipairs({false, 1, 2, 3}) do
              local want = scan_reference(op, tv, shape, axis or nil, dtype)
              local r = axis and a[op](a, axis) or a[op](a)
              assert.equal(result_dtype(op, dtype), r.dtype)
              assert.equal(kind, r.kind)
              close(host_values(r), want, r.dtype, op .. "(" .. tostring(axis) .. ")")
            end
          end
        end)
      end
    end)
  end
end)

describe("reductions of views", function()
  for _, kind in ipairs({"host", "device", "managed"}) do
    it("read strided, transposed and reversed views of a " .. kind .. " array", function()
      local t = {}
      for i = 1, 4 do
        t[i] = {}
        for j = 1, 6 do t[i][j] = (i * 7 + j * 3) % 11 - 5 end
      end
      local a = make(kind, t, "int32")
      local views = {
        a[{{1, 4, 2}}], a:transpose(), a[{{4, 1, -1}, {1, 6, 2}}], a[{{}, {6, 1, -2}}]:transpose(),
        a[{{2, 2}, {}}], a[{2, {}}],
      }
      for vi, v in ipairs(views) do
        local tv, shape = host_values(v), v.shape
        for _, op in ipairs(OPS) do
          close(v[op](v), reference(op, tv, shape, nil, false, "int32"), "x", op .. " view " .. vi)
          for d = 1, #shape do
            local set = {}
            set[d] = true
            close(host_values(v[op](v, d)), reference(op, tv, shape, set, false, "int32"), "x",
                  ("%s(%d) view %d"):format(op, d, vi))
          end
        end
        close(host_values(v:cumsum(#shape)), scan_reference("cumsum", tv, shape, #shape, "int32"),
              "x", "cumsum view " .. vi)
        close(host_values(v:cumsum()), scan_reference("cumsum", tv, shape, nil, "int32"), "x",
              "flat cumsum view " .. vi)
      end
    end)
  end

  for _, kind in ipairs({"host", "device"}) do
    it("reads and writes misaligned views (fields of a packed record) on " .. kind, function()
      local rec = luacuda.record({{"c", "int8"}, {"x", "float32"}, {"n", "int16"}},
                                 {align = false})
      local h = luacuda.zeros(5, rec)
      for i = 1, 5 do h[i] = {c = i, x = i * 1.5, n = -i} end
      local a = kind == "host" and h or luacuda.to_device(h)
      assert.equal(7, a.x.strides[1])
      assert.equal(22.5, a.x:sum())
      assert.equal(-5, a.n:min())
      assert.equal(5, a.x:argmax())
      assert.same({1.5, 4.5, 9, 15, 22.5}, host_values(a.x:cumsum()))
      local o = kind == "host" and luacuda.zeros(5, rec) or luacuda.to_device(luacuda.zeros(5, rec))
      a.x:cumsum(1, {out = o.x})
      a.n:cumsum(1, {out = o.n, dtype = "int16"})
      a.n:max(nil, {out = o.n[{{2, 2}}]:reshape({}), dtype = nil})
      assert.same({1.5, 4.5, 9, 15, 22.5}, host_values(o.x))
      assert.same({-1, -1, -6, -10, -15}, host_values(o.n))
    end)
  end

  it("reads a broadcast view (stride 0)", function()
    local a = luacuda.to_device({1.5, 2.5, 3.5}):broadcast_to({4, 3})
    assert.equal(30, a:sum())
    assert.same({6, 10, 14}, a:sum(1):copy_to_host():totable())
    assert.same({3, 3, 3, 3}, a:argmax(2):copy_to_host():totable())
  end)
end)

describe("reductions of 0-d and empty arrays", function()
  for _, kind in ipairs({"host", "device"}) do
    it("reduce a 0-d " .. kind .. " array to its one element", function()
      local a = make(kind, 5, "int32")
      assert.equal(5, a:sum())
      assert.equal(5, a:max())
      assert.equal(1, a:argmin())
      assert.equal(5.0, a:mean())
      assert.is_true(a:all())
      local c = a:cumsum()
      assert.same({1}, c.shape)
      assert.same({5}, host_values(c))
      assert.same({}, a:sum(nil, {keepdims = true}).shape)
    end)

    it("give the identities of an empty " .. kind .. " array", function()
      local a = kind == "host" and luacuda.zeros({0, 3}, "float32")
                or luacuda.device_array({0, 3}, "float32")
      assert.equal(0, a:sum())
      assert.equal(1, a:prod())
      assert.is_true(is_nan(a:mean()))
      assert.is_false(a:any())
      assert.is_true(a:all())
      assert.same({0, 0, 0}, host_values(a:sum(1)))
      assert.same({1, 1, 1}, host_values(a:prod(1)))
      assert.same({0}, a:sum(2).shape)
      assert.same({0}, a:max(2).shape)     -- no output: nothing to reduce
      assert.same({0}, a:cumsum().shape)
      assert.same({0, 3}, a:cumprod(1).shape)
      local i = luacuda.array({}, "int16")
      assert.equal("int64", i:sum(1).dtype)
      assert.equal(0, i:sum())
    end)
  end
end)

describe("NaN", function()
  for _, kind in ipairs({"host", "device"}) do
    it("propagates through min and max, and argmin/argmax find the first on " .. kind, function()
      local nan = 0 / 0
      local a = make(kind, {{3, nan, 1}, {nan, 0, 5}}, "float32")
      assert.is_true(is_nan(a:min()))
      assert.is_true(is_nan(a:max()))
      assert.equal(2, a:argmax())
      assert.equal(2, a:argmin())
      local m = host_values(a:min(1))
      assert.is_true(is_nan(m[1]) and is_nan(m[2]))
      assert.equal(1, m[3])
      assert.same({2, 1}, host_values(a:argmin(2)))
      assert.same({2, 1, 2}, host_values(a:argmax(1)))
      assert.is_true(a:any())
      assert.is_false(a:all())
      local z = make(kind, {0, -0.0, nan}, "float64")
      assert.is_true(z:any())
      assert.is_false(z[{{1, 2}}]:any())
      assert.is_true(is_nan(z:sum()))
      local h = make(kind, {1, nan, -2}, "float16")
      assert.is_true(is_nan(h:max()))
      assert.equal(2, h:argmin())
    end)
  end
end)

describe("integer arithmetic", function()
  for _, kind in ipairs({"host", "device", "mapped"}) do
    it("wraps as two's complement on " .. kind, function()
      local a = make(kind, {100, 100, 100, -128}, "int8")
      assert.equal(172, a:sum())                                   -- int64 accumulator
      assert.equal(172 - 256, a:sum(1, {dtype = "int8"}):copy_to_host()[{}])
      assert.equal(172 - 256, a:sum(nil, {dtype = "int8", keepdims = true}):copy_to_host()[1])
      local big = make(kind, {math.maxinteger, 1}, "int64")
      assert.equal(math.mininteger, big:sum())
      assert.equal(math.mininteger, big:cumsum():copy_to_host()[2])
      local u = make(kind, {1 << 62, 1 << 62, 1 << 62, 1 << 62, 5}, "uint64")
      assert.equal(5, u:sum())                                     -- 2^64 + 5
      local p = make(kind, {1 << 32, 1 << 32, 3}, "int64")
      assert.equal(0, p:prod())
      local w = make(kind, {200, 100}, "uint8")
      assert.equal(300, w:sum())
      assert.equal("uint64", w:sum(1).dtype)
      assert.equal(44, w:sum(nil, {dtype = "uint8", keepdims = true}):copy_to_host()[1])
      assert.equal((200 * 100) % 256, w:cumprod({dtype = "uint8"}):copy_to_host()[2])
    end)
  end
end)

describe("more dtypes and argument forms", function()
  for _, kind in ipairs({"host", "device"}) do
    it("reduce int16, uint16, uint32 and int64 on " .. kind, function()
      local t = {{-3, 7, 2}, {9, -8, 1}}
      local i16 = make(kind, t, "int16")
      assert.equal(8, i16:sum())
      assert.equal("int64", i16:sum(1).dtype)
      assert.same({-3, -8}, host_values(i16:min(2)))
      assert.same({1, 2}, host_values(i16:argmin(2)))
      local u = make(kind, {{3, 7, 2}, {9, 8, 1}}, "uint32")
      assert.equal("uint64", u:sum(2).dtype)
      assert.same({12, 18}, host_values(u:sum(2)))
      assert.equal(9, u:max())
      local u16 = make(kind, {65535, 2}, "uint16")
      assert.equal(65537, u16:sum())
      assert.equal(1, u16:sum(nil, {dtype = "uint16", keepdims = true}):copy_to_host()[1])
      local i64 = make(kind, t, "int64")
      assert.same({{-3, 4, 6}, {9, 1, 2}}, host_values(i64:cumsum(2)))
      assert.same({{-3, 7, 2}, {-27, -56, 2}}, host_values(i64:cumprod(1)))
    end)
  end

  it("take trailing nils, and an axis given as an integral float", function()
    local a = luacuda.array({{1, 2}, {3, 4}}, "int32")
    assert.equal(10, a:sum(nil, nil))
    assert.same({4, 6}, a:sum(1, nil):totable())
    assert.same({3, 7}, a:sum(2.0):totable())
    assert.same({{1, 3}, {3, 7}}, a:cumsum(2, nil):totable())
    assert.same({1, 1}, a:sum({1, 2}, {keepdims = true}).shape)
    assert.equal(10, a:sum({keepdims = false}))
  end)
end)

describe("dtype=", function()
  for _, kind in ipairs({"host", "device"}) do
    it("chooses the accumulator and the result on " .. kind, function()
      local a = make(kind, {{1, 2, 3}, {4, 5, 6}}, "int32")
      local s = a:sum(1, {dtype = "float32"})
      assert.equal("float32", s.dtype)
      assert.same({5, 7, 9}, host_values(s))
      local m = a:mean(2, {dtype = "float32"})
      assert.equal("float32", m.dtype)
      assert.same({2, 5}, host_values(m))
      assert.equal("float64", a:mean(1).dtype)
      local f = make(kind, {1.9, -2.9, 3.5}, "float64")
      assert.equal(1 - 2 + 3, f:sum(nil, {dtype = "int32", keepdims = true}):copy_to_host()[1])
      -- NumPy's: the int64 sum 2, divided (2 / 3), then cast to int64
      assert.equal(0, f:mean(nil, {dtype = "int64", keepdims = true}):copy_to_host()[1])
      local c = a:cumsum(2, {dtype = "float64"})
      assert.same({{1, 3, 6}, {4, 9, 15}}, host_values(c))
      assert.equal("float64", c.dtype)
      local b = make(kind, {true, false, true}, "bool")
      assert.equal(2, b:sum())
      assert.equal("int64", b:sum(1).dtype)
      assert.is_true(b:sum(nil, {dtype = "bool", keepdims = true}):copy_to_host()[1])
      assert.is_false(b:prod(nil, {dtype = "bool", keepdims = true}):copy_to_host()[1])
      local h = make(kind, {1, 2, 3}, "float16")
      assert.equal("float16", h:mean(1).dtype)
      assert.equal(2, h:mean())
      local bf = make(kind, {1, 2, 3, 4}, "bfloat16")
      assert.equal("bfloat16", bf:sum(1).dtype)
      assert.equal(10, bf:sum())
    end)
  end
end)

describe("out=", function()
  for _, kind in ipairs({"host", "device", "managed"}) do
    it("receives the result and is returned on " .. kind, function()
      local a = make(kind, {{1, 2, 3}, {4, 5, 6}}, "int64")
      local out = make(kind, {0, 0, 0}, "int64")
      assert.equal(out, a:sum(1, {out = out}))
      assert.same({5, 7, 9}, host_values(out))
      local o0 = make(kind, 0, "int64")
      assert.equal(o0, a:max(nil, {out = o0}))
      assert.equal(6, host_values(o0))
      -- a strided out=
      local wide = make(kind, {{0, 0}, {0, 0}, {0, 0}}, "int64")
      a:min(1, {out = wide[{{}, 2}]})
      assert.same({{0, 1}, {0, 2}, {0, 3}}, host_values(wide))
      -- a scan in place, and into a strided flat target
      a:cumsum(2, {out = a})
      assert.same({{1, 3, 6}, {4, 9, 15}}, host_values(a))
      local flat = make(kind, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "int64")
      a:cumsum({out = flat[{{1, 12, 2}}]})
      assert.same({1, 0, 4, 0, 10, 0, 14, 0, 23, 0, 38, 0}, host_values(flat))
      -- a reduction into a view of its own input
      local b = make(kind, {{1, 2}, {3, 4}}, "int64")
      b:sum(2, {out = b[{{}, 1}]})
      assert.same({{3, 2}, {7, 4}}, host_values(b))
    end)
  end
end)

describe("streams", function()
  it("queues the work on a stream, and a value waits for it", function()
    local s = luacuda.stream()
    local a = luacuda.to_device(luacuda.arange(1000, "float64"), s)
    assert.equal(499500, a:sum({stream = s}))
    local r = a:reshape(10, 100):max(2, {stream = s})
    s:synchronize()
    assert.equal(999, r:copy_to_host()[10])
    local c = a:cumsum({stream = s})
    assert.equal(499500, c:copy_to_host(nil, s)[1000])
    s:synchronize()
  end)

  it("waits for the async copy into a pinned array before reading it", function()
    local s = luacuda.stream()
    local d = luacuda.to_device(luacuda.arange(4096, "int32"))
    local p = luacuda.pinned_array(4096, "int32")
    d:copy_to_host(p, s)
    assert.equal(4096 * 4095 // 2, p:sum())
    assert.equal(4096, p:argmax({stream = s}))
    s:synchronize()
  end)

  it("splits a long reduction over several blocks on the device", function()
    -- more elements than one block reduces, on every backend
    local n = 20000
    local a = luacuda.to_device(luacuda.arange(n, "int32"))
    assert.equal(n * (n - 1) // 2, a:sum())
    assert.equal(n, a:argmax())
    assert.equal(1, a:argmin())
    local f = luacuda.to_device(luacuda.full(n, 0.5, "float32"))
    assert.equal(n * 0.5, f:sum())
    assert.equal(0.5, f:mean())
    local m = luacuda.to_device(luacuda.arange(2 * n, "float64")):reshape(2, n)
    assert.same({n * (n - 1) / 2, n * (n - 1) / 2 + n * n}, m:sum(2):copy_to_host():totable())
    assert.same({n, n}, m:argmax(2):copy_to_host():totable())
  end)
end)

-- 2^24 float32 values of 1e-3..1: 1024 of them, seeded, repeated 16384
-- times (a broadcast copy), summed pairwise: relative error under 1e-5,
-- where one float accumulator loses about 1e-2
local function big_float32(kind)
  local row, exact, seed = {}, 0, 12345
  for i = 1, 1024 do
    seed = (seed * 1103515245 + 12345) % 2147483648
    row[i] = 1e-3 + (1 - 1e-3) * seed / 2147483648
  end
  local r = luacuda.array(row, "float32")
  for _, v in ipairs(r:totable()) do exact = exact + v end
  exact = exact * 16384
  local h = luacuda.empty({16384, 1024}, "float32")
  r:broadcast_to({16384, 1024}):copy_to_host(h)
  return kind == "host" and h or luacuda.to_device(h), exact
end

describe("float sums", function()
  it("are pairwise: 2^24 float32 values of a host array #heavy", function()
    local a, exact = big_float32("host")
    local got = a:sum()
    assert(math.abs(got - exact) / exact < 1e-5, ("sum %.9g, exact %.9g"):format(got, exact))
    got = a:transpose():sum()
    assert(math.abs(got - exact) / exact < 1e-5, ("transposed sum %.9g"):format(got))
    local cols = a:sum(1)
    assert(math.abs(cols:sum(nil, {dtype = "float64"}) - exact) / exact < 1e-5)
    assert(math.abs(a:mean() * (1 << 24) - exact) / exact < 1e-5)
  end)

  it("are pairwise: 2^24 float32 values of a device array on the simulator #heavy", function()
    if S.fake then return pending("2^24 elements are too many for the fake driver's PTX interpreter") end
    local a, exact = big_float32("device")
    local got = a:sum()
    assert(math.abs(got - exact) / exact < 1e-5, ("sum %.9g, exact %.9g"):format(got, exact))
    got = a:reshape(4096, 4096):transpose():sum()
    assert(math.abs(got - exact) / exact < 1e-5, ("transposed sum %.9g"):format(got))
  end)
end)

describe("reduction errors", function()
  local a = luacuda.array({{1, 2, 3}, {4, 5, 6}}, "int32")
  local d = luacuda.to_device({{1, 2, 3}, {4, 5, 6}}, {dtype = "float32"})

  it("name a record dtype", function()
    local rec = luacuda.record {{"x", "float32"}, {"y", "int32"}}
    local r = luacuda.zeros(3, rec)
    S.misuse({"luacuda.sum:", "record", "a record has no sum"}, r.sum, r)
    S.misuse({"luacuda.argmax:", "a record has no argmax"}, r.argmax, r)
    S.misuse({"luacuda.cumsum:", "a record has no cumsum"}, r.cumsum, r)
    S.misuse({"luacuda.sum:", "dtype= must be a builtin dtype, not the record"},
             a.sum, a, 1, {dtype = rec})
  end)

  it("say that axes count from 1", function()
    S.misuse({"luacuda.sum:", "axis 0 is out of range for a 2-d array",
              "luacuda counts axes from 1: 1 to 2"}, a.sum, a, 0)
    S.misuse({"luacuda.max:", "axis 3 is out of range", "counts axes from 1"}, d.max, d, 3)
    S.misuse({"luacuda.mean:", "axis -1 is out of range"}, a.mean, a, {-1})
    S.misuse({"luacuda.prod:", "axis 2 is given twice", "counts axes from 1"}, a.prod, a, {2, 2})
    S.misuse({"luacuda.cumsum:", "axis 1 is out of range for a 0-d array",
              "a 0-d array has none"}, luacuda.array(1).cumsum, luacuda.array(1), 1)
    S.misuse({"luacuda.sum:", "axis must be an integer"}, a.sum, a, 1.5)
    S.misuse({"luacuda.sum:", "axis 2 must be an integer"}, a.sum, a, {1, "x"})
    S.misuse({"luacuda.any:", "axis must be an integer or a table of integers", "got string"},
             a.any, a, "1")
    S.misuse({"luacuda.cumsum:", "cumsum takes one axis, not a table"}, a.cumsum, a, {1})
    S.misuse({"luacuda.sum:", "the table of axes has a key 'keepdims'"},
             a.sum, a, {1, keepdims = true})
  end)

  it("refuse min, max, argmin and argmax of no element", function()
    local e = luacuda.zeros({0, 2}, "float64")
    S.misuse({"luacuda.min:", "min has no identity", "the array is empty"}, e.min, e)
    S.misuse({"luacuda.argmax:", "argmax has no identity", "a reduced axis has length 0"},
             e.argmax, e, 1)
    local de = luacuda.device_array({2, 0}, "int8")
    S.misuse({"luacuda.max:", "max has no identity"}, de.max, de, 2)
  end)

  it("refuse dtype= where NumPy has none", function()
    S.misuse({"luacuda.min:", "min takes no dtype="}, a.min, a, 1, {dtype = "int64"})
    S.misuse({"luacuda.argmax:", "argmax takes no dtype=", "int64"}, a.argmax, a, nil,
             {dtype = "int32"})
    S.misuse({"luacuda.all:", "all takes no dtype=", "bool"}, a.all, a, {dtype = "bool"})
    S.misuse({"luacuda.sum:", "unknown dtype 'f5'"}, a.sum, a, 1, {dtype = "f5"})
  end)

  it("check out='s shape, dtype and kind", function()
    local o = luacuda.zeros(3, "int32")
    S.misuse({"luacuda.sum:", "out= must have the result's shape {3} and dtype int64",
              "got shape {3} and dtype int32"}, a.sum, a, 1, {out = o})
    local o2 = luacuda.zeros(2, "int64")
    S.misuse({"luacuda.sum:", "the result's shape {3}", "got shape {2}"}, a.sum, a, 1, {out = o2})
    S.misuse({"luacuda.max:", "shape {}", "got shape {2}"}, a.max, a, nil, {out = o2})
    -- filled: S.misuse reads the arguments (valgrind sees an uninitialised read)
    local dout = luacuda.to_device(luacuda.zeros(3, "float32"))
    S.misuse({"luacuda.min:", "out= is a device array, but a host array's min runs on the host"},
             a.min, a, 1, {out = luacuda.to_device(luacuda.zeros(3, "int32"))})
    S.misuse({"luacuda.max:", "out= is a host array, but a device array's max runs on the device"},
             d.max, d, 1, {out = luacuda.zeros(3, "float32")})
    S.misuse({"luacuda.cumsum:", "shape {6} and dtype float32"}, d.cumsum, d, {out = dout})
    S.misuse({"luacuda.sum:", "out= must be an array, got table"}, a.sum, a, 1, {out = {}})
  end)

  it("check the options", function()
    S.misuse({"luacuda.sum:", "unknown option keepdim"}, a.sum, a, 1, {keepdim = true})
    S.misuse({"luacuda.cumsum:", "unknown option keepdims"}, a.cumsum, a, 1, {keepdims = true})
    S.misuse({"luacuda.sum:", "keepdims must be a boolean, got number"}, a.sum, a, 1,
             {keepdims = 1})
    S.misuse({"luacuda.mean:", "options must be a table, got string"}, a.mean, a, 1, "x")
    S.misuse({"luacuda.sum:", "an options table is the last argument, got number after it"},
             a.sum, a, {}, 1)
    S.misuse({"luacuda.sum:", "expected at most an axis (or a table of axes) and an options table"},
             a.sum, a, 1, {}, 3)
    S.misuse({"luacuda.sum:", "expected a stream"}, a.sum, a, 1, {stream = 3})
    S.misuse({"luacuda.sum:", "attempt to use a closed array"}, function()
      local c = luacuda.zeros(2)
      c:close()
      return c:sum()
    end)
  end)
end)

describe("kernels/reduce.cu", function()
  for _, arch in ipairs({"sm_75", "sm_90"}) do
    it("compiles for " .. arch .. " #heavy", function()
      if not luacuda.nvrtc_version() then return pending("no NVRTC") end
      local f = assert(io.open("kernels/reduce.cu"))
      local src = f:read("a")
      f:close()
      local inst = {}
      for _, e in ipairs({"0, 11, 3, 11", "4, 9, 3, 9", "5, 12, 4, 4", "8, 0, 0, 0",
                          "10, 1, 2, 4", "2, 3, 1, 3", "9, 12, 4, 12"}) do
        inst[#inst + 1] = "template __global__ void lc_reduce<" .. e ..
                          ">(const char *, char *, char *, lc_reduce_args);"
      end
      src = src .. "\n" .. table.concat(inst, "\n")
      local ptx = luacuda.ptx(src, {arch = arch:gsub("sm_", "compute_"), name = "reduce.cu"})
      assert.matches("lc_reduce", ptx, 1, true)
    end)
  end
end)
