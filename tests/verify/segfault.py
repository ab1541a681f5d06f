#!/usr/bin/python3
"""Wrong on purpose: dies of SIGSEGV, as a native extension with a bad
pointer would. kvprefix verify: crash (signal 11)."""
import os
import signal

os.kill(os.getpid(), signal.SIGSEGV)
