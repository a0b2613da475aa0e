-- Loaded by busted before the specs. A full collection after every test, so
-- a leak or a use-after-free shows up under the sanitizers at the test that
-- caused it, not later as flakiness.
local busted = require "busted"
busted.subscribe({ "test", "end" }, function()
  collectgarbage()
  collectgarbage()
  return nil, true
end)
