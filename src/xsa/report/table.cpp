#include "xsa/report/table.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "xsa/util/error.h"

using nlohmann::json;

namespace xsa::report {

Format parse_format(const std::string& name) {
  if (name == "markdown" || name == "md") return Format::kMarkdown;
  if (name == "csv") return Format::kCsv;
  if (name == "json") return Format::kJson;
  throw InputError("--format: expected markdown, csv or json, got \"" + name + "\"");
}

std::size_t Table::column(const std::string& column_key) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].key == column_key) return i;
  throw std::out_of_range("table " + key + " has no column " + column_key);
}

const Table& Report::table(const std::string& key) const {
  for (const auto& t : tables)
    if (t.key == key) return t;
  throw std::out_of_range("report has no table " + key);
}

std::string fixed(double v, int decimals, bool sign) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", decimals, v);
  return buf;
}

std::string shortest(double v, bool sign) {
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+g" : "%g", v);
  return buf;
}

namespace {

std::string markdown_cell(const Cell& cell, const Column& col) {
  if (std::holds_alternative<std::monostate>(cell)) return "—";
  if (auto s = std::get_if<std::string>(&cell)) {
    std::string out;
    for (char c : *s) out += (c == '|') ? std::string("\\|") : std::string(1, c);
    return out;
  }
  if (auto i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  const double v = std::get<double>(cell);
  if (!std::isfinite(v)) return "nan";
  if (col.decimals == Column::kShortest) return shortest(v, col.show_sign);
  return fixed(v, col.decimals, col.show_sign);
}

std::string csv_cell(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (auto i = std::get_if<std::int64_t>(&cell)) return std::to_string(*i);
  if (auto d = std::get_if<double>(&cell)) {
    if (!std::isfinite(*d)) return "nan";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", *d);
    return buf;
  }
  const std::string& s = std::get<std::string>(cell);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

json json_cell(const Cell& cell) {
  if (auto s = std::get_if<std::string>(&cell)) return *s;
  if (auto i = std::get_if<std::int64_t>(&cell)) return *i;
  if (auto d = std::get_if<double>(&cell)) return std::isfinite(*d) ? json(*d) : json();
  return nullptr;
}

// Columns markdown shows: a column another one prints as its "± x" part is folded into it.
std::vector<std::size_t> markdown_columns(const Table& t) {
  std::set<std::string> folded;
  for (const auto& c : t.columns)
    if (!c.plus_minus.empty()) folded.insert(c.plus_minus);
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (!folded.count(t.columns[i].key)) shown.push_back(i);
  return shown;
}

std::string markdown_row_cell(const Table& t, const std::vector<Cell>& row, std::size_t i) {
  const Column& col = t.columns[i];
  std::string text = markdown_cell(row[i], col);
  if (!col.plus_minus.empty() && !std::holds_alternative<std::monostate>(row[i])) {
    const std::size_t pm = t.column(col.plus_minus);
    if (!std::holds_alternative<std::monostate>(row[pm]))
      text += " ± " + markdown_cell(row[pm], Column{col.key, col.header, col.decimals, false, ""});
  }
  return text;
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::ostringstream out;
  bool first = true;
  for (const auto& t : report.tables) {
    if (t.as_list && t.rows.empty()) continue;  // no verdicts / no notes: nothing worth a heading
    out << (first ? "" : "\n") << "## " << t.title << "\n\n";
    first = false;
    if (t.as_list) {
      const std::size_t text = t.column("text");
      for (const auto& row : t.rows) out << "- " << markdown_cell(row[text], t.columns[text]) << "\n";
      continue;
    }
    if (t.rows.empty()) {
      out << (t.empty_text.empty() ? "_No data._" : t.empty_text) << "\n";
      continue;
    }
    const std::vector<std::size_t> shown = markdown_columns(t);
    out << "|";
    for (std::size_t i : shown) out << " " << t.columns[i].header << " |";
    out << "\n|";
    for (std::size_t i = 0; i < shown.size(); ++i) out << " --- |";
    out << "\n";
    for (const auto& row : t.rows) {
      out << "|";
      for (std::size_t i : shown) out << " " << markdown_row_cell(t, row, i) << " |";
      out << "\n";
    }
  }
  return out.str();
}

std::string render_csv(const Report& report) {
  std::ostringstream out;
  bool first = true;
  for (const auto& t : report.tables) {
    if (t.rows.empty() && t.csv_omit_when_empty) continue;
    out << (first ? "" : "\n") << "section";
    first = false;
    for (const auto& c : t.columns) out << "," << csv_cell(c.key);
    out << "\n";
    for (const auto& row : t.rows) {
      out << t.key;
      for (const auto& cell : row) out << "," << csv_cell(cell);
      out << "\n";
    }
  }
  return out.str();
}

std::string render_json(const Report& report) {
  json doc;
  doc["schema"] = "xsa.inspect/1";
  for (const auto& t : report.tables) {
    json rows = json::array();
    for (const auto& row : t.rows) {
      json obj = json::object();
      for (std::size_t i = 0; i < t.columns.size(); ++i) obj[t.columns[i].key] = json_cell(row[i]);
      rows.push_back(std::move(obj));
    }
    doc[t.key] = std::move(rows);
  }
  return doc.dump(2) + "\n";
}

std::string render(const Report& report, Format format) {
  switch (format) {
    case Format::kCsv:
      return render_csv(report);
    case Format::kJson:
      return render_json(report);
    case Format::kMarkdown:
      break;
  }
  return render_markdown(report);
}

}  // namespace xsa::report
