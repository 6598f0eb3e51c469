# PyTorch's DistributedDataParallel side of the benchmark's data-parallel table (GitHub issue 59):
# scripts/reference/train_ddp.py on a tiny model and token file the test makes itself (no data/ needed), 2 ranks
# under torchrun on 127.0.0.1. ddp_test.py says what each case checks: 2 ranks x half the batch train what one
# process trains (every step's loss and gradient norm within 1e-5 relative, with DDP's default buckets and with
# gradient_as_bucket_view on small ones), the configuration search and Gloo's all-reduce timing, and bad input as
# one line, exit 2. Debian's python3 with torch (scripts/setup.sh), as plots.cmake.
foreach(case equivalence measurements bad_input)
  add_test(NAME integration.ddp_${case}
    COMMAND ${XSA_PLOT_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/ddp_test.py ${case} ${CMAKE_BINARY_DIR}/test-work/ddp_${case})
  set_tests_properties(integration.ddp_${case} PROPERTIES TIMEOUT 300 LABELS "integration")
endforeach()
