-- luacuda: GPU arrays and kernels for Lua 5.4.
-- The C part (luacuda.core) does memory, copies and indexing; this file
-- assembles the public module and adds what is clearer in Lua.
local core = require "luacuda.core"

local M = {}
for name, value in pairs(core) do
  if name:sub(1, 1) ~= "_" then M[name] = value end
end

M._VERSION = "luacuda scm"
M.null = core._null()          -- a null pointer, for any pointer parameter

local smart = require "luacuda.smart"
M.smart_array = smart.smart_array

local printoptions = require "luacuda.printoptions"
M.set_printoptions = printoptions.set_printoptions
M.get_printoptions = printoptions.get_printoptions
M.printoptions = printoptions.printoptions

local generators = require "luacuda.generators"
M.elementwise = generators.elementwise
M.reduction = generators.reduction

return M
