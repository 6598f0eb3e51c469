#pragma once
// The build functions of the report's sections (internal to xsa/report; sections.cpp registers them).
#include "xsa/report/columns.h"
#include "xsa/report/sections.h"

namespace xsa::report {

// A budget series and the budgets a row covers: the first columns of every table over budget_series.
struct BudgetHead {
  GroupKey key;
  std::string budgets;  // "300 1200 2400"
};
template <class Row>
Columns<Row> budget_head_columns() {
  auto head = [](const Row& r) -> const BudgetHead& { return r.head; };
  const Columns<BudgetHead> columns = {
      {{"baseline", "baseline"}, [](const BudgetHead& h) { return Cell(h.key.baseline); }},
      {{"lambda", "λ"}, [](const BudgetHead& h) { return Cell(h.key.label); }},
      {{"seq_len", "seq_len"}, [](const BudgetHead& h) { return Cell(*h.key.seq_len); }},
      {{"batch", "batch"}, [](const BudgetHead& h) { return Cell(*h.key.batch_size); }},
      {{"budgets", "steps"}, [](const BudgetHead& h) { return Cell(h.budgets); }},
  };
  return columns_of<Row>(columns, head);
}

// sections_comparisons.cpp
void build_paired(const SectionInputs& in, Table& t);
void build_by_lambda(const SectionInputs& in, Table& t);
void build_by_budget(const SectionInputs& in, Table& t);
void build_by_seq_len(const SectionInputs& in, Table& t);
void build_lr_selection(const SectionInputs& in, Table& t);
void build_eval_curve(const SectionInputs& in, Table& t);
void build_verdicts(const SectionInputs& in, Table& t);
void build_notes(const SectionInputs& in, Table& t);
// sections_trends.cpp
void build_budget_trend(const SectionInputs& in, Table& t);
void build_budget_trend_change(const SectionInputs& in, Table& t);
void build_seq_len_trend(const SectionInputs& in, Table& t);
void build_size_trend(const SectionInputs& in, Table& t);
// sections_bias.cpp
void build_bias_init(const SectionInputs& in, Table& t);
void build_bias_final(const SectionInputs& in, Table& t);
void build_bias_budget_change(const SectionInputs& in, Table& t);
void build_learned_lambda(const SectionInputs& in, Table& t);

}  // namespace xsa::report
