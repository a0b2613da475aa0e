-- luacuda: GPU arrays and kernels for Lua 5.4.
-- The C part (luacuda.core) does memory, copies and indexing; this file
-- assembles the public module and adds what is clearer in Lua.
local core = require "luacuda.core"

local M = {}
for name, value in pairs(core) do
  if name:sub(1, 1) ~= "_" then M[name] = value end
end

--- @module luacuda

--- The version, `"luacuda scm"` in a checkout.
-- @field _VERSION
-- @usage print(luacuda._VERSION)
M._VERSION = "luacuda scm"

--- A null pointer, for any pointer parameter of a kernel.
-- @field null
-- @usage local m = luacuda.compile('extern "C" __global__ void k(float *p) {}')
-- m.k[{1, 1}](luacuda.null)
M.null = core._null()

local smart = require "luacuda.smart"
M.smart_array = smart.smart_array

local printoptions = require "luacuda.printoptions"
M.set_printoptions = printoptions.set_printoptions
M.get_printoptions = printoptions.get_printoptions
M.printoptions = printoptions.printoptions

local generators = require "luacuda.generators"
M.elementwise = generators.elementwise
M.reduction = generators.reduction

local stats = require "luacuda.stats"
M.round, M.var, M.std, M.norm = stats.round, stats.var, stats.std, stats.norm

M.pad = require("luacuda.pad").pad
M.einsum = require("luacuda.einsum").einsum
local jit = require "luacuda.jit"
M.jit, M.kernel = jit.jit, jit.kernel
require "luacuda.sampling"          -- the generators' permutation, shuffle and choice

return M
