#pragma once
// The build functions of the report's sections (internal to xsa/report; sections.cpp registers them).
#include "xsa/report/columns.h"
#include "xsa/report/sections.h"

namespace xsa::report {

// The model, attention-implementation and learning-rate columns of a group key, each defined once. All three
// are never pooled, so every per-group table shows them: one folder may hold two model sizes or two lrs
// (lr_control, the size sweeps), two folders may hold two implementations (the fused kernel and the explicit
// reference), and their rows must not read alike.
inline ColumnDef<GroupKey> model_column() {
  return {{"model", "model"}, [](const GroupKey& k) { return Cell(model_with_setup(k)); }};
}
inline ColumnDef<GroupKey> attention_impl_column() {
  return {{"attention_impl", "attention"}, [](const GroupKey& k) { return Cell(choice_name(k.impl)); }};
}
inline ColumnDef<GroupKey> lr_column() {
  return {{"lr", "lr", Column::kShortest}, [](const GroupKey& k) { return Cell(k.lr); }};
}
// The batch size of a per-length group (pooled groups have none: an empty cell).
inline ColumnDef<GroupKey> batch_column() {
  return {{"batch", "batch"}, [](const GroupKey& k) { return k.batch_size ? Cell(*k.batch_size) : Cell(); }};
}
// A key column for rows whose group key `key(row)` returns.
template <class Row, class Key>
ColumnDef<Row> of_key(const ColumnDef<GroupKey>& def, Key key) {
  return {def.column, [key, cell = def.cell](const Row& r) { return cell(key(r)); }};
}
// model, attention, lr: the setup columns of a per-group row.
template <class Row, class Key>
Columns<Row> setup_columns(Key key) {
  return {of_key<Row>(model_column(), key), of_key<Row>(attention_impl_column(), key),
          of_key<Row>(lr_column(), key)};
}

// baseline, λ, steps, then model, attention, lr: the head of a per-group row whose group `group(row)`
// returns.
template <class Row, class GroupOf>
Columns<Row> group_head_columns(GroupOf group) {
  Columns<Row> columns = {
      {{"baseline", "baseline"}, [group](const Row& r) { return Cell(group(r).key.baseline); }},
      {{"lambda", "λ"}, [group](const Row& r) { return Cell(group(r).key.label); }},
      {{"steps", "steps"}, [group](const Row& r) { return Cell(group(r).key.steps); }},
  };
  append(columns, setup_columns<Row>([group](const Row& r) -> const GroupKey& { return group(r).key; }));
  return columns;
}

// seq_len and batch of a per-length group: the columns that keep two lengths (or two length designs) apart.
template <class Row, class Key>
Columns<Row> length_columns(Key key) {
  return {{{"seq_len", "seq_len"}, [key](const Row& r) { return Cell(*key(r).seq_len); }},
          of_key<Row>(batch_column(), key)};
}

// The paired Δ of a row, `delta(row)`: its mean (`mean_key`, headed `mean_header`) and 95% CI bounds, signed,
// at `decimals`.
template <class Row, class Delta>
Columns<Row> delta_ci_columns(const std::string& mean_key, const std::string& mean_header, int decimals,
                              Delta delta) {
  return {{{mean_key, mean_header, decimals, true}, [delta](const Row& r) { return Cell(delta(r).mean); }},
          {{"delta_ci_low", "Δ 95% CI low", decimals, true},
           [delta](const Row& r) { return opt_cell(delta(r).low); }},
          {{"delta_ci_high", "Δ 95% CI high", decimals, true},
           [delta](const Row& r) { return opt_cell(delta(r).high); }}};
}

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
      of_key<BudgetHead>(batch_column(), [](const BudgetHead& h) -> const GroupKey& { return h.key; }),
      {{"budgets", "steps"}, [](const BudgetHead& h) { return Cell(h.budgets); }},
  };
  Columns<Row> out = columns_of<Row>(columns, head);
  append(out, setup_columns<Row>([head](const Row& r) -> const GroupKey& { return head(r).key; }));
  return out;
}

// sections_comparisons.cpp
void build_paired(const SectionInputs& in, Table& t);
void build_by_lambda(const SectionInputs& in, Table& t);
void build_by_budget(const SectionInputs& in, Table& t);
void build_by_seq_len(const SectionInputs& in, Table& t);
void build_lr_selection(const SectionInputs& in, Table& t);
void build_setup_selection(const SectionInputs& in, Table& t);
void build_setup_effect(const SectionInputs& in, Table& t);
void build_setup_effect_by_lr(const SectionInputs& in, Table& t);
void build_eval_curve(const SectionInputs& in, Table& t);
void build_loss_by_position(const SectionInputs& in, Table& t);
void build_verdicts(const SectionInputs& in, Table& t);
void build_notes(const SectionInputs& in, Table& t);
// sections_trends.cpp
void build_budget_trend(const SectionInputs& in, Table& t);
void build_budget_trend_change(const SectionInputs& in, Table& t);
void build_seq_len_trend(const SectionInputs& in, Table& t);
void build_size_trend(const SectionInputs& in, Table& t);
void build_lr_change(const SectionInputs& in, Table& t);
// sections_bias.cpp
void build_bias_init(const SectionInputs& in, Table& t);
void build_bias_final(const SectionInputs& in, Table& t);
void build_bias_depth(const SectionInputs& in, Table& t);
void build_bias_budget_change(const SectionInputs& in, Table& t);
void build_learned_lambda(const SectionInputs& in, Table& t);
// sections_dynamics.cpp
void build_plateau_escape(const SectionInputs& in, Table& t);
void build_dynamics(const SectionInputs& in, Table& t);
void build_dynamics_summary(const SectionInputs& in, Table& t);

}  // namespace xsa::report
