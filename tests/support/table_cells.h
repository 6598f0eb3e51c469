#pragma once
// A report table's cells by row and column key, typed: what the report tests assert on.
#include <cstdint>
#include <string>
#include <variant>

#include "xsa/report/table.h"

namespace xsa::testing {

inline double num(const report::Table& t, std::size_t row, const std::string& col) {
  return std::get<double>(t.rows.at(row).at(t.column(col)));
}
inline std::int64_t integer(const report::Table& t, std::size_t row, const std::string& col) {
  return std::get<std::int64_t>(t.rows.at(row).at(t.column(col)));
}
inline std::string text(const report::Table& t, std::size_t row, const std::string& col) {
  return std::get<std::string>(t.rows.at(row).at(t.column(col)));
}
inline bool empty(const report::Table& t, std::size_t row, const std::string& col) {
  return std::holds_alternative<std::monostate>(t.rows.at(row).at(t.column(col)));
}

}  // namespace xsa::testing
