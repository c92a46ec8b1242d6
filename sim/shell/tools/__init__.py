"""sim/shell/tools"""
