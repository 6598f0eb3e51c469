#pragma once
// Column descriptors: a section declares each column once, as {header, how to compute its cell from a row},
// so a column is one edit and the header, the JSON/CSV key and the cell cannot drift apart. Rows are the
// section's own typed records (a group with its statistics, a layer of bias metrics, ...).
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "xsa/report/table.h"
#include "xsa/stats/stats.h"

namespace xsa::report {

template <class Row>
struct ColumnDef {
  Column column;
  std::function<Cell(const Row&)> cell;
};
template <class Row>
using Columns = std::vector<ColumnDef<Row>>;

// The columns of a part (e.g. group statistics) for rows that hold that part: `get(row)` returns it.
template <class Row, class Part, class Get>
Columns<Row> columns_of(const Columns<Part>& part, Get get) {
  Columns<Row> out;
  for (const auto& def : part)
    out.push_back({def.column, [get, cell = def.cell](const Row& row) { return cell(get(row)); }});
  return out;
}

template <class Row>
void append(Columns<Row>& to, const Columns<Row>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

// Fills `t` with the columns and, for each row, the cell of every column.
template <class Row>
void fill_table(Table& t, const Columns<Row>& columns, const std::vector<Row>& rows) {
  t.columns.clear();
  for (const auto& def : columns) t.columns.push_back(def.column);
  for (const auto& row : rows) {
    std::vector<Cell> cells;
    cells.reserve(columns.size());
    for (const auto& def : columns) cells.push_back(def.cell(row));
    t.rows.push_back(std::move(cells));
  }
}

// A table of its own: key, title, and the columns filled from `rows`.
template <class Row>
Table make_table(const std::string& key, const std::string& title, const Columns<Row>& columns,
                 const std::vector<Row>& rows) {
  Table t;
  t.key = key;
  t.title = title;
  fill_table(t, columns, rows);
  return t;
}

// Cells of optional values: empty when absent (a CI of one seed, a mean of nothing).
inline Cell opt_cell(const std::optional<double>& v) {
  return v ? Cell(*v) : Cell();
}
inline Cell avg(const std::vector<double>& xs) {
  return xs.empty() ? Cell() : Cell(stats::mean(xs));
}
inline Cell count_cell(std::size_t n) {
  return Cell(static_cast<std::int64_t>(n));
}

}  // namespace xsa::report
