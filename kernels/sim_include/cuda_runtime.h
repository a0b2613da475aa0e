// cuda_runtime.h for luacuda's simulator. In a kernel the toolkit's header
// gives the device side of the CUDA runtime: the vector types and their
// constructors, the kernel's coordinates, the device functions and
// intrinsics, the math API (its host API is of no use in a kernel). The
// simulator builds all of that into every compilation (kernels/sim_runtime.h,
// kernels/sim_math.h), as NVRTC does; this file includes the simulator's
// versions of the headers the toolkit's includes for them, so a source
// that includes it, or any of them, compiles unchanged.
#ifndef LUACUDA_SIM_CUDA_RUNTIME_H
#define LUACUDA_SIM_CUDA_RUNTIME_H

#ifndef __LC_SIM__
#error "this cuda_runtime.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#include "vector_types.h"
#include "vector_functions.h"
#include "device_launch_parameters.h"
#include "device_functions.h"
#include "math_functions.h"

#endif
