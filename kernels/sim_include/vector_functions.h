// vector_functions.h for luacuda's simulator. The vector types'
// constructors: make_char1 to make_double4.
// The simulator builds all of that into every compilation
// (kernels/sim_runtime.h, kernels/sim_math.h), as NVRTC does, so this file
// only lets a source that includes the toolkit's header compile unchanged.
#ifndef LUACUDA_SIM_VECTOR_FUNCTIONS_H
#define LUACUDA_SIM_VECTOR_FUNCTIONS_H

#ifndef __LC_SIM__
#error "this vector_functions.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#endif
