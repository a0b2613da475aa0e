// cuda_fp16.hpp for luacuda's simulator: all of it is in cuda_fp16.h.
#include "cuda_fp16.h"
