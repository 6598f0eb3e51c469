// The fused causal attention kernel (the equations: xsa/model/flash_attention.h), compiled once per
// instruction set: the including file defines XSA_FLASH_NAMESPACE. No inline function or template of a
// library header may be used here (flash_kernel.h says why): helpers below have internal linkage, maths are
// compiler builtins, scratch is raw pointers. No include guard: one inclusion per file.
#include "xsa/model/flash_attention.h"  // kQueryBlock, kKeyBlock only
#include "xsa/model/flash_kernel.h"

#ifndef XSA_FLASH_NAMESPACE
#error "define XSA_FLASH_NAMESPACE before including flash_kernel.inl"
#endif

// The CBLAS entry points of the system BLAS (Debian's libblas.so.3: OpenBLAS when installed, the reference
// BLAS otherwise; LibTorch's own matmuls go to the same library). Declared here because the runtime package
// ships no header; the enums are ints in the CBLAS ABI.
extern "C" {
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha, const double* a,
                 int lda, const double* b, int ldb, double beta, double* c, int ldc);
}

namespace xsa::flash::XSA_FLASH_NAMESPACE {

static_assert(kKeyBlock % kQueryBlock == 0,
              "a key block must start at or before every query of the query blocks that read it");

namespace {

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// C (m × n, row-major, leading dimension ldc) = alpha · op(A) · op(B) + beta · C.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(kRowMajor, trans_a ? kTrans : kNoTrans, trans_b ? kTrans : kNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// The C library's exp and log (calls, not inline code), for the few per-row values.
inline float exp_scalar(float x) {
  return __builtin_expf(x);
}
inline double exp_scalar(double x) {
  return __builtin_exp(x);
}
inline float log_scalar(float x) {
  return __builtin_logf(x);
}
inline double log_scalar(double x) {
  return __builtin_log(x);
}
template <typename scalar_t>
constexpr scalar_t minus_infinity() {
  return -static_cast<scalar_t>(__builtin_inf());
}
inline int64_t min_of(int64_t a, int64_t b) {
  return a < b ? a : b;
}
template <typename scalar_t>
void fill(scalar_t* begin, scalar_t* end, scalar_t value) {
  for (; begin != end; ++begin) *begin = value;
}

// exp(x) for the score blocks, in plain arithmetic the compiler vectorises (glibc's expf is a call per
// element: at T = 2,048 it alone took a third of the step). Cephes' expf: x = n·ln2 + r with |r| ≤ ln2/2,
// e^r by a degree-7 polynomial, 2^n through the exponent bits; relative error ≤ 2e-7 on [-87.3, 88.7]
// (score_exp's test checks it against std::exp). Inputs below -87.3 give ~1e-38,
// not 0: a weight no float sum can see. Rounding by adding 1.5·2^23 needs round-to-nearest, the default.
inline float exp_block(float x) {
  x = x < -87.3365f ? -87.3365f : x;  // ternaries, not std::min/max: those stayed branches
  x = x > 88.7228f ? 88.7228f : x;
  const float shifted = x * 1.44269504088896341f + 12582912.0f;  // round(x / ln2) in the low mantissa bits
  const float n = shifted - 12582912.0f;
  float r = x - n * 0.693359375f;  // ln2 split in two so n·ln2 is exact in its high part
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // NaN in, NaN out (through p: a NaN loss must stay visible), but never a NaN converted to int (undefined).
  const float n_finite = n == n ? n : 0.0f;
  const int32_t bits = (static_cast<int32_t>(n_finite) + 127) << 23;  // 2^n
  float two_n;
  __builtin_memcpy(&two_n, &bits, sizeof two_n);
  return p * two_n;
}
inline double exp_block(double x) {
  return exp_scalar(x);
}  // float64: the reference precision, not a fast path

float score_exp(float x) {
  return exp_block(x);
}

// Explicit lanes keep sums and maxima in one fixed order whether or not the compiler vectorises them, and
// whatever the vector width: the baseline and the AVX2 compilation give the same bits.
constexpr int kLanes = 8;

template <typename scalar_t>
scalar_t row_max(const scalar_t* s, int64_t n) {
  scalar_t lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = minus_infinity<scalar_t>();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = lane[l] < s[j + l] ? s[j + l] : lane[l];
  for (; j < n; ++j) lane[0] = lane[0] < s[j] ? s[j] : lane[0];
  scalar_t m = lane[0];
  for (int l = 1; l < kLanes; ++l) m = m < lane[l] ? lane[l] : m;
  return m;
}

template <typename scalar_t>
scalar_t row_sum(const scalar_t* s, int64_t n) {
  scalar_t lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += s[j + l];
  for (; j < n; ++j) lane[0] += s[j];
  scalar_t sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += lane[l];
  return sum;
}

// p_j = exp(s_j − shift) in place for j < n. A loop of its own so it vectorises (the file is compiled with
// -fno-trapping-math, without which GCC keeps the clamp's comparisons as branches).
template <typename scalar_t>
void exp_shifted(scalar_t* __restrict s, int64_t n, scalar_t shift) {
  for (int64_t j = 0; j < n; ++j) s[j] = exp_block(s[j] - shift);
}

// Keys a query sees in a key block starting at j0 (≥ 1: blocks start at or before the query, see the
// static_assert): the rest of its row is the masked future.
inline int64_t visible_keys(int64_t query, int64_t j0, int64_t block_keys) {
  return min_of(block_keys, query - j0 + 1);
}

template <typename scalar_t>
void forward(const scalar_t* q, const scalar_t* k, const scalar_t* v, int64_t T, int64_t D, scalar_t scale,
             scalar_t* y, scalar_t* lse, const Scratch<scalar_t>& ws) {
  scalar_t* s = ws.scores;
  fill(y, y + T * D, scalar_t(0));
  for (int64_t i0 = 0; i0 < T; i0 += kQueryBlock) {
    const int64_t rows = min_of(kQueryBlock, T - i0), i_end = i0 + rows;
    fill(ws.row_max, ws.row_max + kQueryBlock, minus_infinity<scalar_t>());
    fill(ws.row_sum, ws.row_sum + kQueryBlock, scalar_t(0));
    scalar_t* acc = y + i0 * D;  // (rows, D): the unnormalised output, rescaled as the max grows
    for (int64_t j0 = 0; j0 < i_end;
         j0 += kKeyBlock) {  // key blocks past the last query: all masked, skipped
      const int64_t keys = min_of(kKeyBlock, i_end - j0);
      gemm(false, true, rows, keys, D, scale, q + i0 * D, D, k + j0 * D, D, scalar_t(0), s,
           keys);  // (rows, keys)
      for (int64_t r = 0; r < rows; ++r) {
        scalar_t* sr = s + r * keys;
        const int64_t visible = visible_keys(i0 + r, j0, keys);
        const scalar_t m_old = ws.row_max[r];
        const scalar_t block_max = row_max(sr, visible);
        const scalar_t m_new = m_old < block_max ? block_max : m_old;
        exp_shifted(sr, visible, m_new);
        const scalar_t block_sum = row_sum(sr, visible);
        fill(sr + visible, sr + keys, scalar_t(0));  // the masked future: weight 0
        if (j0 > 0 && m_new != m_old) {              // the running max grew: rescale what was summed so far
          const scalar_t correction = exp_scalar(m_old - m_new);
          ws.row_sum[r] *= correction;
          for (int64_t d = 0; d < D; ++d) acc[r * D + d] *= correction;
        }
        ws.row_sum[r] += block_sum;
        ws.row_max[r] = m_new;
      }
      gemm(false, false, rows, D, keys, scalar_t(1), s, keys, v + j0 * D, D, scalar_t(1), acc, D);  // += p v
    }
    for (int64_t r = 0; r < rows; ++r) {
      const scalar_t inv = scalar_t(1) / ws.row_sum[r];
      for (int64_t d = 0; d < D; ++d) acc[r * D + d] *= inv;
      lse[i0 + r] = ws.row_max[r] + log_scalar(ws.row_sum[r]);
    }
  }
}

template <typename scalar_t>
void backward(const scalar_t* q, const scalar_t* k, const scalar_t* v, const scalar_t* y, const scalar_t* lse,
              const scalar_t* dy, int64_t T, int64_t D, scalar_t scale, scalar_t* dq, scalar_t* dk,
              scalar_t* dv, const Scratch<scalar_t>& ws) {
  scalar_t* p = ws.scores;
  scalar_t* ds = ws.dp;
  for (int64_t i = 0; i < T; ++i) {  // δ_i = dy_i · y_i  (= Σ_j a_ij dp_ij)
    scalar_t sum = 0;
    for (int64_t d = 0; d < D; ++d) sum += dy[i * D + d] * y[i * D + d];
    ws.delta[i] = sum;
  }
  fill(dq, dq + T * D, scalar_t(0));
  fill(dk, dk + T * D, scalar_t(0));
  fill(dv, dv + T * D, scalar_t(0));
  for (int64_t i0 = 0; i0 < T; i0 += kQueryBlock) {
    const int64_t rows = min_of(kQueryBlock, T - i0), i_end = i0 + rows;
    for (int64_t j0 = 0; j0 < i_end; j0 += kKeyBlock) {
      const int64_t keys = min_of(kKeyBlock, i_end - j0);
      gemm(false, true, rows, keys, D, scale, q + i0 * D, D, k + j0 * D, D, scalar_t(0), p, keys);  // s
      for (int64_t r = 0; r < rows; ++r) {  // p = exp(s − lse): the forward's softmax, recomputed
        scalar_t* pr = p + r * keys;
        const int64_t visible = visible_keys(i0 + r, j0, keys);
        exp_shifted(pr, visible, lse[i0 + r]);
        fill(pr + visible, pr + keys, scalar_t(0));
      }
      gemm(true, false, keys, D, rows, scalar_t(1), p, keys, dy + i0 * D, D, scalar_t(1), dv + j0 * D, D);
      gemm(false, true, rows, keys, D, scalar_t(1), dy + i0 * D, D, v + j0 * D, D, scalar_t(0), ds,
           keys);                           // dp
      for (int64_t r = 0; r < rows; ++r) {  // ds = p ∘ (dp − δ); masked entries stay 0 since p is 0 there
        const scalar_t delta = ws.delta[i0 + r];
        for (int64_t j = 0; j < keys; ++j) ds[r * keys + j] = p[r * keys + j] * (ds[r * keys + j] - delta);
      }
      gemm(false, false, rows, D, keys, scale, ds, keys, k + j0 * D, D, scalar_t(1), dq + i0 * D, D);
      gemm(true, false, keys, D, rows, scale, ds, keys, q + i0 * D, D, scalar_t(1), dk + j0 * D, D);
    }
  }
}

}  // namespace

extern const KernelSet kernels = {
    {&forward<float>, &backward<float>}, {&forward<double>, &backward<double>}, &score_exp};

}  // namespace xsa::flash::XSA_FLASH_NAMESPACE
