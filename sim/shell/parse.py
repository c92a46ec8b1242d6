"""Lexer and parser for the simulated ``/system/bin/sh`` (mksh) running ``sh -c LINE``.

The grammar is the subset adbd's callers use: simple commands with ``VAR=x`` prefixes and
redirections, joined by ``|``, ``&&``, ``||``, ``;``, ``&`` and newlines. Words keep their
quoting as ``Segment``s so that expansion knows what may be split; a quoted piece is never
split, expanded inside single quotes, or executed.

Error texts follow mksh (MirBSD/mksh ``syn.c`` ``syntaxerr``: ``"%s: %s '%s'"`` with
"syntax error", "unexpected", token; EOF is not quoted; ``lex.c``: ``"no closing quote"``).
Captured Android output confirms the form, e.g. ``/system/bin/sh: syntax error: unexpected '('``.
Android builds mksh without ``MKSH_BINSHREDUCED``/``MKSH_BINSHPOSIX`` (cflags of the AOSP
``external/mksh`` Android.mk, mirrored in CarbonROM/android_bootable_recovery
``carbon_mksh/Android.mk``), so ``&>file`` is a redirection (``lex.c``: ``c == '&' &&
!Flag(FSH) && !Flag(FPOSIX)``).

Unsupported compound syntax (``if``/``for``/``while``/``case``, ``( )``, ``{ }``, here-docs)
is rejected with the same "unexpected" error, so it never runs half-understood.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

OPERATORS = ("&&", "||", ";;", "|", "&", ";", "(", ")")
# Reserved words mksh parses as compound commands; we refuse them at command position.
KEYWORDS = frozenset({
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until",
    "do", "done", "in", "function", "time", "{", "}", "!", "[[",
})  # fmt: skip
NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
NAME_CHARS = NAME_START + "0123456789"
SPECIAL_PARAMS = "?$#!@*-0123456789"


class ShellSyntaxError(Exception):
    """The line does not parse; ``str(exc)`` is mksh's message without the shell prefix."""


@dataclass(frozen=True)
class Segment:
    """One piece of a word: literal text, a ``$VAR`` reference or a command substitution."""

    kind: str  # "lit": text; "var": parameter name (default in ``default``); "cmd": command
    text: str
    quoted: bool  # inside '...' or "..." (or escaped): never field-split
    default: str | None = None  # ``${VAR:-default}``


@dataclass(frozen=True)
class Word:
    segments: tuple[Segment, ...]

    def literal(self) -> str | None:
        """The word's text when it has no expansions and no quoting, else None."""
        if all(s.kind == "lit" and not s.quoted for s in self.segments):
            return "".join(s.text for s in self.segments)
        return None

    def source(self) -> str:
        return "".join(s.text for s in self.segments)


@dataclass(frozen=True)
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&", "<&", "&>"
    target: Word


@dataclass
class SimpleCommand:
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[SimpleCommand]


@dataclass
class AndOr:
    """``first (op pipeline)*`` where op is ``&&`` or ``||``."""

    first: Pipeline
    rest: list[tuple[str, Pipeline]] = field(default_factory=list)


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "op", "redir", "newline", "eof"
    value: str = ""
    word: Word | None = None
    fd: int = -1


# ---------------------------------------------------------------- lexer


class Lexer:
    """Turns the command line into tokens lazily, so earlier lines run before a later error."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def _peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def tokens(self) -> Iterator[Token]:
        while True:
            tok = self._next()
            yield tok
            if tok.kind == "eof":
                return

    def _skip_blanks_and_comment(self) -> None:
        while self._peek() in (" ", "\t") and self._peek():
            self.pos += 1
        if self._peek() == "\\" and self._peek(1) == "\n":
            self.pos += 2
            self._skip_blanks_and_comment()
        elif self._peek() == "#":
            while self._peek() and self._peek() != "\n":
                self.pos += 1

    def _next(self) -> Token:
        self._skip_blanks_and_comment()
        c = self._peek()
        if not c:
            return Token("eof")
        if c == "\n":
            self.pos += 1
            return Token("newline", "newline")
        redir = self._redirect_op()
        if redir is not None:
            return redir
        for op in OPERATORS:
            if self.text.startswith(op, self.pos):
                self.pos += len(op)
                return Token("op", op)
        return Token("word", word=self._word())

    def _redirect_op(self) -> Token | None:
        """``[N]>``, ``>>``, ``<``, ``>&``, ``<&``, ``&>`` at the cursor, else None."""
        start = self.pos
        i = start
        while i < len(self.text) and self.text[i].isdigit():
            i += 1
        digits = self.text[start:i]
        if len(digits) > 1:
            return None
        rest = self.text[i:]
        op, length = _match_redirect(rest, allow_amp=not digits)
        if not op:
            return None
        self.pos = i + length
        default_fd = 0 if op.startswith("<") else 1
        return Token("redir", op, fd=int(digits) if digits else default_fd)

    def _word(self) -> Word:
        segs: list[Segment] = []
        lit: list[str] = []

        def flush() -> None:
            if lit:
                segs.append(Segment("lit", "".join(lit), False))
                lit.clear()

        while True:
            c = self._peek()
            if not c or c in " \t\n;&|()<>":
                break
            if c == "'":
                flush()
                segs.append(self._single_quoted())
            elif c == '"':
                flush()
                segs.extend(self._double_quoted())
            elif c == "\\":
                self.pos += 1
                nxt = self._peek()
                self.pos += 1 if nxt else 0
                if nxt and nxt != "\n":
                    flush()
                    segs.append(Segment("lit", nxt, True))
            elif c in "$`":
                sub = self._dollar(quoted=False)
                if sub is None:
                    lit.append(c)
                    self.pos += 1
                else:
                    flush()
                    segs.append(sub)
            else:
                lit.append(c)
                self.pos += 1
        flush()
        return Word(tuple(segs))

    def _single_quoted(self) -> Segment:
        end = self.text.find("'", self.pos + 1)
        if end < 0:
            raise ShellSyntaxError("no closing quote")
        seg = Segment("lit", self.text[self.pos + 1 : end], True)
        self.pos = end + 1
        return seg

    def _double_quoted(self) -> list[Segment]:
        self.pos += 1
        segs: list[Segment] = []
        buf: list[str] = []
        while True:
            c = self._peek()
            if not c:
                raise ShellSyntaxError("no closing quote")
            if c == '"':
                self.pos += 1
                break
            if c == "\\" and self._peek(1) in ('"', "\\", "$", "`", "\n"):
                if self._peek(1) != "\n":
                    buf.append(self._peek(1))
                self.pos += 2
                continue
            sub = self._dollar(quoted=True) if c in "$`" else None
            if sub is None:
                buf.append(c)
                self.pos += 1
                continue
            if buf:
                segs.append(Segment("lit", "".join(buf), True))
                buf = []
            segs.append(sub)
        if buf or not segs:
            segs.append(Segment("lit", "".join(buf), True))
        return segs

    def _dollar(self, *, quoted: bool) -> Segment | None:
        """Parse ``$NAME``, ``${NAME}``, ``${NAME:-x}``, ``$(...)`` or backticks at the cursor."""
        if self._peek() == "`":
            end = _closing(self.text, self.pos + 1, "`")
            body = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return Segment("cmd", body, quoted)
        nxt = self._peek(1)
        if nxt == "(":
            if self._peek(2) == "(":
                raise ShellSyntaxError("syntax error: unexpected '(('")
            end = find_paren_end(self.text, self.pos + 2)
            body = self.text[self.pos + 2 : end]
            self.pos = end + 1
            return Segment("cmd", body, quoted)
        if nxt == "{":
            return self._braced(quoted)
        if nxt and nxt in SPECIAL_PARAMS:
            self.pos += 2
            return Segment("var", nxt, quoted)
        if nxt and nxt in NAME_START:
            i = self.pos + 1
            while i < len(self.text) and self.text[i] in NAME_CHARS:
                i += 1
            name = self.text[self.pos + 1 : i]
            self.pos = i
            return Segment("var", name, quoted)
        return None

    def _braced(self, quoted: bool) -> Segment:
        end = self.text.find("}", self.pos + 2)
        if end < 0:
            raise ShellSyntaxError("no closing quote")
        inner = self.text[self.pos + 2 : end]
        self.pos = end + 1
        name, sep, default = inner.partition(":-")
        if not name or not (all(ch in NAME_CHARS for ch in name) or name in SPECIAL_PARAMS):
            raise ShellSyntaxError(f"${{{inner}}}: bad substitution")
        return Segment("var", name, quoted, default if sep else None)


_REDIRECTS = (("&>>", "&>>"), ("&>", "&>"), (">>", ">>"), (">&", ">&"), ("<&", "<&"),
              (">|", ">"), ("<<", "<<"), (">", ">"), ("<", "<"))  # fmt: skip


def _match_redirect(rest: str, *, allow_amp: bool) -> tuple[str, int]:
    """The redirection operator at the start of ``rest`` and its length, or ("", 0)."""
    for text, op in _REDIRECTS:
        if rest.startswith(text) and (allow_amp or not text.startswith("&")):
            if op == "<<":
                raise ShellSyntaxError("syntax error: unexpected '<<'")
            return op, len(text)
    return "", 0


def _closing(text: str, i: int, quote: str) -> int:
    """Index of the first ``quote`` from ``i`` on that no backslash escapes (the end of a
    backquoted command or a double-quoted string); raises ``no closing quote`` when none."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    raise ShellSyntaxError("no closing quote")


def find_paren_end(text: str, i: int) -> int:
    """Index of the ``)`` closing a ``$(`` whose body starts at ``i`` (quotes respected)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                break
            i = end + 1
            continue
        if c == '"':
            i = _closing(text, i + 1, '"') + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    raise ShellSyntaxError("no closing quote")


# ---------------------------------------------------------------- parser


def _unexpected(tok: Token) -> ShellSyntaxError:
    if tok.kind == "eof":
        return ShellSyntaxError("syntax error: unexpected EOF")
    if tok.kind == "word" and tok.word is not None:
        return ShellSyntaxError(f"syntax error: unexpected '{tok.word.source()[:31]}'")
    if tok.kind == "redir":
        return ShellSyntaxError(f"syntax error: unexpected '{tok.value}'")
    return ShellSyntaxError(f"syntax error: unexpected '{tok.value}'")


class Parser:
    """Yields one parsed line (a list of ``(AndOr, background)``) at a time."""

    def __init__(self, text: str) -> None:
        self._tokens = Lexer(text).tokens()
        self._tok: Token | None = None

    def _peek(self) -> Token:
        if self._tok is None:
            self._tok = next(self._tokens)
        return self._tok

    def _take(self) -> Token:
        tok = self._peek()
        self._tok = None
        return tok

    def lines(self) -> Iterator[list[tuple[AndOr, bool]]]:
        """Each newline-terminated list of commands, parsed only when the previous one ran."""
        while True:
            while self._peek().kind == "newline":
                self._take()
            if self._peek().kind == "eof":
                return
            yield self._line()

    def _line(self) -> list[tuple[AndOr, bool]]:
        items: list[tuple[AndOr, bool]] = []
        while True:
            andor = self._andor()
            tok = self._peek()
            if tok.kind == "op" and tok.value in (";", "&"):
                self._take()
                items.append((andor, tok.value == "&"))
                if self._peek().kind in ("newline", "eof"):
                    break
                continue
            items.append((andor, False))
            if tok.kind in ("newline", "eof"):
                break
            raise _unexpected(tok)
        return items

    def _andor(self) -> AndOr:
        node = AndOr(self._pipeline())
        while self._peek().kind == "op" and self._peek().value in ("&&", "||"):
            op = self._take().value
            self._skip_newlines()
            node.rest.append((op, self._pipeline()))
        return node

    def _pipeline(self) -> Pipeline:
        commands = [self._simple()]
        while self._peek().kind == "op" and self._peek().value == "|":
            self._take()
            self._skip_newlines()
            commands.append(self._simple())
        return Pipeline(commands)

    def _skip_newlines(self) -> None:
        while self._peek().kind == "newline":
            self._take()

    def _simple(self) -> SimpleCommand:
        cmd = SimpleCommand()
        while True:
            tok = self._peek()
            if tok.kind == "redir":
                self._take()
                cmd.redirects.append(Redirect(tok.fd, tok.value, self._redirect_target()))
            elif tok.kind == "word" and tok.word is not None:
                self._take()
                self._add_word(cmd, tok)
            else:
                break
        if not cmd.words and not cmd.assignments and not cmd.redirects:
            raise _unexpected(self._peek())
        return cmd

    def _redirect_target(self) -> Word:
        tok = self._take()
        if tok.kind != "word" or tok.word is None:
            raise _unexpected(tok)
        return tok.word

    @staticmethod
    def _add_word(cmd: SimpleCommand, tok: Token) -> None:
        word = tok.word
        assert word is not None
        if not cmd.words:
            assignment = _split_assignment(word)
            if assignment is not None:
                cmd.assignments.append(assignment)
                return
            if word.literal() in KEYWORDS:
                raise _unexpected(tok)
        cmd.words.append(word)


def _split_assignment(word: Word) -> tuple[str, Word] | None:
    """``NAME=value`` (the ``NAME=`` part unquoted) as (name, value word), else None."""
    first = word.segments[0] if word.segments else None
    if first is None or first.kind != "lit" or first.quoted or "=" not in first.text:
        return None
    name, _, rest = first.text.partition("=")
    if not name or name[0] not in NAME_START or any(c not in NAME_CHARS for c in name):
        return None
    value_segs = ((Segment("lit", rest, False),) if rest else ()) + word.segments[1:]
    return name, Word(value_segs)
