-- Record dtypes (Numba's structured dtypes, DeviceRecord): layout, element
-- and field access, copies, kernels, printing and misuse.
local luacuda = require "luacuda"
local S = require "spec.support"

local function records()
  local inner = luacuda.record { { "a", "int8" }, { "b", "float64" } }
  local point = luacuda.record {
    { "x", "float32" }, { "n", "int32" }, { "v", "float32", 3 }, { "inner", inner },
  }
  return point, inner
end

local function value(x)
  return { x = x, n = 2, v = { 1, 2, 3 }, inner = { a = 1, b = 2.5 } }
end

local function zero() return { x = 0, n = 0, v = { 0, 0, 0 }, inner = { a = 0, b = 0 } } end

-- a kernel that writes sizeof, alignof and the offset of each field of the
-- declared struct, measured on an object (NVRTC has no offsetof, and
-- rejects g++'s __builtin_offsetof), as the compiler of the backend lays it
-- out
local function c_layout(rec, fields)
  local lines = { rec:c_declaration("R"), 'extern "C" __global__ void k(int64_t *out) {',
                  "  R r;", "  const char *base = reinterpret_cast<const char *>(&r);",
                  "  out[0] = sizeof(R); out[1] = alignof(R);" }
  for i, f in ipairs(fields) do
    lines[#lines + 1] = ("  out[%d] = reinterpret_cast<const char *>(&r.%s) - base;"):format(i + 1, f)
  end
  lines[#lines + 1] = "}"
  local m = luacuda.compile(table.concat(lines, "\n"))
  local out = luacuda.device_array(#fields + 2, "int64")
  m.k[{ 1, 1 }](out)
  return out:copy_to_host():totable()
end

describe("luacuda.record", function()
  it("lays fields out as C does, padding included", function()
    local point, inner = records()
    assert.equal(16, inner.size)
    assert.equal(8, inner.align)
    assert.equal(40, point.size)
    assert.equal(8, point.align)
    assert.equal(point.size, point.itemsize)
    assert.is_false(point.packed)
    local offs = {}
    for _, f in ipairs(point.fields) do offs[f.name] = f.offset end
    assert.same({ x = 0, n = 4, v = 8, inner = 24 }, offs)
    assert.same({ "x", "n", "v", "inner" }, point.names)
    assert.equal(8, point:offsetof("v"))
    assert.same({ 3 }, point.fields[3].shape)
    assert.same({}, point.fields[1].shape)
    assert.equal(3, point.fields[3].count)
    assert.equal("float32", point.fields[1].dtype)
    assert.equal(inner, point.fields[4].dtype)
  end)

  it("agrees with the C compiler on size, alignment and every offset", function()
    local inner = luacuda.record { { "c", "int8" }, { "d", "int16" } }
    local rec = luacuda.record {
      { "a", "bool" }, { "b", "float64" }, { "c", "int8", { 2, 3 } }, { "d", "uint16" },
      { "e", inner }, { "f", "int64" }, { "g", "float16", 3 }, { "h", "uint8" },
    }
    local names = rec.names
    local got = c_layout(rec, names)
    local want = { rec.size, rec.align }
    for _, f in ipairs(rec.fields) do want[#want + 1] = f.offset end
    assert.same(want, got)
    assert.same({ 48, 8, 0, 8, 16, 22, 24, 32, 40, 46 }, got)
  end)

  it("packs a record with {align = false}: no padding, alignment 1", function()
    local inner = luacuda.record { { "a", "int8" }, { "b", "float64" } }
    local rec = luacuda.record({ { "c", "int8" }, { "d", "float64" }, { "e", inner },
                                 { "f", "int32", 2 } }, { align = false })
    assert.equal(1, rec.align)
    assert.is_true(rec.packed)
    assert.equal(1 + 8 + 16 + 8, rec.size)
    assert.same({ 33, 1, 0, 1, 9, 25 }, c_layout(rec, { "c", "d", "e", "f" }))
    local a = luacuda.zeros(2, rec)
    a[2] = { c = -1, d = 0.5, e = { a = 3, b = 4 }, f = { 7, 8 } }
    assert.same({ c = -1, d = 0.5, e = { a = 3, b = 4.0 }, f = { 7, 8 } }, a[2]:totable())
  end)

  it("takes a record with {align = true} as the default layout", function()
    local r1 = luacuda.record({ { "c", "int8" }, { "d", "float64" } }, { align = true })
    local r2 = luacuda.record { { "c", "int8" }, { "d", "float64" } }
    assert.equal(r1, r2)
    assert.equal(16, r1.size)
  end)

  it("compares records by their fields, not by identity", function()
    local p1 = records()
    local p2 = records()
    assert.is_true(p1 == p2)
    local other = luacuda.record { { "x", "float32" }, { "n", "int64" } }
    assert.is_false(p1 == other)
    local renamed = luacuda.record { { "y", "float32" } }
    assert.is_false(luacuda.record { { "x", "float32" } } == renamed)
    -- the same fields packed: alignment 1, so another dtype
    assert.is_false(luacuda.record { { "x", "float32" } } ==
                    luacuda.record({ { "x", "float32" } }, { align = false }))
  end)

  it("prints its fields, size and alignment", function()
    local point = records()
    assert.equal("luacuda.record{x: float32, n: int32, v: float32[3], inner: record{a: int8, "
                 .. "b: float64}} (size 40, align 8)", tostring(point))
    local packed = luacuda.record({ { "m", "int16", { 2, 3 } } }, { align = false })
    assert.equal("luacuda.packed record{m: int16{2, 3}} (size 12, align 1)", tostring(packed))
  end)
end)

describe("record arrays", function()
  it("are made by every constructor, and a.dtype is the record itself", function()
    local point = records()
    for _, a in ipairs {
      luacuda.empty(3, point), luacuda.zeros({ 2, 2 }, point),
      luacuda.device_array(3, point), luacuda.device_array({ 2, 3 }, point, "F"),
      luacuda.array({ value(1), value(2) }, point),
      luacuda.to_device({ value(1), value(2) }, { dtype = point }),
      luacuda.full(2, value(5), point),
    } do
      assert.equal(point, a.dtype)
      assert.is_true(rawequal(point, a.dtype))
      assert.equal(40, a.itemsize)
      assert.equal(40 * a.size, a.nbytes)
    end
  end)

  it("keep their record alive after the record object is gone", function()
    local a = luacuda.zeros(2, (records()))
    collectgarbage()
    collectgarbage()
    a[1] = value(3)
    assert.equal(3.0, a[1].x)
    assert.equal(40, a.dtype.size)
  end)

  it("read an element as a 0-d view and its fields as values", function()
    local point = records()
    local a = luacuda.zeros(3, point)
    a[2] = value(1.5)
    local e = a[2]
    assert.equal("array", luacuda.type(e))
    assert.equal(0, e.ndim)
    assert.equal(1.5, e.x)
    assert.equal(2, e.n)
    assert.equal(2.5, e.inner.b)
    assert.equal(0, e.inner.ndim)
    assert.same(value(1.5), e:totable())
    assert.same(value(1.5), e:item())
    assert.same({ zero(), value(1.5), zero() }, a:totable())
  end)

  it("write one field through a view, and nothing else", function()
    local point = records()
    local a = luacuda.array({ value(1), value(2) }, point)
    a[1].x = 5
    a[2].inner.a = -3
    a[2].inner = { a = 4, b = 0.25 }
    local want1, want2 = value(5), value(2)
    want2.inner = { a = 4, b = 0.25 }
    assert.same({ want1, want2 }, a:totable())
  end)

  it("give sub-array fields as views sharing the memory", function()
    local point = records()
    local a = luacuda.zeros(2, point)
    local v = a[2].v
    assert.same({ 3 }, v.shape)
    assert.equal("float32", v.dtype)
    v[3] = 9
    assert.equal(9.0, a[2]:totable().v[3])
    a[1].v = { 4, 5, 6 }
    assert.same({ 4, 5, 6 }, a[1].v:totable())
    a[1].v = 1
    assert.same({ 1, 1, 1 }, a[1].v:totable())
  end)

  it("give a field across all elements as a strided view", function()
    local point = records()
    local a = luacuda.array({ value(1), value(2), value(3) }, point)
    local xs = a.x
    assert.same({ 3 }, xs.shape)
    assert.same({ 40 }, xs.strides)
    assert.same({ 1, 2, 3 }, xs:totable())
    assert.same({ 3, 3 }, a.v.shape)
    a.n = 7
    assert.same({ 7, 7, 7 }, a.n:totable())
    a.x = luacuda.array({ 10, 20, 30 }, "float32")
    assert.same({ 10, 20, 30 }, a.x:totable())
  end)

  it("assign a whole element from a table, a slice from a table of tables", function()
    local point = records()
    local a = luacuda.zeros(3, point)
    a[{ { 2, 3 } }] = { value(1), value(2) }
    assert.same({ zero(), value(1), value(2) }, a:totable())
    a[{ { 1, 2 } }] = value(7)         -- one record broadcast, as a scalar is
    assert.same({ value(7), value(7), value(2) }, a:totable())
    a:fill(value(4))
    assert.same({ value(4), value(4), value(4) }, a:totable())
  end)

  it("work the same on 2-d arrays and on views", function()
    local point = records()
    local a = luacuda.zeros({ 2, 3 }, point)
    a[{ 2, 3 }] = value(6)
    assert.equal(6.0, a[{ 2, 3 }].x)
    local col = a[{ {}, 3 }]
    assert.same({ 0, 6 }, col.x:totable())
    local t = a:totable()
    assert.same(value(6), t[2][3])
  end)

  it("exist on the device: elements, fields and copies both ways", function()
    local point = records()
    local d = luacuda.to_device({ value(1), value(2) }, { dtype = point })
    assert.equal("device", d.kind)
    assert.equal(2.0, d[2].x)
    d[1].n = 9
    d[2] = value(8)
    assert.same({ 9, 2 }, d.n:totable())
    local h = d:copy_to_host()
    assert.equal("host", h.kind)
    local want = value(1)
    want.n = 9
    assert.same({ want, value(8) }, h:totable())
    h[1] = value(3)
    d:copy_to_device(h)
    assert.same({ value(3), value(8) }, d:totable())
    local back = luacuda.zeros(2, point)
    d:copy_to_host(back)
    assert.same(d:totable(), back:totable())
  end)

  it("copy between records that are equal but separately made", function()
    local p1 = records()
    local p2 = records()
    local a = luacuda.array({ value(1) }, p1)
    local b = luacuda.empty(1, p2)
    b[{ {} }] = a
    assert.same(a:totable(), b:totable())
    local d = luacuda.to_device(a, { dtype = p2 })
    assert.same(a:totable(), d:totable())
  end)

  it("are read and written by a kernel through a pointer to the struct", function()
    local point = records()
    local src = point:c_declaration("Point") .. [[
      extern "C" __global__ void shift(Point *p, int n, float dx) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { p[i].x += dx; p[i].v[2] = p[i].inner.b * 2; p[i].inner.a = (int8_t)i; }
      }
    ]]
    local m = luacuda.compile(src)
    local d = luacuda.to_device({ value(1), value(2), value(3) }, { dtype = point })
    m.shift[{ 1, 32 }](d, 3, 0.5)
    local t = d:totable()
    for i = 1, 3 do
      local want = value(i + 0.5)
      want.v[3] = 5
      want.inner.a = i - 1
      assert.same(want, t[i])
    end
  end)
end)

describe("record arrays in page-locked, mapped and managed memory", function()
  it("are made, read and written on every kind", function()
    local point = records()
    for _, make in ipairs({ luacuda.pinned_array, luacuda.mapped_array, luacuda.managed_array }) do
      local a = make(2, point)
      a[1] = value(1)
      a[2] = value(2)
      a[2].x = 7
      assert.equal(7, a[2].x)
      local want = value(7)
      assert.same({ value(1), want }, a:totable())
      assert.same({ value(1), want }, luacuda.to_device(a):copy_to_host():totable())
    end
  end)

  it("are written by a queued kernel and read from Lua with no synchronize", function()
    local point = records()
    local m = luacuda.compile(point:c_declaration("Point") .. [[
      extern "C" __global__ void bump(Point *p, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { p[i].n += 10; p[i].inner.b = -1; }
      }
    ]])
    for _, make in ipairs({ luacuda.mapped_array, luacuda.managed_array }) do
      local a = make(3, point)
      for i = 1, 3 do a[i] = value(i) end
      m.bump[{ 1, 32 }](a, 3)
      assert.equal(12, a[3].n)
      assert.equal(-1, a[1].inner.b)
    end
  end)
end)

describe("DeviceRecord (a 0-d record array)", function()
  it("comes from to_device of one record table, and goes back whole", function()
    local point = records()
    local r = luacuda.to_device(value(4), { dtype = point })
    assert.equal("device", r.kind)
    assert.equal(0, r.ndim)
    assert.equal(4.0, r.x)
    assert.same(value(4), r:totable())
    local h = r:copy_to_host()
    assert.equal(0, h.ndim)
    assert.same(value(4), h:totable())
    h.x = 6
    r:copy_to_device(h)
    assert.equal(6.0, r.x)
    r:copy_to_device(value(7))
    assert.same(value(7), r:totable())
    r[{}] = value(8)
    assert.same(value(8), r:item())
  end)

  it("comes from luacuda.array on the host", function()
    local point = records()
    local h = luacuda.array(value(2), point)
    assert.equal("host", h.kind)
    assert.equal(0, h.ndim)
    assert.same(value(2), h:totable())
  end)

  it("is passed to a kernel as a pointer to the struct", function()
    local point = records()
    local m = luacuda.compile(point:c_declaration("Point") .. [[
      extern "C" __global__ void k(Point *p) { p->n = p->v[0] + p->v[1] + p->v[2]; }
    ]])
    local r = luacuda.to_device(value(1), { dtype = point })
    m.k[{ 1, 1 }](r)
    assert.equal(6, r.n)
  end)
end)

describe("c_declaration", function()
  it("declares nested structs first, with explicit alignment and padding", function()
    local point = records()
    local src = point:c_declaration("Point")
    local inner_at = src:find("struct alignas(8) Point_inner {", 1, true)
    local outer_at = src:find("struct alignas(8) Point {", 1, true)
    assert.truthy(inner_at)
    assert.truthy(outer_at)
    assert.truthy(inner_at < outer_at)
    assert.truthy(src:find("unsigned char __lc_pad0[7];", 1, true))
    assert.truthy(src:find("float v[3];", 1, true))
    assert.truthy(src:find("Point_inner inner;", 1, true))
    assert.truthy(src:find("static_assert(sizeof(Point) == 40 && alignof(Point) == 8", 1, true))
  end)

  it("marks a packed record packed", function()
    local rec = luacuda.record({ { "c", "int8" }, { "d", "float64" } }, { align = false })
    assert.truthy(rec:c_declaration("P"):find("struct __attribute__((packed)) P {", 1, true))
  end)

  local major = luacuda.nvrtc_version()
  local with_nvrtc = major and it or pending
  with_nvrtc("gives source that NVRTC compiles too", function()
    local point = records()
    local packed = luacuda.record({ { "c", "int8" }, { "p", point }, { "h", "float16", 2 } },
                                  { align = false })
    local src = point:c_declaration("Point") .. packed:c_declaration("Packed") .. [[
      extern "C" __global__ void k(Point *p, Packed *q) { p->x = q->p.inner.b + q->c; }
    ]]
    local ptx = luacuda.ptx(src)
    assert.truthy(ptx:find(".entry k", 1, true) or ptx:find(".entry k(", 1, true))
  end)

  it("refuses a name that is not a C identifier", function()
    local point = records()
    S.misuse({ "luacuda.c_declaration", "must be a C identifier", "'1x'" },
             point.c_declaration, point, "1x")
    S.misuse({ "luacuda.c_declaration", "got nil" }, point.c_declaration, point)
  end)
end)

describe("field names that are also array fields", function()
  it("read and write the record's field; luacuda.attr reaches the array's", function()
    local rec = luacuda.record { { "size", "int32" }, { "shape", "float32", 2 }, { "copy", "int8" } }
    local a = luacuda.zeros(3, rec)
    a[2] = { size = 5, shape = { 1, 2 }, copy = 1 }
    assert.equal(5, a[2].size)
    assert.same({ 0, 5, 0 }, a.size:totable())
    assert.same({ 3, 2 }, a.shape.shape)
    assert.equal(3, luacuda.attr(a, "size"))
    assert.same({ 3 }, luacuda.attr(a, "shape"))
    local c = luacuda.attr(a, "copy")(a)
    assert.same(a:totable(), c:totable())
    assert.is_nil(luacuda.attr(a, "nothing"))
    a[1].size = 8
    assert.equal(8, a[1].size)
    -- tostring still works
    assert.truthy(tostring(a):find("size = 8", 1, true))
    -- other names stay the array's
    assert.equal(1, a.ndim)
    -- a failed call on such an array leaves it as it was (S.misuse snapshots it)
    S.misuse({ "luacuda.setitem", "missing field 'copy'" },
             function(arr) arr[1] = { size = 1, shape = { 1, 1 } } end, a)
  end)
end)

describe("printing records", function()
  it("shows each element's fields in order", function()
    local point = records()
    local a = luacuda.array({ value(1), value(2.5) }, point)
    assert.equal("luacuda.array(kind=host, dtype=record{x: float32, n: int32, v: float32[3], "
                 .. "inner: record{a: int8, b: float64}}, shape={2})\n"
                 .. "{{x = 1.0, n = 2, v = {1.0, 2.0, 3.0}, inner = {a = 1, b = 2.5}},\n"
                 .. " {x = 2.5, n = 2, v = {1.0, 2.0, 3.0}, inner = {a = 1, b = 2.5}}}",
                 tostring(a))
    assert.equal("luacuda.array(kind=host, dtype=record{x: float32, n: int32, v: float32[3], "
                 .. "inner: record{a: int8, b: float64}}, shape={})\n"
                 .. "{x = 2.5, n = 2, v = {1.0, 2.0, 3.0}, inner = {a = 1, b = 2.5}}",
                 tostring(a[2]))
  end)

  it("aligns each field as a column of its own, as NumPy does", function()
    local rec = luacuda.record({ { "x", "float64" }, { "n", "int16" }, { "ok", "bool" }, { "v", "float32", 2 } })
    local a = luacuda.array({ { x = 1, n = 2, ok = true, v = { 1, 2 } },
                              { x = 2.25, n = -300, ok = false, v = { 1e-5, 2 } } }, rec)
    assert.equal("{{x = 1.0 , n =    2, ok =  true, v = {1.0e+00, 2.0e+00}},\n"
                 .. " {x = 2.25, n = -300, ok = false, v = {1.0e-05, 2.0e+00}}}",
                 (tostring(a):gsub("^[^\n]*\n", "")))
  end)
end)

describe("record misuse", function()
  local function point() return (records()) end

  it("refuses bad definitions", function()
    S.misuse({ "luacuda.record", "at least one field" }, luacuda.record, {})
    S.misuse({ "luacuda.record", "expected a table of fields", "got string" }, luacuda.record, "x")
    S.misuse({ "luacuda.record", "duplicate field name 'x'" }, luacuda.record,
             { { "x", "float32" }, { "x", "int32" } })
    S.misuse({ "luacuda.record", "field 'x': unknown dtype 'float128'" }, luacuda.record,
             { { "x", "float128" } })
    S.misuse({ "luacuda.record", "field 'x': the dtype must be a dtype name or a record",
               "got number" }, luacuda.record, { { "x", 4 } })
    S.misuse({ "luacuda.record", "field 1 must be a sequence {name, dtype [, shape]}" },
             luacuda.record, { { name = "x", dtype = "float32" } })
    S.misuse({ "luacuda.record", "field 2 must be a table" }, luacuda.record,
             { { "x", "float32" }, "y" })
    S.misuse({ "luacuda.record", "'int' is not a usable field name" }, luacuda.record,
             { { "int", "float32" } })
    S.misuse({ "luacuda.record", "'my field' is not a usable field name" }, luacuda.record,
             { { "my field", "float32" } })
    S.misuse({ "luacuda.record", "field 1: the name must be a string, got number" },
             luacuda.record, { { 1, "float32" } })
    S.misuse({ "luacuda.record", "field 'v': shape entry 1 must be at least 1, got 0" },
             luacuda.record, { { "v", "float32", 0 } })
    S.misuse({ "luacuda.record", "field 'v': shape entry 2 must be an integer" },
             luacuda.record, { { "v", "float32", { 2, "x" } } })
    S.misuse({ "luacuda.record", "the fields must be a sequence", "got a key x" },
             luacuda.record, { x = "float32" })
    S.misuse({ "luacuda.record", "unknown option aligned" }, luacuda.record,
             { { "x", "float32" } }, { aligned = false })
    S.misuse({ "luacuda.record", "option align must be a boolean, got number" }, luacuda.record,
             { { "x", "float32" } }, { align = 1 })
  end)

  it("refuses element values with missing, unknown or mistyped fields", function()
    local a = luacuda.array({ value(1), value(2) }, point())
    local function set(arr, k, v) arr[k] = v end
    local v = value(9)
    v.n = nil
    S.misuse({ "luacuda.setitem", "missing field 'n'" }, set, a, 1, v)
    v = value(9)
    v.inner.b = nil
    S.misuse({ "luacuda.setitem", "missing field 'inner.b'" }, set, a, 1, v)
    v = value(9)
    v.y = 1
    S.misuse({ "luacuda.setitem", "unknown field 'y'" }, set, a, 1, v)
    v = value(9)
    v.x = "one"
    S.misuse({ "luacuda.setitem", "field 'x': float32 needs a number, got string" }, set, a, 1, v)
    v = value(9)
    v.n = 1.5
    S.misuse({ "luacuda.setitem", "field 'n': int32 needs an integer, got 1.5" }, set, a, 2, v)
    v = value(9)
    v.v = { 1, 2 }
    S.misuse({ "luacuda.setitem", "field 'v' needs a table of 3 entries, got 2" }, set, a, 1, v)
    v = value(9)
    v.inner = 5
    S.misuse({ "luacuda.setitem", "field 'inner' needs a table of fields, got number" },
             set, a, 1, v)
    S.misuse({ "luacuda.setitem", "a record needs a table of fields, got number" }, set, a, 1, 5)
    local d = luacuda.to_device(a)
    v = value(9)
    v.inner.a = 300
    S.misuse({ "luacuda.setitem", "field 'inner.a': 300 is out of range for int8" }, set, d, 2, v)
    S.misuse({ "luacuda.setitem", "float32 needs a number, got boolean" },
             function() a[1].x = true end)
  end)

  it("refuses a bad table for a record array, naming the element", function()
    local p = point()
    local bad = { value(1), value(2) }
    bad[2].z = 0
    S.misuse({ "luacuda.array", "element {2}: unknown field 'z'" }, luacuda.array, bad, p)
    S.misuse({ "luacuda.to_device", "element {1}: a record needs a table of fields, got number" },
             luacuda.to_device, { 1, 2 }, { dtype = p })
    S.misuse({ "luacuda.to_device", "missing field 'x'" }, luacuda.to_device, {}, { dtype = p })
  end)

  it("refuses copies between different records and scalar dtypes", function()
    local a = luacuda.zeros(2, point())
    local other = luacuda.zeros(2, luacuda.record { { "x", "float32" } })
    local f = luacuda.zeros(2, "float32")
    local function assign(dst, src) dst[{ {} }] = src end
    S.misuse({ "luacuda.setitem", "dtype mismatch", "record{x: float32}" }, assign, a, other)
    S.misuse({ "luacuda.setitem", "dtype mismatch" }, assign, f, a)
    S.misuse({ "luacuda.to_device", "dtype mismatch" }, luacuda.to_device, a,
             { dtype = "float32" })
  end)

  it("refuses record dtypes where they mean nothing", function()
    S.misuse({ "luacuda.arange", "has no range of values" }, luacuda.arange, 3, point())
    S.misuse({ "luacuda.ones", "a record dtype has no one" }, luacuda.ones, 3, point())
    S.misuse({ "luacuda.full", "a record needs a table of fields, got number" },
             luacuda.full, 3, 0, point())
  end)

  it("refuses an unknown field on assignment, and reads it as nil", function()
    local a = luacuda.zeros(2, point())
    assert.is_nil(a[1].nothing)
    S.misuse({ "luacuda.setitem", "cannot assign to field 'nothing'" },
             function() a[1].nothing = 1 end)
    S.misuse({ "luacuda.offsetof", "the record has no field 'q'" }, a.dtype.offsetof, a.dtype, "q")
  end)

  it("refuses a record array for a float* and a float array for a Point*", function()
    local p = point()
    local m = luacuda.compile(p:c_declaration("Point") .. [[
      extern "C" __global__ void k(Point *pts, float *out) { out[0] = pts[0].x; }
    ]])
    local d = luacuda.device_array(2, p)
    local f = luacuda.device_array(2, "float32")
    S.misuse({ "kernel 'k' argument 1 'pts' (Point *)", "expected an array of records (struct Point), got float32" },
             function() m.k[{ 1, 1 }](f, f) end)
    S.misuse({ "kernel 'k' argument 2 'out' (float *)", "expected a float32 array, got record{x: float32" },
             function() m.k[{ 1, 1 }](d, d) end)
    S.misuse({ "kernel 'k' argument 1", "a host array cannot be passed" },
             function() m.k[{ 1, 1 }](luacuda.zeros(2, p), f) end)
  end)
end)
