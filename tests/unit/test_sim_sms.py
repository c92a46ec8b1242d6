"""SMS provider and the ``content`` tool of the simulated phone."""

from __future__ import annotations

from helpers import android_fixture as fixture
from helpers import call_tool

from phoned.sim.android.content_tool import content
from phoned.sim.phone import Phone


def run(phone: Phone, *args: str) -> tuple[int, str, str]:
    return call_tool(phone, content, ["content", *args])


def query_sms(phone: Phone, projection: str, where: str) -> str:
    """What ``content query --uri content://sms --projection P --where W`` prints."""
    argv = ["--uri", "content://sms", "--projection", projection, "--where", where]
    return run(phone, "query", *argv)[1]


def test_empty_provider_prints_no_result_found() -> None:
    for sdk in (28, 30, 33, 34, 35):
        assert run(Phone(sdk=sdk), "query", "--uri", "content://sms") == (
            0,
            "No result found.\n",
            "",
        )


def test_rows_print_values_verbatim_newest_first() -> None:
    phone = Phone(sdk=34)
    first = phone.sms.insert("sent", "+15551234567", "hello")
    second = phone.sms.insert("sent", "+15557654321", "Hi, see you\nat 5")
    phone.sms.rows[0]["date"] = 1_700_000_000_000
    phone.sms.rows[1]["date"] = 1_700_000_060_000
    assert (first, second) == (1, 2)
    rc, out, err = run(
        phone, "query", "--uri", "content://sms/sent", "--projection", "_id:address:body:type"
    )
    assert (rc, err) == (0, "")
    assert out == fixture("content-34-sms-query-projection.txt")


def test_full_row_has_the_sms_columns_and_null() -> None:
    phone = Phone(sdk=30)
    phone.sms.insert("inbox", "+15550000000", "yo")
    phone.sms.rows[0]["date"] = 1_600_000_000_000
    _, out, _ = run(phone, "query", "--uri", "content://sms/inbox")
    assert out.startswith(
        "Row: 0 _id=1, thread_id=1, address=+15550000000, person=NULL, "
        "date=1600000000000, date_sent=0, protocol=0, read=0, status=-1, type=1,"
    )
    assert ", body=yo, service_center=NULL," in out
    assert out.endswith(", creator=com.google.android.apps.messaging, seen=0\n")


def test_where_subset_and_boxes() -> None:
    phone = Phone(sdk=33)
    phone.sms.insert("inbox", "+1555", "in")
    phone.sms.insert("sent", "+1555", "out")
    phone.sms.insert("draft", "+1666", "it's a draft")
    out = query_sms(phone, "body", "address='+1555' AND type=2")
    assert out == "Row: 0 body=out\n"
    out = query_sms(phone, "_id", "body='it''s a draft'")
    assert out == "Row: 0 _id=3\n"
    _, out, _ = run(phone, "query", "--uri", "content://sms/draft", "--projection", "address")
    assert out == "Row: 0 address=+1666\n"
    _, out, _ = run(
        phone, "query", "--uri", "content://sms", "--projection", "_id", "--sort", "_id ASC"
    )
    assert out == "Row: 0 _id=1\nRow: 1 _id=2\nRow: 2 _id=3\n"
    assert [m["body"] for m in phone.sms.messages("sent")] == ["out"]


def test_insert_through_content_tool() -> None:
    phone = Phone(sdk=35)
    rc, out, err = run(
        phone,
        "insert",
        "--uri",
        "content://sms/sent",
        "--bind",
        "address:s:+15559990000",
        "--bind",
        "body:s:a:b,c",
    )
    assert (rc, out, err) == (0, "", "")
    [row] = phone.sms.messages("sent")
    assert (row["address"], row["body"], row["type"]) == ("+15559990000", "a:b,c", 2)


def test_errors_exit_zero_like_the_real_tool() -> None:
    phone = Phone(sdk=34)
    rc, out, _ = run(phone, "query")
    assert (rc, out) == (
        0,
        "[ERROR] Content provider URI not specified. Did you specify --uri argument?\n",
    )
    rc, _, err = run(phone, "query", "--uri", "content://sms", "--projection", "nope")
    assert rc == 0
    assert err.startswith(
        "Error while accessing provider:sms\n"
        "android.database.sqlite.SQLiteException: no such column: nope"
    )
    rc, out, _ = run(phone, "insert", "--uri", "content://sms")
    assert out == "[ERROR] Bindings not specified. Did you specify --bind argument(s)?\n"
    rc, _, err = run(phone, "query", "--uri", "content://mms-sms-nope")
    assert err == (
        "Error while accessing provider:mms-sms-nope\n"
        "java.lang.IllegalStateException: Could not find provider: mms-sms-nope\n"
    )
