-- No include cycle between the units of src/ (a source file and its
-- header): tools/includes.lua reads every `#include "..."` line, resolved
-- as the Makefile's -I paths resolve it.
local I = dofile("tools/includes.lua")

-- A tree of files under a fresh directory: files maps path to contents.
local function tree(files)
  local top = os.tmpname()
  os.remove(top)
  for path, text in pairs(files) do
    local dir = (top .. "/" .. path):match("^(.*)/")
    assert(os.execute("mkdir -p '" .. dir .. "'"))
    local f = assert(io.open(top .. "/" .. path, "w"))
    f:write(text)
    f:close()
  end
  return top
end

describe("the include graph of src/", function()
  it("has no cycle between units", function()
    local cycles = I.cycles(".")
    assert(#cycles == 0, "include cycles:\n" .. I.describe(cycles))
  end)

  it("sees a cycle through a source file, resolved across layers", function()
    -- array.h reads buffer.h, buffer.c reads array.h back; layout.h (base)
    -- is reached from binding/ by the -I path, and is no part of it
    local top = tree {
      ["src/binding/array.h"] = '#include "buffer.h"\n#include "layout.h"\n',
      ["src/binding/array.c"] = '#include "array.h"\n',
      ["src/binding/buffer.h"] = '#include <stddef.h>\n',
      ["src/binding/buffer.c"] = '#include "buffer.h"\n  #  include "array.h"\n',
      ["src/base/layout.h"] = '#include "common.h"\n',
      ["src/base/layout.c"] = '#include "layout.h"\n',
      ["src/base/common.h"] = '',
    }
    local cycles = I.cycles(top)
    os.execute("rm -r '" .. top .. "'")
    assert.same({ { units = { "src/binding/array", "src/binding/buffer" },
                    edges = { "src/binding/array.h:1 includes src/binding/buffer.h",
                              "src/binding/buffer.c:2 includes src/binding/array.h" } } },
                cycles)
  end)

  it("takes a header of the including file's folder before the layer's", function()
    -- binding/gather.c reads base/gather.h (binding has no gather.h), and
    -- base/gather.c reads its own: two units, no cycle
    local top = tree {
      ["src/binding/gather.c"] = '#include "gather.h"\n#include "array.h"\n',
      ["src/binding/array.h"] = '',
      ["src/binding/array.c"] = '#include "array.h"\n',
      ["src/base/gather.h"] = '',
      ["src/base/gather.c"] = '#include "gather.h"\n',
      ["src/base/array.h"] = '#include "gather.h"\n',
    }
    local graph = I.graph(top)
    local cycles = I.cycles(top)
    os.execute("rm -r '" .. top .. "'")
    assert.same({}, cycles)
    assert.same({ ["src/base/gather"] = "src/binding/gather.c:1 includes src/base/gather.h",
                  ["src/binding/array"] = "src/binding/gather.c:2 includes src/binding/array.h" },
                graph["src/binding/gather"])
    assert.same({ ["src/base/gather"] = "src/base/array.h:1 includes src/base/gather.h" },
                graph["src/base/array"])
  end)
end)
