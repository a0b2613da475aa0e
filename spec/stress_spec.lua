-- Random API calls with hostile Lua in the way: option tables and stand-ins
-- whose metamethods close what the call holds, finalizers that close and
-- use objects while calls run, wrong arguments of every type, objects used
-- after they were closed. Each call may fail, with an error message; none
-- may crash the process, corrupt memory (make test-asan runs this too) or
-- raise anything but a string. Some operations also check what they got
-- (a broadcast's shape, a shape past 2^63 elements refused, a save/load
-- round trip); a wrong result is reported with its seed.
--
-- Seeds 1..STRESS_SEEDS (default 2000) of STRESS_OPS operations (default
-- 250) each, stopped after STRESS_SECONDS (default 20) wherever it got;
-- STRESS_SEED=n runs that one seed, printing each operation as it goes,
-- to replay a failure.
--
-- Besides, arrays over one memory (luacuda.mapped, DLPack, luacuda.register)
-- are written through each other and checked against a model: see
-- "aliases" below.
local luacuda = require "luacuda"

local SEEDS = tonumber(os.getenv("STRESS_SEEDS")) or 2000
local OPS = tonumber(os.getenv("STRESS_OPS")) or 250
local SECONDS = tonumber(os.getenv("STRESS_SECONDS")) or 20
local ONE = tonumber(os.getenv("STRESS_SEED"))

local SOURCE = [==[
extern "C" __global__ void axpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
extern "C" __global__ void scale(Array<float, 2> m, float s) {
  for (long long i = threadIdx.x; i < m.shape[0]; i += blockDim.x)
    for (long long j = 0; j < m.shape[1]; j++) m(i, j) *= s;
}
]==]

local DTYPES = {"float32", "float64", "int32", "int64", "uint8", "bool", "int16"}
-- what the alias operations found to differ from their model, by seed;
-- the stream they queue on, out of the pool's reach (made once: a stream
-- is a thread on the fake driver)
local mismatches, alias_stream = {}, nil
local KINDS = {"host", "device", "pinned", "mapped", "managed"}
local ITEMSIZE = {float32 = 4, float64 = 8, int32 = 4, int64 = 8, uint8 = 1, bool = 1, int16 = 2}

-- the array math the operations call: every function of math.c by its
-- number of operands (the comparisons are methods), and the reductions
local UNARY = {"negative", "abs", "sign", "sqrt", "exp", "log", "log2", "log10", "sin", "cos",
               "tan", "tanh", "floor", "ceil", "logical_not"}
local BINARY = {"add", "subtract", "multiply", "divide", "floor_divide", "mod", "power",
                "maximum", "minimum", "atan2", "hypot", "logical_and", "logical_or",
                "logical_xor"}
local COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
local REDUCE = {"sum", "prod", "min", "max", "mean", "argmin", "argmax", "any", "all",
                "cumsum", "cumprod"}

-- The count of a shape of elements of itemsize bytes by the rule of every
-- shape (zeros'): itemsize times the axes, a zero-length one counted as 1,
-- at most 2^63 - 1; nil where it overflows.
local function count_of(shape, itemsize)
  local bytes, n = itemsize, 1
  for _, d in ipairs(shape) do
    local m = d == 0 and 1 or d
    if bytes > math.maxinteger // m then return nil end
    bytes, n = bytes * m, n * d
  end
  return n
end

-- Equal nested tables of values, NaN equal to NaN.
local function same_values(x, y)
  if type(x) ~= "table" or type(y) ~= "table" then
    return x == y or (x ~= x and y ~= y)
  end
  if #x ~= #y then return false end
  for i = 1, #x do
    if not same_values(x[i], y[i]) then return false end
  end
  return true
end

local function run_seed(seed, module, trace, path)
  local rnd = math.random
  math.randomseed(seed)
  -- the collector's pace varies by seed, so finalizers land in other calls
  if seed % 3 == 0 then collectgarbage("generational")
  else collectgarbage("incremental", 50 + seed % 150, 100 + seed % 300) end
  -- objects of every kind, some closed along the way, by what they are
  local pool = {array = {}, stream = {}, event = {}, other = {}}
  local live = true         -- finalizers of this seed may outlive it
  local errors, calls = 0, 0
  local wrong = {}          -- what the checking operations found
  local function check(ok, what, ...)
    if not ok then wrong[#wrong + 1] = ("seed %d: " .. what):format(seed, ...) end
  end

  local function category(v)
    if luacuda.type(v) then return "array" end
    local name = tostring(v):match("^luacuda%.(%a+)")
    return pool[name] and name or "other"
  end
  -- usually an object of the kind asked for, sometimes anything at all
  local function pick(want)
    local names = {"array", "stream", "event", "other"}
    local list = pool[(want and rnd(8) > 1) and want or names[rnd(4)]]
    if #list == 0 then list = pool.array end
    return list[rnd(#list)]
  end
  local function keep(v)
    if v ~= nil then local list = pool[category(v)] list[#list + 1] = v end
    return v
  end
  local function any_value()
    local r = rnd(12)
    if r <= 5 then return pick("array")
    elseif r == 6 then return rnd(-3, 40)
    elseif r == 7 then return rnd() * 10
    elseif r == 8 then return {rnd(4), rnd(4)}
    elseif r == 9 then return DTYPES[rnd(#DTYPES)]
    elseif r == 10 then return nil
    elseif r == 11 then return {{}, {1, rnd(3)}}
    else return true end
  end

  local op                  -- forward: the random operation

  -- Close something: what the call in progress holds, often.
  local function closer()
    if not live then return end
    local o = pick()
    local ok, c = pcall(function() return o.close end)
    if ok and type(c) == "function" then pcall(c, o) end
  end
  -- A table whose every metamethod closes something or runs an operation.
  local function hostile()
    local mt = {}
    for _, name in ipairs({"__index", "__len", "__call", "__kernel_arg", "__kernel_launched"}) do
      mt[name] = function()
        if not live then return nil end
        if rnd(2) == 1 then closer() else op(true) end
        if name == "__kernel_arg" then return pick("array") end
        if name == "__len" then return rnd(4) end
        return any_value()
      end
    end
    return setmetatable({}, mt)
  end
  -- A dropped object whose finalizer runs an operation, whenever the
  -- collector gets to it (often inside a call that allocates).
  local function finalizer()
    setmetatable({}, {__gc = function()
      if not live then return end
      if rnd(2) == 1 then closer() else op(true) end
    end})
  end
  local function opts() return rnd(3) == 1 and hostile() or nil end

  -- a new array, its memory written (memcheck reports reads of memory
  -- that nothing wrote, and device_array and the like are not written)
  local function new_array()
    local n = rnd(0, 64)
    local dt = rnd(2) == 1 and "float32" or DTYPES[rnd(#DTYPES)]
    local r = rnd(10)
    local a
    if r == 1 then a = luacuda.zeros(n, dt)
    elseif r == 2 then a = luacuda.arange(n, "float32")
    elseif r == 3 then a = luacuda.device_array({rnd(0, 8), rnd(0, 8)}, "float32", opts())
    elseif r == 4 then a = luacuda.to_device(luacuda.arange(n, "float32"), opts())
    elseif r == 5 then a = luacuda.pinned_array(n, dt)
    elseif r == 6 then a = luacuda.mapped_array(n, "float32")
    elseif r == 7 then a = luacuda.managed_array({2, rnd(0, 8)}, "float32")
    elseif r == 8 then return luacuda.smart_array(luacuda.arange(n, "float32"))
    elseif r == 9 then a = luacuda.full({rnd(0, 4), 3}, rnd(5), dt)
    else a = luacuda.to_device({{1.5, 2}, {3, 4}}, nil, {dtype = "float32"}) end
    if r == 3 or r >= 5 then a:fill(a.dtype == "bool" and false or 0) end
    return a
  end

  -- ---- aliases (issue 29, finding 2) -------------------------------------
  -- Arrays over one host array's memory: luacuda.mapped (another buffer),
  -- DLPack imports (another array over a buffer) and luacuda.register (the
  -- memory page-locked in place). A copy, a scan, a reduction or array
  -- math reads through one and writes through another (shifted, strided,
  -- reversed views), synchronously or on a stream; the same operation on
  -- views of one plain host array is the model (luacuda gives NumPy's
  -- results there). A difference is a failure of the spec; a raised
  -- message is not (the pool's queued work may fail into the call). The
  -- arrays join the pool afterwards.
  -- a view of k of n elements (1-d), any step, either direction
  local function alias_view(n, k)
    local step = rnd(1, 3)
    while (k - 1) * step >= n do step = step - 1 end
    local span = (k - 1) * step + 1
    local first = rnd(1, n - span + 1)
    if rnd(2) == 1 then return {{first, first + span - 1, step}} end
    return {{first + span - 1, first, -step}}
  end
  local function device_side(a)
    local k = luacuda.attr(a, "kind")
    return k == "mapped" or k == "managed" or k == "device"
  end
  local function alias_op()
    alias_stream = alias_stream or luacuda.stream()
    local n = rnd(2, 48)
    local dt = rnd(3) == 1 and "float32" or "float64"
    local h, model = luacuda.arange(n, dt), luacuda.arange(n, dt)
    -- the arrays over h's memory, and each one's counterpart in the model:
    -- the same view of the model's one buffer
    local set, mset, reg = {h}, {model}, nil
    local how = rnd(3)
    if how == 1 then set[2], mset[2] = luacuda.mapped(h), model
    elseif how == 2 then reg = luacuda.register(h) end
    if rnd(2) == 1 then
      local from, v, j = rnd(#set), alias_view(n, n), #set + 1
      set[j], mset[j] = luacuda.from_dlpack(set[from][v]:to_dlpack()), mset[from][v]
    end
    -- the operation, all its choices made before it runs twice
    local what, xi, yi = rnd(5), rnd(#set), rnd(#set)
    if what >= 3 and device_side(set[xi]) ~= device_side(set[yi]) then yi = xi end   -- one side computes
    local x, y = set[xi], set[yi]
    local ylen = #y
    local k = rnd(1, math.min(#x, ylen))
    local sv, dv = alias_view(#x, k), alias_view(ylen, k)
    local rows = rnd(1, math.max(1, #x // 2))
    local cols, axis = #x // rows, rnd(2)
    if what == 5 then dv = alias_view(ylen, math.min(ylen, axis == 1 and cols or rows)) end
    local function apply(i, o, s)
      if what == 1 then
        o[dv] = i[sv]
      elseif what == 2 then
        if device_side(o) then o[dv]:copy_to_device(i[sv], s) else i[sv]:copy_to_host(o[dv], s) end
      elseif what == 3 then
        i[sv]:cumsum({out = o[dv], stream = s})
      elseif what == 4 then
        luacuda.add(i[sv], 1, o[dv], s)
      else
        i[{{1, rows * cols}}]:reshape(rows, cols):sum(axis, {out = o[dv], stream = s})
      end
    end
    if trace then
      io.stderr:write(("  alias: %s%s, operation %d, from %s %s into %s %s\n"):format(
        ({"mapped", "register", "plain"})[how], #set > (how == 1 and 2 or 1) and " + dlpack" or "",
        what, luacuda.attr(x, "kind"), table.concat(sv[1], ":"), luacuda.attr(y, "kind"),
        table.concat(dv[1], ":")))
    end
    local ok_model = pcall(apply, mset[xi], mset[yi], nil)
    local ok, err = pcall(function()
      apply(x, y, alias_stream)
      alias_stream:synchronize()
    end)
    if ok and ok_model then
      local got, want = h:totable(), model:totable()
      for i = 1, n do
        if got[i] ~= want[i] then
          mismatches[#mismatches + 1] = ("seed %d: alias operation %d (%s into %s): element %d "
            .. "is %s, the model's %s"):format(seed, what, luacuda.attr(x, "kind"),
            luacuda.attr(y, "kind"), i, got[i], want[i])
          break
        end
      end
    end
    keep(h)
    for i = 2, #set do keep(set[i]) end
    keep(reg)
    if not ok then error(err, 0) end
  end

  local ops = {
    function() return keep(new_array()) end,
    function() return keep(luacuda.stream()) end,
    function() return pick("event"):elapsed_time(pick("event")) end,
    function() return keep(luacuda.event(opts())) end,
    function() return keep(pick("array")[any_value()]) end,
    function() local a = pick("array"); a[any_value()] = any_value() end,
    function()
      local h = pick("array"):copy_to_host(nil, rnd(2) == 1 and pick("stream") or nil)
      luacuda.synchronize()   -- h is not ready before (the simulator issue's business)
      return keep(h)
    end,
    function() return pick("array"):copy_to_device(pick("array"), rnd(2) == 1 and pick("stream") or nil) end,
    function() return keep(pick("array"):reshape(rnd(2) == 1 and {rnd(3), -1} or any_value(), opts())) end,
    function() return keep(pick("array"):ravel(opts())) end,
    function() return keep(pick("array").T) end,
    function() return pick("array"):fill(any_value(), rnd(2) == 1 and pick("stream") or nil) end,
    function() return pick("array"):totable() end,
    function() return tostring(pick()) end,
    function() return keep(luacuda.to_device(pick("array"), rnd(2) == 1 and pick("stream") or nil, opts())) end,
    function() return keep(luacuda.register(pick("array"))) end,
    function() return keep(luacuda.pinned(pick("array"), pick("array"))) end,
    function() return keep(luacuda.mapped(pick("array"))) end,
    function() return luacuda.deregister(pick("array")) end,
    function() return pick("stream"):synchronize() end,
    function() return pick("event"):record(pick("stream")) end,
    function() return pick("event"):wait(pick("stream")) end,
    function() return pick("stream"):query() end,
    function()
      return pick("stream"):auto_synchronize(function() op(true) end)
    end,
    function()
      -- n within both arrays: a kernel writing out of bounds is not this
      -- spec's business (fault_spec's), and memcheck would report it
      local x, y = pick("array"), pick("array")
      if rnd(3) == 1 then x = hostile() end
      local n = 0
      if luacuda.type(x) == "array" and luacuda.type(y) == "array" then
        n = math.min(luacuda.attr(x, "size"), luacuda.attr(y, "size"))
      end
      local cfg = rnd(2) == 1 and {rnd(3), 32, pick("stream")} or {grid = rnd(2), block = 64}
      module.axpy[cfg](n, 2.0, x, y)
    end,
    function() module.scale:launch({1, 16, rnd(2) == 1 and pick("stream") or nil}, pick("array"), 0.5) end,
    function() return keep(pick("array"):to_dlpack()) end,
    function() return keep(luacuda.from_dlpack(pick("other"))) end,
    function() return pick():close() end,
    function() closer() end,
    function() finalizer() end,
    function() keep(hostile()) end,
    function() collectgarbage("step", rnd(64)) end,
    function() return luacuda.synchronize() end,
    function() return pick("array"):item() end,
    function() return keep(pick("array"):split(any_value())) end,
    function() return keep(pick("array"):view(any_value())) end,
    function() return keep(pick("array"):squeeze(any_value())) end,
    function() return keep(pick("other"):gpu()) end,
    function() return keep(pick("other"):host()) end,
    function() return #pick("array") end,
    -- aliases: see alias_op
    function() return alias_op() end,
  }

  -- ---- shapes, broadcasting, save/load and array math (issue 29) -------
  -- Shapes near 2^63 elements and with zero-length axes are checked and
  -- dropped: every operation may meet what the pool holds, and a valid
  -- view of 2^60 elements (stride 0) takes no memory but hours to sum.
  -- The pool keeps arrays of at most KEEP elements.
  local KEEP = 64
  local A = luacuda.attr
  local function keep_small(v)
    if luacuda.type(v) == "array" and A(v, "size") <= KEEP then keep(v) end
    return v
  end
  -- a shape that a's shape broadcasts to: axes added in front, size-1
  -- axes stretched (now and then anything at all)
  local function reachable(a)
    if luacuda.type(a) ~= "array" or rnd(8) == 1 then return any_value() end
    local s, out = A(a, "shape"), {}
    for _ = 1, rnd(0, 2) do out[#out + 1] = rnd(0, 4) end
    for _, d in ipairs(s) do out[#out + 1] = d == 1 and rnd(0, 4) or d end
    return out
  end
  -- a shape of one to four axes near 2^63 elements, zero-length ones among them
  local function huge_shape()
    local s = {}
    for i = 1, rnd(1, 4) do
      local r = rnd(7)
      s[i] = r == 1 and 0 or r == 2 and rnd(1, 5) or r == 3 and 1 << rnd(20, 62)
             or r == 4 and (1 << rnd(30, 62)) - rnd(0, 3) or r == 5 and 6148914691236517206
             or r == 6 and math.maxinteger or 3
    end
    return s
  end
  -- with the finalizers and metamethods of this seed quiet: checks that
  -- compare two reads of an array
  local function quietly(f)
    local was = live
    live = false
    local ok, err = pcall(f)
    live = was
    if not ok then error(err, 0) end
  end
  -- a pool array, or a small fresh float array of any kind (matmul and
  -- the float functions want those)
  local function operand()
    if rnd(3) > 1 then return pick("array") end
    local f = luacuda.arange(rnd(0, 6), rnd(2) == 1 and "float32" or "float64")
    if rnd(2) == 1 then f = f:reshape(rnd(2) == 1 and {-1, 1} or {1, -1}) end
    return rnd(2) == 1 and luacuda.to_device(f) or f
  end
  -- a second operand that broadcasts with x to at most KEEP elements
  local function partner(x)
    local r = rnd(4)
    if r == 1 then return rnd(-3, 9) elseif r == 2 then return x end
    local y = operand()
    local ok, s = pcall(luacuda.broadcast_shapes, x, y)
    if ok and count_of(s, 1) > KEEP then return rnd() * 4 end
    return y
  end
  local function maybe_stream() return rnd(3) == 1 and pick("stream") or nil end
  local saved                 -- what the file at path holds: dtype, shape, values
  local huge_gen              -- the generator asked for shapes past 2^63

  local shape_ops = {
    -- broadcast_to a reachable shape: the view has it, and its count
    function()
      local a = pick("array")
      local s = reachable(a)
      local v = rnd(2) == 1 and luacuda.broadcast_to(a, s) or a:broadcast_to(s)
      if luacuda.type(v) == "array" and type(s) == "table" then
        check(same_values(A(v, "shape"), s), "broadcast_to gave shape {%s} for {%s}",
              table.concat(A(v, "shape"), ", "), table.concat(s, ", "))
        check(A(v, "size") == count_of(s, 1), "broadcast_to's view has size %d for {%s}",
              A(v, "size"), table.concat(s, ", "))
      end
      return keep_small(v)
    end,
    -- shapes near 2^63: refused exactly where zeros refuses them, a view
    -- that fits printed at once; broadcast_shapes counts elements
    function()
      local s, dt = huge_shape(), DTYPES[rnd(#DTYPES)]
      local n, text = count_of(s, ITEMSIZE[dt]), table.concat(s, ", ")
      local ok, v = pcall(luacuda.broadcast_to, luacuda.zeros({1}, dt), s)
      check(ok == (n ~= nil), "broadcast_to {%s} of %s: %s", text, dt, tostring(v))
      if not ok then
        check(tostring(v):find("array size overflows", 1, true), "broadcast_to {%s}: %s", text, v)
      elseif luacuda.type(v) == "array" then
        check(A(v, "size") == n, "broadcast_to {%s}: size %d", text, A(v, "size"))
        if n == 0 or rnd(16) == 1 then      -- a summary of a long view costs its rows
          local t = tostring(v)
          check(not t:find("unprintable", 1, true) and (n > 0 or t:find("\n{}$")),
                "tostring of a broadcast to {%s}: %s", text, t:sub(1, 200))
        end
      end
      local okb, r = pcall(luacuda.broadcast_shapes, s, {1})
      check(okb == (count_of(s, 1) ~= nil), "broadcast_shapes {%s}: %s", text, tostring(r))
    end,
    -- array math and random numbers of shapes past 2^63 elements: refused
    -- before anything is computed (only called where they overflow)
    function()
      local s = huge_shape()
      if #s < 2 or count_of(s, 8) then return end
      local text = table.concat(s, ", ")
      if rnd(2) == 1 then
        huge_gen = huge_gen or luacuda.random(seed)
        local g = huge_gen
        local counter = g:state().counter
        local method = ({"uniform", "normal", "integers"})[rnd(3)]
        local ok, err
        if method == "integers" then ok, err = pcall(g.integers, g, 0, 9, s, "int64", {kind = "host"})
        else ok, err = pcall(g[method], g, s, "float64", {kind = "host"}) end
        check(not ok and tostring(err):find("array size overflows", 1, true),
              "%s {%s}: %s", method, text, tostring(err))
        check(g:state().counter == counter, "%s {%s} moved the counter", method, text)
        return
      end
      -- float32 operands that fit, whose float32 (add) or bool (lt) result does not
      local xs = table.move(s, 1, #s, 1, {})
      xs[#xs] = 1
      local f = rnd(2) == 1 and "add" or "lt"
      if count_of(xs, 4) and not count_of(s, f == "add" and 4 or 1) then
        local x = luacuda.zeros({1}, "float32"):broadcast_to(xs)
        local y = luacuda.zeros({1}, "float32"):broadcast_to({s[#s]})
        local ok, err = pcall(f == "add" and luacuda.add or x.lt, x, y)
        check(not ok and tostring(err):find("array size overflows", 1, true),
              "array math broadcasting to {%s}: %s", text, tostring(err))
      end
    end,
    -- save and load: the loaded array is the one saved (a save makes a
    -- file, which costs: one call in 32 saves, the others load the last
    -- file saved again). Quietly: a save run by a finalizer in the middle
    -- would change the file under the load.
    function()
      local b
      quietly(function()
        if saved == nil or rnd(32) == 1 then
          local a = pick("array")
          saved = nil              -- a failed save may leave anything there
          luacuda.synchronize()    -- no kernel of another stream still writing a
          luacuda.save(path, a)
          saved = {dtype = A(a, "dtype"), shape = A(a, "shape"), kind = A(a, "kind"),
                   values = a:copy_to_host():totable()}
        end
        b = luacuda.load(path)
        check(A(b, "dtype") == saved.dtype and same_values(A(b, "shape"), saved.shape),
              "load gave %s {%s} for %s {%s}", A(b, "dtype"), table.concat(A(b, "shape"), ", "),
              saved.dtype, table.concat(saved.shape, ", "))
        check(same_values(b:totable(), saved.values),
              "load gave other values than the %s array saved", saved.kind)
      end)
      return keep(b)
    end,
    -- array math: a function of one, two or three operands, with an
    -- output and a stream now and then
    function()
      local x, r = operand(), rnd(5)
      local out = rnd(4) == 1 and pick("array") or nil
      if r == 1 then return keep_small(luacuda[UNARY[rnd(#UNARY)]](x, out, maybe_stream())) end
      local y = partner(x)
      if r == 2 then return keep_small(luacuda[BINARY[rnd(#BINARY)]](x, y, out, maybe_stream())) end
      if r == 3 then return keep_small(x[COMPARE[rnd(#COMPARE)]](x, y, out, maybe_stream())) end
      if r == 4 then return keep_small(luacuda.clip(x, rnd(-2, 2), partner(x), out)) end
      return keep_small(luacuda.where(partner(x), x, y, out, maybe_stream()))
    end,
    -- the operators, astype and result_type
    function()
      local x = operand()
      local y, r = partner(x), rnd(10)
      local v
      if r == 1 then v = x + y elseif r == 2 then v = x - y elseif r == 3 then v = x * y
      elseif r == 4 then v = x / y elseif r == 5 then v = x // y elseif r == 6 then v = x % y
      elseif r == 7 then v = x ^ y elseif r == 8 then v = -x
      elseif r == 9 then v = x:astype(any_value())
      else return luacuda.result_type(x, y, any_value()) end
      return keep_small(v)
    end,
    -- reductions and scans, over an axis or all, into out= now and then
    function()
      local a = pick("array")
      local axis = ({nil, rnd(-2, 3), {1, 2}, any_value()})[rnd(4)]
      local o = rnd(3) == 1 and hostile() or
                {keepdims = rnd(2) == 1, out = rnd(4) == 1 and pick("array") or nil,
                 stream = maybe_stream(), dtype = rnd(4) == 1 and any_value() or nil}
      return keep_small(a[REDUCE[rnd(#REDUCE)]](a, axis, o))
    end,
    -- matrix products
    function()
      local a = operand()
      local b = rnd(3) == 1 and a or operand()
      if rnd(2) == 1 and luacuda.type(a) == "array" then a = a:reshape(-1, 1) end
      local out = rnd(4) == 1 and pick("array") or nil
      return keep_small(luacuda.matmul(a, b, out, maybe_stream()))
    end,
    -- concatenate and stack
    function()
      local list = {}
      for i = 1, rnd(1, 4) do list[i] = rnd(6) == 1 and any_value() or pick("array") end
      local f = rnd(2) == 1 and luacuda.concatenate or luacuda.stack
      return keep_small(f(list, rnd(3) == 1 and any_value() or nil))
    end,
    -- random numbers: generators, their draws into new arrays or out=
    function()
      local g = rnd(3) == 1 and pick("other") or keep(luacuda.random(rnd(0, 50)))
      local r, shape = rnd(6), {rnd(0, 4), rnd(0, 4)}
      local o = rnd(3) == 1 and hostile() or
                {kind = rnd(2) == 1 and KINDS[rnd(#KINDS)] or nil, stream = maybe_stream()}
      if rnd(4) == 1 then o = {out = pick("array"), stream = maybe_stream()} shape = nil end
      if r == 1 then return keep_small(g:uniform(shape, ({"float32", "float64"})[rnd(2)], o))
      elseif r == 2 then return keep_small(g:normal(shape, nil, o))
      elseif r == 3 then return keep_small(g:integers(rnd(-5, 0), rnd(1, 300), shape, DTYPES[rnd(#DTYPES)], o))
      elseif r == 4 then return keep(luacuda.random(g:state()))
      elseif r == 5 then for _, k in ipairs(g:split(rnd(0, 3))) do keep(k) end
      else return tostring(g) end
    end,
  }
  -- they cost a few times what the others do (checks, kernels, files):
  -- two entries among the others, each running one of them, keep the
  -- run's time about what it was
  for _ = 1, 2 do
    ops[#ops + 1] = function()
      local k = rnd(#shape_ops)
      if trace then io.stderr:write(("  shape op %d\n"):format(k)) end
      return shape_ops[k]()
    end
  end

  local depth = 0
  function op(nested)
    if depth > 3 then return end   -- finalizers and metamethods nest
    depth = depth + 1
    local i = rnd(#ops)
    if trace and not nested then io.stderr:write(("op %d\n"):format(i)) end
    local ok, err = pcall(ops[i])
    calls = calls + 1
    if not ok then
      errors = errors + 1
      if type(err) ~= "string" then
        depth = depth - 1
        error(("seed %d: operation %d raised a %s, not a message"):format(seed, i, type(err)))
      end
    end
    depth = depth - 1
  end

  for _ = 1, 8 do pcall(ops[1]) end
  keep(luacuda.stream())
  keep(luacuda.event())
  for _ = 1, OPS do op(false) end
  pcall(luacuda.synchronize)
  live = false
  pool = nil
  collectgarbage("incremental", 200, 100)     -- Lua 5.4's defaults
  collectgarbage()
  collectgarbage()
  return calls, errors, wrong
end

describe("random calls with hostile metamethods and finalizers", function()
  it("never crash, and fail only with messages", function()
    local module = luacuda.compile(SOURCE, {name = "stress.cu"})
    local path = os.tmpname()           -- the save/load round trips' file
    local first, last = ONE or 1, ONE or SEEDS
    local start = luacuda.clock()
    local calls, errors, seeds, wrong = 0, 0, 0, {}
    for seed = first, last do
      local c, e, w = run_seed(seed, module, ONE ~= nil, path)
      calls, errors, seeds = calls + c, errors + e, seeds + 1
      table.move(w, 1, #w, #wrong + 1, wrong)
      if luacuda.clock() - start > SECONDS then break end
    end
    pcall(luacuda.synchronize)
    os.remove(path)
    io.stderr:write(("\nstress: %d seeds, %d calls, %d failed with a message (%.1f s)\n")
                    :format(seeds, calls, errors, luacuda.clock() - start))
    assert.is_true(calls >= seeds * OPS)
    assert.is_true(errors > 0 and errors < calls)
    assert(#mismatches == 0, table.concat(mismatches, "\n"))
    assert.same({}, {table.unpack(wrong, 1, math.min(#wrong, 20))})
    -- the state still works
    local a = luacuda.to_device(luacuda.arange(4, "float32"))
    assert.same({0, 1, 2, 3}, a:copy_to_host():totable())
  end)
end)
