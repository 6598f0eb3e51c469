#pragma once
// The xsa-inspect report: paired runs, comparisons grouped by λ and by sequence length (Student t CIs over
// seeds), bias metrics per layer, verdicts and notes. Built once as format-neutral tables, then rendered as
// markdown (GitHub tables), CSV or JSON, so the three formats always carry the same numbers.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "xsa/report/results.h"

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
  int decimals = 4;    // markdown precision for doubles (CSV and JSON keep full precision)
  bool show_sign = false;
  // Markdown only: append " ± <cell of this column>" (a CI half-width or spread column, which markdown then
  // does not show as a column of its own; CSV and JSON keep both as numbers).
  std::string plus_minus;
};

struct Table {
  std::string key;  // "paired", "by_lambda", "by_budget", "budget_trend", "budget_trend_change",
                    // "by_seq_len", "seq_len_trend", "eval_curve", "bias_init", "bias", "bias_budget_change",
                    // "learned_lambda", "verdicts", "notes"
  std::string title;       // markdown section heading
  std::string empty_text;  // markdown text when there are no rows
  bool as_list = false;    // markdown renders the "text" column as a bullet list instead of a table
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;

  // Index of a column by key; throws std::out_of_range if absent.
  std::size_t column(const std::string& key) const;
};

struct Report {
  std::vector<Table> tables;
  const Table& table(const std::string& key) const;  // throws std::out_of_range if absent
};

// Builds every section from the experiments (in the given order) and the discovery notes.
Report build_report(const std::vector<ExperimentResult>& experiments,
                    const std::vector<std::string>& notes = {});

// Keeps only the comparisons whose variant has one of these λ labels, as the tables print them ("1", "0.5",
// "learned", "gate"), with their baselines; experiments left without a comparison are dropped. InputError
// names a label that no variant in the experiments has.
std::vector<ExperimentResult> select_lambdas(const std::vector<ExperimentResult>& experiments,
                                             const std::string& comma_separated_labels);

// Keeps only the named sections, in the given order ("by_lambda,bias"); InputError names an unknown key.
Report select_sections(const Report& report, const std::string& comma_separated_keys);

// Markdown: "## title" + GitHub table per section. CSV: one block per section, blocks separated by a blank
// line; every block has its own header row whose first column is "section" and every row repeats the
// section key, so `grep '^by_lambda,'` or splitting at blank lines both work. JSON: one object
// {"schema": "xsa.inspect/1", "<section key>": [ {column key: value} ... ] ...}.
std::string render(const Report& report, Format format);
std::string render_markdown(const Report& report);
std::string render_csv(const Report& report);
std::string render_json(const Report& report);

}  // namespace xsa::report
