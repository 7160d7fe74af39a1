"""The backend boundary: everything the runner says to a backend and hears
back, one package per protocol (`noj/`: Normal-OJ's, `algojudge/`:
AlgoJudge's), and what they share (`http_session.py`: sessions whose
requests a stop can cut short).

Nothing outside this package sees JSON or a status code.
"""
