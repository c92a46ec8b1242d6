"""sim/adb"""
