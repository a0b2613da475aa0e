// cuda_bf16.hpp for luacuda's simulator: all of it is in cuda_bf16.h.
#include "cuda_bf16.h"
