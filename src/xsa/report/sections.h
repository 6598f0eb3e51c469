#pragma once
// The xsa-inspect report as a registry of sections (docs/ARCHITECTURE.md "Reports"). A section is one object:
// its key (the CSV section name and JSON field), title (markdown heading), a help line (xsa-inspect --help)
// and the function that builds its rows through column descriptors (xsa/report/columns.h). The registry's
// order is the report's order; nothing else lists the sections.
#include <functional>
#include <string>
#include <vector>

#include "xsa/records/results.h"
#include "xsa/report/grouping.h"
#include "xsa/report/table.h"

namespace xsa::report {

struct SectionInputs {
  const std::vector<ExperimentResult>& experiments;
  const Grouping& grouping;
};

struct Section {
  std::string key;
  std::string title;
  std::string help;        // one line: what a row is
  std::string empty_text;  // markdown text when there are no rows ("" = "_No data._")
  bool as_list = false;    // markdown: the "text" column as a bullet list (and nothing when empty)
  bool csv_omit_when_empty = false;
  std::function<void(const SectionInputs&, Table&)> build;  // fills columns and rows
};

// Every section, in report order.
const std::vector<Section>& sections();
// "paired, by_lambda, ...": the keys joined by `separator`, for help texts and error messages.
std::string section_keys(const std::string& separator = ", ");

// Builds every section from the experiments (in the given order) and the discovery notes.
Report build_report(const std::vector<ExperimentResult>& experiments,
                    const std::vector<std::string>& notes = {});

// Keeps only the named sections, in the given order ("by_lambda,bias"); InputError names an unknown key or
// one listed twice.
Report select_sections(const Report& report, const std::string& comma_separated_keys);

// "a,b,,c" -> {"a", "b", "", "c"}: the items of a comma-separated option, as written.
std::vector<std::string> split_commas(const std::string& list);

}  // namespace xsa::report
