"""sim/shell"""
