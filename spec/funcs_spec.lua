-- The elementwise functions log1p, expm1, logaddexp, rint, isnan, isinf,
-- isfinite and the functions composed of array math (round, var, std,
-- norm), compared with NumPy's results (Debian's /usr/bin/python3 with
-- python3-numpy, one run for the whole file: the inputs go to it as .npy
-- files, its results come back so) on host arrays and on device arrays.
local luacuda = require "luacuda"
local S = require "spec.support"
require "luacuda.assert"

-- (without the sanitizer runtime make test-asan preloads into every child)
local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"
local HAVE_NUMPY = S.sh(PYTHON .. " -c 'import numpy'")
local NO_NUMPY = "/usr/bin/python3 cannot import numpy (apt-get install python3-numpy)"

local SPECIAL = { 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -0.5, 1e-10, -1e-10, 3.7, -4.2, 700.0,
                  0 / 0, math.huge, -math.huge, -1.0 }

-- the inputs, by name
local function inputs()
  local stat = {}
  for k = 1, 24 do stat[k] = ((k * 37) % 23 - 11) * 0.375 end
  local ints = {}
  for k = 1, 24 do ints[k] = (k * 29) % 41 - 20 end
  return {
    x = luacuda.array(SPECIAL, "float64"):reshape(4, 4),
    x32 = luacuda.array(SPECIAL, "float32"):reshape(4, 4),
    y = luacuda.array({ 0.0, 1.5, -700.0, 0 / 0 }, "float64"),
    i = luacuda.array(ints, "int32"):reshape(4, 6),
    i8 = luacuda.array({ -3, 0, 5, 100 }, "int8"),
    s = luacuda.array(stat, "float64"):reshape(2, 3, 4),
    s32 = luacuda.array(stat, "float32"):reshape(2, 3, 4),
    s16 = luacuda.array(stat, "float16"):reshape(2, 3, 4),
    m = luacuda.array(stat, "float64"):reshape(4, 6),
  }
end

-- NumPy's results, each a name = expression over the inputs
local NUMPY = [[
import numpy as np, sys, os
d = sys.argv[1]
I = {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.endswith('.npy')}
x, x32, y, i, i8 = I['x'], I['x32'], I['y'], I['i'], I['i8']
s, s32, s16, m = I['s'], I['s32'], I['s16'], I['m']
L = np.linalg.norm
R = {}
with np.errstate(all='ignore'):
    for n, a in (('x', x), ('x32', x32), ('i', i), ('i8', i8)):
        for f in ('log1p', 'expm1', 'rint', 'isnan', 'isinf', 'isfinite'):
            R[f + '_' + n] = getattr(np, f)(a)
    R['logaddexp_x_y'] = np.logaddexp(x, y)
    R['logaddexp_x32_x32'] = np.logaddexp(x32, x32.T)
    R['round_x'] = np.round(x)
    R['round_x_1'] = np.round(x, 1)
    R['round_x32_2'] = np.round(x32, 2)
    R['round_x_m1'] = np.round(x, -1)
    R['round_i_m1'] = np.round(i, -1)
    R['round_i_2'] = np.round(i, 2)
    for n, a in (('s', s), ('s32', s32), ('s16', s16), ('i', i)):
        R['var_' + n] = np.var(a)
        R['std_' + n] = np.std(a)
        R['var_' + n + '_1'] = np.var(a, axis=0)
        R['std_' + n + '_2_ddof1'] = np.std(a, axis=1, ddof=1)
        R['var_' + n + '_last_keep'] = np.var(a, axis=-1, keepdims=True)
    R['var_s_13'] = np.var(s, axis=(0, 2))
    R['std_s32_f64'] = np.std(s32, axis=2, dtype=np.float64)
    R['norm_s'] = L(s)
    R['norm_s_3'] = L(s, axis=2)
    R['norm_s_3_1'] = L(s, ord=1, axis=2)
    R['norm_s_3_inf'] = L(s, ord=np.inf, axis=2)
    R['norm_s_3_minf'] = L(s, ord=-np.inf, axis=2)
    R['norm_s_3_0'] = L(s, ord=0, axis=2)
    R['norm_s_3_p3'] = L(s, ord=3, axis=2)
    R['norm_s_2_keep'] = L(s, axis=1, keepdims=True)
    R['norm_s_23_fro'] = L(s, ord='fro', axis=(1, 2))
    R['norm_s_23_1'] = L(s, ord=1, axis=(1, 2))
    R['norm_s_31_inf'] = L(s, ord=np.inf, axis=(2, 0))
    R['norm_m'] = L(m)
    R['norm_m_1'] = L(m, 1)
    R['norm_m_m1'] = L(m, -1)
    R['norm_m_inf'] = L(m, np.inf)
    R['norm_m_minf'] = L(m, -np.inf)
    R['norm_m_1_keep'] = L(m, 1, keepdims=True)
    R['norm_i'] = L(i)
    R['norm_i_2_1'] = L(i, 1, axis=1)
    R['norm_s32_3'] = L(s32, axis=2)
    R['pad_i_1'] = np.pad(i, 1)
    R['pad_i_pairs_7'] = np.pad(i, ((1, 0), (2, 3)), constant_values=7)
    R['pad_s_edge'] = np.pad(s, ((0, 1), (2, 0), (1, 1)), mode='edge')
    R['pad_x32_edge'] = np.pad(x32, (2, 1), mode='edge')
    R['einsum_mm'] = np.einsum('ij,jk->ik', m, m.T)
    R['einsum_t'] = np.einsum('ij->ji', m)
    R['einsum_batch'] = np.einsum('bij,bjk->bik', s, s.transpose(0, 2, 1))
    R['einsum_dot'] = np.einsum('i,i->', m.ravel(), m.ravel())
    R['einsum_implicit'] = np.einsum('ij,jk', m, m.T)
    R['einsum_kj'] = np.einsum('ijk->kj', s)
    R['einsum_int'] = np.einsum('ij,j->i', i, i[0])
    R['einsum_outer'] = np.einsum('i,j->ij', i[0], i[1])
for k, v in R.items():
    np.save(os.path.join(d, 'out_' + k + '.npy'), np.asarray(v))
]]

local dir, expected

local function numpy_results()
  if expected then return expected end
  dir = S.tmpdir()
  for name, a in pairs(inputs()) do luacuda.save(dir .. "/" .. name .. ".npy", a) end
  local script = dir .. "/numpy_results.py"
  local f = assert(io.open(script, "w"))
  f:write(NUMPY)
  f:close()
  local ok, out = S.sh(("%s %s %s"):format(PYTHON, script, dir))
  assert(ok, out)
  expected = setmetatable({}, { __index = function(_, k)
    return luacuda.load(dir .. "/out_" .. k .. ".npy")
  end })
  return expected
end

teardown(function()
  if dir then os.execute("rm -rf " .. dir) end
end)

-- got (an array of any kind, or a Lua number) against NumPy's result:
-- dtype (NumPy's float64 scalar for a number), shape and values
local function check(name, got, rtol)
  local want = numpy_results()[name]
  if type(got) == "number" then
    assert.equal(0, want.ndim, name .. ": NumPy gave an array, luacuda a number")
    assert.array_near(want, luacuda.array(got, want.dtype), rtol or 1e-12)
    return
  end
  assert.equal(want.dtype, got.dtype, name .. ": dtype")
  assert.same(want.shape, got.shape, name .. ": shape")
  local host = got:copy_to_host()
  if want.dtype == "bool" then assert.array_equal(want, host, name)
  else assert.array_near(want, host, rtol or 1e-12, 0, name) end
end

-- each kind the tests run on: the inputs as host arrays and as device arrays
local KINDS = {
  host = function(a) return a end,
  device = function(a) return luacuda.to_device(a) end,
}

local function tol(dtype) return dtype == "float16" and 2e-3 or dtype == "float32" and 2e-6 or 1e-12 end

describe("the elementwise functions", function()
  for kind, make in pairs(KINDS) do
    it("log1p, expm1, rint, isnan, isinf and isfinite give NumPy's values and dtypes (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      for _, n in ipairs { "x", "x32", "i", "i8" } do
        local a = make(I[n])
        for _, f in ipairs { "log1p", "expm1", "rint", "isnan", "isinf", "isfinite" } do
          local r = luacuda[f](a)
          assert.equal(kind, r.kind)
          check(f .. "_" .. n, r, tol(r.dtype))
        end
      end
    end)

    it("logaddexp gives NumPy's values, broadcast, with infinities and NaN (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      check("logaddexp_x_y", luacuda.logaddexp(make(I.x), make(I.y)))
      local x32 = make(I.x32)
      check("logaddexp_x32_x32", luacuda.logaddexp(x32, x32.T), 2e-6)
    end)

    it("round rounds halves to even, to decimals, and integers to tens (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      check("round_x", luacuda.round(make(I.x)))
      check("round_x_1", luacuda.round(make(I.x), 1))
      check("round_x32_2", luacuda.round(make(I.x32), 2), 2e-6)
      check("round_x_m1", luacuda.round(make(I.x), -1))
      check("round_i_m1", luacuda.round(make(I.i), -1))
      check("round_i_2", luacuda.round(make(I.i), 2))
    end)

    it("var and std give NumPy's values and dtypes, over axes, with ddof and keepdims (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      for _, n in ipairs { "s", "s32", "s16", "i" } do
        local a = make(I[n])
        local t = tol(I[n].dtype)
        local all = {}
        for k = 1, a.ndim do all[k] = k end
        -- over every axis: a Lua number (NumPy's scalar), then the same as a 0-d array
        local v = luacuda.var(a)
        assert.equal("number", type(v))
        check("var_" .. n, v, t)
        check("std_" .. n, luacuda.std(a), t)
        check("var_" .. n .. "_1", luacuda.var(a, 1), t)
        check("std_" .. n .. "_2_ddof1", luacuda.std(a, 2, { ddof = 1 }), t)
        check("var_" .. n .. "_last_keep", luacuda.var(a, a.ndim, { keepdims = true }), t)
      end
      check("var_s_13", luacuda.var(make(I.s), { 1, 3 }))
      check("std_s32_f64", luacuda.std(make(I.s32), 3, { dtype = "float64" }), 1e-7)
    end)

    it("norm gives NumPy's vector and matrix norms (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      local s, m = make(I.s), make(I.m)
      check("norm_s", luacuda.norm(s))
      check("norm_s_3", luacuda.norm(s, nil, { axis = 3 }))
      check("norm_s_3_1", luacuda.norm(s, 1, { axis = 3 }))
      check("norm_s_3_inf", luacuda.norm(s, math.huge, { axis = 3 }))
      check("norm_s_3_minf", luacuda.norm(s, -math.huge, { axis = 3 }))
      check("norm_s_3_0", luacuda.norm(s, 0, { axis = 3 }))
      check("norm_s_3_p3", luacuda.norm(s, 3, { axis = 3 }))
      check("norm_s_2_keep", luacuda.norm(s, nil, { axis = 2, keepdims = true }))
      check("norm_s_23_fro", luacuda.norm(s, "fro", { axis = { 2, 3 } }))
      check("norm_s_23_1", luacuda.norm(s, 1, { axis = { 2, 3 } }))
      check("norm_s_31_inf", luacuda.norm(s, math.huge, { axis = { 3, 1 } }))
      check("norm_m", luacuda.norm(m))
      check("norm_m_1", luacuda.norm(m, 1))
      check("norm_m_m1", luacuda.norm(m, -1))
      check("norm_m_inf", luacuda.norm(m, math.huge))
      check("norm_m_minf", luacuda.norm(m, -math.huge))
      check("norm_m_1_keep", luacuda.norm(m, 1, { keepdims = true }))
      check("norm_i", luacuda.norm(make(I.i)))
      check("norm_i_2_1", luacuda.norm(make(I.i), 1, { axis = 2 }))
      check("norm_s32_3", luacuda.norm(make(I.s32), nil, { axis = 3 }), 2e-6)
    end)

    it("pad gives NumPy's constant and edge borders (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      local i = make(I.i)
      local p = luacuda.pad(i, 1)
      assert.equal(kind, p.kind)
      check("pad_i_1", p)
      check("pad_i_pairs_7", luacuda.pad(i, { { 1, 0 }, { 2, 3 } }, { constant_values = 7 }))
      check("pad_s_edge", luacuda.pad(make(I.s), { { 0, 1 }, { 2, 0 }, { 1, 1 } }, { mode = "edge" }))
      check("pad_x32_edge", luacuda.pad(make(I.x32), { 2, 1 }, { mode = "edge" }))
    end)

    it("einsum gives NumPy's products, sums and transposes (" .. kind .. ")", function()
      if not HAVE_NUMPY then return pending(NO_NUMPY) end
      local I = inputs()
      local m, s, i = make(I.m), make(I.s), make(I.i)
      check("einsum_mm", luacuda.einsum("ij,jk->ik", m, m.T))
      local t = luacuda.einsum("ij->ji", m)
      check("einsum_t", t)
      t[{ 1, 1 }] = 99                      -- a copy, not a view of m
      assert.are_not.equal(99, m:copy_to_host()[{ 1, 1 }])
      check("einsum_batch", luacuda.einsum("bij,bjk->bik", s, s:transpose(1, 3, 2)))
      local flat = m:reshape(24)
      check("einsum_dot", luacuda.einsum("i,i->", flat, flat))
      check("einsum_implicit", luacuda.einsum("ij,jk", m, m.T))
      check("einsum_kj", luacuda.einsum("ijk->kj", s))
      check("einsum_int", luacuda.einsum("ij,j->i", i, i[1]))
      check("einsum_outer", luacuda.einsum("i,j->ij", i[1], i[2]))
    end)
  end

  it("write into out= and views, and queue on a stream", function()
    local x = luacuda.to_device({ 0.25, 0 / 0, 2.5, 1 / 0, 4.5, -1.5 })
    local s = luacuda.stream()
    local out = luacuda.device_array({ 3 }, "bool")
    assert.equal(out, luacuda.isnan(x[{ { 1, 6, 2 } }], out, s))   -- elements 1, 3, 5
    local r = luacuda.device_array({ 3 }, "float64")
    luacuda.rint(x[{ { 2, 6, 2 } }], r, s)                       -- NaN, inf, -1.5
    s:synchronize()
    assert.same({ false, false, false }, out:copy_to_host():totable())
    assert.array_equal({ 0 / 0, 1 / 0, -2.0 }, r)
  end)

  it("refuse what they do not take, naming the function", function()
    local x = luacuda.array({ 1.0, 2.0 })
    S.misuse("luacuda.isnan: the output must be an array of dtype bool and shape {2}", luacuda.isnan, x,
             luacuda.zeros({ 3 }, "bool"))
    S.misuse("luacuda.log1p: cannot cast the result's dtype float64 into the output's int64", luacuda.log1p, x,
             luacuda.zeros({ 2 }, "int64"))
    S.misuse("luacuda.log1p: operand 1 is a table", luacuda.log1p, { 1, 2 })
    S.misuse("luacuda.round: decimals must be an integer, got float", luacuda.round, x, 1.5)
    S.misuse("luacuda.round: expected an array, got number", luacuda.round, 1.5)
    S.misuse("luacuda.var: axis 2 is out of range for a 1-d array", luacuda.var, x, 2)
    S.misuse("luacuda.std: dtype must be a float dtype's name, got int32", luacuda.std, x, nil,
             { dtype = "int32" })
    S.misuse("luacuda.var: unknown option dof", luacuda.var, x, nil, { dof = 1 })
    S.misuse("luacuda.norm: ord fro is not a vector norm", luacuda.norm, x, "fro")
    S.misuse("luacuda.norm: ord 2 is not a matrix norm luacuda computes", luacuda.norm,
             luacuda.ones({ 2, 2 }), 2)
    S.misuse("luacuda.norm: an array of 3 axes needs axis= for ord 1", luacuda.norm,
             luacuda.ones({ 2, 2, 2 }), 1)
    S.misuse("luacuda.pad: mode must be 'constant' or 'edge', got wrap", luacuda.pad, x, 1, { mode = "wrap" })
    S.misuse("luacuda.pad: pad_width has 1 pairs for an array of 2 axes", luacuda.pad,
             luacuda.ones({ 2, 2 }), { { 1, 1 } })
    S.misuse("luacuda.pad: pad_width must be a non-negative integer, got -1", luacuda.pad, x, -1)
    S.misuse("luacuda.pad: mode 'edge' cannot pad axis 1, which is empty", luacuda.pad,
             luacuda.zeros({ 0 }), 1, { mode = "edge" })
    local m = luacuda.ones({ 2, 3 })
    S.misuse("luacuda.einsum: \"ij,jk\" names 2 operands, got 1", luacuda.einsum, "ij,jk", m)
    S.misuse("luacuda.einsum: subscript j is 3 in operand 1 and 2 in operand 2", luacuda.einsum, "ij,jk", m, m)
    S.misuse("luacuda.einsum: operand 1 repeats subscript i (diagonals are not supported)", luacuda.einsum,
             "ii->i", luacuda.ones({ 2, 2 }))
    S.misuse("luacuda.einsum: operand 1 has 2 axes, its subscripts \"i\" name 1", luacuda.einsum, "i->i", m)
    S.misuse("luacuda.einsum: the output's subscript k is in no operand", luacuda.einsum, "ij->k", m)
  end)
end)

describe("the generators' permutation, shuffle and choice", function()
  local function sorted(t)
    local c = table.move(t, 1, #t, 1, {})
    table.sort(c)
    return c
  end
  local function range(n)
    local t = {}
    for i = 1, n do t[i] = i end
    return t
  end

  it("permutation(n) orders 1 to n, the same for a seed on every kind", function()
    local p = luacuda.random(5):permutation(50)
    assert.equal("device", p.kind)
    assert.equal("int64", p.dtype)
    local t = p:copy_to_host():totable()
    assert.same(range(50), sorted(t))
    assert.are_not.same(range(50), t)
    for _, kind in ipairs { "host", "pinned", "mapped", "managed" } do
      local q = luacuda.random(5):permutation(50, { kind = kind })
      assert.equal(kind, q.kind)
      assert.same(t, q:copy_to_host():totable())
    end
    assert.are_not.same(t, luacuda.random(6):permutation(50):copy_to_host():totable())
    assert.equal(0, luacuda.random(5):permutation(0).size)
    -- the generator moves on: two calls give two orders
    local g = luacuda.random(5)
    local c0 = g:state().counter
    assert.same(t, g:permutation(50):copy_to_host():totable())
    assert.is_true(g:state().counter > c0)
    assert.are_not.same(t, g:permutation(50):copy_to_host():totable())
  end)

  it("permutation(a) and shuffle(a) reorder whole rows, of any kind and view", function()
    for _, kind in ipairs { "host", "device" } do
      local a = luacuda.arange(12):reshape(4, 3)
      if kind == "device" then a = luacuda.to_device(a) end
      local p = luacuda.random(9):permutation(a)
      assert.equal(kind, p.kind)
      assert.same({ 4, 3 }, p.shape)
      local firsts = {}
      for i, row in ipairs(p:copy_to_host():totable()) do
        assert.same({ row[1], row[1] + 1, row[1] + 2 }, row)
        firsts[i] = row[1]
      end
      assert.same({ 0, 3, 6, 9 }, sorted(firsts))
      -- shuffle: in place, the order permutation gives for the same seed
      assert.equal(a, luacuda.random(9):shuffle(a))
      assert.same(p:copy_to_host():totable(), a:copy_to_host():totable())
    end
    -- a strided view: only its elements move
    local h = luacuda.arange(10)
    local v = h[{ { 1, 10, 2 } }]            -- 0, 2, 4, 6, 8
    luacuda.random(2):shuffle(v)
    local t = h:totable()
    assert.same({ 1, 3, 5, 7, 9 }, { t[2], t[4], t[6], t[8], t[10] })
    assert.same({ 0, 2, 4, 6, 8 }, sorted({ t[1], t[3], t[5], t[7], t[9] }))
  end)

  it("choice draws with and without replacement, with probabilities, in a shape", function()
    local g = luacuda.random(11)
    local d = g:choice(4, 4000, { kind = "host" }):totable()
    local count = { 0, 0, 0, 0 }
    for _, v in ipairs(d) do count[v] = count[v] + 1 end
    for i = 1, 4 do assert.is_true(count[i] > 850 and count[i] < 1150, "count " .. count[i]) end
    local u = g:choice(luacuda.arange(10, 20), 10, { replace = false }):copy_to_host():totable()
    assert.same({ 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 }, sorted(u))
    local w = g:choice(3, { 50, 2 }, { p = { 0.25, 0, 0.75 } })
    assert.equal("device", w.kind)
    assert.same({ 50, 2 }, w.shape)
    local n1, n3 = 0, 0
    for _, row in ipairs(w:copy_to_host():totable()) do
      for _, v in ipairs(row) do
        assert.is_true(v == 1 or v == 3)
        if v == 1 then n1 = n1 + 1 else n3 = n3 + 1 end
      end
    end
    assert.is_true(n3 > n1)
    local one = g:choice(6)
    assert.is_true(math.type(one) == "integer" and one >= 1 and one <= 6)
    local rows = g:choice(luacuda.arange(6):reshape(3, 2), 4)
    assert.same({ 4, 2 }, rows.shape)
    for _, r in ipairs(rows:totable()) do assert.equal(r[1] + 1, r[2]) end
  end)

  it("refuse what they cannot do, naming the function", function()
    local g = luacuda.random(1)
    S.misuse("luacuda.choice: cannot take 5 draws without replacement from 3", g.choice, g, 3, 5,
             { replace = false })
    S.misuse("luacuda.choice: p must have 3 probabilities, got 2", g.choice, g, 3, 2, { p = { 0.5, 0.5 } })
    S.misuse("luacuda.choice: p must sum to 1, got 0.9", g.choice, g, 2, 2, { p = { 0.5, 0.4 } })
    S.misuse("luacuda.choice: probability 2 must be a number >= 0", g.choice, g, 2, 2, { p = { 1.5, -0.5 } })
    S.misuse("luacuda.choice: cannot draw from an empty population", g.choice, g, 0, 1)
    S.misuse("luacuda.permutation: n must be a non-negative integer, got -1", g.permutation, g, -1)
    S.misuse("luacuda.permutation: kind must be", g.permutation, g, 3, { kind = "gpu" })
    S.misuse("luacuda.shuffle: expected an array, got number", g.shuffle, g, 3)
    S.misuse("luacuda.shuffle: a 0-d array has no rows", g.shuffle, g, luacuda.array(1.0))
  end)
end)
