// math_functions.h for luacuda's simulator. The CUDA math API:
// sqrtf, sinpif, normcdff... with CUDA's overloads, and min and max.
// The simulator builds all of that into every compilation
// (kernels/sim_runtime.h, kernels/sim_math.h), as NVRTC does, so this file
// only lets a source that includes the toolkit's header compile unchanged.
#ifndef LUACUDA_SIM_MATH_FUNCTIONS_H
#define LUACUDA_SIM_MATH_FUNCTIONS_H

#ifndef __LC_SIM__
#error "this math_functions.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#endif
