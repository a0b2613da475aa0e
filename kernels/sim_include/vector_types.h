// vector_types.h for luacuda's simulator. CUDA's vector types:
// char1 to double4, their unsigned and long forms, and dim3.
// The simulator builds all of that into every compilation
// (kernels/sim_runtime.h, kernels/sim_math.h), as NVRTC does, so this file
// only lets a source that includes the toolkit's header compile unchanged.
#ifndef LUACUDA_SIM_VECTOR_TYPES_H
#define LUACUDA_SIM_VECTOR_TYPES_H

#ifndef __LC_SIM__
#error "this vector_types.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#endif
