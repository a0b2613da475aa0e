-- CuPy-style kernel generators: luacuda.elementwise and luacuda.reduction,
-- checked against results computed in plain Lua, on both backends. Every
-- distinct binding (dtypes, rank, scalars) compiles a kernel, so the tests
-- share a few generators and reuse their bindings where they can.
local luacuda = require "luacuda"
local S = require "spec.support"

local function values(a) return a:copy_to_host():totable() end
local function dev(t, dtype) return luacuda.to_device(t, {dtype = dtype}) end

-- a device array of the given shape holding f(i) at flat C-order index i
-- (0-based), and the same values as a nested table
local function filled(shape, dtype, f)
  local h = luacuda.empty(shape, dtype)
  local flat = h:reshape(h.size)
  for i = 1, h.size do flat[i] = f(i - 1) end
  return luacuda.to_device(h), h:totable()
end

local function near(want, got, rel, what)
  assert(math.abs(want - got) <= rel * math.max(1, math.abs(want)),
         ("%s: want %.17g, got %.17g"):format(what or "value", want, got))
end

-- the generators the tests share
local add = luacuda.elementwise("T x, T y", "T z", "z = x + y", "add")
local ssq = luacuda.reduction("T x", "T y", "x * x", "a + b", "y = a", "0", "sum_squares")

describe("luacuda.elementwise", function()
  it("adds two arrays, binding the placeholder to float32, float64 and int32", function()
    local cases = {
      {"float32", {1.5, -2, 0.25}, {10, 20.5, 1}, {11.5, 18.5, 1.25}},
      {"float64", {1e100, 0.1, -3}, {1, 0.2, 3}, {1e100, 0.1 + 0.2, 0}},
      {"int32", {2147483000, -5, 7}, {647, 5, -9}, {2147483647, 0, -2}},
    }
    for _, c in ipairs(cases) do
      local z = add(dev(c[2], c[1]), dev(c[3], c[1]))
      assert.equal(c[1], z.dtype)
      assert.equal("device", z.kind)
      assert.same({3}, z.shape)
      assert.same(c[4], values(z))
    end
    assert.equal("add", add.name)
    assert.equal("luacuda.elementwise(add)", tostring(add))
  end)

  it("fills two outputs and gives i, the flat index of the broadcast shape", function()
    local divmod = luacuda.elementwise("int32 x, int32 y", "int32 q, int64 at",
                                       "q = x / y; at = i * 10", "divmod")
    local x, xt = filled({2, 3}, "int32", function(i) return 7 * i + 1 end)
    local q, at = divmod(x, dev({2, 3, 5}, "int32"))
    assert.same({2, 3}, q.shape)
    assert.equal("int32", q.dtype)
    assert.equal("int64", at.dtype)
    local want = {}
    for r = 1, 2 do
      want[r] = {}
      for c = 1, 3 do want[r][c] = xt[r][c] // ({2, 3, 5})[c] end
    end
    assert.same(want, values(q))
    assert.same({{0, 10, 20}, {30, 40, 50}}, values(at))
    -- through a transposed input, i still counts the output's C order
    local q2, at2 = divmod(x.T, dev({{1}, {2}, {4}}, "int32"))
    assert.same({{xt[1][1], xt[2][1]}, {xt[1][2] // 2, xt[2][2] // 2},
                 {xt[1][3] // 4, xt[2][3] // 4}}, values(q2))
    assert.same({{0, 10}, {20, 30}, {40, 50}}, values(at2))
  end)

  it("broadcasts a {3, 1} with a {4}, NumPy's way", function()
    local a = dev({{1}, {2}, {3}}, "float64")
    local b = dev({10, 20, 30, 40}, "float64")
    local z = add(a, b)
    assert.same({3, 4}, z.shape)
    assert.same({{11, 21, 31, 41}, {12, 22, 32, 42}, {13, 23, 33, 43}}, values(z))
    assert.same({{11, 12, 13}, {21, 22, 23}, {31, 32, 33}, {41, 42, 43}},
                values(add(a:reshape(1, 3), b:reshape(4, 1))))
  end)

  it("takes Lua numbers as scalars of the parameter's type", function()
    local x = dev({1, 2, 3}, "float64")
    assert.same({3.5, 4.5, 5.5}, values(add(x, 2.5)))
    local n = dev({10, -20, 30}, "int32")
    local z = add(7, n)
    assert.equal("int32", z.dtype)
    assert.same({17, -13, 37}, values(z))
    -- a fixed dtype takes a scalar without any array
    local twice = luacuda.elementwise("float64 v", "float64 w", "w = 2 * v", "twice")
    local w = twice(1.25)
    assert.same({}, w.shape)
    assert.equal(2.5, values(w))
    -- bool arrays, and a bool parameter takes a boolean only
    local choose = luacuda.elementwise("bool c, T x, T y", "T z, bool nc", "z = c ? x : y; nc = !c", "choose")
    local z2, nc = choose(dev({true, false, true}), x, -0.5)
    assert.same({1, -0.5, 3}, values(z2))
    assert.same({false, true, false}, values(nc))
    S.misuse({"kernel 'choose'", "argument 1 'c' is 1, which is not a bool value"}, choose, 1, x, 2)
  end)

  it("reads and writes transposed and negative-step views through their strides", function()
    local m = dev({{1, 2, 3}, {4, 5, 6}}, "float64")
    assert.same({{2, 8}, {4, 10}, {6, 12}}, values(add(m.T, m.T)))
    local x, xt = filled({6}, "float64", function(i) return i * i end)
    local rev = x[{{6, 1, -1}}]
    local got = values(add(rev, x))
    for i = 1, 6 do assert.equal(xt[7 - i] + xt[i], got[i]) end
    -- outputs that are views: reversed, and transposed
    local o = luacuda.device_array(6, "float64"):fill(0)
    add(x, x, o[{{6, 1, -1}}])
    got = values(o)
    for i = 1, 6 do assert.equal(2 * xt[7 - i], got[i]) end
    local o2 = luacuda.device_array({2, 3}, "float64"):fill(0)
    add(m.T, m.T, o2.T)
    assert.same({{2, 4, 6}, {8, 10, 12}}, values(o2))
    -- every second column of a matrix
    local cols = m[{{}, {1, 3, 2}}]
    assert.same({{2, 6}, {8, 12}}, values(add(cols, cols)))
  end)

  it("writes into given outputs, in place when an output is an input", function()
    local x = dev({1, 2, 3}, "float32")
    local y = dev({10, 20, 30}, "float32")
    local r = add(x, y, x)
    assert.is_true(rawequal(r, x))
    assert.same({11, 22, 33}, values(x))
    assert.same({10, 20, 30}, values(y))
    -- the inputs broadcast to a larger given output
    local big = luacuda.device_array({2, 3}, "float32")
    assert.is_true(rawequal(big, add(x, y, big)))
    assert.same({{21, 42, 63}, {21, 42, 63}}, values(big))
    -- managed memory is device-accessible too
    local mg = luacuda.managed_array({3}, "float32")
    add(x, y, mg)
    luacuda.synchronize()
    assert.same({21, 42, 63}, mg:totable())
  end)

  it("computes 0-d arrays and launches nothing for empty ones", function()
    local z = add(dev(2.5, "float64"), dev(1.0, "float64"))
    assert.same({}, z.shape)
    assert.equal(3.5, values(z))
    assert.equal(4.5, values(add(dev(2.5, "float64"), 2)))
    local e = add(luacuda.device_array({0}, "float64"), luacuda.device_array({0}, "float64"))
    assert.same({0}, e.shape)
    local e2 = add(luacuda.device_array({0, 3}, "float32"), dev({1, 2, 3}, "float32"))
    assert.same({0, 3}, e2.shape)
    assert.equal("float32", e2.dtype)
  end)

  it("puts the preamble before the kernel and passes options to compile", function()
    local k = luacuda.elementwise("T x", "T y", "y = cube(x) + SHIFT", "cubed", {
      preamble = "template <typename U> __device__ U cube(U v) { return v * v * v; }",
      options = {"-DSHIFT=1"},
    })
    assert.same({2, 9, -26}, values(k(dev({1, 2, -3}, "int32"))))
  end)

  it("queues on a stream", function()
    local s = luacuda.stream()
    local x = dev({1, 2, 3, 4}, "float32")
    local z = add(x, x, {stream = s})
    add(z, x, z, {stream = s})
    s:synchronize()
    assert.same({3, 6, 9, 12}, values(z))
  end)

  it("names the generator and shows the log when the body does not compile", function()
    local k = luacuda.elementwise("T x", "T y", "y = x + not_declared", "broken")
    local x = dev({1, 2}, "float32")
    local err = S.misuse({"luacuda.elementwise: kernel 'broken' does not compile", "not_declared",
                          "the generated source, broken.cu"}, k, x)
    assert.truthy(err:find("y = x + not_declared", 1, true))
  end)

  it("refuses bad parameter lists, names and options", function()
    local E = luacuda.elementwise
    S.misuse({"luacuda.elementwise:", "bad parameter 'float32' in in_params"}, E, "float32", "T z", "")
    S.misuse({"luacuda.elementwise:", "bad parameter 'T x y' in out_params"}, E, "T x", "T x y, T", "")
    S.misuse({"luacuda.elementwise:", "unknown dtype 'flaot32' of parameter 'x' in in_params"},
             E, "flaot32 x", "float32 y", "y = x")
    S.misuse({"luacuda.elementwise:", "unknown dtype 'Tx'"}, E, "Tx x", "float32 y", "y = x")
    S.misuse({"luacuda.elementwise:", "parameter name 'x' appears twice"}, E, "T x", "T x", "")
    S.misuse({"luacuda.elementwise:", "parameter name 'i' in out_params is reserved"}, E, "T x", "T i", "")
    S.misuse({"luacuda.elementwise:", "parameter name 'int' in in_params is reserved"}, E, "T int", "T y", "")
    S.misuse({"luacuda.elementwise:", "in_params must be a string"}, E, nil, "T y", "")
    S.misuse({"luacuda.elementwise:", "out_params names no output"}, E, "T x", " ", "")
    S.misuse({"luacuda.elementwise:", "the body must be a string"}, E, "T x", "T y", 3)
    S.misuse({"luacuda.elementwise:", "the name must be a C identifier, got 'a b'"}, E, "T x", "T y", "y = x", "a b")
    S.misuse({"luacuda.elementwise:", "unknown option 'preambel'"}, E, "T x", "T y", "y = x", "k", {preambel = ""})
    S.misuse({"luacuda.elementwise:", "preamble must be a string"}, E, "T x", "T y", "y = x", "k", {preamble = 1})
    S.misuse({"luacuda.elementwise:", "options= must be a table"}, E, "T x", "T y", "y = x", "k", {options = "-O3"})
    S.misuse({"luacuda.elementwise:", "options must be a table"}, E, "T x", "T y", "y = x", "k", 5)
  end)

  it("refuses arguments that do not fit, leaving them as they were", function()
    local f32 = dev({1, 2, 3}, "float32")
    local f64 = dev({1, 2, 3}, "float64")
    S.misuse({"luacuda.elementwise: kernel 'add'", "takes 2 inputs, then optionally 1 output, got 1 argument"},
             add, f32)
    S.misuse({"kernel 'add' takes 2 inputs", "got 4 arguments"}, add, f32, f32, f32, f32)
    S.misuse({"luacuda.elementwise: kernel 'add'",
              "type placeholder T is float32 from argument 1 'x' but float64 from argument 2 'y'"},
             add, f32, f64)
    S.misuse({"type placeholder T is float32 from argument 1 'x' but float64 from argument 3 'z'"},
             add, f32, f32, f64)
    S.misuse({"luacuda.elementwise: kernel 'add'", "type placeholder T of 'x' is bound by no array argument"},
             add, 1, 2)
    local widen = luacuda.elementwise("T x", "U y", "y = x", "widen")
    S.misuse({"kernel 'widen'", "type placeholder U of 'y' is bound by no array argument"}, widen, f32)
    local fixed = luacuda.elementwise("int32 x", "int32 y", "y = x", "fixed")
    S.misuse({"kernel 'fixed'", "argument 1 'x' must have dtype int32, got float32"}, fixed, f32)
    S.misuse({"kernel 'fixed'", "argument 1 'x' is 1.5, which is not a int32 value"}, fixed, 1.5)
    S.misuse({"kernel 'fixed'", "argument 1 'x' is 4294967296, which is not a int32 value"}, fixed, 1 << 32)
    S.misuse({"kernel 'fixed'", "argument 1 'x' must be an array or a number, got string"}, fixed, "1")
    S.misuse({"kernel 'fixed'", "argument 2 'y' must be an array, got number"}, fixed, 1, 2)
    S.misuse({"kernel 'add'", "argument 2 'y' of shape {4} does not broadcast with the shape {3} of argument 1 'x'"},
             add, f32, dev({1, 2, 3, 4}, "float32"))
    S.misuse({"kernel 'add'", "output 1 'z' has shape {2}, but the inputs broadcast to {3}"},
             add, f32, f32, dev({0, 0}, "float32"))
    S.misuse({"kernel 'add'", "output 1 'z' has shape {3, 1}, but the inputs broadcast to {3}"},
             add, f32, f32, dev({{0}, {0}, {0}}, "float32"))
    S.misuse({"kernel 'add'", "argument 1 'x' is a host array: copy it to the device first (to_device)"},
             add, luacuda.array({1, 2, 3}, "float32"), f32)
    S.misuse({"kernel 'add'", "argument 3 'z' is a pinned array"}, add, f32, f32,
             luacuda.pinned_array({3}, "float32"):fill(0))   -- filled: S.misuse reads it
    local Vec = luacuda.record { {"x", "float32"}, {"y", "float32"} }
    S.misuse({"kernel 'add'", "argument 1 'x' has dtype", "which kernel generators do not take"},
             add, luacuda.to_device(luacuda.zeros(3, Vec)), f32)
    local closed = dev({1, 2, 3}, "float32")
    closed:close()
    S.misuse({"kernel 'add'", "argument 2 'y' is a closed array"}, add, f32, closed)
    S.misuse({"kernel 'add'", "unknown option 'strem'"}, add, f32, f32, {strem = 1})
    S.misuse({"kernel 'add'", "stream must be a luacuda stream, got number"}, add, f32, f32, {stream = 1})
  end)
end)

-- the generators broadcast their arguments in Lua: a shape whose size
-- overflows is refused as zeros refuses it (issue 29), not allocated
-- under another function's name, nor reduced over a count that wrapped
describe("kernel generators given arguments that broadcast past 2^63 elements", function()
  local col = luacuda.to_device(luacuda.zeros({1, 1}, "float32")):broadcast_to({1 << 32, 1})
  local row = luacuda.to_device(luacuda.zeros({1, 1}, "float32")):broadcast_to({1, 1 << 32})

  it("refuse them in elementwise", function()
    S.misuse({"luacuda.elementwise: kernel 'add'", "{4294967296, 4294967296}", "array size overflows"},
             function() return add(col, row) end)
  end)

  it("refuse them in reduction, whatever the output's shape", function()
    local dot = luacuda.reduction("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot")
    S.misuse({"luacuda.reduction: kernel 'dot'", "{4294967296, 4294967296}", "array size overflows"},
             function() return dot(col, row) end)
    local out = luacuda.device_array({1}, "float32")
    S.misuse({"luacuda.reduction: kernel 'dot'", "array size overflows"},
             function() return dot(col:broadcast_to({1, 1 << 32, 1}), row, {axis = {2, 3}, out = out}) end)
  end)
end)

describe("luacuda.reduction", function()
  it("sums squares over every axis into a 0-d array", function()
    local x, xt = filled({3000}, "float64", function(i) return (i % 17) * 0.25 - 1 end)
    local want = 0
    for _, v in ipairs(xt) do want = want + v * v end
    local y = ssq(x)
    assert.same({}, y.shape)
    assert.equal("float64", y.dtype)
    near(want, values(y), 1e-12, "sum of squares")
    assert.equal("luacuda.reduction(sum_squares)", tostring(ssq))
  end)

  it("takes the maximum with identity -INFINITY", function()
    local mx = luacuda.reduction("T x", "T y", "x", "max(a, b)", "y = a", "-INFINITY", "maximum")
    local x, xt = filled({2500}, "float32", function(i) return -1000 + ((i * 7919) % 2503) end)
    local want = -math.huge
    for _, v in ipairs(xt) do want = math.max(want, v) end
    assert.equal(want, values(mx(x)))
    -- no elements: the identity
    assert.equal(-math.huge, values(mx(luacuda.device_array({0}, "float32"))))
    -- over a negative-step view, along its only axis
    local want2 = -math.huge
    for i = 2500, 1, -2 do want2 = math.max(want2, xt[i]) end
    assert.equal(want2, values(mx(x[{{2500, 1, -2}}], {axis = 1})))
  end)

  it("reduces axis 1, axis 2 and both, keeping the reduced axes on request", function()
    local x, xt = filled({40, 50}, "float64", function(i) return (i % 13) - 6 end)
    local rows, cols, all = {}, {}, 0
    for r = 1, 40 do
      rows[r] = 0
      for c = 1, 50 do
        local v = xt[r][c] * xt[r][c]
        rows[r] = rows[r] + v
        cols[c] = (cols[c] or 0) + v
        all = all + v
      end
    end
    assert.same(cols, values(ssq(x, {axis = 1})))
    assert.same(rows, values(ssq(x, {axis = 2})))
    assert.same(rows, values(ssq(x, {axis = -1})))
    assert.equal(all, values(ssq(x, {axis = {1, 2}})))
    local k1 = ssq(x, {axis = 1, keepdims = true})
    assert.same({1, 50}, k1.shape)
    assert.same({cols}, values(k1))
    local k2 = ssq(x, {axis = 2, keepdims = true})
    assert.same({40, 1}, k2.shape)
    assert.equal(rows[7], values(k2)[7][1])
    local k12 = ssq(x, {keepdims = true})
    assert.same({1, 1}, k12.shape)
    assert.equal(all, values(k12)[1][1])
    -- a transposed view reduces along its own axes
    assert.same(rows, values(ssq(x.T, {axis = 1})))
  end)

  it("reduces axes that are not neighbours", function()
    local x, xt = filled({4, 5, 6}, "float64", function(i) return i % 11 end)
    local want = {}
    for j = 1, 5 do
      want[j] = 0
      for i = 1, 4 do for k = 1, 6 do want[j] = want[j] + xt[i][j][k] ^ 2 end end
    end
    assert.same(want, values(ssq(x, {axis = {3, 1}})))
    assert.same({1, 5, 1}, ssq(x, {axis = {1, 3}, keepdims = true}).shape)
  end)

  it("sums int32 into an int64 output", function()
    local sum64 = luacuda.reduction("int32 x", "int64 y", "x", "a + b", "y = a", "0", "sum64")
    local x, xt = filled({3, 1000}, "int32", function(i) return 2147483000 - i end)
    local want = {}
    for r = 1, 3 do
      want[r] = 0
      for c = 1, 1000 do want[r] = want[r] + xt[r][c] end
    end
    local y = sum64(x, {axis = 2})
    assert.equal("int64", y.dtype)
    assert.same(want, values(y))
    assert.equal(want[1] + want[2] + want[3], values(sum64(x)))
  end)

  it("computes a mean in post_map from a scalar input", function()
    local mean = luacuda.reduction("T x, float64 n", "float64 y", "x", "a + b", "y = a / n", "0", "mean")
    local x, xt = filled({10, 30}, "int32", function(i) return (i * 37) % 101 end)
    local want = {}
    for r = 1, 10 do
      local s = 0
      for c = 1, 30 do s = s + xt[r][c] end
      want[r] = s / 30
    end
    local got = values(mean(x, 30, {axis = 2}))
    for r = 1, 10 do near(want[r], got[r], 1e-14, "row " .. r) end
  end)

  it("broadcasts its inputs against each other: rows dotted with a vector", function()
    local dot = luacuda.reduction("T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot")
    local m = dev({{1, 2, 3, 4}, {5, 6, 7, 8}, {-1, 0, 1, 0}}, "float32")
    local v = dev({1, 10, 100, 1000}, "float32")
    assert.same({4321, 8765, 99}, values(dot(m, v, {axis = 2})))
    assert.same({1 + 50 + 100, 2 + 60 + 0, 3 + 70 - 100, 4 + 80 + 0},
                values(dot(m, dev({{1}, {10}, {-100}}, "float32"), {axis = 1})))
  end)

  it("writes into out= and queues on a stream", function()
    local s = luacuda.stream()
    local x, xt = filled({4, 6}, "float64", function(i) return i end)
    local out = luacuda.device_array({4}, "float64"):fill(-1)
    assert.is_true(rawequal(out, ssq(x, {axis = 2, out = out, stream = s})))
    s:synchronize()
    for r = 1, 4 do
      local w = 0
      for c = 1, 6 do w = w + xt[r][c] ^ 2 end
      assert.equal(w, values(out)[r])
    end
    local z = luacuda.device_array({0, 3}, "float64")
    assert.same({0, 0, 0}, values(ssq(z, {axis = 1})))
    assert.same({0}, ssq(z, {axis = 2}).shape)
  end)

  it("refuses bad axes, outputs and parameter lists, leaving the arguments as they were", function()
    local R = luacuda.reduction
    local x = dev({{1, 2, 3}, {4, 5, 6}}, "float64")
    S.misuse({"luacuda.reduction: kernel 'sum_squares'", "axis 3 is out of range for 2 dimensions"},
             ssq, x, {axis = 3})
    S.misuse({"kernel 'sum_squares'", "axis 0 is out of range for 2 dimensions"}, ssq, x, {axis = 0})
    S.misuse({"kernel 'sum_squares'", "axis 1 is out of range for 0 dimensions"}, ssq, dev(1.0, "float64"), {axis = 1})
    S.misuse({"kernel 'sum_squares'", "axis 2 is repeated"}, ssq, x, {axis = {2, -1}})
    S.misuse({"kernel 'sum_squares'", "axis must be an integer, got 1.5"}, ssq, x, {axis = 1.5})
    S.misuse({"kernel 'sum_squares'", "axis must be a number or a table of numbers, got string"},
             ssq, x, {axis = "1"})
    S.misuse({"kernel 'sum_squares'", "keepdims must be a boolean, got number"}, ssq, x, {keepdims = 1})
    S.misuse({"kernel 'sum_squares'", "out has shape {3}, but the reduction gives {2}"},
             ssq, x, {axis = 2, out = dev({0, 0, 0}, "float64")})
    S.misuse({"kernel 'sum_squares'", "type placeholder T is float64 from argument 1 'x' but float32 from output 1 'y'"},
             ssq, x, {axis = 2, out = dev({0, 0}, "float32")})
    S.misuse({"kernel 'sum_squares'", "output 1 'y' is a host array"},
             ssq, x, {axis = 2, out = luacuda.zeros(2)})
    S.misuse({"kernel 'sum_squares'", "argument 1 'x' is a host array"}, ssq, luacuda.zeros(2))
    S.misuse({"kernel 'sum_squares'", "unknown option 'axes'"}, ssq, x, {axes = 1})
    S.misuse({"luacuda.reduction: kernel 'sum_squares' takes 1 input (and an optional table of options), got 2 arguments"},
             ssq, x, x)
    S.misuse({"kernel 'sum_squares'", "type placeholder T of 'x' is bound by no array argument"}, ssq, 2)
    S.misuse({"luacuda.reduction:", "out_params must name one output, got 2"},
             R, "T x", "T y, T z", "x", "a + b", "y = a", "0")
    S.misuse({"luacuda.reduction:", "parameter name 'a' in in_params is reserved"},
             R, "T a", "T y", "a", "a + b", "y = a", "0")
    S.misuse({"luacuda.reduction:", "unknown dtype 'float' of parameter 'x'"},
             R, "float x", "float32 y", "x", "a + b", "y = a", "0")
    S.misuse({"luacuda.reduction:", "reduce_expr must be a string of CUDA C++, got nil"},
             R, "T x", "T y", "x", nil, "y = a", "0")
    local bad = R("T x", "T y", "x", "a +* b", "y = a", "0", "bad_reduce")
    S.misuse({"luacuda.reduction: kernel 'bad_reduce' does not compile", "a +* b"}, bad, x)
  end)
end)
