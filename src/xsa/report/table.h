#pragma once
// Format-neutral tables and their three renderings (markdown, CSV, JSON), so the formats always carry the
// same numbers. Sections build these through column descriptors (xsa/report/columns.h).
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace xsa::report {

enum class Format { kMarkdown, kCsv, kJson };
// "markdown" | "md" | "csv" | "json"; anything else throws InputError.
Format parse_format(const std::string& name);

// An empty cell (std::monostate) means "not defined" (e.g. the CI of a single seed): "—" in markdown,
// an empty field in CSV, null in JSON.
using Cell = std::variant<std::monostate, std::string, double, std::int64_t>;

struct Column {
  Column(std::string key_, std::string header_, int decimals_ = 4, bool show_sign_ = false,
         std::string plus_minus_ = "")
      : key(std::move(key_)),
        header(std::move(header_)),
        decimals(decimals_),
        show_sign(show_sign_),
        plus_minus(std::move(plus_minus_)) {}

  std::string key;     // CSV header and JSON field name
  std::string header;  // markdown header
  int decimals = 4;    // markdown precision for doubles (CSV and JSON keep full precision); kShortest: %g
  static constexpr int kShortest = -1;
  bool show_sign = false;
  // Markdown only: append " ± <cell of this column>" (a CI half-width or spread column, which markdown then
  // does not show as a column of its own; CSV and JSON keep both as numbers).
  std::string plus_minus;
};

struct Table {
  std::string key;                   // the section key (xsa/report/sections.h lists them)
  std::string title;                 // markdown section heading
  std::string empty_text;            // markdown text when there are no rows
  bool as_list = false;              // markdown renders the "text" column as a bullet list instead of a table
  bool csv_omit_when_empty = false;  // CSV leaves the section out when it has no rows (the notes)
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;

  // Index of a column by key; throws std::out_of_range if absent.
  std::size_t column(const std::string& key) const;
};

struct Report {
  std::vector<Table> tables;
  const Table& table(const std::string& key) const;  // throws std::out_of_range if absent
};

// Markdown: "## title" + GitHub table per section. CSV: one block per section, blocks separated by a blank
// line; every block has its own header row whose first column is "section" and every row repeats the
// section key, so `grep '^by_lambda,'` or splitting at blank lines both work. JSON: one object
// {"schema": "xsa.inspect/1", "<section key>": [ {column key: value} ... ] ...}.
std::string render(const Report& report, Format format);
std::string render_markdown(const Report& report);
std::string render_csv(const Report& report);
std::string render_json(const Report& report);

// "%.*f" of v, with a sign when asked: the markdown spelling of a number (also used in verdict lines).
std::string fixed(double v, int decimals, bool sign = false);
// "%g" of v (a Column::kShortest cell, e.g. a learning rate: 0.003).
std::string shortest(double v, bool sign = false);

}  // namespace xsa::report
