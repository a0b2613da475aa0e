-- luacuda: GPU arrays and kernels for Lua 5.4.
-- The C part (luacuda.core) does memory, copies and indexing; this file
-- assembles the public module and adds what is clearer in Lua.
local core = require "luacuda.core"
local format = require "luacuda.format"
local record = require "luacuda.record"

local M = {}
for name, value in pairs(core) do
  if name:sub(1, 1) ~= "_" then M[name] = value end
end

M._VERSION = "luacuda scm"

local smart = require "luacuda.smart"
M.smart_array = smart.smart_array

local meta = core._array_metatable
meta.__tostring = format.array
meta.__name = "luacuda.array"

core._record_methods.c_declaration = record.c_declaration

return M
