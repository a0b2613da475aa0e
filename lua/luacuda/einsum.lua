-- luacuda.einsum: Einstein summation over subscripts ("ij,jk->ik"), as
-- array math: each operand's axes permuted and given size-1 axes so that
-- every operand spans all the subscripts, the broadcast product of them
-- all, then a sum over the subscripts the output leaves out. It runs where
-- the operands' elements are; the product spans every subscript at once,
-- so a large contraction is matmul's work, not this.
local core = require "luacuda.core"

local function fail(fmt, ...)
  error(("luacuda.einsum: " .. fmt):format(...), 3)
end

-- the letters of one term, each a subscript
local function letters(term, what)
  local t = {}
  for c in term:gmatch(".") do
    if not c:match("%a") then
      fail("%s %q: subscripts are letters (no ellipsis, spaces or other characters), got %q",
           what, term, c)
    end
    t[#t + 1] = c
  end
  return t
end

--- @module luacuda

--- Einstein summation (NumPy's `einsum`, without ellipses or repeated
-- subscripts within one operand): `"ij,jk->ik"` is a matrix product,
-- `"ij->ji"` a transpose, `"i,i->"` a dot product, `"ij->"` a sum; without
-- `->` the output takes the subscripts that appear once, in alphabetical
-- order. The dtype is the operands' promoted one (as NumPy's). It forms
-- the product over every subscript before summing: `matmul` is the way
-- to large matrix products.
-- @function einsum
-- @tparam string subscripts the operands' subscripts, comma separated, then `->` and the output's
-- @tparam Array ... the operands, as many as the subscripts name (of one side: host or device)
-- @treturn Array|number the result (a Lua number when the output has no subscript)
-- @raise `luacuda.einsum: 'ij,jk' names 2 operands, got 1`; `subscript j is 3 in operand 1
-- and 4 in operand 2`; `operand 1 repeats subscript i (diagonals are not supported)`
-- @usage local a = luacuda.arange(6):reshape(2, 3)
-- print(luacuda.einsum("ij->ji", a))          -- a transposed copy
-- print(luacuda.einsum("ij,j->i", a, luacuda.ones({3}, "int64")))   -- {3, 12}
local function einsum(subscripts, ...)
  if type(subscripts) ~= "string" then fail("subscripts must be a string, got %s", type(subscripts)) end
  local ops = table.pack(...)
  local lhs, rhs = subscripts:match("^(.-)%->(.*)$")
  if not lhs then lhs = subscripts end
  local terms = {}
  for term in (lhs .. ","):gmatch("([^,]*),") do terms[#terms + 1] = term end
  if #terms ~= ops.n then fail("%q names %d operand%s, got %d", lhs, #terms, #terms == 1 and "" or "s", ops.n) end
  local size, seen, order = {}, {}, {}
  local subs = {}
  for k = 1, ops.n do
    local a = ops[k]
    if core.type(a) ~= "array" then fail("operand %d must be an array, got %s", k, core.type(a) or type(a)) end
    local t = letters(terms[k], "operand " .. k .. "'s subscripts")
    if #t ~= a.ndim then
      fail("operand %d has %d axes, its subscripts %q name %d", k, a.ndim, terms[k], #t)
    end
    local own = {}
    for i, c in ipairs(t) do
      if own[c] then fail("operand %d repeats subscript %s (diagonals are not supported)", k, c) end
      own[c] = true
      if size[c] and size[c] ~= a.shape[i] then
        fail("subscript %s is %d in operand %d and %d in operand %d", c, seen[c].size, seen[c].k,
             a.shape[i], k)
      end
      if not size[c] then
        size[c], seen[c] = a.shape[i], { k = k, size = a.shape[i], count = 0 }
        order[#order + 1] = c
      end
      seen[c].count = seen[c].count + 1
    end
    subs[k] = t
  end
  local out
  if rhs then
    out = letters(rhs, "the output's subscripts")
    local once = {}
    for _, c in ipairs(out) do
      if not size[c] then fail("the output's subscript %s is in no operand", c) end
      if once[c] then fail("the output repeats subscript %s", c) end
      once[c] = true
    end
  else
    out = {}
    for _, c in ipairs(order) do if seen[c].count == 1 then out[#out + 1] = c end end
    table.sort(out)
  end
  -- every subscript: the output's, then the summed ones
  local all, pos, inout = {}, {}, {}
  for _, c in ipairs(out) do all[#all + 1], inout[c] = c, true end
  for _, c in ipairs(order) do if not inout[c] then all[#all + 1] = c end end
  for i, c in ipairs(all) do pos[c] = i end
  local product
  for k = 1, ops.n do
    local a, t = ops[k], subs[k]
    -- a's axes in the order of all, then a size-1 axis for each subscript it lacks
    local perm = {}
    for i = 1, #t do perm[i] = i end
    table.sort(perm, function(x, y) return pos[t[x]] < pos[t[y]] end)
    local v = #t > 1 and a:transpose(perm) or a
    local shape = {}
    for i = 1, #all do shape[i] = 1 end
    for _, c in ipairs(t) do shape[pos[c]] = size[c] end
    if #all > 0 and #t ~= #all then v = v:reshape(shape) end
    product = product and product * v or v
  end
  if #all == 0 then return product:copy() end           -- 0-d operands only
  local summed = {}
  for i = #out + 1, #all do summed[#summed + 1] = i end
  if #summed == 0 then return ops.n == 1 and product:copy() or product end   -- a copy, not a view
  local dtype = product.dtype
  if #out == 0 then return product:sum(nil, { dtype = dtype ~= "bool" and dtype or nil }) end
  return product:sum(summed, { dtype = dtype ~= "bool" and dtype or nil })
end

return { einsum = einsum }
