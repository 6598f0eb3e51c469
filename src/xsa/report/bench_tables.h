#pragma once
// xsa-bench's tables, built from its records (xsa/records/bench.h) through the report's column descriptors
// (xsa/report/columns.h) and rendered like every other table. Torch-free.
#include "xsa/records/bench.h"
#include "xsa/report/table.h"

namespace xsa::report {

// The tables, each available as soon as its measurements are: the matmul rates, the fp32 step breakdown
// (with MFU against the 1-thread peak and each variant's step time over SA's), the bf16 one (with its
// speed-up over fp32), the two scaling sweeps and the fused kernel per instruction set (with GFLOP/s of the
// causal half and the speed-up over the baseline compilation at the same shape).
Table gemm_table(const BenchResults& results);
Table steps_table(const BenchResults& results);
Table steps_bf16_table(const BenchResults& results);
Table by_seq_len_table(const BenchResults& results);
Table by_d_model_table(const BenchResults& results);
Table flash_kernels_table(const BenchResults& results);

}  // namespace xsa::report
