rockspec_format = "3.0"
package = "luacuda"
version = "scm-1"
source = {
  url = "git+https://github.com/luacuda/luacuda.git",
}
description = {
  summary = "GPU arrays and GPU kernels for Lua 5.4",
  detailed = [[
Device arrays, pinned and mapped host memory, streams and kernels written as
CUDA C strings and compiled at run time, with a CPU simulator backend that
runs the same scripts where there is no GPU.]],
  homepage = "https://github.com/luacuda/luacuda",
  license = "MIT",
  labels = { "cuda", "gpu", "array" },
}
-- Linux: the simulator's fibers, dlopen of the driver, NVRTC and the BLAS
supported_platforms = { "linux" }
dependencies = {
  "lua >= 5.4, < 5.5",
}
-- `luarocks test`: the specs, on the module built in the source tree
test_dependencies = { "busted" }
test = {
  type = "command",
  command = "make check",
}
build = {
  type = "make",
  -- into the rock's own directory (`luarocks show --rock-dir luacuda`):
  -- the documentation, the examples and the kernel-side headers (the
  -- module has these built in; the copies are to read and to #include)
  copy_directories = { "docs", "examples", "kernels" },
  -- the Makefile is the one build; luarocks passes its compiler settings
  build_variables = {
    CFLAGS = "$(CFLAGS)",
    LIBFLAG = "$(LIBFLAG)",
    LUA_INCDIR = "$(LUA_INCDIR)",
  },
  install_variables = {
    INST_LIBDIR = "$(LIBDIR)",
    INST_LUADIR = "$(LUADIR)",
    -- the C API's header (luacuda.h), in the rock's own directory:
    -- `luarocks show --rock-dir luacuda`/include
    INST_INCDIR = "$(PREFIX)/include",
  },
}
