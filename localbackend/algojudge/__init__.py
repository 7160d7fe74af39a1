"""A bundled AlgoJudge server (docs/algojudge.md): enough of one to judge
the samples end to end and to hold a runner to every rule of the contract
that it can see (`Store.violations`)."""
