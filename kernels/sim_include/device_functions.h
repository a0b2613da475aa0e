// device_functions.h for luacuda's simulator. CUDA's device
// functions: barriers, warp functions, fences, atomics and the intrinsics
// (__float_as_int, __popc, __byte_perm...).
// The simulator builds all of that into every compilation
// (kernels/sim_runtime.h, kernels/sim_math.h), as NVRTC does, so this file
// only lets a source that includes the toolkit's header compile unchanged.
#ifndef LUACUDA_SIM_DEVICE_FUNCTIONS_H
#define LUACUDA_SIM_DEVICE_FUNCTIONS_H

#ifndef __LC_SIM__
#error "this device_functions.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#endif
