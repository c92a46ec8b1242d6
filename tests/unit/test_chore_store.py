"""The store the daemon's periodic chores run on (``supervisor._ChoreStore``): kept open
between turns, dropped after a failure and opened again at the next turn. Real SQLite
queue files; the failures are raised by the chore itself."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from phoned.daemon.lifecycle.errors import QueueBusy, StoreUnavailable
from phoned.daemon.runtime.patience import weather
from phoned.daemon.runtime.supervisor import _ChoreStore
from phoned.daemon.store.sqlite_store import SqliteStore


class _Opener:
    """Opens the queue at ``path``, remembering every store it opened."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.opened: list[SqliteStore] = []

    def __call__(self) -> SqliteStore:
        store = SqliteStore(str(self.path))
        self.opened.append(store)
        return store


def _presence(store: SqliteStore) -> None:
    store.mark_presence("d1", ["S1"], {}, 1.0)


def test_chores_share_one_store_until_it_is_closed(tmp_path: Path) -> None:
    opener = _Opener(tmp_path / "q.db")
    chores = _ChoreStore(opener)
    for _ in range(3):
        chores.run(_presence, weather_as="presence", failed="could not record presence")
    assert len(opener.opened) == 1
    assert chores.run(lambda store: store.presence(), weather_as="w", failed="f")  # the rows
    chores.close()
    with pytest.raises(StoreUnavailable):  # closed: the connection is gone
        opener.opened[0].presence()


@pytest.mark.parametrize("failure", [QueueBusy("queue busy"), StoreUnavailable("queue gone")])
def test_a_failed_chore_drops_its_store_and_the_next_turn_opens_another(
    tmp_path: Path, failure: StoreUnavailable, caplog: pytest.LogCaptureFixture
) -> None:
    opener = _Opener(tmp_path / "q.db")
    chores = _ChoreStore(opener)

    def failing(store: SqliteStore) -> None:
        raise failure

    weather.cleared()  # a fresh spell: its first meeting is said
    try:
        with caplog.at_level(logging.INFO):
            assert chores.run(failing, weather_as="sweep", failed="sweep failed") is None
    finally:
        weather.cleared()  # the process-wide spell ends here, not in a later test
    assert "sweep" in caplog.text  # said: as the queue's weather or as a failure
    with pytest.raises(StoreUnavailable):
        opener.opened[0].presence()  # the failed turn's store was closed
    chores.run(_presence, weather_as="sweep", failed="sweep failed")
    assert len(opener.opened) == 2
    assert opener.opened[1].presence()  # the new store works
    chores.close()
