"""Many processes on one Redis store: leases with fencing tokens and the hand-over of tables
between processes.
"""
