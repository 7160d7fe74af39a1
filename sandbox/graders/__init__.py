"""How a job's cases are judged, one module per mode: `standard` (the
program's output compared with the answer), `checker` (the problem's checker
judges it), `interactive` (the problem's interactor talks with the program).
`base` is what every grader has. A job's grader is made when it compiles
(`grader_for`) and dropped when it is released."""
from sandbox.graders.base import Context, Grader
from sandbox.graders.checker import CheckerGrader
from sandbox.graders.interactive import InteractiveGrader
from sandbox.graders.standard import StandardGrader
from sandbox.job import Role
from sandbox.job_state import JobState

__all__ = ['Context', 'Grader', 'grader_for']


def grader_for(context: Context, state: JobState) -> Grader:
    """The grader of the job's mode: its problem's checker or interactor, if
    it has one, else the comparison."""
    program = state.job.problem_program
    if program is None:
        return StandardGrader(context, state)
    if program.role is Role.INTERACTOR:
        return InteractiveGrader(context, state)
    return CheckerGrader(context, state)
