"""``phoned mcp``: the task methods as tools of an MCP server (``daemon/mcp/``), over stdio
(default) or streamable HTTP (``--http HOST:PORT --tokens FILE``).

The MCP SDK is imported only when the verb runs, so ``phoned --help`` stays instant.
"""

from __future__ import annotations

import click
from phoned.daemon.verbs.common import (
    EXIT_USAGE,
    config_option,
    fail,
    load_config,
    opened_queue,
    queue_option,
    user_errors,
)


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        fail(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8401", EXIT_USAGE)
    return host.strip("[]"), int(port)


@click.command("mcp")
@click.option("--conversation", default="mcp", show_default=True,
              help="Conversation that owns every task this server queues.")  # fmt: skip
@click.option("--device", default=None, metavar="SERIAL",
              help="Default device of the tools (a call's `device` overrides it).")  # fmt: skip
@click.option("--wait", default=30.0, show_default=True, type=click.FloatRange(0, 3600),
              metavar="SECONDS", help="How long a call waits for its task to end or pause.")  # fmt: skip
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")  # fmt: skip
@click.option("--tokens", default=None, type=click.Path(dir_okay=False),
              help="With --http: the tokens file (as `phoned serve`); planner tokens may call.")  # fmt: skip
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME[:PORT]",
              help="With --http: another Host clients may name (repeatable; `name:*` for any "
              "port). Always allowed: the --http address, and 127.0.0.1, localhost, [::1] "
              "when it is loopback or 0.0.0.0.")  # fmt: skip
@click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="URL",
              help="With --http: another Origin browsers may send (repeatable), e.g. "
              "https://agent.example.")  # fmt: skip
@click.option("--max-sessions", default=16, show_default=True, type=click.IntRange(1),
              help="With --http: open MCP sessions per token.")  # fmt: skip
@click.option("--session-idle", default=300.0, show_default=True,
              type=click.FloatRange(0, min_open=True), metavar="SECONDS",
              help="With --http: a session with no request in flight this long is closed.")  # fmt: skip
@click.option("--header-timeout", default=10.0, show_default=True,
              type=click.FloatRange(0, min_open=True), metavar="SECONDS",
              help="With --http: a request's head must arrive within this.")  # fmt: skip
@click.option("--body-timeout", default=30.0, show_default=True,
              type=click.FloatRange(0, min_open=True), metavar="SECONDS",
              help="With --http: a request's body must arrive within this of its head.")  # fmt: skip
@click.option("--elicit-approvals/--no-elicit-approvals", "elicit", default=None,
              help="Let the person at the MCP client approve or deny a preview through "
              "elicitation (default: yes over stdio on a database queue; no over --http or "
              "on an http(s) queue, where the caller holds only a planner token).")  # fmt: skip
@queue_option
@config_option()
@user_errors
def mcp(
    conversation: str,
    device: str | None,
    wait: float,
    http: str | None,
    tokens: str | None,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    max_sessions: int,
    session_idle: float,
    header_timeout: float,
    body_timeout: float,
    elicit: bool | None,
    queue: str | None,
    config_file: str | None,
) -> None:
    """Serve the task methods as MCP tools (stdio, or --http HOST:PORT with --tokens).

    Each method is one tool (dnd.set -> dnd_set) whose call queues a task in
    --conversation, waits up to --wait for it to end or pause, and returns its state and
    evidence. Approval-gated effects (sms_send) wait for a person: asked through MCP
    elicitation when the client supports it, else `phoned approve`.
    """
    from pathlib import Path  # lazy: phoned --help start-up path (docs/structure.md, measured)

    # lazy: phoned --help start-up path (docs/structure.md, measured)
    from phoned.daemon.mcp.bridge import Bridge
    from phoned.daemon.mcp.server import build_server
    from phoned.daemon.mcp.transports import HttpOptions, serve_http, serve_stdio

    if http is not None and tokens is None:
        fail("--http needs --tokens FILE (the tokens file of `phoned serve`)", EXIT_USAGE)
    options = None
    if http is not None:
        host, port = _host_port(http)
        options = HttpOptions(host, port, allowed_hosts, allowed_origins, max_sessions,
                              session_idle, header_timeout, body_timeout)  # fmt: skip
    book = None
    if options is not None and tokens is not None:
        # lazy: phoned --help start-up path (docs/structure.md, measured)
        from phoned.daemon.server.auth import TokenBook, TokensFileError

        try:
            book = TokenBook.load(Path(tokens))
        except TokensFileError as exc:
            fail(str(exc), EXIT_USAGE)
    cfg = load_config(config_file, queue=queue)
    with opened_queue(cfg.queue_url, busy_wait_s=cfg.queue_busy_wait) as store:
        bridge = Bridge(store, cfg, conversation, device=device, wait=wait)
        if elicit is None:  # a caller with only a planner token does not decide by default
            elicit = options is None and not cfg.queue_url.startswith(("http://", "https://"))
        server = build_server(bridge, elicit=elicit)
        if options is None or book is None:
            serve_stdio(server)
        else:
            serve_http(server, book, conversation, options, cfg.log_level)
