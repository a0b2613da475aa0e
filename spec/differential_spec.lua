-- The differential test of layouts and copies: random operation sequences
-- on luacuda and on a pure-Lua model (spec/differential.lua,
-- spec/model.lua), every result compared. make fuzz-long runs many more.
local luacuda = require "luacuda"
local D = require "spec.differential"
local model = require "spec.model"

-- LUACUDA_DIFF_SEQUENCES: fewer under valgrind (make test-valgrind), where
-- the same paths' memory is checked at 30 times the cost
local SEQUENCES = math.tointeger(tonumber(os.getenv("LUACUDA_DIFF_SEQUENCES") or "")) or 2000

describe("the differential test against the Lua model", function()
  it(("agrees on %d random sequences of views, assignments and copies"):format(SEQUENCES), function()
    local first
    local totals = D.run_many(1, SEQUENCES, function(_, report) first = first or report end)
    assert.is_nil(first)
    assert.equal(SEQUENCES, totals.sequences)
    -- the sequences do reach the checks and the error paths
    assert.is_true(totals.checks > 10 * totals.sequences)
    assert.is_true(totals.errors > totals.sequences / 2)
  end)

  it("reports a disagreement with its seed and operations", function()
    -- a model that gets negative steps wrong must be caught
    local index = model.index
    model.index = function(v, key)
      local r, off = index(v, key)
      if type(r) == "table" then
        for k, s in ipairs(r.strides) do if r.shape[k] > 1 then r.strides[k] = math.abs(s) end end
      end
      return r, off
    end
    local report
    local ok, err = pcall(D.run_many, 1, 300, function(_, r) report = report or r end)
    model.index = index
    assert.is_true(ok, err)
    assert.is_string(report)
    assert.truthy(report:find("^seed %d+: "))
    assert.truthy(report:find("after:\n    a1 = luacuda.", 1, false))
  end)

  it("replays one seed the same way", function()
    local _, _, a = D.run(12345)
    local _, _, b = D.run(12345)
    assert.same(a.log, b.log)
    assert.is_true(#a.log >= 5)
  end)
end)

-- Bugs the differential test found, each kept as a focused case.
describe("differential regressions", function()
  it("views an empty array with another itemsize (no element can be misaligned)", function()
    local a = luacuda.zeros({2, 0}, "int8")
    local v = a:view("float64")
    assert.same({2, 0}, v.shape)
    assert.equal("float64", v.dtype)
    local d = luacuda.device_array({3, 0}, "uint8"):view("int64")
    assert.same({3, 0}, d.shape)
    assert.equal(0, d.nbytes)
  end)
end)
