// cuComplex.h for luacuda's simulator: CUDA's complex numbers (float2 and
// double2 underneath) with the toolkit header's functions, computed in the
// same order of operations as the GPU, so the results are the same where
// no multiply-add is fused (NVRTC fuses a * b + c by default: a kernel
// whose products are exact, or one compiled with -fmad=false, gets the
// same bits on both backends).
#ifndef CU_COMPLEX_H_
#define CU_COMPLEX_H_

#ifndef __LC_SIM__
#error "this cuComplex.h is luacuda's simulator's; NVRTC reads the toolkit's"
#endif

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

static inline float cuCrealf(cuFloatComplex x) { return x.x; }
static inline float cuCimagf(cuFloatComplex x) { return x.y; }
static inline cuFloatComplex make_cuFloatComplex(float r, float i) { return make_float2(r, i); }
static inline cuFloatComplex cuConjf(cuFloatComplex x) { return make_float2(x.x, -x.y); }
static inline cuFloatComplex cuCaddf(cuFloatComplex x, cuFloatComplex y) {
  return make_float2(x.x + y.x, x.y + y.y);
}
static inline cuFloatComplex cuCsubf(cuFloatComplex x, cuFloatComplex y) {
  return make_float2(x.x - y.x, x.y - y.y);
}
static inline cuFloatComplex cuCmulf(cuFloatComplex x, cuFloatComplex y) {
  return make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
// the quotient with both operands scaled by 1 / (|re y| + |im y|) first,
// against overflow and underflow on the way
static inline cuFloatComplex cuCdivf(cuFloatComplex x, cuFloatComplex y) {
  float inv = 1.0f / (fabsf(y.x) + fabsf(y.y));
  float xr = x.x * inv, xi = x.y * inv, yr = y.x * inv, yi = y.y * inv;
  float inv2 = 1.0f / (yr * yr + yi * yi);
  return make_float2((xr * yr + xi * yi) * inv2, (xi * yr - xr * yi) * inv2);
}
// |x| as the larger part times sqrt(1 + (smaller / larger)^2)
static inline float cuCabsf(cuFloatComplex x) {
  float a = fabsf(x.x), b = fabsf(x.y);
  float v = a > b ? a : b, w = a > b ? b : a;
  float t = w / v;
  t = v * sqrtf(1.0f + t * t);
  if (v == 0.0f || v > 3.402823466e38f || w > 3.402823466e38f) t = v + w;
  return t;
}

static inline double cuCreal(cuDoubleComplex x) { return x.x; }
static inline double cuCimag(cuDoubleComplex x) { return x.y; }
static inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return make_double2(r, i); }
static inline cuDoubleComplex cuConj(cuDoubleComplex x) { return make_double2(x.x, -x.y); }
static inline cuDoubleComplex cuCadd(cuDoubleComplex x, cuDoubleComplex y) {
  return make_double2(x.x + y.x, x.y + y.y);
}
static inline cuDoubleComplex cuCsub(cuDoubleComplex x, cuDoubleComplex y) {
  return make_double2(x.x - y.x, x.y - y.y);
}
static inline cuDoubleComplex cuCmul(cuDoubleComplex x, cuDoubleComplex y) {
  return make_double2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
static inline cuDoubleComplex cuCdiv(cuDoubleComplex x, cuDoubleComplex y) {
  double inv = 1.0 / (fabs(y.x) + fabs(y.y));
  double xr = x.x * inv, xi = x.y * inv, yr = y.x * inv, yi = y.y * inv;
  double inv2 = 1.0 / (yr * yr + yi * yi);
  return make_double2((xr * yr + xi * yi) * inv2, (xi * yr - xr * yi) * inv2);
}
static inline double cuCabs(cuDoubleComplex x) {
  double a = fabs(x.x), b = fabs(x.y);
  double v = a > b ? a : b, w = a > b ? b : a;
  double t = w / v;
  t = v * sqrt(1.0 + t * t);
  if (v == 0.0 || v > 1.79769313486231570e+308 || w > 1.79769313486231570e+308) t = v + w;
  return t;
}

static inline cuComplex make_cuComplex(float x, float y) { return make_cuFloatComplex(x, y); }
static inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) {
  return make_double2((double)c.x, (double)c.y);
}
static inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) {
  return make_float2((float)c.x, (float)c.y);
}
// x * y + d, the real part's two products added one after the other
static inline cuComplex cuCfmaf(cuComplex x, cuComplex y, cuComplex d) {
  float re = x.x * y.x + d.x, im = x.x * y.y + d.y;
  re = -(x.y * y.y) + re;
  im = x.y * y.x + im;
  return make_cuComplex(re, im);
}
static inline cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) {
  double re = x.x * y.x + d.x, im = x.x * y.y + d.y;
  re = -(x.y * y.y) + re;
  im = x.y * y.x + im;
  return make_cuDoubleComplex(re, im);
}

#endif  // CU_COMPLEX_H_
