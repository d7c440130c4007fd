"""Helpers the test folders share: servers on 127.0.0.1, ready-made handlers and items,
assistant runners, small databases and schemas. Imported as ``tests.support.<module>``
(relative: ``..support``; a folder with an ``__init__.py`` — db, query, server — must
use the absolute name). No folder puts itself on ``sys.path``, and no test imports a
conftest or another test module: what two modules share lives here, under a name that
says what it is.

Fixtures several folders use are defined once in a module here and provided to every
folder through ``pytest_plugins`` in tests/conftest.py (pytest allows that list only in
the rootdir's conftest); ``anyio_backend`` is defined once, in tests/conftest.py.
"""
