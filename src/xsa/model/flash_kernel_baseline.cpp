// The fused attention kernel for the target's default instruction set (flash_kernel.h).
#define XSA_FLASH_NAMESPACE baseline
#include "xsa/model/flash_kernel.inl"
