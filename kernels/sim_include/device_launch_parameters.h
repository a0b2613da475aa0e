// device_launch_parameters.h for luacuda's simulator. A kernel's
// coordinates: threadIdx, blockIdx, blockDim, gridDim and warpSize.
// The simulator builds all of that into every compilation
// (kernels/sim_runtime.h, kernels/sim_math.h), as NVRTC does, so this file
// only lets a source that includes the toolkit's header compile unchanged.
#ifndef LUACUDA_SIM_DEVICE_LAUNCH_PARAMETERS_H
#define LUACUDA_SIM_DEVICE_LAUNCH_PARAMETERS_H

#ifndef __LC_SIM__
#error "this device_launch_parameters.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

#endif
