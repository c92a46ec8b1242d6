"""Per-SDK device identities: the system properties a simulated phone reports.

Fingerprints follow the real ``brand/product/device:release/build_id/incremental:type/tags``
layout of Google factory images for the matching Android release.
"""

from __future__ import annotations

from dataclasses import dataclass

SUPPORTED_SDKS = (28, 30, 33, 34, 35)


@dataclass(frozen=True)
class Profile:
    """One Android build: what ``getprop`` and the CNXN banner say about the device."""

    sdk: int
    release: str
    build_id: str
    incremental: str
    product: str  # ro.product.name / ro.product.device
    model: str
    codename: str

    @property
    def fingerprint(self) -> str:
        return (
            f"google/{self.product}/{self.product}:{self.release}/{self.build_id}/"
            f"{self.incremental}:user/release-keys"
        )


PROFILES: dict[int, Profile] = {
    28: Profile(28, "9", "PQ3A.190801.002", "5670241", "blueline", "Pixel 3", "blueline"),
    30: Profile(30, "11", "RQ3A.211001.001", "7641976", "sunfish", "Pixel 4a", "sunfish"),
    33: Profile(33, "13", "TQ3A.230901.001", "10750268", "oriole", "Pixel 6", "oriole"),
    34: Profile(34, "14", "AP2A.240805.005", "12025142", "panther", "Pixel 7", "panther"),
    35: Profile(35, "15", "AP4A.250205.002", "12821496", "shiba", "Pixel 8", "shiba"),
}


def properties(sdk: int, serial: str) -> dict[str, str]:
    """The system properties of a phone of this SDK level, as ``getprop`` lists them."""
    if sdk not in PROFILES:
        raise ValueError(f"unsupported SDK {sdk}; choose one of {SUPPORTED_SDKS}")
    p = PROFILES[sdk]
    return {
        "ro.build.version.sdk": str(p.sdk),
        "ro.build.version.release": p.release,
        "ro.build.id": p.build_id,
        "ro.build.version.incremental": p.incremental,
        "ro.build.type": "user",
        "ro.build.tags": "release-keys",
        "ro.build.fingerprint": p.fingerprint,
        "ro.product.brand": "google",
        "ro.product.manufacturer": "Google",
        "ro.product.model": p.model,
        "ro.product.name": p.product,
        "ro.product.device": p.codename,
        "ro.product.cpu.abi": "arm64-v8a",
        "ro.serialno": serial,
        "ro.boot.serialno": serial,
        "ro.debuggable": "0",
        "ro.secure": "1",
        "ro.adb.secure": "1",
        "sys.boot_completed": "1",
        "init.svc.adbd": "running",
        "persist.sys.timezone": "UTC",
        # a Pixel's factory language, and the one Settings wrote (AndroidRuntime readLocale)
        "ro.product.locale": "en-US",
        "persist.sys.locale": "en-US",
        # a US Pixel's SIM and network (TelephonyManager.getSimCountryIso/
        # getNetworkCountryIso read these; lower case ISO 3166); sim-country:CC changes both
        "gsm.sim.operator.iso-country": "us",
        "gsm.operator.iso-country": "us",
        "ro.sf.lcd_density": "420",
        "bluetooth.device.default_name": p.model,
    }
