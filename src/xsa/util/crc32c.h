#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord framing uses it: a table-driven
// software implementation (Debian has no small library for it that we could link without protobuf).
// Check value: crc32c("123456789") == 0xE3069283.
#include <cstddef>
#include <cstdint>
#include <string>

namespace xsa {

std::uint32_t crc32c(const void* data, std::size_t size);
inline std::uint32_t crc32c(const std::string& bytes) {
  return crc32c(bytes.data(), bytes.size());
}

// TFRecord's masked CRC: rotate right by 15 bits and add 0xa282ead8 (a CRC of data that itself holds CRCs
// would otherwise be weak).
inline std::uint32_t masked_crc32c(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace xsa
