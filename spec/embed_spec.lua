-- examples/embed: the C host program (built by make check) embeds Lua,
-- gives a script its own buffer and a DLPack tensor, and checks what comes
-- back, and that every buffer and tensor it gave was released once.
local S = require "spec.support"
local build = os.getenv("LUACUDA_BUILD") or "build"

describe("the embed example", function()
  it("runs and its checks pass", function()
    local bin = build .. "/embed_host"
    local f = io.open(bin, "rb")
    assert(f, bin .. " is missing: build it with `make embed`")
    f:close()
    -- no search path: the host program finds luacuda's Lua parts in the module
    local p = io.popen("env -u LUA_PATH -u LUA_CPATH '" .. bin .. "' 2>&1")
    local out = p:read("a")
    local ok = p:close()
    assert.is_true(ok, out)
    assert.truthy(out:find("scaled in place: x[1] = 2.5, x[999] = 2497.5: ok", 1, true), out)
    assert.truthy(out:find("from the script: int32 {3, 2}, device type 1, strides {1, 3}", 1, true), out)
    assert.truthy(out:find("dlpack round trip: ok", 1, true), out)
    assert.truthy(out:find("released: 1 buffer, 1 tensor", 1, true), out)
    assert.truthy(out:find("check: ok", 1, true), out)
    assert.is_nil(out:find("FAILED", 1, true), out)
  end)
end)
