"""AlgoJudge's `standard-io@1` problem type (docs/algojudge.md §10): the
package, its configuration, the languages, the checker's answer, the score,
the verdict and the `details` document.

Pure code: no HTTP, no Docker. The AlgoJudge edge (runner/backend/algojudge)
turns a claimed job into the dispatcher's work with it, and the work's
results into a report.
"""
