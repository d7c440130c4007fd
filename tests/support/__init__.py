"""Helpers the test folders share: servers on 127.0.0.1, ready-made handlers and items,
assistant runners. Imported as ``tests.support.<module>`` (relative: ``..support``); no
folder puts itself on ``sys.path`` and none imports another folder's conftest."""
