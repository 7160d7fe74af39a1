"""AlgoJudge's `standard-io@1` problem type (docs/algojudge.md §10): the
package, its configuration, the languages and who is built at all, the
score, the verdict and the `details` document. How an output is compared
by tokens and what an SIO2 checker's answer means are the sandbox's
(sandbox/compare.py, sandbox/graders/checker.py): it judges the cases.

Pure code: no HTTP, no Docker. The AlgoJudge edge (runner/backend/algojudge)
turns a claimed job into the dispatcher's work with it, and the work's
results into a report.
"""
