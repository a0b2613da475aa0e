-- luacuda.save and luacuda.load: NumPy's .npy files. Round trips of every
-- dtype, records, C and Fortran order, views and memory kinds; files
-- written here byte by byte (header versions, big-endian data, bad files);
-- and NumPy itself (Debian's /usr/bin/python3 with python3-numpy) reading
-- what luacuda wrote and writing what luacuda reads, compared bit for bit.
local luacuda = require "luacuda"
local S = require "spec.support"

-- (without the sanitizer runtime make test-asan preloads into every child)
local PYTHON = "env -u LD_PRELOAD -u ASAN_OPTIONS /usr/bin/python3"
local HAVE_NUMPY = S.sh(PYTHON .. " -c 'import numpy'")
local NO_NUMPY = "/usr/bin/python3 cannot import numpy (apt-get install python3-numpy)"

-- every dtype, from the module's own table, and those NumPy has a code for
local DTYPES, NUMPY_DTYPES = {}, {}
for name, row in pairs(require("luacuda.core")._dtypes()) do
  DTYPES[#DTYPES + 1] = name
  if row.numpy then NUMPY_DTYPES[#NUMPY_DTYPES + 1] = name end
end
table.sort(DTYPES)
table.sort(NUMPY_DTYPES)

-- Element k (0-based, C order) of the sample arrays; the NumPy script
-- below computes the same values.
local function value(k, dtype)
  if dtype == "bool" then return k % 3 == 0 end
  if dtype:match("^int") then return (k * 7) % 100 - 50 end
  if dtype:match("^uint") then return (k * 7) % 200 end
  if k == 1 then return -0.0 end
  if k == 2 then return math.huge end
  if k == 3 then return -math.huge end
  return (k - 7) * 0.25
end

local function sample(dtype, shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local t = {}
  for k = 0, n - 1 do t[k + 1] = value(k, dtype) end
  if #shape == 0 then return luacuda.array(t[1], dtype) end
  if n == 0 then return luacuda.zeros(shape, dtype) end
  return luacuda.array(t, dtype):reshape(shape)
end

-- The elements' bytes in C order, as a string.
local function bytes(a)
  local c = a:copy_to_host()
  if c.ndim ~= 1 then c = c:reshape({ c.size }) end
  local u = c:view("uint8"):totable()
  local parts = {}
  for i = 1, #u, 4096 do
    parts[#parts + 1] = string.char(table.unpack(u, i, math.min(i + 4095, #u)))
  end
  return table.concat(parts)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A file's version, header text and data, read the format's way.
local function parts(s)
  local major = s:byte(7)
  local len, start
  if major == 1 then len, start = string.unpack("<I2", s, 9), 11
  else len, start = string.unpack("<I4", s, 9), 13 end
  return major, s:sub(start, start + len - 1), s:sub(start + len), start - 1
end

-- A .npy file from its parts: header text padded as NumPy pads it.
local function npy(header, data, major)
  major = major or 1
  local prefix = major == 1 and 10 or 12
  local hlen = #header + 1
  local pad = 64 - (prefix + hlen) % 64
  local len = major == 1 and string.pack("<I2", hlen + pad) or string.pack("<I4", hlen + pad)
  return "\x93NUMPY" .. string.char(major, 0) .. len .. header .. (" "):rep(pad) .. "\n" .. (data or "")
end

local function header(descr, shape, fortran)
  return ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }"):format(descr,
    fortran and "True" or "False", shape)
end

local dir
local function path(name) return dir .. "/" .. name .. ".npy" end

local function files()
  local out = {}
  local p = io.popen("ls -A " .. dir)
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  table.sort(out)
  return out
end

before_each(function() dir = S.tmpdir() end)
after_each(function() os.execute("rm -rf " .. dir) end)

describe("luacuda.save and luacuda.load", function()
  it("round-trip every dtype NumPy has, bit for bit, in every rank", function()
    assert.is_true(#NUMPY_DTYPES >= 12)
    for _, dt in ipairs(NUMPY_DTYPES) do
      for _, shape in ipairs { {}, { 0 }, { 5 }, { 2, 3 }, { 2, 1, 3 } } do
        local a = sample(dt, shape)
        luacuda.save(path("rt"), a)
        local b = luacuda.load(path("rt"))
        assert.equal(dt, b.dtype)
        assert.equal("host", b.kind)
        assert.same(a.shape, b.shape)
        assert.equal(bytes(a), bytes(b))
      end
    end
  end)

  it("write NumPy's header: version 1.0, descr, order, shape, data at 64 bytes", function()
    local a = sample("float32", { 2, 3 })
    luacuda.save(path("h"), a)
    local major, text, data, start = parts(read(path("h")))
    assert.equal(1, major)
    assert.equal(0, (start + #text) % 64)
    assert.equal("\n", text:sub(-1))
    assert.equal("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", text:match("^(.-)%s*$"))
    assert.equal(bytes(a), data)
    luacuda.save(path("h"), sample("int16", { 7 }))
    assert.truthy(read(path("h")):find("'descr': '<i2', 'fortran_order': False, 'shape': (7,), }", 1, true))
    luacuda.save(path("h"), sample("bool", {}))
    assert.truthy(read(path("h")):find("'descr': '|b1', 'fortran_order': False, 'shape': (), }", 1, true))
    luacuda.save(path("h"), sample("uint8", { 1 }))
    assert.truthy(read(path("h")):find("'|u1'", 1, true))
  end)

  it("refuse bfloat16, which NumPy has no code for, and leave no file", function()
    local a = luacuda.zeros(3, "bfloat16")
    S.misuse("luacuda.save: " .. path("bf") .. ": dtype bfloat16 has no NumPy type code",
             luacuda.save, path("bf"), a)
    assert.is_false(S.exists(path("bf")))
    -- a record holding one, too; and a failed save keeps the file it would replace
    luacuda.save(path("bf"), sample("int8", { 3 }))
    local before = read(path("bf"))
    local rec = luacuda.record { { "x", "float32" }, { "h", "bfloat16" } }
    S.misuse("dtype bfloat16 has no NumPy type code", luacuda.save, path("bf"), luacuda.zeros(2, rec))
    assert.equal(before, read(path("bf")))
    assert.same({ "bf.npy" }, files())
  end)

  -- issue 29: a temporary file renamed over the path replaced links,
  -- FIFOs and devices with a regular file, and reset the mode
  describe("write into the file the path names, as numpy.save", function()
    local function sh(cmd) assert(os.execute(cmd), cmd) end
    local function is(test, p) return os.execute(("test %s '%s'"):format(test, p)) == true end
    local function mode(p) return select(2, S.sh(("stat -c %%a '%s'"):format(p))):match("%d+") end
    local function saved(a)                    -- the bytes save writes for a
      luacuda.save(path("ref"), a)
      local s = read(path("ref"))
      os.remove(path("ref"))
      return s
    end

    it("keeps an existing file's mode", function()
      luacuda.save(path("m"), sample("int8", { 3 }))
      sh("chmod 600 " .. path("m"))
      luacuda.save(path("m"), sample("float64", { 4 }))
      assert.equal("600", mode(path("m")))
      assert.equal(saved(sample("float64", { 4 })), read(path("m")))
    end)

    it("writes through a symbolic link into its target, a dangling one too", function()
      luacuda.save(path("target"), sample("int8", { 3 }))
      sh(("ln -s %s %s"):format(path("target"), path("link")))
      luacuda.save(path("link"), sample("int32", { 5 }))
      assert.is_true(is("-L", path("link")))
      assert.equal(saved(sample("int32", { 5 })), read(path("target")))
      sh(("ln -s %s %s"):format(path("made"), path("dangling")))
      luacuda.save(path("dangling"), sample("int16", { 2 }))
      assert.is_true(is("-L", path("dangling")))
      assert.equal(saved(sample("int16", { 2 })), read(path("made")))
    end)

    it("writes into a hard link, which both names then read", function()
      luacuda.save(path("one"), sample("int8", { 3 }))
      sh(("ln %s %s"):format(path("one"), path("two")))
      luacuda.save(path("two"), sample("uint16", { 6 }))
      assert.equal(saved(sample("uint16", { 6 })), read(path("one")))
      assert.equal(read(path("one")), read(path("two")))
    end)

    it("writes into a FIFO, and a reader that leaves early is an error, not SIGPIPE", function()
      local fifo = dir .. "/fifo"
      sh("mkfifo " .. fifo)
      local a = sample("float32", { 2, 3 })
      local reader = io.popen("cat " .. fifo)  -- opens the FIFO's other end
      luacuda.save(fifo, a)
      assert.equal(saved(a), reader:read("a"))
      reader:close()
      assert.is_true(is("-p", fifo))
      -- a reader that takes 10 bytes and goes: the rest is EPIPE
      reader = io.popen("head -c 10 " .. fifo .. " >/dev/null")
      S.misuse("luacuda.save: " .. fifo .. ": cannot write the file: Broken pipe",
               luacuda.save, fifo, luacuda.zeros(1 << 20, "float64"))
      reader:close()
      assert.is_true(is("-p", fifo))
    end)

    it("writes into a device node and keeps it one", function()
      if not S.sh("test \"$(id -u)\" = 0") then return pending("needs root to make device nodes") end
      sh(("mknod %s/null c 1 3 && mknod %s/full c 1 7"):format(dir, dir))
      luacuda.save(dir .. "/null", sample("int8", { 3 }))
      assert.is_true(is("-c", dir .. "/null"))
      S.misuse("luacuda.save: " .. dir .. "/full: cannot write the file: No space left on device",
               luacuda.save, dir .. "/full", sample("int8", { 3 }))
      assert.is_true(is("-c", dir .. "/full"))
    end)

    it("removes a file it made when the write fails, and leaves no other file", function()
      -- a file size limit (SIGXFSZ ignored): the write fails with EFBIG
      local ok, out = S.lua_run("trap '' XFSZ; ulimit -f 16;", ([==[
        local luacuda = require "luacuda"
        local ok, err = pcall(luacuda.save, %q, luacuda.zeros(4096, "float64"))
        print(ok, err)
      ]==]):format(path("big")))
      assert(ok, out)
      assert.truthy(out:find("cannot write the file: File too large", 1, true), out)
      assert.same({}, files())
    end)
  end)

  it("round-trip records as structured dtypes: padding, packed, nested, sub-arrays", function()
    local inner = luacuda.record { { "a", "int8" }, { "b", "float64" } }
    local recs = {
      luacuda.record { { "x", "int8" }, { "n", "int32" }, { "v", "float32", { 2, 3 } } },
      luacuda.record({ { "x", "int8" }, { "n", "int32" }, { "d", "float64" } }, { align = false }),
      luacuda.record { { "p", "uint16" }, { "in", inner, 2 }, { "f", "bool" } },
      luacuda.record { { "h", "float16" }, { "q", "uint64" } },
    }
    for _, rec in ipairs(recs) do
      local a = luacuda.zeros({ 2, 2 }, rec)
      local first = rec.fields[1]
      a[first.name] = sample(first.dtype, { 2, 2 })
      luacuda.save(path("rec"), a)
      local b = luacuda.load(path("rec"))
      assert.equal(rec, b.dtype)
      assert.equal(rec.packed, b.dtype.packed)
      assert.same({ 2, 2 }, b.shape)
      assert.equal(bytes(a), bytes(b))
    end
    -- the padding is written as NumPy writes it: fields named '' of void bytes
    luacuda.save(path("rec"), luacuda.zeros(1, recs[1]))
    assert.truthy(read(path("rec")):find(
      "[('x', '|i1'), ('', '|V3'), ('n', '<i4'), ('v', '<f4', (2, 3))]", 1, true))
    luacuda.save(path("rec"), luacuda.zeros(1, recs[4]))
    assert.truthy(read(path("rec")):find("[('h', '<f2'), ('', '|V6'), ('q', '<u8')]", 1, true))
  end)

  it("save F-contiguous arrays in Fortran order, other views in C order", function()
    local c = sample("float64", { 3, 4 })
    local f = c:transpose()                       -- F-contiguous {4, 3}
    luacuda.save(path("f"), f)
    local _, text, data = parts(read(path("f")))
    assert.truthy(text:find("'fortran_order': True, 'shape': (4, 3)", 1, true))
    assert.equal(bytes(c), data)                  -- Fortran order of f is C order of c
    local g = luacuda.load(path("f"))
    assert.same({ 4, 3 }, g.shape)
    assert.same({ 8, 32 }, g.strides)             -- loaded F-strided, not transposed
    assert.same(f:totable(), g:totable())
    -- a strided view: a C-order copy
    local v = c[{ {}, { 1, 4, 2 } }]
    luacuda.save(path("v"), v)
    _, text, data = parts(read(path("v")))
    assert.truthy(text:find("'fortran_order': False, 'shape': (3, 2)", 1, true))
    assert.equal(bytes(v), data)
    assert.same(v:totable(), luacuda.load(path("v")):totable())
    -- a reversed view
    local r = c[{ { 3, 1, -1 } }]
    luacuda.save(path("r"), r)
    assert.same(r:totable(), luacuda.load(path("r")):totable())
  end)

  it("save every kind of memory and load into every kind", function()
    local host = sample("int32", { 3, 5 })
    local makers = {
      pinned = function() local a = luacuda.pinned_array({ 3, 5 }, "int32"); a[{}] = host; return a end,
      mapped = function() local a = luacuda.mapped_array({ 3, 5 }, "int32"); a[{}] = host; return a end,
      managed = function() local a = luacuda.managed_array({ 3, 5 }, "int32"); a[{}] = host; return a end,
      device = function() return luacuda.to_device(host) end,
    }
    for kind, make in pairs(makers) do
      local a = make()
      assert.equal(kind, a.kind)
      luacuda.save(path(kind), a)
      assert.equal(bytes(host), bytes(luacuda.load(path(kind))))
      local b = luacuda.load(path(kind), { kind = kind })
      assert.equal(kind, b.kind)
      assert.equal(bytes(host), bytes(b))
      -- a Fortran-order file into this kind keeps its strides
      luacuda.save(path("f" .. kind), host:transpose())
      local ft = luacuda.load(path("f" .. kind), { kind = kind })
      assert.equal(kind, ft.kind)
      assert.same({ 4, 20 }, ft.strides)
      assert.same(host:transpose():totable(), ft:copy_to_host():totable())
    end
    assert.equal("host", luacuda.load(path("device"), { kind = "host" }).kind)
  end)

  it("wait for the work queued on an array before saving it", function()
    local s = luacuda.stream()
    local n = 1 << 16
    local d = luacuda.device_array(n, "float32")
    d:fill(0)
    d:fill(2.5, s)                                -- queued, not waited for
    luacuda.save(path("async"), d)
    local b = luacuda.load(path("async"))
    assert.equal(n, b.size)
    assert.equal(2.5 * n, b:sum())
    local m = luacuda.mapped_array(n, "float32")
    m:fill(0)
    m:fill(1.5, s)
    luacuda.save(path("async"), m)
    assert.equal(1.5 * n, luacuda.load(path("async")):sum())
    s:synchronize()
  end)

  it("write version 2.0 when the header is too long for 1.0", function()
    local fields = {}
    for i = 1, 4000 do fields[i] = { ("field_%04d"):format(i), "float32" } end
    local rec = luacuda.record(fields)
    local a = luacuda.zeros(2, rec)
    a.field_0007 = luacuda.array({ 1.5, -2 }, "float32")
    luacuda.save(path("v2"), a)
    local s = read(path("v2"))
    local major, text = parts(s)
    assert.equal(2, major)
    assert.truthy(#text > 65535)
    local b = luacuda.load(path("v2"))
    assert.equal(rec, b.dtype)
    assert.same({ 1.5, -2 }, b.field_0007:totable())
  end)

  it("read headers of versions 1.0, 2.0 and 3.0 (UTF-8)", function()
    local data = string.pack("<i4<i4<i4", 7, -8, 9)
    for major = 1, 3 do
      write(path("ver"), npy(header("'<i4'", "(3,)"), data, major))
      local a = luacuda.load(path("ver"))
      assert.same({ 7, -8, 9 }, a:totable())
    end
    -- latin-1 (1.0) and UTF-8 (3.0) text in a field name: read, then refused by name
    write(path("ver"), npy(header("[('caf\xe9', '<i4')]", "(1,)"), string.pack("<i4", 1), 1))
    S.misuse("'caf\xc3\xa9' is not a usable field name", luacuda.load, path("ver"))
    write(path("ver"), npy(header("[('caf\xc3\xa9', '<i4')]", "(1,)"), string.pack("<i4", 1), 3))
    S.misuse("'caf\xc3\xa9' is not a usable field name", luacuda.load, path("ver"))
    -- what NumPy's writers also put in: Python 2's 3L, escapes, double quotes, no trailing comma
    write(path("ver"), npy("{\"descr\": '<i\\x34', 'shape': (3L,), 'fortran_order': False}", data))
    assert.same({ 7, -8, 9 }, luacuda.load(path("ver")):totable())
  end)

  it("byte-swap big-endian data, records too, and make bools 0 or 1", function()
    write(path("be"), npy(header("'>i4'", "(2,)"), string.pack(">i4>i4", 123456789, -2)))
    assert.same({ 123456789, -2 }, luacuda.load(path("be")):totable())
    write(path("be"), npy(header("'>f8'", "(2, 1)"), string.pack(">d>d", 1.25, -3e300)))
    assert.same({ { 1.25 }, { -3e300 } }, luacuda.load(path("be")):totable())
    write(path("be"), npy(header("'>f2'", "(1,)"), "\x3c\x00"))   -- 1.0 in half
    assert.same({ 1.0 }, luacuda.load(path("be")):totable())
    write(path("be"), npy(header("'>u8'", "()"), string.pack(">I8", 0x0102030405060708)))
    assert.equal(0x0102030405060708, luacuda.load(path("be")):item())
    write(path("be"), npy(header("[('a', '>u2'), ('b', '<u2'), ('c', '>i4', (2,))]", "(2,)"),
      string.pack(">I2<I2>i4>i4", 258, 258, -1, 70000) .. string.pack(">I2<I2>i4>i4", 1, 2, 3, 4)))
    local r = luacuda.load(path("be"))
    assert.equal(luacuda.record { { "a", "uint16" }, { "b", "uint16" }, { "c", "int32", 2 } }, r.dtype)
    assert.same({ { a = 258, b = 258, c = { -1, 70000 } }, { a = 1, b = 2, c = { 3, 4 } } }, r:totable())
    write(path("be"), npy(header("'|b1'", "(3,)"), "\0\2\1"))
    local bools = luacuda.load(path("be"))
    assert.same({ false, true, true }, bools:totable())
    assert.same({ 0, 1, 1 }, bools:view("uint8"):totable())
  end)

  it("read the dict form of a structured dtype when a record has its layout", function()
    write(path("dict"), npy(header(
      "{'names': ['x', 'n'], 'formats': ['|i1', '<i4'], 'offsets': [0, 4], 'itemsize': 8}", "(1,)"),
      string.pack("<i1xxx<i4", -3, 99)))
    local a = luacuda.load(path("dict"))
    assert.equal(luacuda.record { { "x", "int8" }, { "n", "int32" } }, a.dtype)
    assert.same({ { x = -3, n = 99 } }, a:totable())
  end)

  it("refuse bad files with the path and the cause, and no crash", function()
    local cases = {
      { "", "the file is empty" },
      { "hello, world", "not a .npy file" },
      { "\x80\x04\x95\x00", "a Python pickle, not a .npy file" },
      { "PK\x03\x04rest", "a zip archive" },
      { "\x93NUM", "truncated: the file ends inside its header" },
      { "\x93NUMPY\x01\x00\x40", "truncated: the file ends inside its header" },
      { "\x93NUMPY\x01\x00\x40\x00{'descr'", "truncated: the file ends inside its header" },
      { "\x93NUMPY\x04\x00\x00\x00", "unsupported .npy version 4.0" },
      { "\x93NUMPY\x02\x00\xff\xff\xff\xff", "the header claims 4294967295 bytes" },
      { npy(header("'|O'", "(2,)"), "\0\0"), "Python objects ('|O', stored as a pickle)" },
      { npy(header("'<c16'", "(1,)")), "complex numbers ('<c16') have no luacuda dtype" },
      { npy(header("'<U3'", "(1,)")), "dtype '<U3' has no luacuda equivalent" },
      { npy(header("'|V8'", "(1,)")), "a raw void dtype ('|V8') has no luacuda equivalent" },
      { npy(header("'<f4'", "(3,)"), "\0\0\0\0"), "truncated: the header promises 12 bytes of data, the file holds 4" },
      { npy(header("'<f8'", "(1000000000000,)")), "the header promises 8000000000000 bytes of data, the file holds 0" },
      { npy("{'descr': '<f4', 'shape': (3,)}"), "the header lacks the key 'fortran_order'" },
      { npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}"),
        "the header has an unexpected key 'x'" },
      { npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}"),
        "'fortran_order' must be True or False, got an integer" },
      { npy(header("'<f4'", "(-1,)")), "the shape has a negative size" },
      { npy(header("'<f4'", "[3]")), "the shape must be a tuple, got a list" },
      { npy(header("'<f4'", "(" .. ("1, "):rep(33) .. ")")), "the shape has 33 axes" },
      { npy(header("'<f4'", "(4611686018427387904, 4)")), "the array is too large" },
      -- a zero-length axis does not hide the others, as for zeros (issue 29)
      { npy(header("'<f4'", "(0, 4611686018427387904, 4)")), "the array is too large" },
      { npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }junk"),
        "not a valid Python literal: text after the dict" },
      { npy("{'descr': '<f4' 'fortran_order': False}"), "not a valid Python literal" },
      { npy("{'descr': '<f4, 'fortran_order': False}"), "not a valid Python literal" },
      { npy(("[" ):rep(100)), "the header nests more than 64 deep" },
      { npy(header("[('a', '<f4'), ('a', '<i4')]", "(1,)")), "duplicate field name 'a'" },
      { npy(header("[(('t', 'a'), '<f4')]", "(1,)")), "field 1 has a title" },
      { npy(header("[('', '<f4')]", "(1,)")), "field 1 has no name" },
      { npy(header("[('', '|V4')]", "(1,)")), "the structured dtype has no fields" },
      { npy(header("[('a', '|V4')]", "(1,)")), "field 'a' is raw bytes" },
      { npy(header("[('a', '|i1'), ('', '|V1'), ('b', '<i4')]", "(1,)")),
        "the structured dtype's layout is no luacuda record's" },
      { npy(header("[('a', '<f4', (0,))]", "(1,)")), "shape entry 1 must be at least 1" },
    }
    for i, case in ipairs(cases) do
      write(path("bad"), case[1])
      local err = S.misuse({ "luacuda.load: " .. path("bad") .. ": ", case[2] }, luacuda.load, path("bad"))
      assert(err, i)
    end
    write(path("bad"), npy(header("[('a', '|i1'), ('', '|V1'), ('b', '<i4')]", "(1,)")))
    local err = S.misuse("luacuda.load: " .. path("bad"), luacuda.load, path("bad"))
    assert.truthy(err:find("an aligned record puts field 'b' at byte 4, the file at 2", 1, true))
    assert.truthy(err:find("a packed one puts field 'b' at byte 1, the file at 2", 1, true))
  end)

  it("refuse malformed structured dtypes, in the list and the dict forms", function()
    local huge = "(137438953472,)"      -- 2^40 bytes of float64 per field
    local cases = {
      { npy(header("[" .. ("('a', '<f4'), "):rep(8193) .. "]", "(1,)"), nil, 2),
        "the structured dtype has more than 4096 fields" },
      { npy(header("['a']", "(1,)")),
        "field 1 of the structured dtype must be a tuple (name, descr [, shape]), got a string" },
      { npy(header("[('a', '<f8', " .. huge .. "), ('b', '<f8', " .. huge .. ")]", "(1,)")),
        "the structured dtype is too large" },
      { npy(header("{'names': ['a', 'b'], 'formats': [('<f8', " .. huge .. "), ('<f8', " .. huge
                   .. ")]}", "(1,)")), "the structured dtype is too large" },
      { npy(header("{'names': ['a'], 'formats': ['<f4'], 'x': 1}", "(1,)")),
        "the structured dtype's dict has an unknown key 'x'" },
      { npy(header("{'names': ['a'], 'formats': []}", "(1,)")),
        "the structured dtype's dict needs lists 'names' and 'formats' of the same length" },
      { npy(header("{'names': ['a'], 'formats': ['<f4'], 'offsets': [0, 4]}", "(1,)")),
        "the structured dtype's 'offsets' must be a list with an offset for each name" },
      { npy(header("{'names': ['a'], 'formats': ['<f4'], 'itemsize': 'x'}", "(1,)")),
        "the structured dtype's 'itemsize' must be an integer" },
      { npy(header("{'names': ['a'], 'formats': ['<f4'], 'titles': ['t']}", "(1,)")),
        "the structured dtype has titles, which luacuda records do not have" },
      { npy(header("{'names': [1], 'formats': ['<f4']}", "(1,)")),
        "name 1 of the structured dtype must be a string" },
      { npy(header("{'names': ['a'], 'formats': [('<f4', (2,), 3)]}", "(1,)")),
        "format 1 must be a descr or (descr, shape)" },
      { npy(header("{'names': ['a'], 'formats': ['<f4'], 'offsets': [-1]}", "(1,)")),
        "offset 1 of the structured dtype must be a non-negative integer" },
      { npy(header("{'names': ['a'], 'formats': ['<f8'], 'itemsize': 4}", "(1,)")),
        "the structured dtype's itemsize 4 is smaller than its fields (8 bytes)" },
      { npy(header("3", "(1,)")), "a descr must be a string, a list or a dict, got an integer" },
    }
    for i, case in ipairs(cases) do
      write(path("bad"), case[1])
      local err = S.misuse({ "luacuda.load: " .. path("bad") .. ": ", case[2] }, luacuda.load, path("bad"))
      assert(err, i)
    end
  end)

  it("refuse a stream (a pipe) that ends before the data the header promises", function()
    local fifo = dir .. "/pipe.npy"
    assert(os.execute("mkfifo " .. fifo))
    write(path("short"), npy(header("'<f4'", "(3,)"), "\0\0\0\0"))
    -- the writer waits for the reader to open the pipe
    assert(os.execute(("cat %s > %s &"):format(path("short"), fifo)))
    S.misuse({ "luacuda.load: " .. fifo .. ": ",
               "truncated: the header promises 12 bytes of data, the file holds fewer" },
             luacuda.load, fifo)
  end)

  it("check their arguments", function()
    S.misuse("luacuda.load: " .. dir .. "/none.npy: No such file or directory", luacuda.load,
             dir .. "/none.npy")
    S.misuse("luacuda.load: " .. dir .. ": cannot read: Is a directory", luacuda.load, dir)
    S.misuse("luacuda.load: path must be a string, got no value", luacuda.load)
    S.misuse("luacuda.load: kind must be 'host', 'pinned', 'mapped', 'managed' or 'device', got 'gpu'",
             luacuda.load, path("x"), { kind = "gpu" })
    S.misuse("luacuda.load: unknown option", luacuda.load, path("x"), { knd = "host" })
    S.misuse("luacuda.save: path must be a string, got number", luacuda.save, 1, luacuda.zeros(1))
    S.misuse("luacuda.save: expected an array, got table", luacuda.save, path("x"), { 1, 2 })
    local closed = luacuda.zeros(2)
    closed:close()
    S.misuse("luacuda.save: attempt to use a closed array", luacuda.save, path("x"), closed)
    S.misuse("luacuda.save: " .. dir .. "/no/such/dir/x.npy: cannot create the file: No such file or directory",
             luacuda.save, dir .. "/no/such/dir/x.npy", luacuda.zeros(1))
    S.misuse("luacuda.save: " .. dir .. ": cannot open the file: Is a directory",
             luacuda.save, dir, luacuda.zeros(1))
    assert.same({}, files())                       -- nothing left behind
  end)
end)

-- NumPy's side: a script that writes files for luacuda and checks the
-- files luacuda wrote, computing the same sample values.
local NUMPY_SCRIPT = [==[
import sys, numpy as np
from numpy.lib import format as fmt
mode, d = sys.argv[1], sys.argv[2]

def value(k, dt):
    if dt == 'bool': return k % 3 == 0
    if dt.startswith('int'): return (k * 7) % 100 - 50
    if dt.startswith('uint'): return (k * 7) % 200
    return {1: -0.0, 2: np.inf, 3: -np.inf}.get(k, (k - 7) * 0.25)

def sample(dt, shape):
    n = int(np.prod(shape))
    return np.array([value(k, dt) for k in range(n)], dtype=dt).reshape(shape)

inner = np.dtype([('a', 'i1'), ('b', '<f8')], align=True)
RECS = {
    'rec_aligned': np.dtype([('x', 'i1'), ('n', '<i4'), ('v', '<f4', (2, 3))], align=True),
    'rec_packed': np.dtype([('x', 'i1'), ('n', '<i4'), ('d', '<f8')]),
    'rec_nested': np.dtype([('p', '<u2'), ('in', inner, (2,)), ('f', '?')], align=True),
}

def record_sample(dt, order='C'):
    a = np.zeros((2, 2), dt, order=order)     # zeros: NumPy's copies leave padding undefined
    first = dt.names[0]
    a[first] = sample(dt[first].name, (2, 2))
    return a

if mode == 'check':     # files luacuda wrote: name, dtype and shape are in the file name list
    ok = 0
    for line in open(d + '/manifest'):
        name, dt, shape, order = line.split()
        shape = tuple(int(s) for s in shape.split(',') if s != '-')
        a = np.load(d + '/' + name + '.npy')
        want = record_sample(RECS[dt]) if dt in RECS else sample(dt, shape)
        if name == 'lc_view': want = sample(dt, (4, 6))[0:4:2, 1::3]
        bad = []
        if a.dtype != want.dtype: bad.append('dtype %s, expected %s' % (a.dtype, want.dtype))
        if a.shape != want.shape: bad.append('shape %s, expected %s' % (a.shape, want.shape))
        is_f = a.flags.f_contiguous and not a.flags.c_contiguous
        if (order == 'F') != is_f: bad.append('order: F-contiguous is %s' % is_f)
        if not bad and a.tobytes(order='C') != want.tobytes(order='C'): bad.append('the bytes differ')
        print('FAIL %s: %s' % (name, '; '.join(bad)) if bad else 'ok ' + name)
        ok += not bad
    print('checked %d' % ok)
else:                   # files for luacuda: name.npy and the C-order bytes in name.bin
    def put(name, a, version=None, c_bytes=None):
        with open(d + '/' + name + '.npy', 'wb') as f:
            fmt.write_array(f, a, version=version)
        with open(d + '/' + name + '.bin', 'wb') as f:
            little = a if a.dtype.isnative else a.astype(a.dtype.newbyteorder('<'))
            f.write(c_bytes if c_bytes is not None else np.ascontiguousarray(little).tobytes())
        print(name, a.dtype.name if a.dtype.names is None else 'record',
              ','.join(str(s) for s in a.shape), 'F' if a.flags.f_contiguous and not a.flags.c_contiguous else 'C')
    for dt in sys.argv[3:]:
        put('np_' + dt, sample(dt, (2, 3)))
    put('np_0d', sample('float64', ()))
    put('np_empty', sample('int16', (0, 4)))
    put('np_fortran', np.asfortranarray(sample('float64', (3, 4))))
    put('np_fortran3', np.asfortranarray(sample('int32', (2, 3, 4))))
    put('np_big_i4', sample('int32', (5,)).astype('>i4'))
    put('np_big_f8', sample('float64', (5,)).astype('>f8'))
    put('np_big_f2', sample('float16', (5,)).astype('>f2'))
    put('np_v2', sample('uint16', (3, 2)), version=(2, 0))
    put('np_v3', sample('float32', (4,)), version=(3, 0))
    for name, dt in sorted(RECS.items()):
        put('np_' + name, record_sample(dt))
    put('np_rec_fortran', record_sample(RECS['rec_aligned'], 'F'),
        c_bytes=record_sample(RECS['rec_aligned']).tobytes())
    big = np.dtype([('a', '>i4'), ('b', '<f8'), ('c', '>u2', (3,))])
    r = np.zeros(4, big)
    r['a'] = [1, -2, 3, -4]; r['b'] = [0.5, 1.5, -2.5, 1e300]; r['c'] = [[1, 2, 3]] * 4
    put('np_rec_bigendian', r)
]==]

describe("NumPy and luacuda", function()
  local ndir
  local function python(args)
    local script = ndir .. "/check.py"
    write(script, NUMPY_SCRIPT)
    return S.sh(PYTHON .. " " .. script .. " " .. args)
  end

  before_each(function() ndir = S.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. ndir) end)

  it("NumPy reads what luacuda writes: every dtype, records, orders, views, kinds", function()
    if not HAVE_NUMPY then return pending(NO_NUMPY) end
    local manifest = {}
    local function put(name, a, dt, order)
      luacuda.save(ndir .. "/" .. name .. ".npy", a)
      local shape = #a.shape > 0 and table.concat(a.shape, ",") or "-"
      manifest[#manifest + 1] = ("%s %s %s %s"):format(name, dt, shape, order or "C")
    end
    for _, dt in ipairs(NUMPY_DTYPES) do put("lc_" .. dt, sample(dt, { 2, 3 }), dt) end
    put("lc_0d", sample("float64", {}), "float64")
    put("lc_empty", sample("int16", { 0, 4 }), "int16")
    put("lc_fortran", sample("float32", { 4, 3 }):transpose():copy():transpose(), "float32", "F")
    put("lc_view", sample("int64", { 4, 6 })[{ { 1, 4, 2 }, { 2, 6, 3 } }], "int64")
    put("lc_device", luacuda.to_device(sample("uint32", { 3, 3 })), "uint32")
    put("lc_managed_fortran", (function()
      local m = luacuda.managed_array({ 3, 2 }, "float16", "F")
      m[{}] = sample("float16", { 3, 2 })
      return m
    end)(), "float16", "F")
    local inner = luacuda.record { { "a", "int8" }, { "b", "float64" } }
    local recs = {
      rec_aligned = luacuda.record { { "x", "int8" }, { "n", "int32" }, { "v", "float32", { 2, 3 } } },
      rec_packed = luacuda.record({ { "x", "int8" }, { "n", "int32" }, { "d", "float64" } }, { align = false }),
      rec_nested = luacuda.record { { "p", "uint16" }, { "in", inner, 2 }, { "f", "bool" } },
    }
    for name, rec in pairs(recs) do
      local a = luacuda.zeros({ 2, 2 }, rec)
      local first = rec.fields[1]
      a[first.name] = sample(first.dtype, { 2, 2 })
      put("lc_" .. name, a, name)
    end
    write(ndir .. "/manifest", table.concat(manifest, "\n") .. "\n")
    local ok, out = python("check " .. ndir)
    assert(ok, out)
    assert.falsy(out:find("FAIL", 1, true), out)
    assert.truthy(out:find("checked " .. #manifest, 1, true), out)
  end)

  it("luacuda reads what NumPy writes, bit for bit: every dtype, records, F order, 2.0, 3.0", function()
    if not HAVE_NUMPY then return pending(NO_NUMPY) end
    local ok, out = python("write " .. ndir .. " " .. table.concat(NUMPY_DTYPES, " "))
    assert(ok, out)
    local n = 0
    for name, dt, shape, order in out:gmatch("(%S+) (%S+) (%S*) ([CF])\n") do
      local a = luacuda.load(ndir .. "/" .. name .. ".npy")
      if dt ~= "record" then assert.equal(dt, a.dtype, name) end
      local want = {}
      for s in shape:gmatch("%d+") do want[#want + 1] = tonumber(s) end
      assert.same(want, a.shape, name)
      if order == "F" then
        assert.is_false(a.strides[1] > a.strides[#a.strides], name .. " loads F-strided")
      end
      assert(read(ndir .. "/" .. name .. ".bin") == bytes(a), name .. ": the bytes differ")
      n = n + 1
    end
    assert.equal(#NUMPY_DTYPES + 14, n)
    -- what NumPy makes of versions and byte order, seen from here
    assert.equal(2, read(ndir .. "/np_v2.npy"):byte(7))
    assert.equal(3, read(ndir .. "/np_v3.npy"):byte(7))
    assert.truthy(read(ndir .. "/np_big_f8.npy"):find("'>f8'", 1, true))
    local big = luacuda.load(ndir .. "/np_rec_bigendian.npy")
    assert.same({ a = -4, b = 1e300, c = { 1, 2, 3 } }, big[4]:totable())
  end)
end)
