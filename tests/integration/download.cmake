# scripts/download_tinystories.py (the first demo's data) against a hostile local HTTP server on 127.0.0.1 that
# serves a generated corpus: bytes fetched, the cut at a story boundary, resume (If-Range with the recorded ETag
# or Last-Modified: a file that changes between runs ends entirely the new version, never spliced), a server that
# ignores Range or If-Range, every check of a response (status, Content-Range, lengths, totals), the manifest,
# stalls, redirects, peers that do not speak HTTP, a full disk and stdout, a seeded fuzz of responses, and the
# one-line errors (download_test.py says what each check is).
add_test(NAME integration.download_head_resume_and_errors
  COMMAND ${XSA_TEST_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/download_test.py ${CMAKE_SOURCE_DIR}
    ${CMAKE_BINARY_DIR}/test-work/download)
set_tests_properties(integration.download_head_resume_and_errors PROPERTIES TIMEOUT 300 LABELS "integration")
