-- Loaded by busted before the specs. A full collection after every test, so
-- a leak or a use-after-free shows up under the sanitizers at the test that
-- caused it, not later as flakiness. One is enough: a full cycle calls the
-- finalizers of everything it found unreachable (each luacuda object's C
-- resources go there); only the Lua memory of those userdata waits for the
-- next cycle. Its cost grows with the heap, which holds every spec file the
-- process loaded: CI's long runs split the specs over several processes
-- (tools/run_shards.sh).
local busted = require "busted"
busted.subscribe({ "test", "end" }, function()
  collectgarbage()
  return nil, true
end)
