// The fused attention kernel compiled with -mavx2 (flash_kernel.h; CMakeLists.txt adds the flag to this file
// on x86-64 and defines XSA_FLASH_AVX2). Elsewhere this file compiles to nothing.
#if defined(XSA_FLASH_AVX2)
#if !defined(__AVX2__)
#error "flash_kernel_avx2.cpp must be compiled with -mavx2 (CMakeLists.txt)"
#endif
#define XSA_FLASH_NAMESPACE avx2
#include "xsa/model/flash_kernel.inl"
#endif
