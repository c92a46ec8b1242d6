"""``ContactsContract`` constants (frameworks/base ``core/java/android/provider/
ContactsContract.java``), the same on the phone and in what reads it."""

from __future__ import annotations

import enum


class PhoneType(enum.IntEnum):
    """``ContactsContract.CommonDataKinds.Phone.TYPE_*`` (``BaseTypes.TYPE_CUSTOM`` is 0)."""

    CUSTOM = 0  # the label column says what it is
    HOME = 1  # TYPE_HOME
    MOBILE = 2  # TYPE_MOBILE
    WORK = 3  # TYPE_WORK
    FAX_WORK = 4  # TYPE_FAX_WORK
    FAX_HOME = 5  # TYPE_FAX_HOME
    PAGER = 6  # TYPE_PAGER
    OTHER = 7  # TYPE_OTHER
    CALLBACK = 8  # TYPE_CALLBACK
    CAR = 9  # TYPE_CAR
    COMPANY_MAIN = 10  # TYPE_COMPANY_MAIN
    ISDN = 11  # TYPE_ISDN
    MAIN = 12  # TYPE_MAIN
    OTHER_FAX = 13  # TYPE_OTHER_FAX
    RADIO = 14  # TYPE_RADIO
    TELEX = 15  # TYPE_TELEX
    TTY_TDD = 16  # TYPE_TTY_TDD
    WORK_MOBILE = 17  # TYPE_WORK_MOBILE
    WORK_PAGER = 18  # TYPE_WORK_PAGER
    ASSISTANT = 19  # TYPE_ASSISTANT
    MMS = 20  # TYPE_MMS
