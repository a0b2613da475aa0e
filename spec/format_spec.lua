-- tostring(array): kind, dtype, shape and the values, laid out as NumPy's
-- repr lays them out (each expected body below is what NumPy 1.24's
-- np.array2string(a, separator=", ") prints for the same values, in Lua's
-- spellings: braces, 1.0 for 1., 0/0 and 1/0 for nan and inf, true/false),
-- and the print options.
local luacuda = require "luacuda"
local S = require "spec.support"

local A = luacuda.array
local DEFAULTS = luacuda.get_printoptions()

-- the values' part of tostring(a), after the kind/dtype/shape line
local function body(a)
  return (tostring(a):gsub("^[^\n]*\n", ""))
end

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end

describe("tostring", function()
  after_each(function() luacuda.set_printoptions(DEFAULTS) end)

  it("shows kind, dtype, shape and aligned values as a Lua table", function()
    assert.equal("luacuda.array(kind=host, dtype=int64, shape={2, 3})\n" ..
                 "{{ 1,  2,  3},\n {40, 50, 60}}",
                 tostring(A({{1, 2, 3}, {40, 50, 60}})))
  end)

  it("prints device arrays and strided views", function()
    local d = luacuda.to_device({1.5, 2, 3.25})
    assert.equal("luacuda.array(kind=device, dtype=float64, shape={3})\n{3.25, 2.0 , 1.5 }",
                 tostring(d[{{-1, 1, -1}}]))
    local m = luacuda.to_device({{1, 2, 3}, {40, 50, 60}}, {dtype = "int32"})
    assert.equal("{{ 1, 40},\n { 2, 50},\n { 3, 60}}", body(m.T))
  end)

  it("wraps long rows at 75 columns, continuation lines under the first value", function()
    local a = (luacuda.arange(20) + 1) * 1000
    assert.equal("{ 1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000, 10000,\n" ..
                 " 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000, 20000}", body(a))
    for _, l in ipairs(lines(body(luacuda.arange(500) / 7))) do
      assert.is_true(#l <= 75, l)
    end
    -- inside a 2-D array the continuation lines go one column further in
    luacuda.set_printoptions{linewidth = 12}
    assert.equal("{{ 0,  1,\n   2,  3},\n { 4,  5,\n   6,  7},\n { 8,  9,\n  10, 11}}",
                 body(luacuda.arange(12):reshape(3, 4)))
    -- a value wider than the line still gets a line of its own
    luacuda.set_printoptions{linewidth = 3}
    assert.equal("{100,\n 200}", body(A({100, 200})))
  end)

  it("aligns the columns of 2-D arrays: integers to the right, floats on the point", function()
    assert.equal("{{   1,  -20,  300},\n {4000,    5,    6}}", body(A({{1, -20, 300}, {4000, 5, 6}})))
    assert.equal("{{  1.5  ,  -2.25 },\n {100.0  ,   0.125}}", body(A({{1.5, -2.25}, {100, 0.125}})))
  end)

  it("puts 3-D blocks apart by a blank line, 4-D ones by two", function()
    assert.equal("{{{0, 1},\n  {2, 3}},\n\n {{4, 5},\n  {6, 7}}}",
                 body(luacuda.arange(8):reshape(2, 2, 2)))
    assert.equal("{{{{ 0,  1},\n   { 2,  3}},\n\n  {{ 4,  5},\n   { 6,  7}}},\n\n\n" ..
                 " {{{ 8,  9},\n   {10, 11}},\n\n  {{12, 13},\n   {14, 15}}}}",
                 body(luacuda.arange(16):reshape(2, 2, 2, 2)))
  end)

  it("writes floats as NumPy does: the shortest digits that read back, at most `precision`", function()
    assert.equal("{1.0, 2.5}", body(A({1.0, 2.5})))
    assert.equal("{ 1.0 ,  2.25, -3.0 }", body(A({1.0, 2.25, -3})))
    assert.equal("{0.3       , 0.33333333}", body(A({0.1 + 0.2, 1 / 3})))
    assert.equal("{-0.0,  0.0}", body(A({-0.0, 0.0})))
    -- in the dtype: the float32 nearest 0.1 is 0.1, the float16 nearest pi 3.14
    assert.equal("{ 0.1,  0.5, 10.0}", body(A({0.1, 0.5, 10}, "float32")))
    assert.equal("{0.1 , 3.14}", body(A({0.1, math.pi}, "float16")))
    assert.equal("{0.1 , 3.14}", body(A({0.1, math.pi}, "bfloat16")))
    assert.equal("{30000002.0, 10000001.0}", body(A({3e7 + 2, 1e7 + 1}, "float32")))
    -- as NumPy's Dragon4: a decimal halfway between two floats reads back as
    -- the even one (float32 43224312 is 43224310 at its shortest, though
    -- an array prints its integer digits exactly); just above a power of
    -- two the nearer neighbour is below (float16 2^-6 is 0.01563); in
    -- scientific notation the digits past the shortest are the exact value's
    assert.equal("{43224312.0,   100000.5}", body(A({43224312, 100000.5}, "float32")))
    assert.equal("{4.322431e+07, 5.000000e-01}", body(A({43224312, 0.5}, "float32")))
    assert.equal("{0.01563, 1.0    }", body(A({2 ^ -6, 1}, "float16")))
    assert.equal("{1.0000000e-01, 1.2345678e-05}", body(A({0.1, 1.2345678e-5}, "float32")))
  end)

  it("uses scientific notation for the whole array where NumPy does", function()
    -- magnitudes from 1e8, below 1e-4, or spanning more than a factor 1000
    assert.equal("{1.0e+08, 2.0e+00}", body(A({1e8, 2})))
    assert.equal("{1.0e-05, 1.5e+00}", body(A({1e-5, 1.5})))
    assert.equal("{1.0e-05, 1.0e+00, 1.0e+05}", body(A({1e-5, 1, 1e5})))
    assert.equal("{ 1.0e+20, -1.0e+00}", body(A({1e20, -1})))
    assert.equal("{1.0e+100, 1.0e-005}", body(A({1e100, 1e-5})))
    assert.equal("{1.23456789e+05, 1.00000000e+00}", body(A({123456.789, 1})))
    assert.equal("{1.0e-01, 1.0e+01, 1.0e+20}", body(A({0.1, 10, 1e20}, "float32")))
    -- zeros take no part in the choice
    assert.equal("{1.0e-05, 0.0e+00}", body(A({1e-5, 0})))
    assert.equal("{0.0, 0.0}", body(A({0, 0}, "float64")))
    assert.equal("{  1.0,   1.0, 999.0}", body(A({1, 1, 999}, "float64")))
    -- the factor in the dtype: float32's 0.005 is a little less, 5 / 0.005
    -- there exactly 1000
    assert.equal("{ 5.0  , -0.005}", body(A({5, -0.005}, "float32")))
    assert.equal("{ 5.00000e+00, -4.99995e-03}", body(A({5, -0.00499995}, "float64")))
    -- summarized: decided by the values shown
    assert.equal("{0.00000000e+00, 3.33333333e-01, 6.66666667e-01, ..., 6.65666667e+02,\n" ..
                 " 6.66000000e+02, 6.66333333e+02}", body(luacuda.arange(2000) / 3))
  end)

  it("spells NaN and the infinities as expressions Lua reads back", function()
    assert.equal("{ 0/0,  1/0, -1/0,  1.5}", body(A({0 / 0, 1 / 0, -1 / 0, 1.5})))
    assert.equal("{    0/0,     1/0, 1.0e-05, 1.5e+00}", body(A({0 / 0, 1 / 0, 1e-5, 1.5})))
    assert.equal("{0/0, 1/0}", body(A({0 / 0, 1 / 0})))
    assert.equal("{-1/0,  2.5}", body(A({-1 / 0, 2.5})))
    local back = load("return " .. body(A({0 / 0, 1 / 0, -1 / 0, -0.0})))()
    assert.is_true(back[1] ~= back[1])
    assert.same({1 / 0, -1 / 0}, {back[2], back[3]})
    assert.equal(-1 / 0, 1 / back[4])
  end)

  it("prints what reads back as the same values, at precision 17", function()
    local _ <close> = luacuda.printoptions{precision = 17}
    local rng = luacuda.random(7)
    for _, case in ipairs({{"float64", 1}, {"float64", 1e-9}, {"float64", 1e12}, {"float32", 3}}) do
      local a = rng:normal({4, 5}, case[1]) * case[2]
      a = luacuda.array(a:copy_to_host():totable(), case[1])
      assert.same(a:totable(), A(load("return " .. body(a))(), case[1]):totable(), body(a))
    end
  end)

  it("prints 0-d, empty, boolean, integer and uint64 arrays", function()
    assert.equal("luacuda.array(kind=host, dtype=int64, shape={})\n7", tostring(A(7)))
    assert.equal("7.0", body(A(7.0)))
    assert.equal("true", body(A(true)))
    assert.equal("luacuda.array(kind=device, dtype=float64, shape={0})\n{}",
                 tostring(luacuda.to_device({})))
    assert.equal("{}", body(luacuda.zeros({2, 0})))
    assert.equal("{}", body(luacuda.zeros({0, 3})))
    -- " true" lines up with "false", as NumPy's " True" with "False"
    assert.equal("{ true, false}", body(A({true, false})))
    assert.equal("{ true,  true}", body(A({true, true})))
    assert.equal("{-128,    0,  127}", body(A({-128, 0, 127}, "int8")))
    -- uint64 past 2^63 - 1 in full (Lua reads those as floats)
    local u = A({-1, 5}, "int64"):view("uint64")
    assert.equal("{18446744073709551615,                    5}", body(u))
    assert.equal("18446744073709551615", body(A(-1, "int64"):view("uint64")))
    assert.equal("{9223372036854775808}", body(A({math.mininteger}, "int64"):view("uint64")))
  end)

  -- NumPy prints every empty array as [] and its shape; a zero-length axis
  -- before a long one printed a {} for each row (4 million of them for
  -- {2^22, 0, 5}, hours for {2^31 - 1, 0, 1}), or nothing ({0, 2^40}:
  -- "unprintable")
  it("prints an empty array as {} after its shape, whatever its other axes", function()
    for _, shape in ipairs({{4, 0, 5}, {2, 3, 0}, {1 << 22, 0, 5}, {0, 1 << 40}, {1 << 40, 0},
                            {0, 0}}) do
      local a = luacuda.zeros(shape, "int32")
      assert.equal(("luacuda.array(kind=host, dtype=int32, shape={%s})\n{}")
                   :format(table.concat(shape, ", ")), tostring(a))
    end
    local d = luacuda.device_array({3, 0, 1 << 40})
    assert.equal("luacuda.array(kind=device, dtype=float64, shape={3, 0, 1099511627776})\n{}",
                 tostring(d))
    -- a view too: the rows of an empty slice of a long broadcast
    local v = luacuda.zeros({1, 1}):broadcast_to({1 << 40, 1 << 19})[{{}, {1, 0}}]
    assert.equal("{}", body(v))
    -- the case that printed for hours, in a child that cannot stall the run
    local ok, out = S.lua_run("timeout 120 env", [[
      print(tostring(require("luacuda").zeros({(1 << 31) - 1, 0, 1}, "int8")))]])
    assert.is_true(ok, out)
    assert.equal("luacuda.array(kind=host, dtype=int8, shape={2147483647, 0, 1})\n{}\n", out)
  end)

  it("summarizes past `threshold` elements: `edgeitems` at each end of each axis", function()
    assert.equal("{   0,    1,    2, ..., 1997, 1998, 1999}", body(luacuda.arange(2000)))
    assert.equal("{{   0,    1,    2, ...,  140,  141,  142},\n" ..
                 " { 143,  144,  145, ...,  283,  284,  285},\n" ..
                 " { 286,  287,  288, ...,  426,  427,  428},\n" ..
                 " ...,\n" ..
                 " { 572,  573,  574, ...,  712,  713,  714},\n" ..
                 " { 715,  716,  717, ...,  855,  856,  857},\n" ..
                 " { 858,  859,  860, ...,  998,  999, 1000}}",
                 body(luacuda.arange(1001):reshape(7, 143)))
    local s = body(luacuda.arange(2000):reshape(10, 10, 20))
    assert.truthy(s:find("  {  40,   41,   42, ...,   57,   58,   59},\n  ...,\n", 1, true), s)
    assert.truthy(s:find("]\n\n ...,\n\n {{1400,", 1, true) or s:find("}},\n\n ...,\n\n {{1400,", 1, true), s)
    -- 1000 elements is not past the threshold
    assert.is_nil(body(luacuda.arange(1000)):find("...", 1, true))
    luacuda.set_printoptions{threshold = 5, edgeitems = 2}
    assert.equal("{0, 1, ..., 8, 9}", body(luacuda.arange(10)))
    assert.equal("{0, 1, 2, 3, 4}", body(luacuda.arange(5)))
    luacuda.set_printoptions{threshold = 9, edgeitems = 5}
    assert.equal("{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}", body(luacuda.arange(10)))
    luacuda.set_printoptions{threshold = math.huge}
    assert.is_nil(body(luacuda.arange(3000)):find("...", 1, true))
  end)

  it("keeps `suppress`: positional notation unless values reach 1e8", function()
    luacuda.set_printoptions{suppress = true}
    assert.equal("{0.00001, 1.5    }", body(A({1e-5, 1.5})))
    assert.equal("{     0.00001,      1.0    , 100000.0    }", body(A({1e-5, 1, 1e5})))
    -- smaller than the precision shows: zero, with its sign
    assert.equal("{-0.0,  1.0}", body(A({-1e-10, 1})))
    assert.equal("{1.0e+08, 1.0e+00}", body(A({1e8, 1})))
  end)

  it("rounds to `precision` digits after the point", function()
    luacuda.set_printoptions{precision = 3}
    assert.equal("{3.142, 2.718}", body(A({math.pi, math.exp(1)})))
    assert.equal("{3.333e-01, 1.000e-05}", body(A({1 / 3, 1e-5})))
    assert.equal("{0.3  , 0.333}", body(A({0.1 + 0.2, 1 / 3})))
    luacuda.set_printoptions{precision = 0}
    assert.equal("{3.0, 3.0}", body(A({math.pi, math.exp(1)})))
    luacuda.set_printoptions{precision = 2}
    assert.equal("{1.5e-07, 2.5e+12}", body(A({1.5e-7, 2.5e12})))
  end)

  it("never raises, also for closed arrays", function()
    local a = luacuda.zeros(3)
    a:close()
    assert.equal("luacuda.array (closed)", tostring(a))
  end)
end)

-- NumPy itself, where Debian's python3-numpy is installed: random arrays
-- and options printed by both, NumPy's text turned into Lua's spellings.
-- Where a float has a fraction, NumPy pads its 1. with spaces that Lua's
-- 1.0 fills: the widths are the same. Where none has (NumPy's {1., 2.}),
-- Lua's are a column wider and may wrap elsewhere: not compared.
describe("against NumPy", function()
  -- (not under the sanitizers, whose preloaded runtime python cannot take)
  local have_numpy = S.sh("/usr/bin/python3 -c 'import numpy'")
  local it_numpy = have_numpy and it
                   or function(name) pending(name .. " (needs /usr/bin/python3 with NumPy)") end

  local NUMPY = [==[
import sys, warnings, numpy as np
warnings.simplefilter("ignore")      # float16 overflows to inf, as luacuda's
for line in open(sys.argv[1]):
    dtype, shape, values, lw, th, ei, pr, sup = line.rstrip("\n").split("|")
    shape = tuple(int(d) for d in shape.split(",") if d)
    vals = [float(v) if dtype.startswith("float") else (v == "true") if dtype == "bool" else int(v)
            for v in values.split(",") if v]
    a = np.array(vals, dtype=dtype).reshape(shape)
    with np.printoptions(linewidth=int(lw), threshold=int(th), edgeitems=int(ei),
                         precision=int(pr), suppress=sup == "true"):
        print(np.array2string(a, separator=", ") + "\n@@")
]==]

  local function lua_spelling(s)
    s = s:gsub("%[", "{"):gsub("%]", "}"):gsub("True", "true"):gsub("False", "false")
    s = s:gsub("nan", "0/0"):gsub("inf", "1/0"):gsub("(%d)%. ", "%1.0")
    return s
  end

  it_numpy("lays out random arrays as NumPy does", function()
    math.randomseed(20)
    local cases, arrays = {}, {}
    local dtypes = {"int64", "int8", "uint16", "float64", "float32", "float16", "bool"}
    for i = 1, 150 do
      local ndim = math.random(1, 4)
      local shape, size = {}, 1
      for d = 1, ndim do
        shape[d] = math.random(1, ndim == 1 and 60 or 9)
        size = size * shape[d]
      end
      local dtype = dtypes[math.random(#dtypes)]
      local scale = 10.0 ^ math.random(-6, dtype == "float16" and 2 or 9)
      local full = math.random() < 0.5           -- values of 17 digits, else of a few
      local values = {}
      for k = 1, size do
        local v
        if dtype == "bool" then v = math.random() < 0.5
        elseif dtype:find("^float") then
          v = full and (math.random() - 0.5) * scale or (math.random(-4000, 4000) / 8) * scale
          if math.random() < 0.05 then v = ({0 / 0, 1 / 0, -1 / 0, 0.0})[math.random(4)] end
        elseif dtype == "int8" then v = math.random(-128, 127)
        elseif dtype == "uint16" then v = math.random(0, 65535)
        else v = math.random(-10 ^ math.random(1, 12), 10 ^ math.random(1, 12)) end
        values[k] = v
      end
      local opts = {linewidth = math.random(20, 120), threshold = math.random(0, 300),
                    edgeitems = math.random(1, 4), precision = math.random(3, 10),
                    suppress = math.random() < 0.3}
      local a = luacuda.array(values, dtype):reshape(shape)
      local text = {}
      for k, v in ipairs(values) do
        text[k] = type(v) == "boolean" and tostring(v)
                  or v ~= v and "nan" or v == 1 / 0 and "inf" or v == -1 / 0 and "-inf"
                  or ("%.17g"):format(v)
      end
      cases[i] = table.concat({dtype, table.concat(shape, ","), table.concat(text, ","), opts.linewidth,
                               opts.threshold, opts.edgeitems, opts.precision, tostring(opts.suppress)}, "|")
      arrays[i] = {a, opts}
    end
    local dir = S.tmpdir()
    local f = assert(io.open(dir .. "/cases", "w"))
    f:write(table.concat(cases, "\n"), "\n")
    f:close()
    f = assert(io.open(dir .. "/print_cases.py", "w"))
    f:write(NUMPY)
    f:close()
    local ok, out = S.sh(("/usr/bin/python3 %s/print_cases.py %s/cases"):format(dir, dir))
    os.remove(dir .. "/cases")
    os.remove(dir .. "/print_cases.py")
    os.remove(dir)
    assert.is_true(ok, out)
    local i, compared = 0, 0
    for expected in out:gmatch("(.-)\n@@\n") do
      i = i + 1
      if not expected:find("%d%.[,%]e]") then
        local a, opts = arrays[i][1], arrays[i][2]
        luacuda.set_printoptions(opts)
        local got = body(a)
        luacuda.set_printoptions(DEFAULTS)
        assert.equal(lua_spelling(expected), got, cases[i])
        compared = compared + 1
      end
    end
    assert.equal(#cases, i)
    assert.is_true(compared > 100, compared .. " compared")
  end)
end)

describe("print options", function()
  after_each(function() luacuda.set_printoptions(DEFAULTS) end)

  it("are NumPy's defaults at first, and each get_printoptions() is a fresh table", function()
    assert.same({precision = 8, threshold = 1000, linewidth = 75, edgeitems = 3, suppress = false},
                luacuda.get_printoptions())
    local t = luacuda.get_printoptions()
    t.precision = 1
    assert.equal(8, luacuda.get_printoptions().precision)
    assert.are_not.equal(luacuda.get_printoptions(), luacuda.get_printoptions())
  end)

  it("set_printoptions changes the options given and returns nothing", function()
    assert.equal(0, select("#", luacuda.set_printoptions{precision = 4, linewidth = 40.0}))
    assert.same({precision = 4, threshold = 1000, linewidth = 40, edgeitems = 3, suppress = false},
                luacuda.get_printoptions())
    assert.equal("integer", math.type(luacuda.get_printoptions().linewidth))
    luacuda.set_printoptions{}
    assert.equal(4, luacuda.get_printoptions().precision)
    assert.equal("{0.3333}", body(A({1 / 3})))
  end)

  it("printoptions{...} applies until the value it returns is closed", function()
    do
      local _ <close> = luacuda.printoptions{precision = 2, suppress = true}
      assert.equal("{0.33}", body(A({1 / 3})))
      do
        local _ <close> = luacuda.printoptions{precision = 5}
        assert.equal("{0.33333}", body(A({1 / 3})))
      end
      assert.equal(2, luacuda.get_printoptions().precision)
      assert.is_true(luacuda.get_printoptions().suppress)
    end
    assert.same(DEFAULTS, luacuda.get_printoptions())
    -- also when an error leaves the scope, and once only when closed by hand
    pcall(function()
      local _ <close> = luacuda.printoptions{precision = 1}
      error("out")
    end)
    assert.same(DEFAULTS, luacuda.get_printoptions())
    local scope = luacuda.printoptions{precision = 6}
    assert.equal("luacuda.printoptions(open)", tostring(scope))
    scope:close()
    assert.equal("luacuda.printoptions(closed)", tostring(scope))
    luacuda.set_printoptions{precision = 7}
    scope:close()
    assert.equal(7, luacuda.get_printoptions().precision)
  end)

  it("refuse bad tables with a clear error, changing nothing", function()
    luacuda.set_printoptions{precision = 5}
    local before = luacuda.get_printoptions()
    local cases = {
      {nil, "luacuda.set_printoptions: expects a table of options, got nil"},
      {3, "luacuda.set_printoptions: expects a table of options, got number"},
      {{precison = 3}, "luacuda.set_printoptions: unknown option 'precison' " ..
                       "(the options are edgeitems, linewidth, precision, suppress, threshold)"},
      {{[1] = 3}, "luacuda.set_printoptions: unknown option 1"},
      {{precision = -1}, "luacuda.set_printoptions: precision must be an integer from 0 to 99, got -1"},
      {{precision = 100}, "precision must be an integer from 0 to 99, got 100"},
      {{precision = 2.5}, "precision must be an integer from 0 to 99, got 2.5"},
      {{precision = "3"}, "precision must be an integer from 0 to 99, got string"},
      {{threshold = -1}, "threshold must be an integer >= 0, or math.huge (never summarize), got -1"},
      {{linewidth = 0}, "linewidth must be an integer >= 1, got 0"},
      {{edgeitems = 0}, "edgeitems must be an integer >= 1, got 0"},
      {{suppress = 1}, "suppress must be a boolean, got 1"},
      {{precision = 3, linewidth = true}, "linewidth must be an integer >= 1, got true"},
    }
    for _, c in ipairs(cases) do
      S.misuse(c[2], luacuda.set_printoptions, c[1])
      assert.same(before, luacuda.get_printoptions())
    end
    -- (NaN is not equal to itself: S.misuse would see the argument changed)
    local ok, err = pcall(luacuda.set_printoptions, {threshold = 0 / 0})
    assert.is_false(ok)
    assert.truthy(err:find("threshold must be an integer >= 0, or math.huge (never summarize), got ",
                           1, true), err)
    assert.same(before, luacuda.get_printoptions())
    -- the error names the caller's line, as Lua's own errors do
    local line = debug.getinfo(1, "l").currentline + 1
    ok, err = pcall(function() luacuda.set_printoptions{linewidth = -1} end)
    assert.is_false(ok)
    assert.truthy(err:find("format_spec.lua:" .. line .. ": luacuda.set_printoptions: ", 1, true), err)
    S.misuse("luacuda.printoptions: suppress must be a boolean, got string",
             luacuda.printoptions, {suppress = "yes"})
    S.misuse("luacuda.printoptions: expects a table of options, got boolean", luacuda.printoptions, true)
    assert.same(before, luacuda.get_printoptions())
  end)
end)
