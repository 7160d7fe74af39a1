"""A small client of the admin API, for the CLI (standard library only)."""
import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import List, Optional, Union


class AdminError(RuntimeError):

    def __init__(self, status: int, message: str):
        super().__init__(f'{status}: {message}')
        self.status = status


class AdminClient:

    def __init__(self, url: str, admin_token: Optional[str] = None, timeout: float = 30.0):
        self._url = url.rstrip('/')
        self._admin_token = admin_token
        self._timeout = timeout

    def __repr__(self) -> str:
        return f'AdminClient(url={self._url!r})'

    def _call(self,
              method: str,
              path: str,
              body: object = None,
              query: Optional[dict] = None,
              timeout: Optional[float] = None):
        url = self._url + path + ('?' + urllib.parse.urlencode(query) if query else '')
        data = None if body is None else json.dumps(body).encode('utf-8')
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header('Content-Type', 'application/json')
        if self._admin_token:
            request.add_header('Authorization', f'Bearer {self._admin_token}')
        try:
            with urllib.request.urlopen(request, timeout=timeout or self._timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            try:
                message = json.loads(error.read().decode('utf-8')).get('error', '')
            except (ValueError, AttributeError):
                message = error.reason
            raise AdminError(error.code, str(message)) from None
        return json.loads(raw.decode('utf-8')) if raw else None

    def submit(self, problem_id: int, language: Union[int, str], source: bytes) -> dict:
        return self._call(
            'POST', '/admin/submissions', {
                'problem_id': problem_id,
                'language': language,
                'source_b64': base64.b64encode(source).decode('ascii'),
            })

    def submission(self, submission_id: str, wait: float = 0.0) -> dict:
        query = {'wait': wait} if wait > 0 else None
        return self._call('GET',
                          f'/admin/submissions/{urllib.parse.quote(submission_id)}',
                          query=query,
                          timeout=self._timeout + wait)

    def submissions(self) -> List[dict]:
        return self._call('GET', '/admin/submissions')

    def rejudge(self, submission_id: str) -> dict:
        return self._call('POST', f'/admin/submissions/{urllib.parse.quote(submission_id)}/rejudge')
