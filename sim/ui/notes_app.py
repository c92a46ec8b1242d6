"""A third-party app no phoned method knows: ``com.example.notes`` (the UI tier's target).

Its package is in the catalogue (``packages_catalog.py``: launcher activity
``.MainActivity``), so ``app.open`` starts it like any installed app. Two screens:

* ``MainActivity``: a toolbar with the app's label in the phone's language, an ``EditText``
  (``note_text``) that holds any unicode ``setText`` gives it, a save button (``save_button``)
  that posts a notification through ``NotificationService.post`` (title: the label, text: the
  note) and keeps the note, a button that opens the list (``open_list_button``), two buttons
  with the same id (``tag_button``: the choice path) that set the tag shown in ``tag_text``.
* ``ListActivity``: a scrollable ``RecyclerView`` (``notes_list``) of ``ITEMS`` rows
  (``item_title``); like a real RecyclerView only the rows inside the list's bounds are views
  (so in the hierarchy), the rest appear when a swipe scrolls them in.

Its words come in the phone's language (``persist.sys.locale``): the UI tier never relies on
them; tests select by resource id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from phoned.sim.ui.views import View, find_by_id

PKG = "com.example.notes"
MAIN = f"{PKG}.MainActivity"
LIST = f"{PKG}.ListActivity"
UID = 10241  # its app id in packages_catalog.py
ITEMS = 30
ROW = 160
LIST_TOP, LIST_BOTTOM = 265, 2337

WORDS: dict[str, dict[str, str]] = {
    "en": {"label": "Notes", "hint": "Note", "save": "Save", "list": "All notes", "item": "Note"},
    "ru": {
        "label": "Заметки",
        "hint": "Заметка",
        "save": "Сохранить",
        "list": "Все заметки",
        "item": "Заметка",
    },
    "ko": {"label": "메모", "hint": "메모", "save": "저장", "list": "모든 메모", "item": "메모"},
}


def words(locale: str) -> dict[str, str]:
    """The app's strings in the phone's language (English when it has none for it)."""
    return WORDS.get(locale.split("-")[0].lower(), WORDS["en"])


def label(locale: str) -> str:
    return words(locale)["label"]


def rid(name: str) -> str:
    return f"{PKG}:id/{name}"


def _button(bounds: tuple[int, int, int, int], name: str, text: str, action: str) -> View:
    return View(
        "android.widget.Button", bounds, resource_id=rid(name), text=text,
        clickable=True, focusable=True, action=action,
    )  # fmt: skip


def main_screen(state: dict[str, str], locale: str) -> list[View]:
    """The editor: the field, save, open-the-list, two tag buttons, the tag line and the
    count of notes saved (digits, empty before the first save)."""
    w = words(locale)
    field = View(
        "android.widget.EditText",
        (60, 320, 1020, 620),
        resource_id=rid("note_text"),
        text=state.get("draft", ""),
        hint=w["hint"],
        clickable=True,
        long_clickable=True,
        focusable=True,
        focused=True,
        action="focus",
    )
    return [
        field,
        _button((60, 680, 520, 820), "save_button", w["save"], "notes_save"),
        _button((560, 680, 1020, 820), "open_list_button", w["list"], "notes_open_list"),
        _button((60, 880, 520, 1020), "tag_button", "#1", "notes_tag:1"),
        _button((560, 880, 1020, 1020), "tag_button", "#2", "notes_tag:2"),
        View(
            "android.widget.TextView",
            (60, 1080, 1020, 1160),
            resource_id=rid("tag_text"),
            text=f"#{state['tag']}" if state.get("tag") else "",
        ),
        View(
            "android.widget.TextView",
            (60, 1180, 1020, 1260),
            resource_id=rid("saved_count"),
            text=state.get("saved", ""),
        ),
    ]


def list_screen(state: dict[str, str], locale: str) -> list[View]:
    """The list, scrolled by ``state['scroll']`` pixels: only the rows inside it are views."""
    offset = int(state.get("scroll", "0"))
    item = words(locale)["item"]
    rows = []
    for i in range(ITEMS):
        top = LIST_TOP + i * ROW - offset
        if top < LIST_TOP or top + ROW > LIST_BOTTOM:
            continue
        rows.append(
            View(
                "android.widget.LinearLayout",
                (0, top, 1080, top + ROW),
                clickable=True,
                focusable=True,
                children=[
                    View(
                        "android.widget.TextView",
                        (60, top + 40, 1020, top + 120),
                        resource_id=rid("item_title"),
                        text=f"{item} {i + 1}",
                    )
                ],
            )
        )
    listing = View(
        "androidx.recyclerview.widget.RecyclerView",
        (0, LIST_TOP, 1080, LIST_BOTTOM),
        resource_id=rid("notes_list"),
        scrollable=True,
        focusable=True,
        children=rows,
    )
    return [listing]


def max_scroll() -> int:
    return max(0, ITEMS * ROW - (LIST_BOTTOM - LIST_TOP))


def scroll(cls: str, state: dict[str, str], x: int, y1: int, y2: int) -> bool:
    """A vertical swipe over the list moves it by the finger's travel (clamped); True when
    the swipe was over this app's list."""
    if cls != LIST or not (LIST_TOP <= y1 < LIST_BOTTOM) or not 0 <= x < 1080:
        return False
    offset = int(state.get("scroll", "0")) + (y1 - y2)
    state["scroll"] = str(min(max(0, offset), max_scroll()))
    return True


def set_text(cls: str, state: dict[str, str], view: View, text: str) -> bool:
    """``setText`` on the editor's field stores the text exactly (any unicode)."""
    if cls == MAIN and view.resource_id == rid("note_text"):
        state["draft"] = text
        return True
    return False


def focused_field(cls: str) -> str | None:
    """The resource id of the field that has focus (``input text`` types into it)."""
    return rid("note_text") if cls == MAIN else None


def type_text(state: dict[str, str], text: str) -> None:
    state["draft"] = state.get("draft", "") + text


def save(state: dict[str, str], locale: str, post: Callable[[str, str, int], None]) -> None:
    """The save button: the note is kept and posted as a notification (id: its number)."""
    draft = state.get("draft", "")
    if not draft:
        return
    saved = int(state.get("saved", "0")) + 1
    state["saved"] = str(saved)
    post(label(locale), draft, saved)


def person_saves_note(ui: Any, text: str) -> None:
    """The person holding the phone, not phoned: types ``text`` into the note field (as a
    keyboard would; no command, nothing in the phone's command log) and taps Save with a
    finger (one ``click`` in the touch log), so ``saved_count`` changes. For tests of a
    step handed to the person (``ui.handoff``); ``ui`` is the phone's ``UiModel``."""
    if not ui.type_text(text):
        raise AssertionError("the notes editor is not in front: the person cannot type")
    button = find_by_id(ui.windows(), rid("save_button"))
    if button is None:
        raise AssertionError("no save button on screen")
    left, top, right, bottom = button.bounds
    ui.tap((left + right) // 2, (top + bottom) // 2)
